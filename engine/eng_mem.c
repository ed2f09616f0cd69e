/*
 * eng_mem.c - reading and writing the target's memory.
 *
 * /proc/pid/mem first: one system call for any length, and it writes
 * through read-only text mappings (FOLL_FORCE) as ptrace does.  If it
 * cannot be opened (hardened /proc) reads fall back to
 * process_vm_readv, and everything to word-wise PEEK/POKE.
 */
#include "eng_proc_int.h"
#include "eng_fault.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <unistd.h>

int eng_mem_open(struct eng_proc *p)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)p->pid);
	p->memfd = open(path, O_RDWR | O_CLOEXEC);
	return p->memfd < 0 ? -errno : 0;
}

static int peek_words(pid_t tid, uint64_t addr, uint8_t *buf, size_t len)
{
	while (len > 0) {
		uint64_t base = addr & ~7ULL, off = addr - base;
		size_t n = 8 - off < len ? 8 - off : len;
		long w;

		errno = 0;
		w = ptrace(PTRACE_PEEKDATA, tid, (void *)base, 0);
		if (errno != 0)
			return -errno;
		memcpy(buf, (uint8_t *)&w + off, n);
		buf += n;
		addr += n;
		len -= n;
	}
	return 0;
}

static int poke_words(pid_t tid, uint64_t addr, const uint8_t *buf,
		      size_t len)
{
	while (len > 0) {
		uint64_t base = addr & ~7ULL, off = addr - base;
		size_t n = 8 - off < len ? 8 - off : len;
		long w = 0;

		if (off != 0 || n != 8) {  /* keep the bytes around ours */
			errno = 0;
			w = ptrace(PTRACE_PEEKDATA, tid, (void *)base, 0);
			if (errno != 0)
				return -errno;
		}
		memcpy((uint8_t *)&w + off, buf, n);
		if (ptrace(PTRACE_POKEDATA, tid, (void *)base, (void *)w) != 0)
			return -errno;
		buf += n;
		addr += n;
		len -= n;
	}
	return 0;
}

/* A stopped thread for PEEK/POKE (they need a ptrace-stopped tid). */
static pid_t stopped_tid(struct eng_proc *p)
{
	for (size_t i = 0; i < p->nth; i++)
		if (p->th[i]->state == TS_STOPPED)
			return p->th[i]->tid;
	return p->pid;
}

static int read_raw(struct eng_proc *p, uint64_t addr, void *buf, size_t len)
{
	struct iovec l = { buf, len }, r = { (void *)addr, len };

	if (p->memfd >= 0 &&
	    pread(p->memfd, buf, len, (off_t)addr) == (ssize_t)len)
		return 0;
	if (process_vm_readv(p->pid, &l, 1, &r, 1, 0) == (ssize_t)len)
		return 0;
	return peek_words(stopped_tid(p), addr, buf, len);
}

int eng_mem_read(struct eng_proc *p, uint64_t addr, void *buf, size_t len,
		 struct hunch_err *err)
{
	int rc;

	if (len == 0)
		return 0;
	rc = read_raw(p, addr, buf, len);
	if (rc < 0)
		return hunch_err_set(err, rc,
				     "cannot read %zu bytes at 0x%llx in "
				     "process %d: %s (is the address mapped?)",
				     len, (unsigned long long)addr, (int)p->pid,
				     strerror(-rc));
	return 0;
}

/* One write per page: the kernel may stop a /proc/pid/mem write at any
 * page boundary when a SIGKILL is pending (and at every 4 KiB of it),
 * so hunch cuts its writes there itself.  Then what the program can
 * observe after hunch dies is always a whole number of our writes, and
 * the commit orders them so that every prefix is a correct program. */
static int write_pages(struct eng_proc *p, uint64_t addr,
		       const uint8_t *buf, size_t len)
{
	while (len > 0) {
		size_t n = 4096 - (addr & 4095);

		if (n > len)
			n = len;
		eng_fault_hit(ENG_FAULT_COMMIT_WRITE);
		if (pwrite(p->memfd, buf, n, (off_t)addr) != (ssize_t)n)
			return -1;
		addr += n;
		buf += n;
		len -= n;
	}
	return 0;
}

int eng_mem_write(struct eng_proc *p, uint64_t addr, const void *buf,
		  size_t len, struct hunch_err *err)
{
	int rc = eng_exec_fenced(p, "write into it", err);

	return rc < 0 ? rc : eng_mem_write_any(p, addr, buf, len, err);
}

int eng_mem_write_any(struct eng_proc *p, uint64_t addr, const void *buf,
		      size_t len, struct hunch_err *err)
{
	int rc;

	if (len == 0)
		return 0;
	if (p->memfd >= 0 && write_pages(p, addr, buf, len) == 0)
		return 0;
	rc = poke_words(stopped_tid(p), addr, buf, len);
	if (rc < 0)
		return hunch_err_set(
			err, rc,
			"cannot write %zu bytes at 0x%llx "
			"in process %d: %s (is the address mapped, and a "
			"thread stopped?)",
			len, (unsigned long long)addr, (int)p->pid,
			strerror(-rc));
	return 0;
}

/* A NUL-terminated string, read in small pieces so that a string near
 * the end of a mapping does not fail as a whole. */
int eng_mem_read_str(struct eng_proc *p, uint64_t addr, char *buf, size_t len)
{
	size_t got = 0;

	while (got + 1 < len) {
		size_t n = 64 - ((addr + got) & 63);

		if (n > len - 1 - got)
			n = len - 1 - got;
		if (read_raw(p, addr + got, buf + got, n) < 0)
			break;
		if (memchr(buf + got, '\0', n) != NULL)
			return 0;
		got += n;
	}
	buf[got] = '\0';
	return got > 0 ? 0 : -EFAULT;
}

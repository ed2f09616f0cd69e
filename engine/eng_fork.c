/*
 * eng_fork.c - child processes of the program (fork, vfork, a clone
 * that makes a process): see eng_proc.h, eng_fork_follow.
 *
 * Every launch and attach seizes with PTRACE_O_TRACEFORK and
 * PTRACE_O_TRACEVFORK, so the kernel stops a new child before its first
 * instruction, attached to hunch.  At the parent's fork event the child
 * is waited for there.  A child with its own copy of memory (fork, a
 * clone without CLONE_VM: kcmp tells) is cleaned while the parent still
 * sits at its event, so no patch can come or go in between: hunch's own
 * int3s and, through the client's hook, every patched instruction get
 * the program's bytes back, so nothing inherited jumps into the parent's
 * trampolines (whose snippets would count nothing: the runtime library
 * is inert in a forked child).  A child that shares the parent's memory
 * (vfork) cannot be cleaned without unpatching the parent; it runs until
 * its exec or exit with the parent suspended by the kernel.  Then the
 * child is detached: hunch measures children from /proc, which needs no
 * tracing, and no child is ever left traced or stopped, whatever
 * happens to hunch.  Without following, the child is cleaned the same
 * way (its inherited patches would only cost) but not reported.
 */
#include "eng_proc_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <linux/kcmp.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

void eng_fork_follow(struct eng_proc *p, bool on, eng_fork_fn hook,
		     void *arg)
{
	p->fork_follow = on;
	p->fork_hook = hook;
	p->fork_arg = arg;
}

/* Does the child share the parent's memory (vfork, CLONE_VM)? */
static bool shares_memory(pid_t parent, pid_t child)
{
	return syscall(SYS_kcmp, parent, child, KCMP_VM, 0, 0) == 0;
}

/* hunch's own int3s (entry, main, r_debug) back to the program's byte
 * in the child's copy of memory. */
static void restore_bps(struct eng_proc *p, pid_t child)
{
	for (size_t i = 0; i < p->nbps; i++)
		eng_fork_write(child, p->bps[i].addr, &p->bps[i].orig, 1);
}

/* Through /proc/<child>/mem, one system call per page (cut at page
 * boundaries for the reason eng_mem.c gives: what a child killed midway
 * holds is a whole number of writes); 0, -errno, or 1 when it cannot
 * be opened. */
static int proc_mem_rw(pid_t child, uint64_t addr, uint8_t *buf, size_t len,
		       bool write)
{
	char path[64];
	int fd, rc = 0;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)child);
	fd = open(path, (write ? O_RDWR : O_RDONLY) | O_CLOEXEC);
	if (fd < 0)
		return 1;
	while (len > 0 && rc == 0) {
		size_t n = 4096 - (addr & 4095);

		if (n > len)
			n = len;
		errno = 0;
		if ((write ? pwrite(fd, buf, n, (off_t)addr) :
			     pread(fd, buf, n, (off_t)addr)) != (ssize_t)n)
			rc = errno ? -errno : -EIO;
		addr += n;
		buf += n;
		len -= n;
	}
	close(fd);
	return rc;
}

/* Word by word through ptrace: the child is stopped and ours. */
static int ptrace_rw(pid_t child, uint64_t addr, uint8_t *b, size_t len,
		     bool write)
{
	for (size_t off = 0; off < len;) {
		uint64_t a = (addr + off) & ~7ull, word;
		size_t skip = (size_t)((addr + off) - a), n;

		errno = 0;
		word = (uint64_t)ptrace(PTRACE_PEEKDATA, child, a, 0);
		if (errno != 0)
			return -errno;
		n = 8 - skip < len - off ? 8 - skip : len - off;
		if (!write) {
			memcpy(b + off, (uint8_t *)&word + skip, n);
		} else {
			memcpy((uint8_t *)&word + skip, b + off, n);
			if (ptrace(PTRACE_POKEDATA, child, a, word) != 0)
				return -errno;
		}
		off += n;
	}
	return 0;
}

/* /proc/<child>/mem first: a mirrored commit's trampolines are
 * megabytes, and word by word through ptrace they held a pool's three
 * workers stopped for a second at a time (600,000 POKEs a run). */
int eng_fork_write(pid_t child, uint64_t addr, const void *buf, size_t len)
{
	int rc = proc_mem_rw(child, addr, (uint8_t *)buf, len, true);

	return rc == 1 ? ptrace_rw(child, addr, (uint8_t *)buf, len, true)
		       : rc;
}

int eng_fork_read(pid_t child, uint64_t addr, void *buf, size_t len)
{
	int rc = proc_mem_rw(child, addr, buf, len, false);

	return rc == 1 ? ptrace_rw(child, addr, buf, len, false) : rc;
}

void eng_fork_event(struct eng_proc *p, struct eng_thread *parent)
{
	struct eng_event ev;
	unsigned long msg = 0;
	int status = 0;
	pid_t child;
	bool shared;

	if (ptrace(PTRACE_GETEVENTMSG, parent->tid, 0, &msg) != 0)
		return;
	child = (pid_t)msg;
	while (waitpid(child, &status, __WALL) < 0 && errno == EINTR)
		;
	if (!WIFSTOPPED(status))
		return;  /* gone already: nothing inherited runs */
	shared = shares_memory(p->pid, child);
	if (!shared) {   /* followed or not, nothing inherited stays dead */
		restore_bps(p, child);
		if (p->fork_hook != NULL)
			p->fork_hook(p->fork_arg, child);
	}
	ptrace(PTRACE_DETACH, child, 0, 0);
	if (!p->fork_follow)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.kind = ENG_EV_FORK;
	ev.tid = child;
	ev.status = parent->tid;
	ev.signo = shared;
	eng_ptrace_queue_event(p, &ev);
}

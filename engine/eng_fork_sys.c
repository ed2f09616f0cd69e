/*
 * eng_fork_sys.c - system calls run in a forked child stopped at its
 * fork stop, before its first instruction (see eng_fork_shm.h).
 *
 * The child stands right after the `syscall` instruction of the fork
 * (or clone) that made it: hunch points %rip back at that instruction
 * with the call's number and arguments, single-steps it, reads %rax,
 * and finally puts every register back.  No code is written and no
 * library is needed: this works before the child's C library has run a
 * single instruction of its own (its fork handlers included).
 */
#include "eng_fork_sys.h"
#include "eng_maps.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

int eng_fork_sys_begin(struct eng_fork_sys *s, pid_t child)
{
	long word;

	memset(s, 0, sizeof(*s));
	s->pid = child;
	if (ptrace(PTRACE_GETREGS, child, 0, &s->saved) != 0)
		return -errno;
	errno = 0;
	word = ptrace(PTRACE_PEEKDATA, child, s->saved.rip - 2, 0);
	if (errno != 0)
		return -errno;
	if ((word & 0xffff) != 0x050f)   /* not after a `syscall` */
		return -ENOEXEC;
	s->at = s->saved.rip - 2;
	return 0;
}

int eng_fork_sys_begin_at(struct eng_fork_sys *s, pid_t tid, uint64_t at)
{
	memset(s, 0, sizeof(*s));
	s->pid = tid;
	s->at = at;
	if (ptrace(PTRACE_GETREGS, tid, 0, &s->saved) != 0)
		return -errno;
	return 0;
}

uint64_t eng_fork_sys_gadget(pid_t pid)
{
	static uint8_t buf[1 << 16];
	struct eng_maps_line l;
	struct eng_maps m;
	uint64_t found = 0;
	char path[64];
	int fd;

	if (eng_maps_open(&m, pid) < 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		eng_maps_close(&m);
		return 0;
	}
	while (found == 0 && eng_maps_next(&m, &l)) {
		if (!eng_maps_is_code(&l) || strcmp(l.path, "[vsyscall]") == 0)
			continue;
		for (uint64_t a = l.lo; found == 0 && a < l.hi;
		     a += sizeof(buf) - 1) {
			size_t n = l.hi - a < sizeof(buf) ? l.hi - a : sizeof(buf);
			ssize_t got = pread(fd, buf, n, (off_t)a);

			for (ssize_t i = 0; i + 1 < got; i++)
				if (buf[i] == 0x0f && buf[i + 1] == 0x05) {
					found = a + (uint64_t)i;
					break;
				}
			if (got <= 0)
				break;
		}
	}
	close(fd);
	eng_maps_close(&m);
	return found;
}

long eng_fork_sys_call(struct eng_fork_sys *s, long nr, long a1, long a2,
		       long a3, long a4, long a5, long a6)
{
	struct user_regs_struct r = s->saved;
	int st;

	r.rip = s->at;
	r.rax = (unsigned long long)nr;
	r.orig_rax = (unsigned long long)-1;  /* no restart of the fork */
	r.rdi = (unsigned long long)a1;
	r.rsi = (unsigned long long)a2;
	r.rdx = (unsigned long long)a3;
	r.r10 = (unsigned long long)a4;
	r.r8 = (unsigned long long)a5;
	r.r9 = (unsigned long long)a6;
	if (ptrace(PTRACE_SETREGS, s->pid, 0, &r) != 0)
		return -errno;
	for (;;) {
		if (ptrace(PTRACE_SINGLESTEP, s->pid, 0, 0) != 0)
			return -errno;
		while (waitpid(s->pid, &st, __WALL) < 0)
			if (errno != EINTR)
				return -errno;
		if (!WIFSTOPPED(st))
			return -ESRCH;
		if (ptrace(PTRACE_GETREGS, s->pid, 0, &r) != 0)
			return -errno;
		if (r.rip == s->at + 2)    /* the call was made */
			return (long)r.rax;
		/* A signal stopped it before the call: keep it for the end
		 * (one is enough for a child a few instructions old). */
		if (WSTOPSIG(st) != SIGTRAP)
			s->pending = WSTOPSIG(st);
		if (r.rip != s->at)
			return -EPROTO;
	}
}

int eng_fork_sys_end(struct eng_fork_sys *s)
{
	int rc = 0;

	if (ptrace(PTRACE_SETREGS, s->pid, 0, &s->saved) != 0)
		rc = -errno;
	if (s->pending != 0)   /* delivered once the child runs */
		kill(s->pid, s->pending);
	return rc;
}

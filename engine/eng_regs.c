/*
 * eng_regs.c - registers of stopped threads: the general registers with
 * PTRACE_GETREGS/SETREGS, and the whole extended state (x87, SSE, AVX,
 * AVX-512) with PTRACE_GETREGSET NT_X86_XSTATE, which inferior calls
 * must save because glibc's string functions use the vector registers.
 */
#include "eng_proc_int.h"

#include <elf.h>
#include <errno.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>

static int regs_err(struct eng_proc *p, pid_t tid, const char *what,
		    struct hunch_err *err)
{
	int e = errno;

	if (e == ESRCH)
		return hunch_err_set(
			err, -ESRCH,
			"cannot %s registers of thread "
			"%d of process %d: the thread is not stopped by hunch "
			"(stop it first) or has exited",
			what, (int)tid, (int)p->pid);
	return hunch_err_set(err, -e, "cannot %s registers of thread %d of "
			  "process %d: %s", what, (int)tid, (int)p->pid,
			  strerror(e));
}

int eng_regs_get(struct eng_proc *p, pid_t tid, struct user_regs_struct *r,
		 struct hunch_err *err)
{
	if (ptrace(PTRACE_GETREGS, tid, 0, r) != 0)
		return regs_err(p, tid, "read", err);
	return 0;
}

int eng_regs_set(struct eng_proc *p, pid_t tid,
		 const struct user_regs_struct *r, struct hunch_err *err)
{
	if (ptrace(PTRACE_SETREGS, tid, 0, r) != 0)
		return regs_err(p, tid, "write", err);
	return 0;
}

int eng_regs_get_xstate(struct eng_proc *p, pid_t tid, void *buf, size_t *len)
{
	struct iovec iov = { buf, *len };

	(void)p;
	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_X86_XSTATE, &iov) == 0) {
		*len = iov.iov_len;
		return 0;
	}
	/* No XSAVE: the legacy area is all there is. */
	if (*len < sizeof(struct user_fpregs_struct))
		return -EINVAL;
	if (ptrace(PTRACE_GETFPREGS, tid, 0, buf) != 0)
		return -errno;
	*len = 0;  /* 0 marks "legacy fpregs" for eng_regs_set_xstate */
	return 0;
}

int eng_regs_set_xstate(struct eng_proc *p, pid_t tid, const void *buf,
		   size_t len)
{
	struct iovec iov = { (void *)buf, len };

	(void)p;
	if (len == 0)
		return ptrace(PTRACE_SETFPREGS, tid, 0, buf) ? -errno : 0;
	if (ptrace(PTRACE_SETREGSET, tid, (void *)NT_X86_XSTATE, &iov) != 0)
		return -errno;
	return 0;
}

/*
 * eng_infcall.c - calling a function inside the target on one thread.
 *
 * The thread's registers (and vector state) are saved, the call is set
 * up below the red zone with a return address of 0, and the thread alone
 * is continued; the callee's `ret` faults at address 0, which we take as
 * "done" and never deliver.  Then every register is put back.
 *
 * A thread stopped inside a system call has orig_rax >= 0 and, if the
 * call was interrupted, rax = -ERESTART*: on resume the kernel would
 * rewind rip by 2 to restart it.  During our call orig_rax is -1 so that
 * the kernel leaves our rip alone; restoring the saved registers
 * afterwards re-arms the restart, as gdb does.
 *
 * hunch may be SIGKILLed during a call: the kernel then lets the thread
 * run on, and a return to 0 would kill the program.  So once the rtlib
 * is there (eng_infcall_set_return), the call returns to the rtlib's
 * int3 instead, with the saved registers and XSAVE area written just
 * above the return address (struct hunch_infcall_save).  Alive, hunch
 * takes that SIGTRAP in the ptrace stop and restores the thread itself,
 * as before; dead, the kernel delivers it and the rtlib's handler
 * restores the thread from the save area (rtlib/rt_trap.c).
 *
 * The program's signals are blocked during the call (all but SIGTRAP
 * and the faults, set_call_mask): they stay pending in the kernel, not
 * in hunch, and arrive once the mask is back.
 */
#include "eng_proc_int.h"
#include "clock_mono.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <time.h>

#include "hunch_abi.h"
#include "eng_fault.h"

#define RED_ZONE 128
#define SCRATCH_MAX 8192
#define EFLAGS_TF 0x100
#define EFLAGS_DF 0x400

static int call_err(struct eng_proc *p, pid_t tid, uint64_t fn, int rc,
		    const char *why, struct hunch_err *err)
{
	return hunch_err_set(err, rc, "inferior call of 0x%llx on thread %d of "
			  "process %d failed: %s", (unsigned long long)fn,
			  (int)tid, (int)p->pid, why);
}

/* Scratch space pushed for this call, if measured from the same %rsp. */
static uint64_t scratch_used(struct eng_thread *t, uint64_t rsp)
{
	if (t->scratch_sp != rsp)
		return 0;
	return t->scratch;
}

void eng_infcall_set_return(struct eng_proc *p, uint64_t addr)
{
	p->infcall_ret = addr;
}

/* The return address and, with the rtlib, the save area above it (one
 * write: killed before it, the thread has not moved; after, it has all
 * it needs to come back).  Returns the callee's %rsp, 0 on error. */
static uint64_t push_return(struct eng_proc *p, uint64_t top,
			    const struct user_regs_struct *saved,
			    uint64_t mask, const void *xs, size_t xlen,
			    struct hunch_err *err)
{
	struct hunch_infcall_save *s;
	uint64_t sp, zero = 0;
	size_t len;

	if (p->infcall_ret == 0) {
		sp = (top & ~15ULL) - 8;
		return eng_mem_write(p, sp, &zero, 8, err) < 0 ? 0 : sp;
	}
	len = 8 + sizeof *s + xlen;
	s = calloc(1, len);
	if (s == NULL) {
		hunch_err_set(err, -ENOMEM, "out of memory");
		return 0;
	}
	/* as if `call` pushed: %rsp+8 (the save area) is 16-aligned */
	sp = ((top - sizeof *s - xlen) & ~15ULL) - 8;
	memcpy(s, &p->infcall_ret, 8);
	s = (struct hunch_infcall_save *)((char *)s + 8);
	s->magic = HUNCH_INFCALL_MAGIC;
	s->ret = p->infcall_ret;
	memcpy(s->regs, saved, sizeof s->regs);
	s->sigmask = mask;
	s->xlen = xlen;
	memcpy(s->xstate, xs, xlen);
	s = (struct hunch_infcall_save *)((char *)s - 8);
	if (eng_mem_write(p, sp, s, len, err) < 0)
		sp = 0;
	free(s);
	return sp;
}

static int setup_frame(struct eng_proc *p, struct eng_thread *t,
		       const struct user_regs_struct *saved, uint64_t fn,
		       const uint64_t *args, int nargs, uint64_t mask,
		       const void *xs, size_t xlen, struct hunch_err *err)
{
	struct user_regs_struct r = *saved;
	uint64_t sp;

	_Static_assert(sizeof r == 27 * 8, "hunch_infcall_save.regs");
	sp = push_return(p, saved->rsp - RED_ZONE -
			 scratch_used(t, saved->rsp), saved, mask, xs, xlen,
			 err);
	if (sp == 0)
		return -EFAULT;
	r.rsp = sp;
	r.rip = fn;
	r.rax = 0;  /* no vector registers for a variadic callee */
	r.rdi = nargs > 0 ? args[0] : 0;
	r.rsi = nargs > 1 ? args[1] : 0;
	r.rdx = nargs > 2 ? args[2] : 0;
	r.rcx = nargs > 3 ? args[3] : 0;
	r.r8 = nargs > 4 ? args[4] : 0;
	r.r9 = nargs > 5 ? args[5] : 0;
	r.eflags &= ~(uint64_t)(EFLAGS_TF | EFLAGS_DF);
	if ((int64_t)r.orig_rax >= 0)
		r.orig_rax = (uint64_t)-1;
	return eng_regs_set(p, t->tid, &r, err);
}

/* Signals a call blocks: all but SIGKILL and SIGSTOP (the kernel
 * cannot), the faults the callee itself may raise
 * (a fault hit while blocked makes the kernel reset the program's
 * handler to the default) and SIGTRAP (our return is an int3: hit with
 * SIGTRAP blocked, the process's SIGTRAP action is reset to the default
 * too, and the rtlib's handler, finishing a call for a dead hunch, would
 * never run; a thread inside pthread_create blocks every signal).  The
 * others stay pending in the kernel during the call instead of stopping
 * the thread for hunch to hold (lost if hunch died then), and arrive
 * when the mask is restored: by hunch after the call, or by the rtlib's
 * handler from the save area if hunch died during it. */
static uint64_t sig_bit(int sig)
{
	return 1ULL << (sig - 1);
}

static uint64_t call_blocked(void)
{
	return ~(sig_bit(SIGKILL) | sig_bit(SIGSTOP) | sig_bit(SIGTRAP) |
		 sig_bit(SIGSEGV) | sig_bit(SIGBUS) | sig_bit(SIGILL) |
		 sig_bit(SIGFPE) | sig_bit(SIGSYS));
}

/* A parked signal (eng_sigpark.c) that the call can block is given back
 * to the kernel by the call's first resume: resumed with a signal that
 * is blocked, the kernel queues it again, siginfo and all.  Others (a
 * SIGSTOP, SIGTRAP or fault the program sent itself) become owed. */
static int first_signal(struct eng_proc *p, struct eng_thread *t)
{
	int sig = t->parked_sig;

	if (!t->parked)
		return 0;
	if ((call_blocked() & sig_bit(sig)) == 0) {
		eng_sigpark_unpark(p, t);
		return 0;
	}
	t->parked = false;
	t->requeued |= sig_bit(sig);   /* its stop was reported */
	return sig;
}

/* Set the call's mask once the frame is there: killed before, the
 * thread has its own mask; after, the save area restores it. */
static int set_call_mask(struct eng_thread *t, uint64_t mask)
{
	mask = (mask | call_blocked()) & ~sig_bit(SIGTRAP);
	return ptrace(PTRACE_SETSIGMASK, t->tid, sizeof mask, &mask) != 0
		? -errno : 0;
}

/* Run the thread until the call returns; other events on the way are
 * dealt with (signals owed to the program, our breakpoints stepped
 * over).  Returns 0 at the return, negative otherwise. */
static int run_call(struct eng_proc *p, struct eng_thread *t, uint64_t fn,
		    struct hunch_err *err)
{
	int64_t deadline = (int64_t)clock_mono_ms() + p->infcall_timeout_ms;
	int rc = eng_ptrace_thread_cont(p, t, first_signal(p, t));

	if (rc == 0)
		eng_fault_hit(ENG_FAULT_INFCALL);
	while (rc == 0) {
		int64_t left = deadline - (int64_t)clock_mono_ms();

		rc = left > 0 ? eng_ptrace_wait_thread(p, t, (int)left)
			      : -ETIMEDOUT;
		if (rc == -ETIMEDOUT)
			return call_err(p, t->tid, fn, rc, "it did not return "
				"in time (it may wait for a lock held by a "
				"stopped thread): its work was abandoned", err);
		if (rc < 0 || t->state == TS_GONE)
			return call_err(p, t->tid, fn, -ESRCH, "the process "
				"exited during the call", err);
		switch (t->stop) {
		case SK_INFCALL:
			return 0;
		case SK_FAULT: {
			char why[128];

			snprintf(why, sizeof(why), "the called function "
				 "crashed (%s at 0x%llx); the program was not "
				 "told", strsignal(t->fault_sig),
				 (unsigned long long)t->fault_addr);
			return call_err(p, t->tid, fn, -EFAULT, why, err);
		}
		case SK_BREAK:
			if (t->step_over && (rc = eng_bp_step_over(p, t)) < 0)
				return call_err(p, t->tid, fn, rc, "cannot "
					"step over a breakpoint", err);
			break;
		case SK_SIGNAL:  /* owed; delivered after the call */
		default:
			break;
		}
		if (t->state == TS_STOPPED)
			rc = eng_ptrace_thread_cont(p, t, 0);
	}
	return call_err(p, t->tid, fn, rc, strerror(-rc), err);
}

static int check_callable(struct eng_proc *p, struct eng_thread *t,
			  pid_t tid, int nargs, struct hunch_err *err)
{
	if (p->ended || p->detached)
		return hunch_err_set(err, -ESRCH, "process %d has ended or was "
				  "detached: no inferior call possible",
				  (int)p->pid);
	if (t == NULL)
		return hunch_err_set(err, -ESRCH,
				     "thread %d is not a thread of "
				     "process %d",
				     (int)tid, (int)p->pid);
	if (eng_exec_fenced(p, "call a function in it", err) < 0)
		return -ESTALE;
	if (t->state != TS_STOPPED || t->in_infcall)
		return hunch_err_set(err, -EBUSY, "thread %d of process %d is "
			"not stopped: stop it (eng_ptrace_stop_all) before an "
			"inferior call", (int)tid, (int)p->pid);
	if (nargs < 0 || nargs > 6)
		return hunch_err_set(err, -EINVAL,
				     "an inferior call takes 0 to "
				     "6 integer arguments, not %d",
				     nargs);
	return 0;
}

/* The process was job-control stopped (SIGSTOP) when we borrowed the
 * thread: interrupting it again yields a group-stop report, so that it
 * resumes with PTRACE_LISTEN and stays stopped for the program's world. */
static void back_to_group_stop(struct eng_proc *p, struct eng_thread *t)
{
	if (ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) != 0 ||
	    eng_ptrace_thread_cont(p, t, 0) != 0)
		return;
	while (t->state == TS_RUNNING &&
	       eng_ptrace_wait_thread(p, t, 5000) == 0)
		;
}

int eng_infcall(struct eng_proc *p, pid_t tid, uint64_t fn,
		const uint64_t *args, int nargs, uint64_t *ret,
		struct hunch_err *err)
{
	struct eng_thread *t = eng_ptrace_thread_find(p, tid);
	struct user_regs_struct saved, r;
	size_t xlen = ENG_XSTATE_MAX;
	uint64_t saved_step, mask = 0;
	bool job_stopped;
	void *xs;
	int rc;

	if ((rc = check_callable(p, t, tid, nargs, err)) < 0)
		return rc;
	if ((rc = eng_ptrace_thread_to_user_stop(p, t)) < 0)
		return call_err(p, tid, fn, rc, "cannot move it out of a "
				"system call", err);
	if ((rc = check_callable(p, t, tid, nargs, err)) < 0)
		return rc;
	if ((rc = eng_regs_get(p, tid, &saved, err)) < 0)
		return rc;
	xs = malloc(xlen);
	if (xs == NULL || eng_regs_get_xstate(p, tid, xs, &xlen) < 0) {
		free(xs);
		return call_err(p, tid, fn, -EIO, "cannot save its vector "
				"registers", err);
	}
	job_stopped = t->stop == SK_GROUP;
	saved_step = t->step_over;  /* it may be parked on our int3 */
	t->step_over = 0;
	if (ptrace(PTRACE_GETSIGMASK, tid, sizeof mask, &mask) != 0)
		rc = call_err(p, tid, fn, -errno, "cannot read its signal "
			      "mask", err);
	else
		rc = setup_frame(p, t, &saved, fn, args, nargs, mask, xs,
				 xlen, err);
	if (rc == 0 && (rc = set_call_mask(t, mask)) < 0)
		call_err(p, tid, fn, rc, "cannot set its signal mask", err);
	if (rc == 0) {
		t->in_infcall = true;
		rc = run_call(p, t, fn, err);
		t->in_infcall = false;
	}
	if (t->state == TS_RUNNING)  /* timed out: take it back */
		eng_ptrace_thread_interrupt_wait(p, t);
	if (rc == 0 && eng_regs_get(p, tid, &r, err) == 0)
		*ret = r.rax;
	if (t->state == TS_STOPPED) {
		eng_regs_set(p, tid, &saved, NULL);
		eng_regs_set_xstate(p, tid, xs, xlen);
		ptrace(PTRACE_SETSIGMASK, tid, sizeof mask, &mask);
		/* It now sits at the SIGSEGV signal-delivery-stop of the
		 * return, from which an owed signal can be injected. */
		t->step_over = saved_step;
		if (job_stopped)
			back_to_group_stop(p, t);
	}
	t->scratch = 0;
	free(xs);
	return rc;
}

int eng_infcall_push(struct eng_proc *p, pid_t tid, const void *data,
		     size_t len, uint64_t *addr, struct hunch_err *err)
{
	struct eng_thread *t = eng_ptrace_thread_find(p, tid);
	struct user_regs_struct r;
	int rc;

	if ((rc = check_callable(p, t, tid, 0, err)) < 0)
		return rc;
	if ((rc = eng_regs_get(p, tid, &r, err)) < 0)
		return rc;
	if (t->scratch_sp != r.rsp) {
		t->scratch = 0;
		t->scratch_sp = r.rsp;
	}
	if (len > SCRATCH_MAX || t->scratch + len > SCRATCH_MAX)
		return hunch_err_set(err, -ENOSPC,
				     "inferior-call scratch space "
				     "of thread %d is full (%d bytes at most)",
				     (int)tid, SCRATCH_MAX);
	t->scratch = (t->scratch + len + 15) & ~15ULL;
	*addr = r.rsp - RED_ZONE - t->scratch;
	return eng_mem_write(p, *addr, data, len, err);
}

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
 */
#include "eng_proc_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <time.h>

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#define RED_ZONE 128
#define SCRATCH_MAX 8192
#define EFLAGS_TF 0x100
#define EFLAGS_DF 0x400

static int call_err(struct eng_proc *p, pid_t tid, uint64_t fn, int rc,
		    const char *why, struct hunch_err *err)
{
	return hunch_errf(err, rc, "inferior call of 0x%llx on thread %d of "
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

static int setup_frame(struct eng_proc *p, struct eng_thread *t,
		       const struct user_regs_struct *saved, uint64_t fn,
		       const uint64_t *args, int nargs, struct hunch_err *err)
{
	struct user_regs_struct r = *saved;
	uint64_t sp, zero = 0;
	int rc;

	sp = saved->rsp - RED_ZONE - scratch_used(t, saved->rsp);
	sp &= ~15ULL;
	sp -= 8;  /* as if `call` pushed: %rsp+8 is 16-aligned at entry */
	rc = eng_write_mem(p, sp, &zero, sizeof(zero), err);
	if (rc < 0)
		return rc;
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
	return eng_set_regs(p, t->tid, &r, err);
}

/* Run the thread until the call returns; other events on the way are
 * dealt with (signals owed to the program, our breakpoints stepped
 * over).  Returns 0 at the return, negative otherwise. */
static int run_call(struct eng_proc *p, struct eng_thread *t, uint64_t fn,
		    struct hunch_err *err)
{
	int64_t deadline = now_ms() + p->infcall_timeout_ms;
	int rc = eng_thread_cont(p, t, 0);

	while (rc == 0) {
		int64_t left = deadline - now_ms();

		rc = left > 0 ? eng_wait_thread(p, t, (int)left) : -ETIMEDOUT;
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
			if (t->step_over && (rc = eng_step_over(p, t)) < 0)
				return call_err(p, t->tid, fn, rc, "cannot "
					"step over a breakpoint", err);
			break;
		case SK_SIGNAL:  /* owed; delivered after the call */
		default:
			break;
		}
		if (t->state == TS_STOPPED)
			rc = eng_thread_cont(p, t, 0);
	}
	return call_err(p, t->tid, fn, rc, strerror(-rc), err);
}

static int check_callable(struct eng_proc *p, struct eng_thread *t,
			  pid_t tid, int nargs, struct hunch_err *err)
{
	if (p->ended || p->detached)
		return hunch_errf(err, -ESRCH, "process %d has ended or was "
				  "detached: no inferior call possible",
				  (int)p->pid);
	if (t == NULL)
		return hunch_errf(err, -ESRCH, "thread %d is not a thread of "
				  "process %d", (int)tid, (int)p->pid);
	if (t->state != TS_STOPPED || t->in_infcall)
		return hunch_errf(err, -EBUSY, "thread %d of process %d is "
			"not stopped: stop it (eng_stop_all) before an "
			"inferior call", (int)tid, (int)p->pid);
	if (nargs < 0 || nargs > 6)
		return hunch_errf(err, -EINVAL, "an inferior call takes 0 to "
				  "6 integer arguments, not %d", nargs);
	return 0;
}

/* The process was job-control stopped (SIGSTOP) when we borrowed the
 * thread: interrupting it again yields a group-stop report, so that it
 * resumes with PTRACE_LISTEN and stays stopped for the program's world. */
static void back_to_group_stop(struct eng_proc *p, struct eng_thread *t)
{
	if (ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) != 0 ||
	    eng_thread_cont(p, t, 0) != 0)
		return;
	while (t->state == TS_RUNNING &&
	       eng_wait_thread(p, t, 5000) == 0)
		;
}

int eng_infcall(struct eng_proc *p, pid_t tid, uint64_t fn,
		const uint64_t *args, int nargs, uint64_t *ret,
		struct hunch_err *err)
{
	struct eng_thread *t = eng_thread_find(p, tid);
	struct user_regs_struct saved, r;
	size_t xlen = ENG_XSTATE_MAX;
	uint64_t saved_step;
	bool job_stopped;
	void *xs;
	int rc;

	if ((rc = check_callable(p, t, tid, nargs, err)) < 0)
		return rc;
	if ((rc = eng_thread_to_user_stop(p, t)) < 0)
		return call_err(p, tid, fn, rc, "cannot move it out of a "
				"system call", err);
	if ((rc = check_callable(p, t, tid, nargs, err)) < 0)
		return rc;
	if ((rc = eng_get_regs(p, tid, &saved, err)) < 0)
		return rc;
	xs = malloc(xlen);
	if (xs == NULL || eng_get_xstate(p, tid, xs, &xlen) < 0) {
		free(xs);
		return call_err(p, tid, fn, -EIO, "cannot save its vector "
				"registers", err);
	}
	job_stopped = t->stop == SK_GROUP;
	saved_step = t->step_over;  /* it may be parked on our int3 */
	t->step_over = 0;
	rc = setup_frame(p, t, &saved, fn, args, nargs, err);
	if (rc == 0) {
		t->in_infcall = true;
		rc = run_call(p, t, fn, err);
		t->in_infcall = false;
	}
	if (t->state == TS_RUNNING)  /* timed out: take it back */
		eng_thread_interrupt_wait(p, t);
	if (rc == 0 && eng_get_regs(p, tid, &r, err) == 0)
		*ret = r.rax;
	if (t->state == TS_STOPPED) {
		eng_set_regs(p, tid, &saved, NULL);
		eng_set_xstate(p, tid, xs, xlen);
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
	struct eng_thread *t = eng_thread_find(p, tid);
	struct user_regs_struct r;
	int rc;

	if ((rc = check_callable(p, t, tid, 0, err)) < 0)
		return rc;
	if ((rc = eng_get_regs(p, tid, &r, err)) < 0)
		return rc;
	if (t->scratch_sp != r.rsp) {
		t->scratch = 0;
		t->scratch_sp = r.rsp;
	}
	if (len > SCRATCH_MAX || t->scratch + len > SCRATCH_MAX)
		return hunch_errf(err, -ENOSPC, "inferior-call scratch space "
			"of thread %d is full (%d bytes at most)", (int)tid,
			SCRATCH_MAX);
	t->scratch = (t->scratch + len + 15) & ~15ULL;
	*addr = r.rsp - RED_ZONE - t->scratch;
	return eng_write_mem(p, *addr, data, len, err);
}

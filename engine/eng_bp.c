/*
 * eng_bp.c - hunch's own int3 breakpoints (entry, main, the dynamic
 * linker's r_brk) and stepping a thread over one.
 *
 * A step-over puts the original byte back for one instruction, so every
 * other thread is stopped meanwhile: a thread running past the
 * restored byte would miss the breakpoint (a lost library event).
 */
#include "eng_proc_int.h"

#include <errno.h>
#include <string.h>
#include <sys/ptrace.h>

struct eng_bp *eng_bp_find(struct eng_proc *p, uint64_t addr)
{
	for (size_t i = 0; i < p->nbps; i++)
		if (p->bps[i].addr == addr)
			return &p->bps[i];
	return NULL;
}

int eng_bp_insert(struct eng_proc *p, uint64_t addr, enum eng_bp_kind k,
		  struct hunch_err *err)
{
	static const uint8_t int3 = 0xcc;
	struct eng_bp *bp;
	int rc;

	if (eng_bp_find(p, addr) != NULL)
		return 0;
	if (p->nbps == ENG_MAX_BPS)
		return hunch_err_set(err, -ENOSPC,
				     "too many hunch breakpoints in "
				     "process %d",
				     (int)p->pid);
	bp = &p->bps[p->nbps];
	bp->addr = addr;
	bp->kind = k;
	rc = eng_mem_read(p, addr, &bp->orig, 1, err);
	if (rc == 0)
		rc = eng_mem_write_any(p, addr, &int3, 1, err);
	if (rc < 0) {
		hunch_err_prefix(err, "cannot set a breakpoint: ");
		return rc;
	}
	p->nbps++;
	return 0;
}

int eng_bp_remove(struct eng_proc *p, uint64_t addr)
{
	struct eng_bp *bp = eng_bp_find(p, addr);
	int rc;

	if (bp == NULL)
		return 0;
	rc = eng_mem_write_any(p, addr, &bp->orig, 1, NULL);
	*bp = p->bps[--p->nbps];
	/* A thread parked on it no longer needs stepping over. */
	for (size_t i = 0; i < p->nth; i++)
		if (p->th[i]->step_over == addr)
			p->th[i]->step_over = 0;
	return rc;
}

void eng_bp_remove_all(struct eng_proc *p)
{
	while (p->nbps > 0)
		eng_bp_remove(p, p->bps[0].addr);
}

/* Single-step t until the instruction under the breakpoint is done, or
 * until a signal stops it first.  That signal stays parked in the kernel
 * (eng_sigpark.c): stepping on would drop it, and hunch holding it would
 * lose it if SIGKILLed.  The step is given up: with the int3 back, t
 * resumes with the signal, runs its handler (as it would have there
 * untraced) and comes back to the int3, hit and stepped over again. */
static int single_step(struct eng_proc *p, struct eng_thread *t)
{
	int rc = 0;

	t->stepping = true;
	for (;;) {
		if (ptrace(PTRACE_SINGLESTEP, t->tid, 0, 0) != 0) {
			rc = -errno;
			break;
		}
		t->state = TS_RUNNING;
		rc = eng_ptrace_wait_thread(p, t, 5000);
		if (rc < 0 || t->state == TS_GONE || t->stop == SK_STEP ||
		    t->parked)
			break;
	}
	t->stepping = false;
	return rc == -ECHILD ? 0 : rc;
}

int eng_bp_step_while(struct eng_proc *p, pid_t tid,
			bool (*inside)(void *arg, uint64_t pc), void *arg,
			int max_steps)
{
	struct eng_thread *t = eng_ptrace_thread_find(p, tid);
	struct user_regs_struct r;
	uint8_t op[2];

	if (t == NULL)
		return -ESRCH;
	for (int i = 0;; i++) {
		if (eng_regs_get(p, tid, &r, NULL) < 0)
			return -ESRCH;
		if (!inside(arg, r.rip))
			return 0;
		/* never into a system call: a blocking one would hold the
		 * step (and every stopped thread) until it returned; nor
		 * out of one the kernel would restart */
		if (i == max_steps || (long long)r.orig_rax >= 0 ||
		    eng_mem_read(p, r.rip, op, 2, NULL) < 0 ||
		    (op[0] == 0x0f && op[1] == 0x05))
			return -EAGAIN;
		if (single_step(p, t) < 0 || t->state == TS_GONE ||
		    t->stop != SK_STEP || t->parked)
			return -EAGAIN;
	}
}

int eng_bp_step_over(struct eng_proc *p, struct eng_thread *t)
{
	static const uint8_t int3 = 0xcc;
	struct user_regs_struct r;
	uint64_t addr = t->step_over;
	struct eng_bp *bp = eng_bp_find(p, addr);
	pid_t others[256];
	size_t nothers = 0;
	int rc;

	t->step_over = 0;
	if (bp == NULL || eng_regs_get(p, t->tid, &r, NULL) != 0 ||
	    r.rip != addr)
		return 0;  /* removed, or the thread was moved elsewhere */
	p->hold++;
	for (size_t i = 0; i < p->nth; i++) {
		struct eng_thread *u = p->th[i];

		if (u == t || u->state != TS_RUNNING)
			continue;
		if (nothers < sizeof(others) / sizeof(others[0]))
			others[nothers++] = u->tid;
		eng_ptrace_thread_interrupt_wait(p, u);
	}
	rc = eng_mem_write_any(p, addr, &bp->orig, 1, NULL);
	if (rc == 0)
		rc = single_step(p, t);
	if (!p->ended && eng_bp_find(p, addr) != NULL)
		eng_mem_write_any(p, addr, &int3, 1, NULL);
	p->hold--;
	for (size_t i = 0; i < nothers; i++) {
		struct eng_thread *u = eng_ptrace_thread_find(p, others[i]);

		if (u != NULL)
			u->deferred = true;
	}
	/* Those we stopped, and any that stopped by themselves (a new
	 * thread, a signal) while we held everything. */
	for (size_t i = 0; p->hold == 0 && i < p->nth; i++) {
		struct eng_thread *u = p->th[i];

		if (u->deferred && u != t) {
			u->deferred = false;
			eng_ptrace_settle(p, u);
		}
	}
	return rc;
}

/*
 * eng_sigpark.c - the program's signals stay in the kernel while hunch
 * looks at them.
 *
 * Every signal for the program first stops its thread in a
 * signal-delivery-stop.  A waitpid that reports such a stop takes the
 * signal from the kernel: wait_task_stopped() clears the tracee's
 * exit_code, which is the signal it delivers when it resumes.  From then
 * on the signal lived only in hunch until its PTRACE_CONT(sig); a hunch
 * SIGKILLed meanwhile left the thread to be resumed by the kernel
 * (exit_ptrace) with exit_code 0, and the signal was lost
 * (inst_sigkill lost one SIGRTMIN of 20,000 in a run in three).
 *
 * So hunch never takes such a stop.  Each poll of a thread peeks first
 * (waitid WNOWAIT: the report and exit_code stay); a signal-delivery-stop
 * is *parked*: the thread counts as stopped (all a commit needs), hunch
 * notes the signal, and the kernel still holds it.  It is resumed with
 * PTRACE_CONT(sig) on the stop nobody collected (ptrace requests work on
 * any ptrace-stopped tracee, waited for or not), after which the stop is
 * no longer reported.  At every instant the signal is either in
 * exit_code or delivered: killed anywhere, the kernel's detach resumes
 * the thread with it, exactly once.
 *
 * A parked stop stays reportable, so a parked thread is polled by peeks
 * only: its stop is ignored and only its death (which ends the stop) is
 * taken.  A peek that sees nothing is not followed by a waitpid either: a
 * stop arriving in between would be collected unseen.
 *
 * Not parked (collected and owed, hunch holds the signal): stops of a
 * thread in an inferior call (its return and a crash are faults;
 * eng_infcall.c blocks the other signals for the call), and the SIGTRAPs
 * of our own int3s and steps.
 */
#include "eng_proc_int.h"
#include "eng_fault.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

/* A signal stop taken: the fault points that count it (eng_fault.h). */
void eng_sigpark_test_kill_signal(const struct eng_proc *p)
{
	eng_fault_hit(ENG_FAULT_SIGNAL);
	if (p->want_stop)
		eng_fault_hit(ENG_FAULT_SIGNAL_IN_COMMIT);
	if (p->hold != 0)
		eng_fault_hit(ENG_FAULT_SIGNAL_IN_STEP);
}

/* May this signal-delivery-stop of t wait uncollected until t's resume?
 * Not in an inferior call (its loop resumes t with 0), nor a SIGTRAP of
 * one of our int3s or steps (on_trap takes those): a SIGTRAP is the
 * program's when something else sent it (kill, raise, its own TF) or its
 * int3 is none of ours.  A step over our int3 that meets a signal ends
 * there (eng_bp.c). */
static bool parkable(struct eng_proc *p, const struct eng_thread *t,
		     int sig)
{
	struct user_regs_struct r;
	siginfo_t si;

	if (t->state != TS_RUNNING || t->in_infcall || t->trap_sent ||
	    sig < 1 || sig > 64 || sig == SIGKILL)
		return false;
	if (sig != SIGTRAP)
		return true;
	if (t->stepping)
		return false;
	memset(&si, 0, sizeof si);
	if (ptrace(PTRACE_GETSIGINFO, t->tid, 0, &si) != 0)
		return false;
	if (si.si_code != SI_KERNEL)
		return true;
	return eng_regs_get(p, t->tid, &r, NULL) == 0 &&
	       eng_bp_find(p, r.rip - 1) == NULL &&
	       eng_trap_target(p, r.rip - 1) == 0;
}

static void park(struct eng_proc *p, struct eng_thread *t, int sig)
{
	t->state = TS_STOPPED;
	t->stop = SK_SIGNAL;
	t->sigstop_now = false;
	t->hit_bp = 0;
	t->parked = true;
	t->parked_sig = sig;
	eng_ptrace_signal_event(p, t, sig);
	eng_sigpark_test_kill_signal(p);
}

enum eng_peek eng_sigpark_peek(struct eng_proc *p, struct eng_thread *t)
{
	siginfo_t w;

	memset(&w, 0, sizeof w);
	if (waitid(P_PID, (id_t)t->tid, &w, WEXITED | WSTOPPED | WNOHANG |
		   WNOWAIT | __WALL) != 0)
		return errno == EINTR ? PEEK_QUIET : PEEK_TAKE;
	if (w.si_pid != t->tid)
		return PEEK_QUIET;
	if (w.si_code != CLD_TRAPPED)
		return PEEK_TAKE;       /* exited or killed */
	if (t->parked)
		return PEEK_QUIET;      /* the stop we parked */
	/* si_status is the whole exit_code: event stops carry their
	 * event in bits 8.., syscall stops 0x80, so only a
	 * signal-delivery-stop is a plain signal number. */
	if (eng_trap_preempt(p, t, &w) || !parkable(p, t, w.si_status))
		return PEEK_TAKE;
	park(p, t, w.si_status);
	return PEEK_PARKED;
}

/* For a caller that must run the thread without the signal (a last
 * resort: eng_infcall.c gives the signal back to the kernel instead). */
void eng_sigpark_unpark(struct eng_proc *p, struct eng_thread *t)
{
	siginfo_t si;
	pid_t r;
	int st;

	if (!t->parked)
		return;
	t->parked = false;
	memset(&si, 0, sizeof si);
	if (ptrace(PTRACE_GETSIGINFO, t->tid, 0, &si) != 0)
		si.si_code = SI_USER;
	do
		r = waitpid(t->tid, &st, WNOHANG | __WALL);
	while (r < 0 && errno == EINTR);
	if (r <= 0) {   /* no longer stopped (dying) or reaped elsewhere:
			   the next wait says which */
		t->state = TS_RUNNING;
		t->stop = SK_NONE;
		return;
	}
	if (!WIFSTOPPED(st)) {
		eng_ptrace_dispatch(p, t, st);
		return;
	}
	eng_ptrace_owe_signal(t, t->parked_sig, &si);
	t->sigstop_now = true;
}

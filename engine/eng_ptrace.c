/*
 * eng_ptrace.c - the thread table, waiting for ptrace reports and
 * classifying them, and resuming threads the way their stop requires.
 *
 * We never call waitpid(-1): hunch (or a test) may have children of its
 * own, and a second eng_proc must not steal our reports.  Instead we poll
 * our own tids with WNOHANG and back off; new threads are learned from
 * clone events, whose child stop we then wait for by tid.  Each poll
 * peeks first (eng_sigpark_peek): the program's signal-delivery-stops are
 * left uncollected, so the kernel keeps their signal.
 */
#include "eng_main.h"
#include "eng_proc_int.h"
#include "eng_taskstate.h"
#include "clock_mono.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct eng_thread *eng_ptrace_thread_find(struct eng_proc *p, pid_t tid)
{
	for (size_t i = 0; i < p->nth; i++)
		if (p->th[i]->tid == tid && p->th[i]->state != TS_GONE)
			return p->th[i];
	return NULL;
}

struct eng_thread *eng_ptrace_thread_add(struct eng_proc *p, pid_t tid,
				  enum eng_tstate st)
{
	struct eng_thread *t;

	if (p->nth == p->capth) {
		size_t cap = p->capth ? p->capth * 2 : 8;
		struct eng_thread **n = realloc(p->th, cap * sizeof(*n));

		if (n == NULL)
			return NULL;
		p->th = n;
		p->capth = cap;
	}
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return NULL;
	p->th[p->nth++] = t;
	t->tid = tid;
	t->state = st;
	return t;
}

struct eng_thread *eng_ptrace_leader(struct eng_proc *p)
{
	return eng_ptrace_thread_find(p, p->pid);
}

int eng_ptrace_queue_event(struct eng_proc *p, const struct eng_event *ev)
{
	if (p->nevq == p->capevq) {
		size_t cap = p->capevq ? p->capevq * 2 : 8;
		struct eng_event *n = realloc(p->evq, cap * sizeof(*n));

		if (n == NULL)
			return -ENOMEM;
		p->evq = n;
		p->capevq = cap;
	}
	p->evq[p->nevq++] = *ev;
	return 0;
}

static void queue_simple(struct eng_proc *p, enum eng_event_kind k,
			 pid_t tid, int status, int signo, bool core)
{
	struct eng_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.kind = k;
	ev.tid = tid;
	ev.status = status;
	ev.signo = signo;
	ev.core = core;
	eng_ptrace_queue_event(p, &ev);
}

/* A thread (or the whole process) is gone. */
static enum eng_stop on_death(struct eng_proc *p, struct eng_thread *t,
			      int status)
{
	t->state = TS_GONE;
	t->stop = SK_EXITED;
	if (t->tid != p->pid) {
		queue_simple(p, ENG_EV_THREAD_EXIT, t->tid, 0, 0, false);
		return SK_EXITED;
	}
	/* The leader is reported last: every thread is gone now. */
	for (size_t i = 0; i < p->nth; i++)
		p->th[i]->state = TS_GONE;
	p->ended = true;
	if (WIFEXITED(status))
		queue_simple(p, ENG_EV_EXITED, t->tid, WEXITSTATUS(status), 0,
			     false);
	else
		queue_simple(p, ENG_EV_KILLED, t->tid, 0, WTERMSIG(status),
			     WCOREDUMP(status));
	return SK_EXITED;
}

/* A new thread: its first stop is certain to come, so wait for it. */
static void on_clone(struct eng_proc *p, struct eng_thread *parent)
{
	struct eng_thread *t;
	unsigned long msg = 0;
	int status;
	pid_t tid;

	if (ptrace(PTRACE_GETEVENTMSG, parent->tid, 0, &msg) != 0)
		return;
	tid = (pid_t)msg;
	t = eng_ptrace_thread_add(p, tid, TS_RUNNING);
	if (t == NULL)
		return;
	while (waitpid(tid, &status, __WALL) < 0 && errno == EINTR)
		;
	queue_simple(p, ENG_EV_THREAD_NEW, tid, 0, 0, false);
	if (eng_ptrace_dispatch(p, t, status) != SK_EXITED)
		eng_ptrace_settle(p, t);
}

/* execve replaced the image: threads, int3s and modules are gone.
 * Until the client has let go of the old image nothing is written
 * into the new one (eng_exec.c's fence); an image that is not x86-64
 * is not read at all. */
static void on_exec(struct eng_proc *p, struct eng_thread *t)
{
	struct eng_event ev;
	char link[64];
	ssize_t n;
	int st;

	p->trap_table = 0;      /* the new image has no trap points */
	p->infcall_ret = 0;     /* nor the old runtime library */
	eng_main_forget(p);     /* nor the old main */
	p->exec_fence = p->exec_follow;  /* a client that follows lets go */
	p->exec_held = false;
	/* execve killed every other thread; their death reports may
	 * come or not, so they are over now. */
	for (size_t i = 0; i < p->nth; i++)
		if (p->th[i] != t && p->th[i]->state != TS_GONE) {
			waitpid(p->th[i]->tid, &st, WNOHANG | __WALL);
			p->th[i]->state = TS_GONE;
			queue_simple(p, ENG_EV_THREAD_EXIT, p->th[i]->tid, 0, 0,
				     false);
		}
	p->nbps = 0;  /* the bytes went with the old image */
	p->r_debug = p->r_brk = 0;
	if (p->memfd >= 0)
		close(p->memfd);
	p->memfd = -1;
	eng_mem_open(p);
	eng_solib_clear(p);
	memset(&ev, 0, sizeof(ev));
	ev.kind = ENG_EV_EXEC;
	ev.tid = t->tid;
	ev.status = eng_exec_image_ok(p) ? 0 : ENG_EXEC_FOREIGN;
	if (ev.status == 0) {
		eng_solib_set_exe(p);
		/* Track the new image's libraries once its ld.so has run. */
		if (eng_solib_read_auxv(p->pid, AT_ENTRY, &p->entry) == 0)
			eng_bp_insert(p, p->entry, BP_EXEC_ENTRY, NULL);
	}
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)p->pid);
	n = readlink(link, ev.path, sizeof(ev.path) - 1);
	ev.path[n > 0 ? n : 0] = '\0';
	eng_ptrace_queue_event(p, &ev);
}

static bool is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN ||
	       sig == SIGTTOU;
}

/* SIGTRAP: one of our int3s, the end of a single step, or the
 * program's own SIGTRAP (returns SK_SIGNAL then). */
static enum eng_stop on_trap(struct eng_proc *p, struct eng_thread *t,
			     const siginfo_t *si)
{
	struct user_regs_struct r;
	struct eng_bp *bp;
	uint64_t to;

	if (t->trap_sent) {     /* eng_trap_preempt sent it on already */
		t->trap_sent = false;
		return SK_EVENT;
	}
	if (t->stepping && si->si_code != SI_USER && si->si_code != SI_TKILL &&
	    si->si_code != SI_QUEUE && si->si_code != SI_KERNEL)
		return SK_STEP;
	if (si->si_code != SI_KERNEL || eng_regs_get(p, t->tid, &r, NULL))
		return SK_SIGNAL;
	if ((to = eng_trap_target(p, r.rip - 1)) != 0) {
		r.rip = to;
		eng_regs_set(p, t->tid, &r, NULL);
		return SK_EVENT;   /* resumed with no signal */
	}
	bp = eng_bp_find(p, r.rip - 1);
	if (bp == NULL)
		return SK_SIGNAL;
	r.rip--;
	eng_regs_set(p, t->tid, &r, NULL);
	t->hit_bp = bp->addr;
	if (bp->kind == BP_RBRK) {
		t->step_over = bp->addr;
		eng_solib_hit(p);
	} else if (bp->kind == BP_EXEC_ENTRY) {
		eng_bp_remove(p, bp->addr);  /* one shot: runs on from here */
		eng_solib_init(p, NULL);
		p->main_addr = eng_main_find(p);
		eng_exec_at_entry(p);
	}
	return SK_BREAK;
}

/* Remember a signal the program is owed; several can pile up while a
 * thread runs an inferior call. */
void eng_ptrace_owe_signal(struct eng_thread *t, int sig, const siginfo_t *si)
{
	if (t->npending < ENG_MAX_PENDING) {
		t->pending_si[t->npending] = *si;
		t->pending[t->npending++] = sig;
	}
}

/* An owed signal can ride on a later stop than its own (after an
 * inferior call on the thread, its return's SIGTRAP stop): the kernel
 * would then give it a made-up siginfo (SI_USER, sent by hunch) unless
 * its own is put back first.  glibc's SIGCANCEL handler ignores a signal
 * that its own process did not send with tgkill, so pthread_cancel was
 * lost (proc_targets: pthread_exit hung under churn). */
int eng_ptrace_owed_signals(struct eng_proc *p, struct eng_thread *t)
{
	int sig = 0, i = 0;

	if (t->parked) {        /* still the kernel's: it rides as it is */
		sig = t->parked_sig;
		t->parked = false;
	} else if (t->npending > 0 && t->sigstop_now) {
		sig = t->pending[0];
		ptrace(PTRACE_SETSIGINFO, t->tid, 0, &t->pending_si[0]);
		i = 1;
	}
	for (; i < t->npending; i++)
		syscall(SYS_tgkill, p->pid, t->tid, t->pending[i]);
	t->npending = 0;
	return sig;
}

static bool is_fault(int sig, const siginfo_t *si)
{
	return (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL ||
		sig == SIGFPE || sig == SIGTRAP) && si->si_code > 0;
}

/* During an inferior call: the return to the rtlib's int3 (or to
 * address 0 before the rtlib is there), or a crash of the callee
 * (re-running the faulting instruction would only fault again, so the
 * call is abandoned and the signal never reaches the program). */
static enum eng_stop infcall_end(struct eng_proc *p, struct eng_thread *t,
				 int sig, const siginfo_t *si)
{
	struct user_regs_struct r;

	if (!is_fault(sig, si))
		return SK_NONE;
	if (sig == SIGTRAP && si->si_code == SI_KERNEL && p->infcall_ret &&
	    eng_regs_get(p, t->tid, &r, NULL) == 0 &&
	    r.rip == p->infcall_ret + 1)
		return SK_INFCALL;
	if (sig == SIGSEGV && si->si_addr == NULL &&
	    eng_regs_get(p, t->tid, &r, NULL) == 0 && r.rip == 0)
		return SK_INFCALL;
	t->fault_sig = sig;
	t->fault_addr = (uint64_t)(uintptr_t)si->si_addr;
	return SK_FAULT;
}

void eng_ptrace_signal_event(struct eng_proc *p, struct eng_thread *t, int sig)
{
	uint64_t bit = sig >= 1 && sig <= 64 ? 1ULL << (sig - 1) : 0;

	if (t->requeued & bit)  /* reported when it stopped t before */
		t->requeued &= ~bit;
	else
		queue_simple(p, ENG_EV_SIGNAL, t->tid, 0, sig, false);
}

/* A signal-delivery-stop that was taken (not parked: see
 * eng_sigpark.c): the waitpid took the signal from the kernel, so it is
 * owed, and rides on the thread's resume. */
static enum eng_stop on_signal(struct eng_proc *p, struct eng_thread *t,
			       int sig)
{
	siginfo_t si;
	enum eng_stop k;

	t->sigstop_now = true;  /* a signal can ride on the resume */
	memset(&si, 0, sizeof(si));
	if (ptrace(PTRACE_GETSIGINFO, t->tid, 0, &si) != 0)
		si.si_code = SI_USER;
	if (sig == SIGTRAP) {
		k = on_trap(p, t, &si);
		if (k != SK_SIGNAL)
			return k;
	}
	if (t->in_infcall && (k = infcall_end(p, t, sig, &si)) != SK_NONE)
		return k;
	eng_ptrace_owe_signal(t, sig, &si);
	eng_ptrace_signal_event(p, t, sig);
	eng_sigpark_test_kill_signal(p);
	return SK_SIGNAL;
}

enum eng_stop eng_ptrace_dispatch(struct eng_proc *p, struct eng_thread *t,
			   int status)
{
	int sig, event;

	t->hit_bp = 0;
	if (WIFEXITED(status) || WIFSIGNALED(status))
		return on_death(p, t, status);
	if (!WIFSTOPPED(status))
		return SK_NONE;
	t->state = TS_STOPPED;
	t->sigstop_now = false;
	sig = WSTOPSIG(status);
	event = status >> 16;
	if (event == PTRACE_EVENT_STOP) {
		/* The kernel reports the stop signal instead of SIGTRAP
		 * exactly when the process is job-control stopped. */
		t->group_stopped = is_stop_signal(sig);
		return t->stop = t->group_stopped ? SK_GROUP : SK_EVENT;
	}
	if (event == PTRACE_EVENT_CLONE) {
		t->stop = SK_OTHER;
		on_clone(p, t);
		return SK_OTHER;
	}
	if (event == PTRACE_EVENT_FORK || event == PTRACE_EVENT_VFORK) {
		t->stop = SK_OTHER;
		eng_fork_event(p, t);
		return SK_OTHER;
	}
	if (event == PTRACE_EVENT_EXEC) {
		on_exec(p, t);
		return t->stop = SK_EXEC;
	}
	if (event != 0 || sig == (SIGTRAP | 0x80))
		return t->stop = SK_OTHER;
	return t->stop = on_signal(p, t, sig);
}

static int waitpid_nohang(pid_t tid, int *status)
{
	pid_t r;

	do
		r = waitpid(tid, status, WNOHANG | __WALL);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	return r == tid ? 1 : 0;
}

/* Sleep a little longer each time we find nothing, up to 2 ms. */
static void backoff(long *ns)
{
	struct timespec ts = { 0, *ns };

	nanosleep(&ts, NULL);
	if (*ns < 2000000)
		*ns *= 2;
}

/* A thread we cannot wait for any more (reaped elsewhere, or gone
 * during exec) is gone. */
static void lost(struct eng_proc *p, struct eng_thread *t)
{
	t->state = TS_GONE;
	t->stop = SK_EXITED;
	if (t->tid == p->pid && !p->ended) {
		p->ended = true;
		for (size_t i = 0; i < p->nth; i++)
			p->th[i]->state = TS_GONE;
		/* Someone else reaped it: the end is known, the status not. */
		queue_simple(p, ENG_EV_EXITED, t->tid, -1, 0, false);
	}
}

int eng_ptrace_wait_thread(struct eng_proc *p, struct eng_thread *t,
		    int timeout_ms)
{
	int64_t deadline = (int64_t)clock_mono_ms() + timeout_ms;
	long ns = 20000;
	pid_t tid = t->tid;
	enum eng_peek pk;
	int status, rc;

	for (;;) {
		if (t->state == TS_GONE)
			return -ECHILD;
		pk = eng_sigpark_peek(p, t);
		if (pk == PEEK_PARKED)
			return 0;
		rc = pk == PEEK_TAKE ? waitpid_nohang(tid, &status) : 0;
		if (rc < 0) {
			lost(p, t);
			return -ECHILD;
		}
		if (rc > 0) {
			eng_ptrace_dispatch(p, t, status);
			return 0;
		}
		if (timeout_ms >= 0 && (int64_t)clock_mono_ms() >= deadline)
			return -ETIMEDOUT;
		backoff(&ns);
	}
}

int eng_ptrace_wait_any(struct eng_proc *p, int timeout_ms, pid_t *tid_out)
{
	int64_t deadline = (int64_t)clock_mono_ms() + timeout_ms;
	long ns = 20000;
	int status, rc;

	for (;;) {
		bool any = false;

		/* Start where the last scan stopped, so that one thread
		 * with a stream of stops cannot starve the others. */
		for (size_t k = 0; k < p->nth; k++) {
			size_t i = (p->wait_next + k) % p->nth;
			struct eng_thread *t = p->th[i];
			pid_t tid = t->tid;
			enum eng_peek pk;

			if (t->state == TS_GONE)
				continue;
			any = true;
			pk = eng_sigpark_peek(p, t);
			rc = pk == PEEK_TAKE ? waitpid_nohang(tid, &status) : 0;
			if (rc < 0) {
				lost(p, t);
				continue;
			}
			if (rc > 0 || pk == PEEK_PARKED) {
				p->wait_next = i + 1;
				if (rc > 0)
					eng_ptrace_dispatch(p, t, status);
				*tid_out = tid;
				return 0;
			}
		}
		if (!any)
			return -ECHILD;
		if (timeout_ms >= 0 && (int64_t)clock_mono_ms() >= deadline)
			return -ETIMEDOUT;
		backoff(&ns);
	}
}

/* Let a stopped thread run with request req (PTRACE_CONT, or LISTEN in a
 * group-stop), delivering sig.  ESRCH: it died under us; waitpid will
 * say so. */
static int restart(struct eng_thread *t, int req, int sig)
{
	if (ptrace(req, t->tid, 0, (void *)(long)sig) != 0 && errno != ESRCH)
		return -errno;
	t->state = TS_RUNNING;
	t->stop = SK_NONE;
	t->sigstop_now = false;
	return 0;
}

int eng_ptrace_thread_cont(struct eng_proc *p, struct eng_thread *t, int sig)
{
	if (t->parked) {        /* never drop a parked signal: owe it */
		eng_sigpark_unpark(p, t);
		if (t->state != TS_STOPPED)
			return 0;  /* it died meanwhile: waitpid says so */
	}
	return restart(t, PTRACE_CONT, sig);
}

int eng_ptrace_thread_resume(struct eng_proc *p, struct eng_thread *t)
{
	int sig = 0, req = PTRACE_CONT;

	if (t->state != TS_STOPPED)
		return 0;
	if (t->step_over) {
		int rc = eng_bp_step_over(p, t);

		if (rc < 0)
			return rc;
		if (t->state != TS_STOPPED)
			return 0;
	}
	/* The first owed signal rides on this stop when it is a
	 * signal-delivery-stop; the others are sent again (they arrive
	 * after it, as they would have). */
	sig = eng_ptrace_owed_signals(p, t);
	if (t->stop == SK_GROUP)
		req = PTRACE_LISTEN;

	return restart(t, req, sig);
}

int eng_ptrace_settle(struct eng_proc *p, struct eng_thread *t)
{
	if (t->state != TS_STOPPED || p->want_stop || t->in_infcall ||
	    p->exec_held)
		return 0;
	if (p->hold > 0) {
		/* e.g. a thread created during a step-over: run it after. */
		t->deferred = true;
		return 0;
	}
	return eng_ptrace_thread_resume(p, t);
}

/* Wait up to 10 s (in 50 ms slices) for thread tid to leave the running
 * state: stopped, gone, or (with zombie_ok) a zombie that will never
 * stop.  0, -ETIMEDOUT, or a wait error. */
static int wait_stopped(struct eng_proc *p, pid_t tid, bool zombie_ok)
{
	for (int slice = 0; slice < 200; slice++) {
		struct eng_thread *t = eng_ptrace_thread_find(p, tid);
		int rc;

		if (t == NULL || t->state != TS_RUNNING)
			return 0;
		rc = eng_ptrace_wait_thread(p, t, 50);
		if (rc == -ECHILD)
			return 0;
		if (rc == -ETIMEDOUT && zombie_ok && eng_taskstate_dead(p->pid, tid)) {
			t->state = TS_ZOMBIE;
			return 0;
		}
		if (rc < 0 && rc != -ETIMEDOUT)
			return rc;
	}
	return -ETIMEDOUT;
}

int eng_ptrace_thread_interrupt_wait(struct eng_proc *p, struct eng_thread *t)
{
	pid_t tid = t->tid;

	if (t->state != TS_RUNNING)
		return 0;
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) != 0 && errno != ESRCH)
		return -errno;
	/* Any stop will do.  If a signal beat the interrupt, we get its
	 * signal-delivery-stop and keep the signal owed; the kernel drops
	 * the pending interrupt trap at any ptrace stop (ptrace_stop:
	 * "any trap clears pending STOP trap"), and a stray
	 * PTRACE_EVENT_STOP would simply be resumed by eng_ptrace_settle. */
	return wait_stopped(p, tid, true);
}

/* A thread stopped at a clone or exec event is inside the system call:
 * the kernel writes the call's result into %rax after it resumes, so
 * registers changed now would be half overwritten (an inferior call
 * there made pthread_create fail with ENOSYS: the restored %rax).
 * Let the call finish and stop the thread on its way to user mode. */
int eng_ptrace_thread_to_user_stop(struct eng_proc *p, struct eng_thread *t)
{
	pid_t tid = t->tid;
	int rc;

	if (t->state != TS_STOPPED || (t->stop != SK_OTHER &&
				       t->stop != SK_EXEC))
		return 0;
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) != 0 && errno != ESRCH)
		return -errno;
	if ((rc = eng_ptrace_thread_cont(p, t, 0)) < 0)
		return rc;
	return wait_stopped(p, tid, false);
}

int eng_ptrace_stop_all(struct eng_proc *p, struct hunch_err *err)
{
	int rc;

	if (p->ended || p->detached)
		return hunch_err_set(err, -ESRCH, "process %d has ended or was "
				  "detached: there is nothing to stop",
				  (int)p->pid);
	p->want_stop = true;
	if (p->held_t0 == 0) {
		p->held_t0 = clock_mono_ns();
		p->holds++;
	}
	for (size_t i = 0; i < p->nth; i++)
		if (p->th[i]->state == TS_RUNNING &&
		    ptrace(PTRACE_INTERRUPT, p->th[i]->tid, 0, 0) != 0 &&
		    errno != ESRCH)
			return hunch_err_set(err, -errno, "cannot interrupt "
					  "thread %d of process %d: %s",
					  (int)p->th[i]->tid, (int)p->pid,
					  strerror(errno));
	/* Index loop: clone events can grow p->th while we wait. */
	for (size_t i = 0; i < p->nth; i++) {
		struct eng_thread *t = p->th[i];

		if (t->state != TS_RUNNING)
			continue;
		rc = eng_ptrace_thread_interrupt_wait(p, t);
		if (rc == -ETIMEDOUT)
			return hunch_err_set(err, rc, "thread %d of process %d "
				"did not stop within 10 s (is it in "
				"uninterruptible sleep, state D?)",
				(int)p->th[i]->tid, (int)p->pid);
		if (rc < 0)
			return hunch_err_set(err, rc,
					     "cannot stop thread %d of "
					     "process %d: %s",
					     (int)p->th[i]->tid, (int)p->pid,
					     strerror(-rc));
	}
	/* Every stopped thread now holds its user-mode registers. */
	for (size_t i = 0; i < p->nth; i++)
		if ((rc = eng_ptrace_thread_to_user_stop(p, p->th[i])) < 0)
			return hunch_err_set(
				err, rc,
				"cannot stop thread %d of "
				"process %d outside a system call: %s",
				(int)p->th[i]->tid, (int)p->pid, strerror(-rc));
	return 0;
}

int eng_ptrace_resume_all(struct eng_proc *p, struct hunch_err *err)
{
	int rc;

	if (p->ended || p->detached)
		return 0;
	p->want_stop = false;
	/* Step-overs first: each briefly stops the running threads. */
	for (size_t i = 0; i < p->nth; i++) {
		struct eng_thread *t = p->th[i];

		if (t->state == TS_STOPPED && t->step_over && !t->in_infcall &&
		    (rc = eng_bp_step_over(p, t)) < 0)
			return hunch_err_set(err, rc,
					     "cannot step thread %d of "
					     "process %d over a breakpoint: %s",
					     (int)t->tid, (int)p->pid,
					     strerror(-rc));
	}
	for (size_t i = 0; i < p->nth; i++) {
		struct eng_thread *t = p->th[i];

		if ((rc = eng_ptrace_settle(p, t)) < 0)
			return hunch_err_set(err, rc,
					     "cannot resume thread %d of "
					     "process %d: %s",
					     (int)t->tid, (int)p->pid,
					     strerror(-rc));
	}
	if (p->held_t0 != 0) {
		p->held_ns += clock_mono_ns() - p->held_t0;
		p->held_t0 = 0;
	}
	return 0;
}

static int drain(struct eng_proc *p, struct eng_event *evs, int max)
{
	int n = (int)p->nevq < max ? (int)p->nevq : max;

	if (n <= 0)
		return 0;
	memcpy(evs, p->evq, (size_t)n * sizeof(*evs));
	memmove(p->evq, p->evq + n, (p->nevq - (size_t)n) * sizeof(*evs));
	p->nevq -= (size_t)n;
	return n;
}

/* Forget exited threads, so that a program that makes threads all day
 * long does not make every scan longer.  Only here, at the public
 * entry: inside the engine callers may still hold a thread. */
static void compact_threads(struct eng_proc *p)
{
	size_t k = 0, next = 0;

	for (size_t i = 0; i < p->nth; i++) {
		/* Keep the round-robin place: restarting the waits at thread
		 * 0 every time lets one thread's stream of stops (traps of
		 * the trap fallback, signals) starve every other thread. */
		if (i == p->wait_next)
			next = k;
		if (p->th[i]->state == TS_GONE)
			free(p->th[i]);
		else
			p->th[k++] = p->th[i];
	}
	p->nth = k;
	p->wait_next = next < k ? next : 0;
}

int eng_ptrace_poll_events(struct eng_proc *p, struct eng_event *evs, int max,
		    int timeout_ms)
{
	int64_t deadline = (int64_t)clock_mono_ms() + timeout_ms;
	pid_t tid;
	int rc;

	compact_threads(p);
	while (p->nevq == 0 && !p->ended && !p->detached) {
		int64_t left = deadline - (int64_t)clock_mono_ms();

		if (timeout_ms < 0)
			left = -1;  /* until something happens */
		else if (left < 0)
			left = 0;
		rc = eng_ptrace_wait_any(p, (int)left, &tid);
		if (rc == -ETIMEDOUT || rc == -ECHILD)
			break;
		if (rc < 0)
			return rc;
		struct eng_thread *t = eng_ptrace_thread_find(p, tid);

		if (t != NULL && (rc = eng_ptrace_settle(p, t)) < 0)
			return rc;
	}
	return drain(p, evs, max);
}

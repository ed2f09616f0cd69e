/*
 * eng_detach.c - letting go of a target: detach (leave it running as if
 * hunch had never been there) and kill; eng_proc_free (eng_proc.c)
 * detaches through here.
 *
 * Detach stops every thread first, because breakpoint bytes may only be
 * restored while nothing runs, and because PTRACE_DETACH needs a stopped
 * tracee.  A signal the program is owed rides on the detach (it is
 * delivered exactly once); a stray PTRACE_INTERRUPT trap dies with the
 * tracing.  eng_detach is meant to be called from the main loop, e.g.
 * after its signalfd reports SIGINT/SIGTERM/SIGHUP.
 */
#include "eng_proc_int.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int detach_thread(struct eng_proc *p, struct eng_thread *t)
{
	int sig = eng_ptrace_owed_signals(p, t);

	if (ptrace(PTRACE_DETACH, t->tid, 0, (void *)(long)sig) != 0 &&
	    errno != ESRCH)
		return -errno;
	t->state = TS_GONE;
	return 0;
}

int eng_detach(struct eng_proc *p, struct hunch_err *err)
{
	int rc = 0, r;

	if (p->detached || p->ended) {
		p->detached = true;
		return 0;
	}
	r = eng_ptrace_stop_all(p, err);
	if (r < 0)
		rc = r;  /* go on: detach whatever did stop */
	/* The program must not meet an int3 of ours without us. */
	eng_bp_remove_all(p);
	for (size_t i = 0; i < p->nth; i++) {
		struct eng_thread *t = p->th[i];

		if (t->state != TS_STOPPED)
			continue;
		if ((r = detach_thread(p, t)) < 0 && rc == 0)
			rc = hunch_err_set(err, r,
					   "cannot detach from thread %d "
					   "of process %d: %s",
					   (int)t->tid, (int)p->pid,
					   strerror(-r));
	}
	p->detached = true;
	if (p->memfd >= 0)
		close(p->memfd);
	p->memfd = -1;
	return rc;
}

void eng_detach_kill_reap(struct eng_proc *p)
{
	pid_t tid;

	if (p->ended || p->detached)
		return;
	kill(p->pid, SIGKILL);
	/* Every traced thread reports its death to us, the leader last. */
	while (!p->ended && eng_ptrace_wait_any(p, 10000, &tid) == 0)
		;
	if (!p->ended) {
		int st;

		waitpid(p->pid, &st, __WALL);
		p->ended = true;
	}
}

int eng_detach_kill(struct eng_proc *p)
{
	if (!p->launched)
		return -EPERM;  /* hunch does not kill what it did not start */
	eng_detach_kill_reap(p);
	return 0;
}

void eng_detach_infcall_timeout(struct eng_proc *p, int ms)
{
	p->infcall_timeout_ms = ms > 0 ? ms : 10000;
}

/*
 * proc_run.c - a minimal launcher over eng_launch, for running the
 * documented target cases (tests/targets/cases.sh) under process
 * control: proc-run [--rtlib] [--churn MS] -- PROGRAM ARGS...
 *
 * The program inherits stdin/stdout/stderr and the environment; the
 * launcher ends the way the program ended (same exit code, or killed by
 * the same signal), so a shell sees no difference.  --churn stops every
 * thread each MS milliseconds and resumes it, with an inferior call of
 * hunchrt_ping on a thread in between when --rtlib is given: the
 * program's output and status must not change.
 */
#include "eng_proc.h"
#include "eng_shm.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct opts {
	bool rtlib;
	int churn_ms;
	char **argv;
};

static int parse(int argc, char **argv, struct opts *o)
{
	int i;

	memset(o, 0, sizeof(*o));
	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "--rtlib") == 0)
			o->rtlib = true;
		else if (strcmp(argv[i], "--churn") == 0 && i + 1 < argc)
			o->churn_ms = atoi(argv[++i]);
		else
			return -1;
	}
	if (i + 1 >= argc)
		return -1;
	o->argv = argv + i + 1;
	return 0;
}

/* Stop everything, ping the runtime library on one thread, resume. */
static int churn(struct eng_proc *p, struct eng_shm *shm, unsigned round,
		 struct hunch_err *err)
{
	pid_t tids[256];
	size_t n;
	uint64_t ping, arg = round, ret = 0;
	int rc = eng_stop_all(p, err);

	if (rc < 0)
		return eng_proc_ended(p) ? 0 : rc;
	n = eng_proc_threads(p, tids, 256);
	ping = shm ? eng_shm_entry(shm, HUNCH_RT_ENTRY_PING) : 0;
	if (ping != 0 && n > 0) {
		pid_t tid = tids[round % (n < 256 ? n : 256)];

		rc = eng_infcall(p, tid, ping, &arg, 1, &ret, err);
		if (rc == 0 && ret != arg + 1)
			rc = hunch_errf(err, -EPROTO, "hunchrt_ping(%llu) on "
				"thread %d returned %llu",
				(unsigned long long)arg, (int)tid,
				(unsigned long long)ret);
		if (rc < 0)
			return rc;
	}
	return eng_resume_all(p, err);
}

/* End like the program: its exit code, or its signal. */
static void end_like(const struct eng_event *ev)
{
	sigset_t all;

	if (ev->kind == ENG_EV_EXITED)
		exit(ev->status);
	signal(ev->signo, SIG_DFL);
	sigfillset(&all);
	sigprocmask(SIG_UNBLOCK, &all, NULL);
	raise(ev->signo);
	exit(128 + ev->signo);
}

static int run(struct eng_proc *p, struct eng_shm *shm, int churn_ms)
{
	struct eng_event ev[16];
	struct hunch_err err = { 0 };
	unsigned round = 0;

	if (eng_resume_all(p, &err) < 0)
		goto fail;
	for (;;) {
		int n = eng_poll_events(p, ev, 16, churn_ms ? churn_ms : 100);

		for (int i = 0; i < n; i++)
			if (ev[i].kind == ENG_EV_EXITED ||
			    ev[i].kind == ENG_EV_KILLED)
				end_like(&ev[i]);
		if (n < 0) {
			hunch_errf(&err, n, "polling failed: %s", strerror(-n));
			goto fail;
		}
		if (churn_ms > 0 && !eng_proc_ended(p) &&
		    churn(p, shm, ++round, &err) < 0 && !eng_proc_ended(p))
			goto fail;
	}
fail:
	fprintf(stderr, "proc-run: %s\n", err.msg);
	eng_kill(p);
	return 125;
}

int main(int argc, char **argv)
{
	struct eng_launch_opts lo;
	struct eng_proc *p = NULL;
	struct eng_shm *shm = NULL;
	struct hunch_err err = { 0 };
	struct opts o;

	if (parse(argc, argv, &o) < 0) {
		fprintf(stderr, "usage: proc-run [--rtlib] [--churn MS] -- "
			"PROGRAM ARGS...\n");
		return 126;
	}
	if (o.rtlib && eng_shm_create(0, false, &shm, &err) < 0) {
		fprintf(stderr, "proc-run: %s\n", err.msg);
		return 125;
	}
	memset(&lo, 0, sizeof(lo));
	lo.path = o.argv[0];
	lo.argv = o.argv;
	lo.stdin_fd = lo.stdout_fd = lo.stderr_fd = -1;
	lo.rtlib_path = o.rtlib ? getenv("HUNCHRT") : NULL;
	lo.shm = shm;
	if (eng_launch(&lo, &p, &err) < 0) {
		fprintf(stderr, "proc-run: %s\n", err.msg);
		return 125;
	}
	return run(p, shm, o.churn_ms);
}

/*
 * proc_run.c - a minimal launcher over eng_launch, for running the
 * documented target cases (tests/targets/cases.sh) under process
 * control: proc-run [--rtlib] [--churn MS] [--attach] [--attach-delay MS]
 * [--detach-after MS] -- PROGRAM ARGS...
 *
 * The program inherits stdin/stdout/stderr and the environment; the
 * launcher ends the way the program ended (same exit code, or killed by
 * the same signal), so a shell sees no difference.  --churn stops every
 * thread each MS milliseconds and resumes it, with an inferior call of
 * hunchrt_ping on a thread in between when --rtlib is given: the
 * program's output and status must not change.  --attach starts the
 * program untraced and attaches as soon as it runs the program (usually
 * while ld.so is still at work), or --attach-delay MS later;
 * --detach-after lets go after MS ms and just waits for the program.
 */
#include "eng_proc.h"
#include "eng_shm.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct opts {
	bool rtlib, attach;
	int churn_ms, detach_ms, attach_delay_ms;
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
		else if (strcmp(argv[i], "--attach") == 0)
			o->attach = true;
		else if (strcmp(argv[i], "--attach-delay") == 0 && i + 1 < argc)
			o->attach_delay_ms = atoi(argv[++i]);
		else if (strcmp(argv[i], "--detach-after") == 0 && i + 1 < argc)
			o->detach_ms = atoi(argv[++i]);
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
	int rc = eng_ptrace_stop_all(p, err);

	if (rc < 0)
		return eng_proc_ended(p) ? 0 : rc;
	n = eng_proc_threads(p, tids, 256);
	ping = shm ? eng_shm_entry(shm, HUNCH_RT_ENTRY_PING) : 0;
	if (ping != 0 && n > 0) {
		pid_t tid = tids[round % (n < 256 ? n : 256)];

		rc = eng_infcall(p, tid, ping, &arg, 1, &ret, err);
		if (rc == 0 && ret != arg + 1)
			rc = hunch_err_set(err, -EPROTO,
					   "hunchrt_ping(%llu) on "
					   "thread %d returned %llu",
					   (unsigned long long)arg, (int)tid,
					   (unsigned long long)ret);
		if (rc < 0)
			return rc;
	}
	return eng_ptrace_resume_all(p, err);
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

static long long ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void status_like(int st)
{
	struct eng_event ev = { 0 };

	ev.kind = WIFEXITED(st) ? ENG_EV_EXITED : ENG_EV_KILLED;
	ev.status = WIFEXITED(st) ? WEXITSTATUS(st) : 0;
	ev.signo = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
	end_like(&ev);
}

/* After a detach the program is our plain child again. */
static void wait_like(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			fprintf(stderr, "proc-run: the exit status of %d was "
				"consumed while attaching\n", (int)pid);
			exit(124);
		}
	status_like(st);
}

static int run(struct eng_proc *p, struct eng_shm *shm, const struct opts *o)
{
	struct eng_event ev[16];
	struct hunch_err err = { 0 };
	long long detach_at = ms_now() + o->detach_ms;
	int churn_ms = o->churn_ms;
	unsigned round = 0;

	if (eng_ptrace_resume_all(p, &err) < 0)
		goto fail;
	for (;;) {
		if (o->detach_ms > 0 && ms_now() >= detach_at &&
		    !eng_proc_ended(p)) {
			pid_t pid = eng_proc_pid(p);

			if (eng_detach(p, &err) < 0)
				goto fail;
			wait_like(pid);
		}
		int n = eng_ptrace_poll_events(p, ev, 16,
					       churn_ms ? churn_ms : 100);

		for (int i = 0; i < n; i++)
			if (ev[i].kind == ENG_EV_EXITED ||
			    ev[i].kind == ENG_EV_KILLED)
				end_like(&ev[i]);
		if (n < 0) {
			hunch_err_set(&err, n, "polling failed: %s",
				      strerror(-n));
			goto fail;
		}
		if (churn_ms > 0 && !eng_proc_ended(p) &&
		    churn(p, shm, ++round, &err) < 0 && !eng_proc_ended(p))
			goto fail;
	}
fail:
	fprintf(stderr, "proc-run: %s\n", err.msg);
	eng_detach_kill(p);
	return 125;
}

/* Start the program untraced; attach once it runs the program file. */
static int attach_run(const struct opts *o, struct eng_shm *shm)
{
	char real[PATH_MAX], exe[PATH_MAX], link[64];
	struct hunch_err err = { 0 };
	struct eng_proc *p = NULL;
	pid_t pid;
	int st;

	if (realpath(o->argv[0], real) == NULL)
		return 125;
	pid = fork();
	if (pid == 0) {
		execv(o->argv[0], o->argv);
		_exit(127);
	}
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	for (;;) {
		ssize_t n = readlink(link, exe, sizeof(exe) - 1);

		if (n > 0) {
			exe[n] = '\0';
			if (strcmp(exe, real) == 0)
				break;
		}
		if (waitpid(pid, &st, WNOHANG) == pid) {
			eng_shm_destroy(shm);  /* no /dev/shm leftovers */
			status_like(st);  /* ended before we saw it */
		}
	}
	usleep((useconds_t)o->attach_delay_ms * 1000);
	if (eng_attach(pid, o->rtlib ? getenv("HUNCHRT") : NULL, shm, &p,
		       &err) < 0) {
		eng_shm_destroy(shm);
		/* Too late (it ended) is not an error of ours. */
		if (err.code == -ESRCH)  /* it ended (zombie, or meanwhile) */
			wait_like(pid);
		fprintf(stderr, "proc-run: %s\n", err.msg);
		kill(pid, SIGKILL);
		return 125;
	}
	return run(p, shm, o);
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
	if (o.rtlib && eng_shm_create(0, o.attach, &shm, &err) < 0) {
		fprintf(stderr, "proc-run: %s\n", err.msg);
		return 125;
	}
	if (o.attach)
		return attach_run(&o, shm);
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
	return run(p, shm, &o);
}

/*
 * test_events.c - the event loop under stress: queued signals are
 * neither lost nor doubled while hunch stops and resumes the program
 * (the PTRACE_INTERRUPT-versus-pending-signal race); a signal that
 * arrives during an inferior call waits for the call to end; a
 * job-control stop stays a stop (PTRACE_LISTEN) until SIGCONT; threads
 * that come and go while hunch stops them; exec is reported.
 */
#include "proc_util.h"

#include <sys/user.h>

static char *env[] = { "PATH=/usr/bin:/bin", NULL };

/* Poll for ms milliseconds, recording events and output. */
static void pump(struct hrun *h, struct run_result *r, int ms)
{
	wait_output(h->p, h->out, r, "\001never\001", ms);
}

static char proc_state(pid_t tid)
{
	char path[64], buf[512], *s;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)tid);
	f = fopen(path, "r");
	if (f == NULL)
		return '?';
	s = fgets(buf, sizeof(buf), f);
	fclose(f);
	s = s ? strrchr(buf, ')') : NULL;
	return s ? s[2] : '?';
}

static void test_rt_signals(void)
{
	char *path = prog("p_rtsig"), *argv[] = { path, NULL };
	struct hunch_err err = { 0 };
	struct run_result r;
	struct hrun h;
	union sigval v = { 0 };
	pid_t pid;
	int cycles = 0;

	memset(&r, 0, sizeof(r));
	if (launch(&h, argv, env, NULL, false, &err) != 0) {
		tap_ok(0, "launch p_rtsig: %s", err.msg);
		return;
	}
	pid = eng_proc_pid(h.p);
	eng_ptrace_resume_all(h.p, &err);
	wait_output(h.p, h.out, &r, "ready 0\n", 5000);
	for (int i = 0; i < 300; i++) {
		sigqueue(pid, SIGRTMIN, v);
		if (i % 7 == 0) {
			cycles += eng_ptrace_stop_all(h.p, &err) == 0;
			eng_ptrace_resume_all(h.p, &err);
		}
		if (i % 50 == 0)
			pump(&h, &r, 5);
	}
	pump(&h, &r, 200);
	kill(pid, SIGUSR2);
	finish(h.p, h.out, &r, 5000);
	tap_eq(cycles, 43, "43 stop/resume cycles among the signals");
	if (!tap_ok(strcmp(r.out, "ready 0\ncount 300\n") == 0, "all 300 "
		    "queued signals reached the program exactly once"))
		tap_diag("output: %s", r.out);
	tap_eq(r.nsig[SIGRTMIN], 300, "300 ENG_EV_SIGNAL for SIGRTMIN");
	tap_ok(r.exited && r.code == 0, "exit 0");
	hrun_close(&h);
}

static void test_signal_during_call(void)
{
	char *path = prog("p_rtsig"), *argv[] = { path, NULL };
	struct hunch_err err = { 0 };
	struct run_result r;
	struct hrun h;
	uint64_t fn, ms = 300, ret = 99;
	pid_t pid, kid;
	int st;

	memset(&r, 0, sizeof(r));
	if (launch(&h, argv, env, NULL, false, &err) != 0) {
		tap_ok(0, "launch p_rtsig: %s", err.msg);
		return;
	}
	pid = eng_proc_pid(h.p);
	fn = sym_addr(path, "slow") + eng_solib_module(h.p, 0)->bias;
	eng_ptrace_resume_all(h.p, &err);
	wait_output(h.p, h.out, &r, "ready 0\n", 5000);
	eng_ptrace_stop_all(h.p, &err);
	kid = fork();
	if (kid == 0) {
		union sigval v = { 0 };

		usleep(50000);
		for (int i = 0; i < 3; i++)
			sigqueue(pid, SIGRTMIN, v);
		_exit(0);
	}
	tap_ok(eng_infcall(h.p, pid, fn, &ms, 1, &ret, &err) == 0,
	       "slow(300) called while 3 signals arrive (%s)", err.msg);
	waitpid(kid, &st, 0);
	tap_eq(ret, 0, "no handler ran inside the inferior call");
	eng_ptrace_resume_all(h.p, &err);
	pump(&h, &r, 100);
	kill(pid, SIGUSR2);
	finish(h.p, h.out, &r, 5000);
	if (!tap_ok(strcmp(r.out, "ready 0\ncount 3\n") == 0, "the 3 signals "
		    "were delivered after the call"))
		tap_diag("output: %s", r.out);
	hrun_close(&h);
}

static void test_job_control(void)
{
	char *path = prog("p_block"), *argv[] = { path, NULL };
	struct hunch_err err = { 0 };
	struct run_result r;
	struct hrun h;
	pid_t pid;
	char st;

	memset(&r, 0, sizeof(r));
	if (launch(&h, argv, env, NULL, false, &err) != 0) {
		tap_ok(0, "launch p_block: %s", err.msg);
		return;
	}
	pid = eng_proc_pid(h.p);
	eng_ptrace_resume_all(h.p, &err);
	wait_output(h.p, h.out, &r, "ready 0\n", 5000);
	kill(pid, SIGSTOP);
	pump(&h, &r, 100);
	st = proc_state(pid);
	tap_ok(st == 't' || st == 'T', "SIGSTOP stops it (state %c)", st);
	tap_eq(r.nsig[SIGSTOP], 1, "SIGSTOP reported once");
	if (write(h.in, "one\n", 4) != 4)
		tap_diag("write failed");
	pump(&h, &r, 200);
	tap_ok(strstr(r.out, "got: one") == NULL, "stopped: no output");
	eng_ptrace_stop_all(h.p, &err);
	eng_ptrace_resume_all(h.p, &err);
	pump(&h, &r, 200);
	tap_ok(strstr(r.out, "got: one") == NULL, "still stopped after hunch "
	       "stopped and resumed it");
	kill(pid, SIGCONT);
	wait_output(h.p, h.out, &r, "got: one\n", 5000);
	tap_ok(strstr(r.out, "got: one\n") != NULL, "SIGCONT resumes it");
	close(h.in);
	h.in = -1;
	finish(h.p, h.out, &r, 5000);
	tap_ok(r.exited && r.code == 0 &&
	       strcmp(r.out, "ready 0\ngot: one\neof\n") == 0,
	       "and it ends normally");
	hrun_close(&h);
}

static void test_thread_churn(void)
{
	char *path = prog("p_churn"), stop[64];
	char *argv[] = { path, stop, NULL };
	struct hunch_err err = { 0 };
	struct run_result r;
	struct hrun h;
	pid_t tids[64];
	int good = 0, fails = 0;

	snprintf(stop, sizeof(stop), "/tmp/hunch-churn-%d", (int)getpid());
	unlink(stop);
	memset(&r, 0, sizeof(r));
	if (launch(&h, argv, env, NULL, false, &err) != 0) {
		tap_ok(0, "launch p_churn: %s", err.msg);
		return;
	}
	eng_ptrace_resume_all(h.p, &err);
	wait_output(h.p, h.out, &r, "ready\n", 5000);
	for (int i = 0; i < 40; i++) {
		size_t n;
		int ok = 1;

		pump(&h, &r, 3);
		if (eng_ptrace_stop_all(h.p, &err) != 0) {
			fails++;
			tap_diag("stop: %s", err.msg);
		}
		n = eng_proc_threads(h.p, tids, 64);
		for (size_t k = 0; k < n && k < 64; k++)
			ok &= proc_state(tids[k]) == 't';
		good += ok && eng_proc_stopped(h.p);
		if (eng_ptrace_resume_all(h.p, &err) != 0)
			fails++;
	}
	tap_eq(fails, 0, "40 stop/resume cycles without an error");
	tap_eq(good, 40, "every listed thread stopped each time");
	touch(stop);
	finish(h.p, h.out, &r, 10000);
	tap_ok(r.exited && r.code == 0 &&
	       strcmp(r.out, "ready\ndone consistent\n") == 0,
	       "the program ends normally (%s)", one_line(r.out));
	tap_ok(r.nkind[ENG_EV_THREAD_NEW] > 0 &&
	       r.nkind[ENG_EV_THREAD_NEW] == r.nkind[ENG_EV_THREAD_EXIT],
	       "thread events balance: %d new, %d exits",
	       r.nkind[ENG_EV_THREAD_NEW], r.nkind[ENG_EV_THREAD_EXIT]);
	hrun_close(&h);
	unlink(stop);
}

/* main() called pthread_exit: the leader is a zombie that can never
 * stop, and stopping the process must not wait for it. */
static void test_zombie_leader(void)
{
	char *path = prog("p_pexit"), stop[64];
	char *argv[] = { path, stop, NULL };
	struct hunch_err err = { 0 };
	struct run_result r;
	struct hrun h;
	pid_t tids[4];
	long long t0;

	snprintf(stop, sizeof(stop), "/tmp/hunch-pexit-%d", (int)getpid());
	unlink(stop);
	memset(&r, 0, sizeof(r));
	if (launch(&h, argv, env, NULL, false, &err) != 0) {
		tap_ok(0, "launch p_pexit: %s", err.msg);
		return;
	}
	eng_ptrace_resume_all(h.p, &err);
	wait_output(h.p, h.out, &r, "ready\n", 5000);
	pump(&h, &r, 100);
	t0 = ms_now();
	tap_ok(eng_ptrace_stop_all(h.p, &err) == 0 && ms_now() - t0 < 2000,
	       "stop with a zombie leader takes %lld ms", ms_now() - t0);
	tap_ok(eng_proc_threads(h.p, tids, 4) == 1 &&
	       tids[0] != eng_proc_pid(h.p), "only the worker is listed");
	tap_ok(eng_proc_stopped(h.p), "and the process counts as stopped");
	eng_ptrace_resume_all(h.p, &err);
	touch(stop);
	finish(h.p, h.out, &r, 5000);
	tap_ok(r.exited && r.code == 0 &&
	       strcmp(r.out, "ready\nworker done\n") == 0,
	       "it ends normally, exit 0");
	hrun_close(&h);
	unlink(stop);
}

static void test_exec(void)
{
	char *path = prog("p_exec"), *argv[] = { path, NULL };
	struct hunch_err err = { 0 };
	struct run_result r;
	struct hrun h;
	const struct eng_event *ev = NULL;
	char real[4096];

	memset(&r, 0, sizeof(r));
	if (launch(&h, argv, env, NULL, false, &err) != 0) {
		tap_ok(0, "launch p_exec: %s", err.msg);
		return;
	}
	eng_ptrace_resume_all(h.p, &err);
	finish(h.p, h.out, &r, 5000);
	for (int i = 0; i < r.nev; i++)
		if (r.ev[i].kind == ENG_EV_EXEC)
			ev = &r.ev[i];
	if (realpath("/bin/echo", real) == NULL)
		real[0] = '\0';
	tap_ok(ev && strcmp(ev->path, real) == 0, "ENG_EV_EXEC names %s",
	       ev ? ev->path : "(none)");
	tap_ok(r.exited && r.code == 0 &&
	       strcmp(r.out, "before exec\nafter exec\n") == 0,
	       "output and exit as without hunch");
	hrun_close(&h);
}

/* After exec, libraries of the new image are tracked again. */
static void test_exec_then_dlopen(void)
{
	char *path = prog("p_exec"), *dl = prog("p_dlopen");
	char *lib = prog("libplug.so"), go[64];
	char *argv[] = { path, dl, go, lib, NULL };
	struct hunch_err err = { 0 };
	struct run_result r;
	struct hrun h;
	bool loaded = false;

	snprintf(go, sizeof(go), "/tmp/hunch-execdl-%d", (int)getpid());
	unlink(go);
	memset(&r, 0, sizeof(r));
	if (launch(&h, argv, env, NULL, false, &err) != 0) {
		tap_ok(0, "launch p_exec p_dlopen: %s", err.msg);
		return;
	}
	eng_ptrace_resume_all(h.p, &err);
	wait_output(h.p, h.out, &r, "ready\n", 5000);
	tap_ok(eng_proc_r_brk(h.p) != 0 && eng_solib_nmodules(h.p) > 2 &&
	       strcmp(eng_solib_module(h.p, 0)->path, dl) == 0,
	       "after exec: module 0 is %s and r_brk is armed again",
	       eng_solib_module(h.p, 0)->path);
	touch(go);
	finish(h.p, h.out, &r, 5000);
	for (int i = 0; i < r.nev; i++)
		loaded |= r.ev[i].kind == ENG_EV_LIB_LOAD &&
			  strcmp(r.ev[i].path, lib) == 0;
	tap_ok(r.nkind[ENG_EV_EXEC] == 1 && loaded,
	       "exec reported, then the new image's dlopen");
	tap_ok(r.exited && r.code == 0 &&
	       strcmp(r.out, "before exec\nready\nvalue 7\nclosed\n") == 0,
	       "output as without hunch");
	hrun_close(&h);
	unlink(go);
}

int main(void)
{
	test_rt_signals();
	test_signal_during_call();
	test_job_control();
	test_thread_churn();
	test_zombie_leader();
	test_exec();
	test_exec_then_dlopen();
	tap_ok(no_children(), "no child process left behind");
	return tap_done();
}

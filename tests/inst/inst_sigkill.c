/*
 * inst_sigkill.c - the program's own signals survive a SIGKILLed hunch:
 * progs/inst_sigloop.c queues SIGUSR1 and SIGRTMIN to itself
 * 20,000 times each while hunch (a child here) inserts and removes
 * counters on sl_f in a loop, stopping every thread for each commit;
 * hunch is SIGKILLed after MS ms, for several MS.  A signal that hunch
 * had taken from the kernel with waitpid and still held when it died
 * would be lost: the program's counts must be exact every time.
 *
 *   inst_sigkill PROGRAM MS...
 *   inst_sigkill --infcall-read PROGRAM
 *   inst_sigkill --infcall-time PROGRAM   1000 calls each way, timed
 *   inst_sigkill --kill-signal PROGRAM COUNT INCOMMIT INFCALLS
 *        the deterministic form: hunch SIGKILLs itself right after
 *        its signal-delivery-stop N (fault point signal:N) for
 *        N = 0..COUNT-1, then after the one N seen while it kept every
 *        thread stopped (signal-in-commit:N) for N = 0..INCOMMIT-1; the
 *        target ("tkill" variant) tgkills SIGUSR2 and queues SIGRTMIN
 *        300 times each: both must arrive exactly once.  Then, with
 *        hunch stopping the target and calling hunchrt_ping on it in a
 *        loop instead of committing (so calls start on threads stopped
 *        by a signal), once to the end and killed during its call N
 *        (infcall:N) for N = 0..INFCALLS-1.
 *   inst_sigkill --kill-step SIGDL K KILLS
 *        progs/inst_sigdl.c dlopens libm in a loop (hunch steps over
 *        its r_brk int3 at each hit) while this process queues K
 *        SIGRTMIN to it: all K arrive exactly once with hunch alive,
 *        and after hunch killed itself at its signal stop N taken
 *        during a step (signal-in-step:N), N = 0..KILLS-1.
 *   inst_sigkill --kill-dlopen DLOPEN EXPECTED
 *        the dlopen target waits for a file before its dlopen; hunch
 *        is SIGKILLed meanwhile, its int3 on r_brk left in place: the
 *        rtlib emulates its `ret`, the output must equal EXPECTED.
 *
 * The second form: progs/inst_readline.c waits in read(2); hunch stops
 * it and calls hunchrt_ping on that thread, and is SIGKILLed during the
 * call (fault point infcall:0).  The rtlib must put the thread
 * back into its read, restarted as the kernel would have: the lines
 * sent after are read exactly.
 */
#include "eng_fault.h"
#include "inst_util.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char expected[] =
	"ready\nusr1 20000 rt 20000 rt_sum 199990000 s 599990000\n";

/* The child plays hunch: instrument and remove until killed. */
static void hunch_child(const char *prog, int out_fd, int pidw)
{
	char *argv[] = { (char *)prog, "20000", NULL };
	struct fn_ctr *c;
	size_t n;
	struct tgt t;
	pid_t pid;

	if (tgt_launch_fds(&t, prog, argv, -1, out_fd) < 0)
		_exit(2);
	pid = eng_proc_pid(t.p);
	if (write(pidw, &pid, sizeof pid) != sizeof pid)
		_exit(2);
	c = fns_prepare(&t, "sl_f", &n);
	eng_ptrace_resume_all(t.p, NULL);
	while (!t.ended) {
		fns_instrument(&t, c, n, IM_COUNTERS);
		tgt_pump(&t, 1);
		fns_remove(&t, c, n);
		tgt_pump(&t, 1);
	}
	_exit(3);
}

/* One run: 1 killed and the output exact, 0 hunch ended first (output
 * exact), -1 wrong (diag). */
static int run(const char *prog, int ms)
{
	int out[2], pw[2], st, tst = 0;
	pid_t hunch, target = 0;
	char buf[4096];
	size_t len = 0;
	ssize_t k;

	if (pipe(out) < 0 || pipe(pw) < 0)
		return -1;
	hunch = fork();
	if (hunch == 0) {
		close(out[0]);
		close(pw[0]);
		hunch_child(prog, out[1], pw[1]);
	}
	close(out[1]);
	close(pw[1]);
	if (read(pw[0], &target, sizeof target) != sizeof target)
		target = 0;
	close(pw[0]);
	usleep((useconds_t)ms * 1000);
	kill(hunch, SIGKILL);
	waitpid(hunch, &st, 0);
	while (len < sizeof buf - 1 &&
	       (k = read(out[0], buf + len, sizeof buf - 1 - len)) > 0)
		len += (size_t)k;
	buf[len] = 0;
	close(out[0]);
	if (target > 0)
		waitpid(target, &tst, 0);
	if (target <= 0 || !WIFEXITED(tst) || WEXITSTATUS(tst) != 0 ||
	    strcmp(buf, expected) != 0) {
		tap_diag("killed at %d ms: target status 0x%x, output: %s", ms,
			 tst, buf);
		return -1;
	}
	return WIFSIGNALED(st) ? 1 : 0;
}

static const char tkill_expected[] =
	"ready\nusr2 300 bad 0 rt 300 rt_sum 44850 s 134850\n";

/* --kill-signal's hunch, calling hunchrt_ping on every stop. */
static void infcall_churn(struct tgt *t, pid_t pid)
{
	uint64_t fn = eng_shm_entry(t->shm, HUNCH_RT_ENTRY_PING), ret = 0;
	struct hunch_err err;

	while (!t->ended) {
		if (eng_ptrace_stop_all(t->p, NULL) == 0 &&
		    !eng_proc_ended(t->p) &&
		    (eng_infcall(t->p, pid, fn, (uint64_t[]){ 1 }, 1, &ret,
				 &err) < 0 ||
		     ret != 2)) {
			fprintf(stderr, "inferior call: %s (returned %llu)\n",
				err.msg, (unsigned long long)ret);
			_exit(4);
		}
		eng_ptrace_resume_all(t->p, NULL);
		tgt_pump(t, 1);
	}
}

/* hunch for --kill-signal: churn commits (or calls) until the hook
 * kills it. */
static void kill_signal_child(const char *prog, const char *at,
			      bool calls, int out_fd, int pidw)
{
	char *argv[] = { (char *)prog, "300", "tkill", NULL };
	struct fn_ctr *c;
	size_t n;
	struct tgt t;
	pid_t pid;

	if (tgt_launch_fds(&t, prog, argv, -1, out_fd) < 0)
		_exit(2);
	pid = eng_proc_pid(t.p);
	if (write(pidw, &pid, sizeof pid) != sizeof pid)
		_exit(2);
	c = fns_prepare(&t, "sl_f", &n);
	eng_fault_arm(at);
	eng_ptrace_resume_all(t.p, NULL);
	if (calls)
		infcall_churn(&t, pid);
	while (!t.ended) {
		fns_instrument(&t, c, n, IM_COUNTERS);
		tgt_pump(&t, 1);
		fns_remove(&t, c, n);
		tgt_pump(&t, 1);
	}
	/* not killed: the target ended while traced (hunch reaped it) */
	if (t.status != 0)
		fprintf(stderr, "the target ended with %d\n", t.status);
	_exit(t.status == 0 ? 3 : 5);
}

/* One kill: 1 killed by the hook and the output exact, 0 not killed
 * (the target ended first), -1 wrong. */
static int kill_signal_run(const char *prog, const char *at, bool calls)
{
	int out[2], pw[2], st = 0, tst = 0;
	pid_t hunch, target = 0;
	char buf[512];
	size_t len = 0;
	ssize_t k;

	if (pipe(out) < 0 || pipe(pw) < 0)
		return -1;
	hunch = fork();
	if (hunch == 0) {
		close(out[0]);
		close(pw[0]);
		kill_signal_child(prog, at, calls, out[1], pw[1]);
	}
	close(out[1]);
	close(pw[1]);
	if (read(pw[0], &target, sizeof target) != sizeof target)
		target = 0;
	close(pw[0]);
	waitpid(hunch, &st, 0);
	while (len < sizeof buf - 1 &&
	       (k = read(out[0], buf + len, sizeof buf - 1 - len)) > 0)
		len += (size_t)k;
	buf[len] = 0;
	close(out[0]);
	if (target > 0)
		waitpid(target, &tst, 0);
	if (target <= 0 || !WIFEXITED(tst) || WEXITSTATUS(tst) != 0 ||
	    strcmp(buf, tkill_expected) != 0 ||
	    (WIFEXITED(st) && WEXITSTATUS(st) != 3)) {
		tap_diag("%s: hunch status 0x%x, target status 0x%x, "
			 "output: %s", at, st, tst, buf);
		return -1;
	}
	return WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
}

/* Runs of one kind: how many were killed, how many wrong. */
static void kill_signal_sweep(const char *prog, const char *kind, int count,
			      bool calls, int *killed, int *bad)
{
	char at[48];
	int rc;

	*killed = *bad = 0;
	for (int n = 0; n < count; n++) {
		snprintf(at, sizeof at, "%s:%d", kind, n);
		rc = kill_signal_run(prog, at, calls);
		*killed += rc > 0;
		*bad += rc < 0;
	}
}

static void kill_signal(const char *prog, int count, int incommit,
			int infcalls)
{
	int killed, bad;

	kill_signal_sweep(prog, "signal", count, false, &killed, &bad);
	tap_eq(killed, count, "kill-signal: hunch killed itself at each of "
	       "its first %d signal stops", count);
	tap_eq(bad, 0, "kill-signal: every tgkill'd and queued signal "
	       "arrived exactly once after each kill");
	kill_signal_sweep(prog, "signal-in-commit", incommit, false, &killed,
			  &bad);
	/* A signal beats the interrupt of a commit often, not always: the
	 * target may end first, so only the exactness is required. */
	tap_diag("kill-signal: %d of %d runs killed at a signal stop taken "
		 "while every thread was kept stopped", killed, incommit);
	tap_eq(bad, 0, "kill-signal: exactly once too when killed with "
	       "the thread kept stopped for a commit");
	tap_eq(kill_signal_run(prog, "infcall:-1", true), 0, "kill-signal: "
	       "exactly once with an inferior call at every stop");
	kill_signal_sweep(prog, "infcall", infcalls, true, &killed, &bad);
	tap_eq(killed, infcalls, "kill-signal: hunch killed during each of "
	       "its first %d inferior calls", infcalls);
	tap_eq(bad, 0, "kill-signal: exactly once after each kill during "
	       "an inferior call");
}

/* hunch for --kill-step: follow the target's libraries to its end. */
static void kill_step_child(char *const *argv, const char *at, int out_fd,
			    int pidw)
{
	struct tgt t;
	pid_t pid;

	if (tgt_launch_fds(&t, argv[0], argv, -1, out_fd) < 0)
		_exit(2);
	pid = eng_proc_pid(t.p);
	if (write(pidw, &pid, sizeof pid) != sizeof pid)
		_exit(2);
	eng_fault_arm(at);
	eng_ptrace_resume_all(t.p, NULL);
	while (!t.ended)
		tgt_pump(&t, 10);
	if (t.status != 0)
		fprintf(stderr, "the target ended with %d\n", t.status);
	_exit(t.status == 0 ? 3 : 5);
}

/* Queue k SIGRTMIN (values 0..k-1) to pid once it printed "ready",
 * paced: sent at once, they would all be delivered before the program
 * runs again (pending signals are taken at each return to user mode),
 * and none would meet a step. */
static void flood(pid_t pid, int fd, long k, char *buf, size_t *len,
		  size_t cap)
{
	ssize_t n;

	while (strstr(buf, "ready\n") == NULL && *len < cap - 1 &&
	       (n = read(fd, buf + *len, cap - 1 - *len)) > 0) {
		*len += (size_t)n;
		buf[*len] = 0;
	}
	for (long i = 0; i < k; i++) {
		union sigval v = { .sival_int = (int)i };

		while (sigqueue(pid, SIGRTMIN, v) != 0)
			if (errno != EAGAIN)
				return;
			else
				usleep(100);
		usleep(20);
	}
}

/* One run: 1 killed and exact, 0 not killed and exact, -1 wrong. */
static int kill_step_run(const char *prog, long k, const char *at)
{
	char ks[24], want[96], buf[512] = "";
	char *argv[] = { (char *)prog, ks, "libm.so.6", NULL };
	int out[2], pw[2], st = 0, tst = 0;
	pid_t hunch, target = 0;
	size_t len = 0;
	ssize_t n;

	snprintf(ks, sizeof ks, "%ld", k);
	snprintf(want, sizeof want, "ready\nrt %ld sum %ld\n", k,
		 k * (k - 1) / 2);
	if (pipe(out) < 0 || pipe(pw) < 0)
		return -1;
	hunch = fork();
	if (hunch == 0) {
		close(out[0]);
		close(pw[0]);
		kill_step_child(argv, at, out[1], pw[1]);
	}
	close(out[1]);
	close(pw[1]);
	if (read(pw[0], &target, sizeof target) != sizeof target)
		target = 0;
	close(pw[0]);
	if (target > 0)
		flood(target, out[0], k, buf, &len, sizeof buf);
	waitpid(hunch, &st, 0);
	while (len < sizeof buf - 1 &&
	       (n = read(out[0], buf + len, sizeof buf - 1 - len)) > 0)
		len += (size_t)n;
	buf[len] = 0;
	close(out[0]);
	if (target > 0)
		waitpid(target, &tst, 0);
	if (target <= 0 || !WIFEXITED(tst) || WEXITSTATUS(tst) != 0 ||
	    strcmp(buf, want) != 0 || (WIFEXITED(st) && WEXITSTATUS(st) != 3)) {
		tap_diag("%s: hunch status 0x%x, target status 0x%x, "
			 "output: %s", at, st, tst, buf);
		return -1;
	}
	return WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
}

static void kill_step(const char *prog, long k, int kills)
{
	int killed = 0, bad = 0, rc;
	char at[48];

	tap_eq(kill_step_run(prog, k, "none"), 0, "kill-step: %ld signals "
	       "queued during dlopen loops arrived exactly once", k);
	for (int n = 0; n < kills; n++) {
		snprintf(at, sizeof at, "signal-in-step:%d", n);
		rc = kill_step_run(prog, k, at);
		killed += rc > 0;
		bad += rc < 0;
	}
	/* how many steps meet a signal depends on the scheduling: a run
	 * whose steps meet fewer than N+1 is not killed */
	tap_ok(killed >= 1, "kill-step: hunch killed at a signal stop "
	       "during a step in %d of %d runs", killed, kills);
	tap_eq(bad, 0, "kill-step: exactly once after each kill during a "
	       "step");
}

static void infcall_child(const char *prog, int in_fd, int out_fd, int pidw)
{
	char *argv[] = { (char *)prog, NULL };
	uint64_t ret;
	struct tgt t;
	pid_t pid;

	if (tgt_launch_fds(&t, prog, argv, in_fd, out_fd) < 0)
		_exit(2);
	pid = eng_proc_pid(t.p);
	eng_ptrace_resume_all(t.p, NULL);
	/* into its read(2): asleep, not a fixed delay it may not get */
	if (tgt_wait_asleep(&t, 30000) < 0 ||
	    eng_ptrace_stop_all(t.p, NULL) < 0 ||
	    write(pidw, &pid, sizeof pid) != sizeof pid)
		_exit(2);
	eng_fault_arm("infcall:0");
	eng_infcall(t.p, pid, eng_shm_entry(t.shm, HUNCH_RT_ENTRY_PING), NULL,
		    0, &ret, NULL);
	_exit(3);                       /* not killed */
}

static void infcall_read(const char *prog)
{
	int in[2], out[2], pw[2], st = 0, tst = 0;
	pid_t hunch, target = 0;
	char buf[512];
	size_t len = 0;
	ssize_t k;

	if (pipe(in) < 0 || pipe(out) < 0 || pipe(pw) < 0)
		return;
	hunch = fork();
	if (hunch == 0) {
		close(in[1]);
		close(out[0]);
		close(pw[0]);
		infcall_child(prog, in[0], out[1], pw[1]);
	}
	close(in[0]);
	close(out[1]);
	close(pw[1]);
	if (read(pw[0], &target, sizeof target) != sizeof target)
		target = 0;
	waitpid(hunch, &st, 0);
	tap_ok(target > 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
	       "infcall-read: hunch SIGKILLed during its inferior call "
	       "(status 0x%x)", st);
	tap_ok(write(in[1], "one\ntwo\n", 8) == 8,
	       "infcall-read: two lines sent");
	close(in[1]);
	while (len < sizeof buf - 1 &&
	       (k = read(out[0], buf + len, sizeof buf - 1 - len)) > 0)
		len += (size_t)k;
	buf[len] = 0;
	if (target > 0)
		waitpid(target, &tst, 0);
	tap_ok(WIFEXITED(tst) && WEXITSTATUS(tst) == 0,
	       "infcall-read: the target exited 0 (status 0x%x)", tst);
	tap_ok(strcmp(buf, "ready\ngot one\ngot two\nend\n") == 0,
	       "infcall-read: its read restarted, every byte read once");
	if (strcmp(buf, "ready\ngot one\ngot two\nend\n") != 0)
		tap_diag("got: %s", buf);
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* --infcall-time: 1000 hunchrt_ping calls returning through the rtlib,
 * then 1000 returning to 0 (the save area's cost); a diag, no limit. */
static void infcall_time(const char *prog)
{
	char *argv[] = { (char *)prog, NULL };
	uint64_t ret, fn, ok = 0;
	struct tgt t;
	pid_t pid;
	double t0, t1, t2;

	if (!tap_ok(tgt_launch(&t, prog, argv) == 0, "infcall-time: launched"))
		return;
	pid = eng_proc_pid(t.p);
	fn = eng_shm_entry(t.shm, HUNCH_RT_ENTRY_PING);
	t0 = now_us();
	for (int i = 0; i < 1000; i++)
		ok += eng_infcall(t.p, pid, fn, (uint64_t[]){ (uint64_t)i }, 1,
				  &ret, NULL) == 0 && ret == (uint64_t)i + 1;
	t1 = now_us();
	eng_infcall_set_return(t.p, 0);
	for (int i = 0; i < 1000; i++)
		ok += eng_infcall(t.p, pid, fn, (uint64_t[]){ (uint64_t)i }, 1,
				  &ret, NULL) == 0 && ret == (uint64_t)i + 1;
	t2 = now_us();
	tap_eq(ok, 2000, "infcall-time: 2000 calls returned x+1");
	tap_diag("rtlib return: %.1f us per call; return to 0: %.1f us",
		 (t1 - t0) / 1000, (t2 - t1) / 1000);
	tgt_fini(&t);
}

static void dlopen_child(char *const *argv, int out_fd, int pidw)
{
	struct tgt t;
	pid_t pid;

	if (tgt_launch_fds(&t, argv[0], argv, -1, out_fd) < 0)
		_exit(2);
	pid = eng_proc_pid(t.p);
	eng_ptrace_resume_all(t.p, NULL);
	if (write(pidw, &pid, sizeof pid) != sizeof pid)
		_exit(2);
	for (;;)
		tgt_pump(&t, 100);
}

static void kill_dlopen(const char *prog, const char *expected_path)
{
	char wait[64], wait2[80], want[512], buf[512];
	char *argv[] = { (char *)prog, "--wait-file", wait, NULL };
	int out[2], pw[2], st = 0, tst = 0;
	pid_t hunch, target = 0;
	size_t len = 0;
	ssize_t k;
	FILE *f;

	snprintf(wait, sizeof wait, "/tmp/inst_sigkill-%d", (int)getpid());
	snprintf(wait2, sizeof wait2, "%s.2", wait);
	f = fopen(expected_path, "r");
	want[f ? fread(want, 1, sizeof want - 1, f) : 0] = 0;
	if (f)
		fclose(f);
	if (pipe(out) < 0 || pipe(pw) < 0)
		return;
	hunch = fork();
	if (hunch == 0) {
		close(out[0]);
		close(pw[0]);
		dlopen_child(argv, out[1], pw[1]);
	}
	close(out[1]);
	close(pw[1]);
	if (read(pw[0], &target, sizeof target) != sizeof target)
		target = 0;
	usleep(200000);                 /* waiting for the file */
	kill(hunch, SIGKILL);
	waitpid(hunch, &st, 0);
	tap_ok(target > 0 && WIFSIGNALED(st), "kill-dlopen: hunch SIGKILLed "
	       "while the target waits to dlopen");
	close(open(wait, O_CREAT | O_WRONLY, 0600));
	close(open(wait2, O_CREAT | O_WRONLY, 0600));
	while (len < sizeof buf - 1 &&
	       (k = read(out[0], buf + len, sizeof buf - 1 - len)) > 0)
		len += (size_t)k;
	buf[len] = 0;
	if (target > 0)
		waitpid(target, &tst, 0);
	unlink(wait);
	unlink(wait2);
	tap_ok(WIFEXITED(tst) && WEXITSTATUS(tst) == 0,
	       "kill-dlopen: dlopen and dlclose after hunch died, exit 0 "
	       "(status 0x%x)", tst);
	tap_ok(want[0] != 0 && strcmp(buf, want) == 0,
	       "kill-dlopen: output identical");
	if (strcmp(buf, want) != 0)
		tap_diag("got: %s", buf);
}

int main(int argc, char **argv)
{
	int killed = 0, bad = 0;

	if (argc == 4 && strcmp(argv[1], "--kill-dlopen") == 0) {
		prctl(PR_SET_CHILD_SUBREAPER, 1);
		kill_dlopen(argv[2], argv[3]);
		return tap_done();
	}

	if (argc == 6 && strcmp(argv[1], "--kill-signal") == 0) {
		prctl(PR_SET_CHILD_SUBREAPER, 1);
		signal(SIGPIPE, SIG_IGN);
		kill_signal(argv[2], atoi(argv[3]), atoi(argv[4]),
			    atoi(argv[5]));
		return tap_done();
	}

	if (argc == 5 && strcmp(argv[1], "--kill-step") == 0) {
		prctl(PR_SET_CHILD_SUBREAPER, 1);
		signal(SIGPIPE, SIG_IGN);
		kill_step(argv[2], atol(argv[3]), atoi(argv[4]));
		return tap_done();
	}

	if (argc == 3 && strcmp(argv[1], "--infcall-time") == 0) {
		infcall_time(argv[2]);
		return tap_done();
	}

	if (argc == 3 && strcmp(argv[1], "--infcall-read") == 0) {
		prctl(PR_SET_CHILD_SUBREAPER, 1);
		signal(SIGPIPE, SIG_IGN);
		infcall_read(argv[2]);
		return tap_done();
	}
	if (argc < 3)
		return tap_ok(0, "usage: inst_sigkill PROGRAM MS..."),
		       tap_done();
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	signal(SIGPIPE, SIG_IGN);
	for (int i = 2; i < argc; i++) {
		int rc = run(argv[1], atoi(argv[i]));

		killed += rc > 0;
		bad += rc < 0;
	}
	tap_ok(killed >= 1, "hunch SIGKILLed mid-storm in %d of %d runs",
	       killed, argc - 2);
	tap_eq(bad, 0, "every signal counted exactly after every kill");
	return tap_done();
}

/*
 * inst_storm.c - while an 8-thread target runs (progs/gen_storm.py:
 * 1000 functions called in chunks whose sums each thread checks), enable
 * and disable entry/exit timers (wall and CPU rounds alternate) on every
 * function, ROUNDS times; the output must be identical to an
 * uninstrumented run, and after the last removal every code byte must
 * equal the file's.
 *
 *   inst_storm PROGRAM ROUNDS
 *   inst_storm --kill PROGRAM MS   hunch (a child) is SIGKILLed MS into
 *                                  the storm; the target must finish
 *                                  with correct output on its own.
 *   inst_storm --kill-each PROGRAM C FROM STEP
 *                                  hunch is SIGKILLed by its engine
 *                                  (fault point C:N) after write
 *                                  N of commit C, for N = FROM, +STEP...
 *                                  until the commit has no write N:
 *                                  every state between two writes must
 *                                  be a correct program.
 *   inst_storm --kill-infcall PROGRAM C
 *                                  hunch is SIGKILLed while its inferior
 *                                  call N runs (fault point
 *                                  infcall:N), N = 0, 1, ... for every
 *                                  call made by the end of commit C (the
 *                                  rtlib puts the thread back).
 */
#include "eng_fault.h"
#include "inst_util.h"
#include "tap.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char expected[] =
	"thread 0: ok\nthread 1: ok\nthread 2: ok\nthread 3: ok\n"
	"thread 4: ok\nthread 5: ok\nthread 6: ok\nthread 7: ok\nend\n";

/* Where the storm is, for a diag after a kill: shared with the parent
 * (MAP_SHARED before the fork), written without a system call. */
static volatile int *where_now;
/* infcall:N is armed once the target runs (each_child) */
static char kill_later[64];
static const char *const where_names[] = {
	"starting", "in an insert commit", "running instrumented",
	"in a remove commit", "running clean",
};

static void at(int w, int r)
{
	if (where_now != NULL) {
		where_now[0] = w;
		where_now[1] = r;
	}
}

struct storm_stats {
	int rounds_ok;
	int min_pts, max_pts;
	double ins_ms_sum, rem_ms_sum, ins_ms_max, rem_ms_max;
};

/* One round: insert everywhere, let it run, remove everywhere. */
static int storm_round(struct tgt *t, struct fn_ctr *c, size_t n, int r,
		       struct storm_stats *s)
{
	struct eng_inst_stats st;
	int npts;
	double ms;

	at(1, r);
	npts = fns_instrument(t, c, n, r % 2 ? IM_CPU : IM_WALL);
	at(2, r);

	if (npts < 0)
		return -1;
	eng_inst_stats(t->in, &st);
	ms = (double)st.last_commit_ns / 1e6;
	s->ins_ms_sum += ms;
	if (ms > s->ins_ms_max)
		s->ins_ms_max = ms;
	if (s->rounds_ok == 0 || npts < s->min_pts)
		s->min_pts = npts;
	if (npts > s->max_pts)
		s->max_pts = npts;
	tgt_pump(t, 5 + r % 7);
	at(3, r);
	if (fns_remove(t, c, n) < 0)
		return -1;
	at(4, r);
	eng_inst_stats(t->in, &st);
	ms = (double)st.last_commit_ns / 1e6;
	s->rem_ms_sum += ms;
	if (ms > s->rem_ms_max)
		s->rem_ms_max = ms;
	tgt_pump(t, 1 + r % 3);
	s->rounds_ok++;
	return 0;
}

static void storm(const char *prog, int rounds)
{
	char *argv[] = { (char *)prog, NULL };
	const char *name = strrchr(prog, '/') ? strrchr(prog, '/') + 1 : prog;
	struct storm_stats s = { 0 };
	struct eng_inst_stats st;
	struct eng_var_agg a;
	struct fn_ctr *c;
	size_t n;
	struct tgt t;

	if (!tap_ok(tgt_launch(&t, prog, argv) == 0, "%s: launched", name))
		return;
	c = fns_prepare(&t, "sf_", &n);
	tap_ok(n >= 1000, "%s: %zu functions to storm", name, n);
	eng_ptrace_resume_all(t.p, NULL);
	tgt_pump(&t, 100);
	for (int r = 0; r < rounds && !t.ended; r++)
		if (storm_round(&t, c, n, r, &s) < 0)
			break;
	eng_inst_stats(t.in, &st);
	tap_eq(s.rounds_ok, rounds, "%s: %d rounds of insert+remove", name,
	       rounds);
	tap_ok(s.min_pts >= 1000, "%s: every round instrumented %d..%d points",
	       name, s.min_pts, s.max_pts);
	tap_diag("%s: insert %.1f ms avg %.1f max, remove %.1f avg %.1f max; "
		 "%llu PCs moved, %llu frees deferred, %llu points refused "
		 "for stack words, %zu bytes of trampolines in use", name,
		 s.ins_ms_sum / (s.rounds_ok ? s.rounds_ok : 1), s.ins_ms_max,
		 s.rem_ms_sum / (s.rounds_ok ? s.rounds_ok : 1), s.rem_ms_max,
		 (unsigned long long)st.pcs_moved,
		 (unsigned long long)st.frees_deferred,
		 (unsigned long long)st.refused_stack, st.code_bytes);
	/* a last, longer round with two minis per point (a counter, then a
	 * wall timer) whose values are read: fresh timers (the storm left
	 * some with a start and no stop, as removing an exit while a thread
	 * is inside the function does) */
	for (size_t i = 0; i < n; i++)
		eng_sampler_var_alloc(t.smp, ENG_VAR_WALL_TIMER, &c[i].wall_var,
				      &c[i].wall_h, NULL);
	fns_instrument(&t, c, n, IM_BOTH);
	for (size_t i = 0; i < n; i++)
		if (c[i].nrefused)
			tap_diag("%s: %s: %zu requests refused: %s", name,
				 c[i].f->name, c[i].nrefused, c[i].why);
	tgt_pump(&t, 3000);
	/* while hunch is attached it handles traps itself (eng_trap.c) */
	tap_diag("%s: %llu traps handled by the rtlib, %llu patches written "
		 "int3 first (across a page)", name,
		 (unsigned long long)eng_shm_header(t.shm)->rt_traps,
		 (unsigned long long)st.int3_first);
	{
		size_t zero = 0;

		for (size_t i = 0; i < n; i++) {
			eng_sampler_var_agg(t.smp, c[i].entry_var, &a);
			/* sf_thread runs once per thread, at its start */
			if (a.sum == 0 && c[i].nentry > 0 &&
			    strcmp(c[i].f->name, "sf_thread") != 0) {
				zero++;
				if (zero < 5)
					tap_diag("%s: entry count 0", c[i].f->name);
			}
			if (strcmp(c[i].f->name, "sf_chunk") != 0)
				continue;
			eng_sampler_var_agg(t.smp, c[i].wall_var, &a);
			tap_ok(a.sum > 0, "%s: wall timer of sf_chunk ran "
			       "(%lld ns)", name, (long long)a.sum);
		}
		tap_eq(zero, 0, "%s: every entry counter ran", name);
	}
	fns_remove(&t, c, n);
	tap_eq(tgt_code_mismatches(&t), 0, "%s: every code byte equals the file's",
	       name);
	tgt_send(&t, "stop\n");
	tap_ok(tgt_wait_exit(&t, 60000) == 0 && t.status == 0,
	       "%s: exited 0", name);
	tap_ok(strcmp(t.out, expected) == 0, "%s: output identical", name);
	if (strcmp(t.out, expected) != 0)
		tap_diag("output: %s", t.out);
	fns_free(c, n);
	tgt_fini(&t);
}

/* The child plays hunch: launch with our pipes, storm until killed. */
static void kill_child(const char *prog, int in_fd, int out_fd, int pidw)
{
	char *argv[] = { (char *)prog, NULL };
	struct storm_stats s = { 0 };
	struct fn_ctr *c;
	size_t n;
	struct tgt t;
	pid_t pid;

	if (tgt_launch_fds(&t, prog, argv, in_fd, out_fd) < 0)
		_exit(2);
	pid = eng_proc_pid(t.p);
	if (write(pidw, &pid, sizeof pid) != sizeof pid)
		_exit(2);
	c = fns_prepare(&t, "sf_", &n);
	eng_ptrace_resume_all(t.p, NULL);
	for (int r = 0; r < 100000; r++)
		storm_round(&t, c, n, r, &s);
	_exit(0);
}

/* The child for --kill-each: storm until commit `commits` is done;
 * exit 3 if the engine did not kill us by then. */
static void each_child(const char *prog, int in_fd, int out_fd, int pidw,
		       int commits)
{
	char *argv[] = { (char *)prog, NULL };
	struct storm_stats s = { 0 };
	struct eng_inst_stats st;
	struct fn_ctr *c;
	size_t n;
	struct tgt t;
	pid_t pid;

	if (tgt_launch_fds(&t, prog, argv, in_fd, out_fd) < 0)
		_exit(2);
	pid = eng_proc_pid(t.p);
	if (write(pidw, &pid, sizeof pid) != sizeof pid)
		_exit(2);
	if (kill_later[0] != '\0')
		eng_fault_arm(kill_later);
	c = fns_prepare(&t, "sf_", &n);
	eng_ptrace_resume_all(t.p, NULL);
	for (int r = 0; r < 100000; r++) {
		eng_inst_stats(t.in, &st);
		if (st.commits >= (uint64_t)commits)
			break;
		storm_round(&t, c, n, r, &s);
	}
	_exit(3);
}

/* Let the target run on, stop it, and read what it printed: 0 when it
 * exited 0 with the expected output, else -1 with `out` for a diag. */
static int target_finish(pid_t target, int in_w, int out_r, char *out,
			 size_t cap)
{
	size_t len = 0;
	ssize_t k;
	int st;

	usleep(300000);    /* the target runs on with whatever was patched */
	if (write(in_w, "stop\n", 5) != 5) {
		st = 0;
		waitpid(target, &st, WNOHANG);
		snprintf(out, cap, "(cannot tell it to stop: status 0x%x)",
			 st);
		return -1;
	}
	while (len < cap - 1 && (k = read(out_r, out + len, cap - 1 - len)) > 0)
		len += (size_t)k;
	out[len] = 0;
	if (waitpid(target, &st, 0) != target || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0) {
		snprintf(out + len, cap - len, "(target status 0x%x)", st);
		return -1;
	}
	return strcmp(out, expected) == 0 ? 0 : -1;
}

/* One run of --kill-each: 1 killed and the target fine, 0 the commit
 * had no write n, -1 the target failed (diag). */
static int kill_at(const char *prog, int commit, long n, bool infcall)
{
	int in[2], out[2], pw[2], st, ok;
	pid_t hunch, target = 0;
	char buf[4096], env[64];
	const char *what = infcall ? "infcall" : "write";

	if (pipe(in) < 0 || pipe(out) < 0 || pipe(pw) < 0)
		return -1;
	hunch = fork();
	if (hunch == 0) {
		if (infcall)   /* set by each_child once the target runs */
			snprintf(env, sizeof env, "infcall:%ld", n);
		else
			snprintf(env, sizeof env, "%d:%ld", commit, n);
		if (infcall)
			snprintf(kill_later, sizeof kill_later, "%s", env);
		else
			eng_fault_arm(env);
		close(in[1]);
		close(out[0]);
		close(pw[0]);
		each_child(prog, in[0], out[1], pw[1], commit);
	}
	close(in[0]);
	close(out[1]);
	close(pw[1]);
	ok = read(pw[0], &target, sizeof target) == sizeof target;
	close(pw[0]);
	waitpid(hunch, &st, 0);
	if (!ok || (!WIFSIGNALED(st) && !(WIFEXITED(st) &&
					  WEXITSTATUS(st) == 3))) {
		tap_diag("kill at %s %d:%ld: hunch status 0x%x", what,
			 commit, n, st);
		ok = -1;
	} else {
		ok = target_finish(target, in[1], out[0], buf, sizeof buf);
		if (ok < 0)
			tap_diag("kill at %s %d:%ld: output: %s", what,
				 commit, n, buf);
		else
			ok = WIFSIGNALED(st) ? 1 : 0;
	}
	close(in[1]);
	close(out[0]);
	return ok;
}

static void storm_kill_each(const char *prog, int commit, long from,
			    long step)
{
	long n, last = from, killed = 0, bad = 0;
	int rc = 1;

	prctl(PR_SET_CHILD_SUBREAPER, 1);
	for (n = from; rc != 0 && n < 1000000; n += step) {
		rc = kill_at(prog, commit, n, false);
		killed += rc != 0;
		bad += rc < 0;
		last = rc != 0 ? n : last;
	}
	tap_ok(killed > 1, "kill-each: commit %d: hunch killed before %ld "
	       "writes (%ld..%ld, step %ld)", commit, killed, from, last,
	       step);
	tap_eq(bad, 0, "kill-each: commit %d: the target finished with "
	       "correct output after every kill", commit);
}

/* Killed during each inferior call of the first `commit` commits. */
static void storm_kill_infcall(const char *prog, int commit)
{
	long n, killed = 0, bad = 0;
	int rc = 1;

	prctl(PR_SET_CHILD_SUBREAPER, 1);
	signal(SIGPIPE, SIG_IGN);     /* a dead target must fail, not kill us */
	for (n = 0; rc != 0 && n < 1000; n++) {
		rc = kill_at(prog, commit, n, true);
		killed += rc != 0;
		bad += rc < 0;
	}
	tap_ok(killed >= 1, "kill-infcall: hunch killed during each of its "
	       "%ld inferior calls up to commit %d", killed, commit);
	tap_eq(bad, 0, "kill-infcall: the target finished with correct "
	       "output after every kill");
}

static void storm_kill(const char *prog, int ms)
{
	int in[2], out[2], pw[2];
	pid_t hunch, target = 0;
	char buf[4096];
	size_t len = 0;
	ssize_t k;
	int st;

	prctl(PR_SET_CHILD_SUBREAPER, 1);
	if (pipe(in) < 0 || pipe(out) < 0 || pipe(pw) < 0)
		return;
	where_now = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (where_now == MAP_FAILED)
		where_now = NULL;
	hunch = fork();
	if (hunch == 0)
		kill_child(prog, in[0], out[1], pw[1]);
	close(in[0]);
	close(out[1]);
	close(pw[1]);
	if (!tap_ok(read(pw[0], &target, sizeof target) == sizeof target,
		    "kill: hunch launched the target"))
		return;
	usleep((useconds_t)ms * 1000);
	kill(hunch, SIGKILL);
	waitpid(hunch, &st, 0);
	tap_ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
	       "kill: hunch SIGKILLed %d ms into the storm", ms);
	usleep(300000);    /* the target runs on with whatever was patched */
	tap_ok(write(in[1], "stop\n", 5) == 5, "kill: told the target to stop");
	while (len < sizeof buf - 1 &&
	       (k = read(out[0], buf + len, sizeof buf - 1 - len)) > 0)
		len += (size_t)k;
	buf[len] = 0;
	tap_ok(waitpid(target, &st, 0) == target && WIFEXITED(st) &&
	       WEXITSTATUS(st) == 0, "kill: target exited 0 by itself");
	tap_ok(strcmp(buf, expected) == 0, "kill: output identical");
	if (strcmp(buf, expected) != 0)
		tap_diag("output: %s", buf);
	if (where_now != NULL)
		tap_diag("hunch was killed %s, round %d",
			 where_names[where_now[0] % 5], where_now[1]);
}

int main(int argc, char **argv)
{
	if (argc == 6 && strcmp(argv[1], "--kill-each") == 0)
		storm_kill_each(argv[2], atoi(argv[3]), atol(argv[4]),
				atol(argv[5]));
	else if (argc == 4 && strcmp(argv[1], "--kill-infcall") == 0)
		storm_kill_infcall(argv[2], atoi(argv[3]));
	else if (argc == 4 && strcmp(argv[1], "--kill") == 0)
		storm_kill(argv[2], atoi(argv[3]));
	else if (argc == 3)
		storm(argv[1], atoi(argv[2]));
	else
		tap_ok(0, "usage: inst_storm [--kill] PROGRAM N");
	return tap_done();
}

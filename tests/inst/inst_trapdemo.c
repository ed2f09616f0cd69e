/*
 * inst_trapdemo.c - trap points on the demo's hottest function
 * ("a trapped exit crashes the demo"): demo_hot_loop's exit is
 * a one-byte `ret` that is also a branch target, so it can only be
 * trapped.  hunch-demo runs 1 s; every point of demo_hot_loop and
 * demo_step (whose call of demo_transform tail-calls it) is forced to an int3 and counted, the
 * first time before main runs, the second time while it runs (as the
 * dashboard enables a metric), with wall and CPU timers beside.  The
 * demo must print exactly what it prints alone and exit 0, and every
 * call must be counted: demo_step's entries = its exits = its calls =
 * demo_hot_loop's entries = its exits (enabled before main).
 */
#include "inst_util.h"
#include "tap.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char want[] =
	"demo: 1 seconds, 2 lock workers, 1 writer\ndemo done\n";

static uint64_t sum(struct tgt *t, uint32_t var)
{
	struct eng_var_agg a;

	eng_sampler_var_agg(t->smp, var, &a);
	return a.sum;
}

static void trap_all(struct fn_ctr *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < c[i].xf.npoints; k++)
			c[i].xf.points[k].ok = false;
}

static void run(const char *prog, bool running, enum inst_mode mode)
{
	char *argv[] = { (char *)prog, "--seconds", "1", "--threads", "2",
			 NULL };
	const char *how = running ? "while running" : "before main";
	struct fn_ctr *hot, *tr;
	size_t nh, nt;
	struct tgt t;
	int pts;

	if (!tap_ok(tgt_launch(&t, prog, argv) == 0, "%s: launched", how))
		return;
	hot = fns_prepare(&t, "demo_hot_loop", &nh);
	tr = fns_prepare(&t, "demo_step", &nt);
	t.count_calls = true;     /* demo_step calls demo_transform */
	trap_all(hot, nh);
	trap_all(tr, nt);
	if (running) {
		eng_ptrace_resume_all(t.p, NULL);
		tgt_pump(&t, 200);
	}
	pts = fns_instrument(&t, hot, nh, IM_COUNTERS);
	pts += fns_instrument(&t, tr, nt, IM_COUNTERS);
	if (mode != IM_COUNTERS)
		pts += fns_instrument(&t, hot, nh, mode);
	tap_ok(pts >= 4, "%s: %d trap points on demo_hot_loop and "
	       "demo_step", how, pts);
	if (!running)
		eng_ptrace_resume_all(t.p, NULL);
	tap_ok(tgt_wait_exit(&t, 60000) == 0 && t.status == 0,
	       "%s: the demo exited 0 (status %d)", how, t.status);
	tap_ok(strcmp(t.out, want) == 0, "%s: output identical", how);
	if (strcmp(t.out, want) != 0)
		tap_diag("got: %s", t.out);
	if (!running) {
		uint64_t n = sum(&t, tr[0].entry_var);

		tap_ok(n > 0, "%s: %llu calls", how, (unsigned long long)n);
		tap_eq(sum(&t, tr[0].exit_var), n, "%s: step exits", how);
		tap_eq(sum(&t, tr[0].call_var), n, "%s: step call site", how);
		tap_eq(sum(&t, hot[0].entry_var), n, "%s: hot entries", how);
		tap_eq(sum(&t, hot[0].exit_var), n, "%s: hot exits", how);
	}
	fns_free(hot, nh);
	fns_free(tr, nt);
	tgt_fini(&t);
}

/* Detach and collect the rest of the output and the wait status. */
static int detach_wait(struct tgt *t)
{
	pid_t pid = eng_proc_pid(t->p);
	ssize_t k;
	int st = 0;

	eng_detach(t->p, NULL);
	fcntl(t->from, F_SETFL, 0);
	while (t->outlen < sizeof t->out - 1 &&
	       (k = read(t->from, t->out + t->outlen,
			 sizeof t->out - 1 - t->outlen)) > 0)
		t->outlen += (size_t)k;
	t->out[t->outlen] = 0;
	if (waitpid(pid, &st, 0) != pid)
		return 1 << 16;
	eng_sampler_tick(t->smp, NULL);
	return st;
}

static void run_dflt(const char *prog, bool detach)
{
	char *argv[] = { (char *)prog, NULL };
	const char *how = detach ? "default SIGTRAP, detached" :
			  "default SIGTRAP, attached";
	struct fn_ctr *c;
	size_t n;
	struct tgt t;
	int st;

	if (!tap_ok(tgt_launch(&t, prog, argv) == 0, "%s: launched", how))
		return;
	c = fns_prepare(&t, "st_f", &n);
	trap_all(c, n);
	tap_eq(fns_instrument(&t, c, n, IM_COUNTERS), 2,
	       "%s: st_f entry and exit trapped", how);
	if (detach) {
		st = detach_wait(&t);
		tap_ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGTRAP,
		       "%s: killed by SIGTRAP (wait status 0x%x)", how, st);
		t.p = (eng_proc_free(t.p), NULL);
	} else {
		eng_ptrace_resume_all(t.p, NULL);
		tap_ok(tgt_wait_exit(&t, 30000) == 0 && t.status == -SIGTRAP,
		       "%s: killed by SIGTRAP (status %d)", how, t.status);
	}
	tap_ok(strcmp(t.out, "sum 500500\n") == 0, "%s: output identical",
	       how);
	tap_eq(sum(&t, c[0].entry_var), 1000, "%s: 1000 entries", how);
	tap_eq(sum(&t, c[0].exit_var), 1000, "%s: 1000 exits", how);
	fns_free(c, n);
	tgt_fini(&t);
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return tap_ok(0, "usage: inst_trapdemo DEMO TRAPDFLT"),
		       tap_done();
	run_dflt(argv[2], false);
	run_dflt(argv[2], true);
	run(argv[1], false, IM_COUNTERS);
	run(argv[1], true, IM_COUNTERS);
	run(argv[1], false, IM_CPU);
	run(argv[1], true, IM_WALL);
	return tap_done();
}

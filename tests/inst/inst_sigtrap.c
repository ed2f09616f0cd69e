/*
 * inst_sigtrap.c - the trap fallback coexists with a program's own
 * SIGTRAP handler (progs/inst_sigtrap.c): hunch instruments st_f through
 * int3 points before main runs; the program then installs its handler
 * (interposed sigaction: it reads back its own handler), raises SIGTRAP
 * and executes an int3 of its own — both reach its handler exactly once
 * — and calls st_f 1000 times, each counted at entry and exit.  The same
 * after hunch detached (the handler in the program does the work).
 */
#include "inst_util.h"
#include "tap.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char want[] =
	"own handler installed: yes\nraised 1, int3 1, sum 500500\n";

static void run(const char *prog, bool detach)
{
	char *argv[] = { (char *)prog, NULL };
	const char *how = detach ? "detached" : "attached";
	struct fn_ctr *c;
	struct eng_var_agg a;
	size_t n;
	struct tgt t;

	if (!tap_ok(tgt_launch(&t, prog, argv) == 0, "%s: launched", how))
		return;
	c = fns_prepare(&t, "st_f", &n);
	for (size_t k = 0; k < c[0].xf.npoints; k++)
		c[0].xf.points[k].ok = false;     /* every point a trap */
	tap_ok(fns_instrument(&t, c, n, IM_COUNTERS) >= 2,
	       "%s: st_f entry and exit instrumented with int3", how);
	if (detach) {
		pid_t pid = eng_proc_pid(t.p);
		int st;
		size_t len = 0;
		ssize_t k;

		tap_ok(eng_detach(t.p, NULL) == 0, "detached");
		fcntl(t.from, F_SETFL, 0);
		while ((k = read(t.from, t.out + len,
				 sizeof t.out - 1 - len)) > 0)
			len += (size_t)k;
		t.out[len] = 0;
		tap_ok(waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
		       WEXITSTATUS(st) == 0, "%s: exited 0", how);
		eng_sampler_tick(t.smp, NULL);
	} else {
		eng_ptrace_resume_all(t.p, NULL);
		tap_ok(tgt_wait_exit(&t, 30000) == 0 && t.status == 0,
		       "%s: exited 0", how);
	}
	tap_ok(strcmp(t.out, want) == 0, "%s: its handler saw its own "
	       "raise and int3 once each, none of ours", how);
	if (strcmp(t.out, want) != 0)
		tap_diag("got: %s", t.out);
	eng_sampler_var_agg(t.smp, c[0].entry_var, &a);
	tap_eq(a.sum, 1000, "%s: 1000 entries counted through traps", how);
	eng_sampler_var_agg(t.smp, c[0].exit_var, &a);
	tap_eq(a.sum, 1000, "%s: 1000 exits counted through traps", how);
	fns_free(c, n);
	if (detach)
		t.p = (eng_proc_free(t.p), NULL);
	tgt_fini(&t);
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return tap_ok(0, "usage: inst_sigtrap PROGRAM"), tap_done();
	run(argv[1], false);
	run(argv[1], true);
	return tap_done();
}

/*
 * inst_trapcost.c - a trap point's pass charges its trap to the observed
 * cost (engine/eng_inst_trapcost.c): progs/inst_sigtrap.c calls st_f
 * 1000 times, with a counter at its entry and exits, every point an
 * int3, while hunch is attached.  Each call passes two points, and each
 * pass adds to its thread's observed-cost word exactly what its base
 * was given: the base, the counter add and the traced trap's CPU cost
 * (eng_inst_costs), in TSC units.  Before, a pass through a trap
 * charged the 1-2 ns of its trampoline and none of the microseconds of
 * its trap.
 */
#include "inst_util.h"
#include "tap.h"

#include <stdio.h>

#include "eng_inst_cost.h"
#include "eng_inst_int.h"

int main(int argc, char **argv)
{
	char *args[] = { argv[argc > 1 ? 1 : 0], NULL };
	const struct eng_inst_cost *c;
	struct eng_var_agg a;
	struct fn_ctr *fc;
	uint64_t pass, want, got;
	size_t n;
	struct tgt t;

	if (argc != 2)
		return tap_ok(0, "usage: inst_trapcost PROGRAM"), tap_done();
	if (!tap_ok(tgt_launch(&t, argv[1], args) == 0, "launched"))
		return tap_done();
	c = eng_inst_costs(t.in);
	tap_ok(c->trap_ns >= 300 && c->trap_ns <= 1000000,
	       "a traced trap costs the thread %.0f ns of CPU (0.3-1000 us)",
	       c->trap_ns);
	tap_diag("per pass, ns: base %.2f, add %.2f, test %.2f, wall %.2f, "
		 "cpu %.2f, trap %.0f", c->base_ns, c->add_ns, c->test_ns,
		 c->wall_ns, c->cpu_ns, c->trap_ns);
	fc = fns_prepare(&t, "st_f", &n);
	for (size_t k = 0; k < fc[0].xf.npoints; k++)
		fc[0].xf.points[k].ok = false;     /* every point a trap */
	tap_ok(fns_instrument(&t, fc, n, IM_COUNTERS) >= 2,
	       "st_f entry and exit instrumented with int3");
	eng_ptrace_resume_all(t.p, NULL);
	tap_ok(tgt_wait_exit(&t, 30000) == 0 && t.status == 0, "exited 0");
	eng_sampler_var_agg(t.smp, fc[0].entry_var, &a);
	tap_eq(a.sum, 1000, "1000 entries counted through traps");
	eng_sampler_var_agg(t.smp, fc[0].exit_var, &a);
	tap_eq(a.sum, 1000, "1000 exits counted through traps");
	pass = eng_inst_cost_native((c->base_ns + c->add_ns + c->trap_ns) *
				    eng_inst_native_per_ns(t.in));
	want = 2000 * pass;
	got = eng_sampler_stats(t.smp)->obs_cost_total;
	tap_eq(got, want, "observed cost: 2000 passes of %llu TSC units each "
	       "(base %.2f + add %.2f + trap %.0f ns)",
	       (unsigned long long)pass, c->base_ns, c->add_ns, c->trap_ns);
	fns_free(fc, n);
	tgt_fini(&t);
	return tap_done();
}

/*
 * inst_regs.c - instrumentation preserves every register and flag the
 * program can see (progs/inst_regs.c checks all GPRs, xmm0-15 and
 * CF/ZF/SF/OF around 100,000 calls of an instrumented leaf): with a
 * counter, a wall timer and a CPU timer (which calls the rtlib through
 * the call thunk) chained at entry and exit, through jmp patches and
 * through the trap fallback.
 */
#include "inst_util.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* With the CPU timer at the software level the rtlib calls libc's
 * clock_gettime on every timer operation; counting that function's
 * entries too shows the per-thread guard: calls made from inside
 * instrumentation are not instrumented (the program's one own call is),
 * and nothing recurses. */
static void guard_check(struct tgt *t, bool sw, const char *how)
{
	static const char *const names[] = { "clock_gettime", NULL };
	struct fn_ctr *lc;
	struct eng_var_agg a;
	size_t nl;
	int pts;

	if (!sw)
		return;
	lc = fns_prepare_lib(t, "libc.so", names, &nl);
	pts = nl ? fns_instrument(t, lc, nl, IM_COUNTERS) : 0;
	tap_ok(pts > 0, "%s: libc clock_gettime instrumented too", how);
	t->guard_var = nl ? lc[0].entry_var : 0;
	fns_free(lc, nl);
	(void)a;
}

static void run(const char *prog, bool trap, bool sw)
{
	char *argv[] = { (char *)prog, trap ? "10000" : "100000", NULL };
	long calls = trap ? 10000 : 100000;
	const char *how = sw ? "guard" : trap ? "trap" : "jmp";
	const struct eng_func *f;
	struct hunch_err err = { 0 };
	struct x86_func xf;
	struct eng_var_agg a;
	uint32_t v[4];
	uint64_t h[4];
	struct tgt t;
	int added = 0;

	if (!tap_ok(tgt_launch(&t, prog, argv) == 0, "%s: launched", how))
		return;
	f = eng_sym_lazy_func_by_name(t.img, "rz_leaf");
	su_parse(t.img, f, &xf);
	eng_sampler_var_alloc(t.smp, ENG_VAR_COUNTER, &v[0], &h[0], NULL);
	eng_sampler_var_alloc(t.smp, ENG_VAR_COUNTER, &v[1], &h[1], NULL);
	eng_sampler_var_alloc(t.smp, ENG_VAR_WALL_TIMER, &v[2], &h[2], NULL);
	eng_sampler_var_alloc(t.smp, ENG_VAR_CPU_TIMER, &v[3], &h[3], NULL);
	for (size_t k = 0; k < xf.npoints; k++) {
		bool entry = xf.points[k].kind == X86_PT_ENTRY;
		struct x86_snip s[3] = {
			{ .kind = X86_SN_ADD, .handle = entry ? h[0] : h[1],
			  .delta = 1 },
			{ .kind = entry ? X86_SN_WALL_START : X86_SN_WALL_STOP,
			  .handle = h[2] },
			{ .kind = entry ? X86_SN_CPU_START : X86_SN_CPU_STOP,
			  .handle = h[3] },
		};
		struct eng_inst_point pt;
		uint32_t id;

		if (xf.points[k].kind == X86_PT_CALL)
			continue;
		eng_inst_point_from(&xf.points[k], t.base, &pt);
		pt.trap = trap || pt.trap;
		for (int i = 0; i < 3; i++)     /* three chained minis */
			added += eng_inst_add(t.in, &pt, &s[i], 1, i == 2, &id,
					      &err) == 0;
	}
	tap_eq(added, 6, "%s: 3 minis at entry and exit of rz_leaf", how);
	tap_eq(eng_inst_commit(t.in, &err), 0, "%s: inserted (%s)", how,
	       err.msg);
	guard_check(&t, sw, how);
	eng_ptrace_resume_all(t.p, NULL);
	tap_ok(tgt_wait_exit(&t, 120000) == 0 && t.status == 0,
	       "%s: exited 0", how);
	tap_ok(strcmp(t.out, "bad 0\n") == 0, "%s: every register and flag "
	       "preserved across %ld calls", how, calls);
	eng_sampler_var_agg(t.smp, v[0], &a);
	tap_eq(a.sum, calls, "%s: entries counted", how);
	eng_sampler_var_agg(t.smp, v[1], &a);
	tap_eq(a.sum, calls, "%s: exits counted", how);
	eng_sampler_var_agg(t.smp, v[3], &a);
	tap_ok(a.sum > 0, "%s: CPU timer ran (%lld ns)", how,
	       (long long)a.sum);
	tap_ok(eng_sampler_stats(t.smp)->obs_cost_total > 0, "%s: observed "
	       "cost reported (%llu)", how, (unsigned long long)
	       eng_sampler_stats(t.smp)->obs_cost_total);
	if (sw) {
		eng_sampler_var_agg(t.smp, t.guard_var, &a);
		tap_eq(a.sum, 1, "%s: clock_gettime counted once: the "
		       "program's own call, not the rtlib's from inside "
		       "instrumentation", how);
	}
	su_free(&xf);
	tgt_fini(&t);
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return tap_ok(0, "usage: inst_regs PROGRAM"), tap_done();
	run(argv[1], false, false);
	run(argv[1], true, false);
	setenv("HUNCH_SOFTWARE_LEVEL_CPU_TIMER", "1", 1);
	run(argv[1], false, true);
	return tap_done();
}

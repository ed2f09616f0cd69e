/*
 * inst_regs.c - instrumentation preserves every register and flag the
 * program can see (progs/inst_regs.c checks all GPRs, xmm0-15 and
 * CF/ZF/SF/OF around 100,000 calls of an instrumented leaf): with a
 * counter, a wall timer and a CPU timer (which calls the rtlib through
 * the call stub) chained at entry and exit, through jmp patches and
 * through the trap fallback.
 */
#include "inst_util.h"
#include "tap.h"

#include <stdio.h>
#include <string.h>

static void run(const char *prog, bool trap)
{
	char *argv[] = { (char *)prog, trap ? "10000" : "100000", NULL };
	long calls = trap ? 10000 : 100000;
	const char *how = trap ? "trap" : "jmp";
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
	f = eng_image_func_by_name(t.img, "rz_leaf");
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

		eng_inst_point_from(&xf.points[k], t.base, &pt);
		pt.trap = trap || pt.trap;
		for (int i = 0; i < 3; i++)     /* three chained minis */
			added += eng_inst_add(t.in, &pt, &s[i], 1, i == 2, &id,
					      &err) == 0;
	}
	tap_eq(added, 6, "%s: 3 minis at entry and exit of rz_leaf", how);
	tap_eq(eng_inst_commit(t.in, &err), 0, "%s: inserted (%s)", how,
	       err.msg);
	eng_resume_all(t.p, NULL);
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
	su_free(&xf);
	tgt_fini(&t);
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return tap_ok(0, "usage: inst_regs PROGRAM"), tap_done();
	run(argv[1], false);
	run(argv[1], true);
	return tap_done();
}

/*
 * inst_snippets.c - snippet expressions compiled to machine code read
 * the right values: integer arguments 0-5 at entry (rdi, rsi, r8, r9
 * live; rdx, rcx from the base trampoline's save area), $return at exit,
 * counters, + and ==, predicates.  ic_args(i, 2i, 3i, 4i, 5i, 6i) is
 * called for i = 0..7 (progs/inst_calls.c).
 */
#include "inst_util.h"
#include "tap.h"

#include <stdio.h>
#include <string.h>

static struct x86_expr arg(int n)
{
	return (struct x86_expr){ .kind = X86_EX_ARG, .arg = n };
}

static void run(const char *prog)
{
	char *argv[] = { (char *)prog, NULL };
	const char *name = strrchr(prog, '/') ? strrchr(prog, '/') + 1 : prog;
	struct hunch_err err = { 0 };
	const struct eng_func *f;
	struct x86_func xf;
	struct eng_var_agg a;
	uint32_t v[6];
	uint64_t h[6];
	struct tgt t;
	/* v0 += a2 + a3; v1 += a5; if (a0 == 3) v2 += 1; v3 += a1 + a4;
	 * v4 = v4 + a0 (a counter read back); exit: v5 += $return */
	struct x86_expr a0 = arg(0), a1 = arg(1), a2 = arg(2), a3 = arg(3),
			a4 = arg(4), a5 = arg(5), three = { .kind = X86_EX_CONST,
							    .v = 3 },
			ret = { .kind = X86_EX_RET };
	struct x86_expr s23 = { .kind = X86_EX_ADD, .l = &a2, .r = &a3 };
	struct x86_expr s14 = { .kind = X86_EX_ADD, .l = &a1, .r = &a4 };
	struct x86_expr eq3 = { .kind = X86_EX_EQ, .l = &a0, .r = &three };
	struct x86_expr v4e, v4sum;

	if (!tap_ok(tgt_launch(&t, prog, argv) == 0, "%s: launched", name))
		return;
	for (int i = 0; i < 6; i++)
		eng_sampler_var_alloc(t.smp, ENG_VAR_COUNTER, &v[i], &h[i],
				      NULL);
	v4e = (struct x86_expr){ .kind = X86_EX_VAR, .handle = h[4] };
	v4sum = (struct x86_expr){ .kind = X86_EX_ADD, .l = &v4e, .r = &a0 };
	{
		struct x86_snip inc = { .kind = X86_SN_ADD, .handle = h[2],
					.delta = 1 };
		struct x86_snip entry[] = {
			{ .kind = X86_SN_ADD, .handle = h[0], .value = &s23 },
			{ .kind = X86_SN_ADD, .handle = h[1], .value = &a5 },
			{ .kind = X86_SN_IF, .cond = &eq3, .body = &inc,
			  .nbody = 1 },
			{ .kind = X86_SN_ADD, .handle = h[3], .value = &s14 },
			{ .kind = X86_SN_SET, .handle = h[4], .value = &v4sum },
		};
		struct x86_snip exit_s = { .kind = X86_SN_ADD, .handle = h[5],
					   .value = &ret };

		f = eng_sym_lazy_func_by_name(t.img, "ic_args");
		su_parse(t.img, f, &xf);
		for (size_t k = 0; k < xf.npoints; k++) {
			struct eng_inst_point pt;
			uint32_t id;
			bool e = xf.points[k].kind == X86_PT_ENTRY;

			if (xf.points[k].kind == X86_PT_CALL)
				continue;

			eng_inst_point_from(&xf.points[k], t.base, &pt);
			tap_eq(eng_inst_add(t.in, &pt, e ? entry : &exit_s,
					    e ? 5 : 1, false, &id, &err), 0,
			       "%s: %s snippet compiled (%s)", name,
			       e ? "entry" : "exit", err.msg);
		}
		su_free(&xf);
	}
	tap_eq(eng_inst_commit(t.in, &err), 0, "%s: inserted", name);
	eng_ptrace_resume_all(t.p, NULL);
	tgt_wait_line(&t, "done", 60000);
	tgt_pump(&t, 30);
	eng_sampler_var_agg(t.smp, v[0], &a);
	tap_eq(a.sum, 7 * 28, "%s: sum of arg2 + arg3 (rdx, rcx: saved)", name);
	eng_sampler_var_agg(t.smp, v[1], &a);
	tap_eq(a.sum, 6 * 28, "%s: sum of arg5 (r9)", name);
	eng_sampler_var_agg(t.smp, v[2], &a);
	tap_eq(a.sum, 1, "%s: if (arg0 == 3) ran once", name);
	eng_sampler_var_agg(t.smp, v[3], &a);
	tap_eq(a.sum, 7 * 28, "%s: sum of arg1 + arg4 (rsi, r8)", name);
	eng_sampler_var_agg(t.smp, v[4], &a);
	tap_eq(a.sum, 28, "%s: counter = counter + arg0 (read back)", name);
	eng_sampler_var_agg(t.smp, v[5], &a);
	tap_eq(a.sum, 21 * 28, "%s: sum of $return at exit", name);
	tgt_send(&t, "go\n");
	tgt_wait_line(&t, "joined", 30000);
	tgt_send(&t, "bye\n");
	tap_ok(tgt_wait_exit(&t, 30000) == 0 && t.status == 0, "%s: exited 0",
	       name);
	tgt_fini(&t);
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		run(argv[i]);
	return tap_done();
}

/*
 * inst_catchup.c - a wall timer enabled at entry/exit of a function the
 * main thread has been inside for 1 s (progs/inst_spin.c spins 3 s):
 * with catchup (devguide §1.12) the timer runs from the moment it is
 * enabled, so the first sample, 1 s later, holds that second and the
 * final value the 2 s until the function returns; a second timer at the
 * same points without catchup reads 0 throughout (its stop has no
 * start), which is what catchup fixes.
 */
#include "inst_util.h"
#include "tap.h"

#include <stdio.h>
#include <string.h>

static int add_timer(struct tgt *t, const struct x86_func *xf, uint64_t h)
{
	struct hunch_err err = { 0 };
	int n = 0;

	for (size_t k = 0; k < xf->npoints; k++) {
		struct x86_snip s = { .handle = h };
		struct eng_inst_point pt;
		uint32_t id;

		if (xf->points[k].kind == X86_PT_CALL)
			continue;
		s.kind = xf->points[k].kind == X86_PT_ENTRY ? X86_SN_WALL_START
							     : X86_SN_WALL_STOP;
		eng_inst_point_from(&xf->points[k], t->base, &pt);
		if (eng_inst_add(t->in, &pt, &s, 1, false, &id, &err) == 0)
			n++;
		else
			tap_diag("add: %s", err.msg);
	}
	return n;
}

static double timer_s(struct tgt *t, uint32_t var)
{
	struct eng_var_agg a;

	eng_sampler_tick(t->smp, NULL);
	eng_sampler_var_agg(t->smp, var, &a);
	return (double)a.sum / 1e9;
}

int main(int argc, char **argv)
{
	char *av[] = { argv[1], NULL };
	const struct eng_func *f;
	struct hunch_err err = { 0 };
	struct x86_func xf;
	struct x86_snip start = { .kind = X86_SN_WALL_START };
	uint32_t v_cu, v_no;
	uint64_t h_cu, h_no;
	struct tgt t;
	double first, nocu, final;
	int caught;

	if (argc != 2 || !tap_ok(tgt_launch(&t, argv[1], av) == 0, "launched"))
		return tap_done();
	f = eng_image_func_by_name(t.img, "cu_spin");
	su_parse(t.img, f, &xf);
	eng_sampler_var_alloc(t.smp, ENG_VAR_WALL_TIMER, &v_cu, &h_cu, NULL);
	eng_sampler_var_alloc(t.smp, ENG_VAR_WALL_TIMER, &v_no, &h_no, NULL);
	eng_resume_all(t.p, NULL);
	tap_ok(tgt_wait_line(&t, "spinning", 10000) == 0, "target spinning");
	tgt_pump(&t, 1000);
	eng_stop_all(t.p, NULL);
	tap_ok(add_timer(&t, &xf, h_cu) > 1 && add_timer(&t, &xf, h_no) > 1,
	       "timers queued at entry and exit of cu_spin");
	tap_eq(eng_inst_commit(t.in, &err), 0, "inserted while stopped (%s)",
	       err.msg);
	start.handle = h_cu;
	caught = eng_inst_catchup(t.in, t.base + f->addr,
				  t.base + f->addr + f->size, &start, 1, &err);
	tap_eq(caught, 1, "catchup ran for the one thread inside (%s)",
	       err.msg);
	eng_resume_all(t.p, NULL);
	tgt_pump(&t, 1000);
	first = timer_s(&t, v_cu);
	nocu = timer_s(&t, v_no);
	tap_ok(first > 0.8 && first < 1.6, "first sample 1 s after enabling "
	       "holds that second: %.3f s", first);
	tap_ok(nocu == 0, "without catchup the timer reads %.3f s", nocu);
	tap_ok(tgt_wait_line(&t, "done 1", 10000) == 0, "cu_spin returned");
	tgt_pump(&t, 50);
	final = timer_s(&t, v_cu);
	tap_ok(final > 1.6 && final < 2.6, "final value: the %.3f s from "
	       "enabling to return", final);
	tap_ok(timer_s(&t, v_no) == 0, "without catchup: still 0");
	eng_inst_remove_all(t.in, NULL);
	tap_eq(code_mismatches(&t), 0, "every code byte equals the file's");
	tgt_send(&t, "x\n");
	tap_ok(tgt_wait_exit(&t, 10000) == 0 && t.status == 0, "exited 0");
	su_free(&xf);
	tgt_fini(&t);
	return tap_done();
}

/*
 * inst_catchup.c - wall timers enabled on functions the main thread has
 * been inside for 1 s (progs/inst_spin.c: main spins 3 s in cu_spin):
 * - on main, the thread's outermost function, whose beginning launch
 *   recorded: catchup starts the timer there, so the first sample, 1 s
 *   after enabling, already holds the whole time since main began (~2 s);
 * - on cu_spin, whose beginning nothing recorded: catchup starts the
 *   timer at enabling (never earlier: that could overstate), so the
 *   first sample holds the second since then, and catchup says so;
 * - a third timer at cu_spin without catchup reads 0 throughout (its
 *   stop has no start), which is what catchup fixes.
 * Here hunch runs no stack sampler.  With one, catchup dates inner
 * activations too: inst_catchup_samples.c (on progs/inst_inner.c).
 */
#include "inst_catchup.h"
#include "inst_util.h"
#include "tap.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static double timer_s(struct tgt *t, uint32_t var)
{
	struct eng_var_agg a;

	eng_sampler_tick(t->smp, NULL);
	eng_sampler_var_agg(t->smp, var, &a);
	return (double)a.sum / 1e9;
}

/* Catch up one start snippet on [f], checking what catchup says. */
static void catch_up(struct tgt *t, const struct eng_func *f, uint64_t h,
		     bool known, const char *what)
{
	struct x86_snip start = { .kind = X86_SN_WALL_START, .handle = h };
	struct eng_catchup_info ci;
	struct hunch_err err = { 0 };
	int caught;

	caught = eng_inst_catchup_info(t->in, t->base + f->addr,
				       t->base + f->addr + f->size, &start, 1,
				       &ci, &err);
	tap_eq(caught, 1, "catchup ran on %s for the one thread inside (%s)",
	       what, err.msg);
	tap_ok(ci.activations == 1 && ci.from_begin == (known ? 1u : 0u) &&
	       ci.from_enable == (known ? 0u : 1u), "  %s: 1 activation, "
	       "started %s (from_begin %u, from_enable %u)", what,
	       known ? "where it began" : "at enabling (its beginning is "
	       "unknown)", ci.from_begin, ci.from_enable);
}

int main(int argc, char **argv)
{
	char *av[] = { argv[1], NULL };
	const struct eng_func *f, *fm;
	struct hunch_err err = { 0 };
	struct x86_func xf, xm;
	uint32_t v_cu, v_no, v_main;
	uint64_t h_cu, h_no, h_main, t0, t1, now;
	struct tgt t;
	double first, nocu, final, mfirst;

	t0 = mono_ns();
	if (argc != 3 || !tap_ok(tgt_launch(&t, argv[1], av) == 0, "launched"))
		return tap_done();
	t1 = mono_ns();   /* main began between t0 and t1 */
	f = eng_sym_lazy_func_by_name(t.img, "cu_spin");
	fm = eng_sym_lazy_func_by_name(t.img, "main");
	su_parse(t.img, f, &xf);
	su_parse(t.img, fm, &xm);
	eng_sampler_var_alloc(t.smp, ENG_VAR_WALL_TIMER, &v_cu, &h_cu, NULL);
	eng_sampler_var_alloc(t.smp, ENG_VAR_WALL_TIMER, &v_no, &h_no, NULL);
	eng_sampler_var_alloc(t.smp, ENG_VAR_WALL_TIMER, &v_main, &h_main,
			      NULL);
	eng_ptrace_resume_all(t.p, NULL);
	tap_ok(tgt_wait_line(&t, "spinning", 10000) == 0, "target spinning");
	tgt_pump(&t, 1000);
	eng_ptrace_stop_all(t.p, NULL);
	tap_ok(add_timer(&t, &xf, h_cu, false) > 1 &&
	       add_timer(&t, &xf, h_no, false) > 1,
	       "timers queued at entry and exit of cu_spin");
	tap_ok(add_timer(&t, &xm, h_main, false) > 1, "and of main");
	tap_eq(eng_inst_commit(t.in, &err), 0, "inserted while stopped (%s)",
	       err.msg);
	catch_up(&t, f, h_cu, false, "cu_spin");
	catch_up(&t, fm, h_main, true, "main");
	eng_ptrace_resume_all(t.p, NULL);
	tgt_pump(&t, 1000);
	first = timer_s(&t, v_cu);
	nocu = timer_s(&t, v_no);
	mfirst = timer_s(&t, v_main);
	now = mono_ns();
	tap_ok(first > 0.8 && first < 1.6, "cu_spin's first sample 1 s after "
	       "enabling holds that second: %.3f s", first);
	/* The sample is a moment older than `now` (20 ms). */
	tap_ok(mfirst >= (double)(now - t1) / 1e9 - 0.02 &&
	       mfirst <= (double)(now - t0) / 1e9, "main's first sample "
	       "holds the whole time since main began, before enabling too: "
	       "%.3f s (%.3f..%.3f)", mfirst, (double)(now - t1) / 1e9,
	       (double)(now - t0) / 1e9);
	tap_ok(mfirst > first + 0.8, "  a second more than cu_spin's");
	tap_ok(nocu == 0, "without catchup the timer reads %.3f s", nocu);
	tap_ok(tgt_wait_line(&t, "done 1", 10000) == 0, "cu_spin returned");
	tgt_pump(&t, 50);
	final = timer_s(&t, v_cu);
	tap_ok(final > 1.6 && final < 2.6, "final value: the %.3f s from "
	       "enabling to return", final);
	tap_ok(timer_s(&t, v_no) == 0, "without catchup: still 0");
	eng_inst_commit_remove_all(t.in, NULL);
	tap_eq(tgt_code_mismatches(&t), 0, "every code byte equals the file's");
	tgt_send(&t, "x\n");
	tap_ok(tgt_wait_exit(&t, 10000) == 0 && t.status == 0, "exited 0");
	su_free(&xf);
	su_free(&xm);
	tgt_fini(&t);
	{
		int n = tap_n, failed = 0;

		catchup_samples(argv[2], &n, &failed);
		tap_n = n;
		tap_failed += failed;
	}
	return tap_done();
}

/*
 * metric_calls.c - procedure-call counts compiled from a metric
 * definition: unconstrained, with a code constraint (exact), with a
 * thread constraint (exact per thread), the constraint under recursion,
 * and shared instances (one set of trampolines; removal restores every
 * byte); a batch of enables and disables committed at its end.  Target:
 * progs/mcalls.c (its header has the counts).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mt_defs.h"
#include "mt_util.h"
#include "tap.h"

static const char *const counted[] = { "mc_counted", "no_such_function" };
static const struct eng_mclause calls_clause[] = {
	{ .funcs = ENG_MF_NAMES, .names = counted, .nnames = 2,
	  .point = ENG_MPT_ENTRY, .constrained = true, .prims = mt_add1,
	  .nprims = 1 },
};
static const struct eng_mdef calls_def = {
	.name = "mc_calls", .type = ENG_MVAR_COUNTER,
	.clauses = calls_clause, .nclauses = 1 };

/* MDL's procedure_calls: foreach $procedures append entry (* n++ *). */
static const struct eng_mclause procs_clause[] = {
	{ .funcs = ENG_MF_PROCEDURES, .point = ENG_MPT_ENTRY,
	  .constrained = true, .prims = mt_add1, .nprims = 1 },
};
static const struct eng_mdef procs_def = {
	.name = "procedure_calls", .type = ENG_MVAR_COUNTER,
	.clauses = procs_clause, .nclauses = 1 };

static struct eng_minst *enable(struct mt *t, const struct eng_mfocus *f,
				const char *what)
{
	struct hunch_err err = { 0 };
	struct eng_minst *mi = NULL;
	int rc = eng_metric_enable(t->m, &calls_def, f, &mi, &err);

	if (!tap_ok(rc == 0, "enable %s", what))
		tap_diag("  %s", err.msg);
	return rc == 0 ? mi : NULL;
}

static struct eng_mfocus in_function(const char *fn)
{
	return (struct eng_mfocus){ .code = ENG_CODE_FUNCTION, .function = fn,
				    .cons = &mt_procedure, .ncons = 1 };
}

static void disable(struct mt *t, struct eng_minst *mi)
{
	struct hunch_err err = { 0 };

	if (mi != NULL && eng_metric_disable(t->m, mi, &err) < 0)
		tap_diag("disable: %s", err.msg);
}

/* A counter on a function the program lacks: nothing to measure. */
static const char *const missing_fn[] = { "no_such_function" };
static const struct eng_mclause missing_clause[] = {
	{ .funcs = ENG_MF_NAMES, .names = missing_fn, .nnames = 1,
	  .point = ENG_MPT_ENTRY, .prims = mt_add1, .nprims = 1 },
};
static const struct eng_mdef missing_def = {
	.name = "mc_missing", .type = ENG_MVAR_COUNTER,
	.clauses = missing_clause, .nclauses = 1 };

struct failed {
	int n, rc;
	struct eng_minst *mi;
	char why[512];
};

static void on_failed(void *arg, struct eng_minst *mi, int rc,
		      const char *why)
{
	struct failed *f = arg;

	f->n++;
	f->rc = rc;
	f->mi = mi;
	snprintf(f->why, sizeof(f->why), "%s", why);
}

/* A batch: the enables and disables of a step of the search, committed
 * in one stop at its end (engine/eng_metric_batch.c).  A file focus
 * enabled in it while main runs is caught up at the end; a counter on a
 * function the program lacks measures nothing, and the end says so with
 * its reason; the instance disabled in it is removed by that commit. */
static void batch(struct mt *t, struct eng_minst **mi_rec)
{
	struct eng_mfocus file = { .code = ENG_CODE_FILE,
				   .srcfile = "mcalls.c",
				   .cons = &mt_procedure, .ncons = 1 };
	struct eng_mfocus all = { .code = ENG_CODE_ALL };
	struct eng_inst_stats st0, st1, st2;
	struct failed f = { 0 };
	struct eng_minst *mi_b, *mi_bad = NULL;
	struct hunch_err err = { 0 };

	eng_inst_stats(t->tg.in, &st0);
	eng_metric_batch_begin(t->m);
	mi_b = enable(t, &file, "in a batch: calls while a function of "
		      "mcalls.c runs");
	tap_eq(eng_metric_enable(t->m, &missing_def, &all, &mi_bad, &err),
	       0, "in a batch: a counter on a function the program lacks "
	       "returns its instance");
	disable(t, *mi_rec);
	*mi_rec = NULL;
	eng_inst_stats(t->tg.in, &st1);
	tap_eq(st1.commits, st0.commits, "  nothing is committed before the "
	       "batch's end");
	eng_metric_batch_end(t->m, on_failed, &f);
	eng_inst_stats(t->tg.in, &st2);
	tap_eq(st2.commits - st0.commits, 1, "the batch's end commits once "
	       "(an enable, a disable)");
	tap_ok(f.n == 1 && f.mi == mi_bad && f.rc == -ENOENT,
	       "  the end hands on the instance that measures nothing, with "
	       "-ENOENT (%d, %d)", f.n, f.rc);
	tap_ok(strstr(f.why, "metric mc_missing on ") != NULL &&
	       strstr(f.why, "nothing to measure here") != NULL,
	       "  and its reason: %s", f.why);
	if (f.n == 0)
		disable(t, mi_bad);
	tap_ok(mt_phase(t, "recurse", 10000) == 0, "phase recurse (batch)");
	tap_eq(mi_b ? mt_value(t, mi_b) : -1, 17, "the batch's file focus, "
	       "caught up at its end inside main: all 17 calls");
	disable(t, mi_b);
}

static void run(const char *prog)
{
	struct mt t;
	struct eng_mfocus all = { .code = ENG_CODE_ALL };
	struct eng_mfocus phase = in_function("mc_calls_phase");
	struct eng_mfocus rec = in_function("mc_recurse");
	struct eng_mfocus thr[4], file;
	struct eng_minst *mi_file, *mi_procs = NULL;
	struct hunch_err err = { 0 };
	struct eng_minst *mi_all, *mi_phase, *mi_rec, *mi_thr[4], *again;
	struct eng_minst_info info;
	struct eng_inst_stats st0, st1;
	int tids[4] = { 0 };

	if (mt_launch(&t, prog) < 0) {
		tap_ok(0, "launch %s", prog);
		return;
	}
	tap_diag("%s", prog);
	mi_all = enable(&t, &all, "calls, whole program");
	if (!tap_ok(eng_metric_enable(t.m, &procs_def, &all, &mi_procs,
				      &err) == 0, "enable procedure_calls "
		    "($procedures: every function of the executable)"))
		tap_diag("  %s", err.msg);
	mi_phase = enable(&t, &phase, "calls inside mc_calls_phase");
	mi_rec = enable(&t, &rec, "calls inside mc_recurse");
	eng_inst_stats(t.tg.in, &st0);
	again = enable(&t, &phase, "the same metric and focus again");
	eng_inst_stats(t.tg.in, &st1);
	tap_eq(st1.requests_active, st0.requests_active, "the second enable "
	       "inserts nothing (%zu requests)", st0.requests_active);
	tap_eq(st1.points_patched, st0.points_patched, "  and patches no "
	       "point (%zu)", st0.points_patched);
	tap_ok(again != NULL && again == mi_phase, "two enables of one metric "
	       "x focus give one instance");
	if (mi_phase != NULL) {
		eng_metric_info(t.m, mi_phase, &info);
		tap_eq(info.refs, 2, "  with two references");
		tap_eq(info.points, 3, "  3 requests: the counter and the "
		       "constraint's entry and exit");
	}
	tap_ok(mt_phase(&t, "calls", 10000) == 0, "phase calls");
	tap_eq(mt_value(&t, mi_all), 1600, "calls of mc_counted: 1600");
	tap_eq(mi_procs ? mt_value(&t, mi_procs) : -1, 1605, "calls of every "
	       "function: main, mc_calls_phase, 1600 mc_counted, 3 mc_worker");
	disable(&t, mi_procs);
	tap_eq(mt_value(&t, mi_phase), 1000, "code constraint: 1000 inside "
	       "mc_calls_phase (workers' calls are outside it)");
	/* Thread constraint: the same code, each thread's own slot. */
	tids[3] = eng_proc_pid(t.tg.p);
	for (int k = 0; k < 3; k++) {
		char pre[16];
		const char *l;

		snprintf(pre, sizeof pre, "tid %d ", k);
		l = mt_line(&t, pre);
		tids[k] = l ? atoi(l + strlen(pre)) : 0;
	}
	for (int k = 0; k < 4; k++) {
		thr[k] = (struct eng_mfocus){ .code = ENG_CODE_ALL,
					      .tid = tids[k] };
		mi_thr[k] = enable(&t, &thr[k], "calls on one thread");
	}
	for (int k = 0; k < 3; k++)
		tap_eq(mt_value(&t, mi_thr[k]), (k + 1) * 100,
		       "thread constraint: worker %d counted exactly", k);
	tap_eq(mt_value(&t, mi_thr[3]), 1000, "thread constraint: main");
	if (mi_thr[0] != NULL && mi_all != NULL) {
		struct eng_minst_info a, b;

		eng_metric_info(t.m, mi_thr[0], &a);
		eng_metric_info(t.m, mi_all, &b);
		tap_eq(a.var_id, b.var_id, "a thread focus shares the "
		       "whole-program code and variable");
	}
	tap_ok(mt_phase(&t, "release", 10000) == 0, "phase release");
	tap_ok(mt_phase(&t, "recurse", 10000) == 0, "phase recurse");
	tap_eq(mt_value(&t, mi_rec), 10, "constraint under recursion: the "
	       "10 calls inside mc_recurse, none of the 7 outside");
	tap_eq(mt_value(&t, mi_all), 1617, "whole program: 1617");
	eng_metric_info(t.m, mi_all, &info);
	tap_eq(info.functions, 1, "the missing name no_such_function was "
	       "dropped silently (1 function)");

	/* A source-file focus enabled while main (in mcalls.c) is running:
	 * catchup counts main's activation, so every later call counts. */
	file = (struct eng_mfocus){ .code = ENG_CODE_FILE, .srcfile = "mcalls.c",
				    .cons = &mt_procedure, .ncons = 1 };
	mi_file = enable(&t, &file, "calls while a function of mcalls.c runs");
	tap_ok(mt_phase(&t, "recurse", 10000) == 0, "phase recurse again");
	tap_eq(mi_file ? mt_value(&t, mi_file) : -1, 17, "file focus "
	       "enabled inside main: all 17 calls (main caught up)");
	disable(&t, mi_file);
	batch(&t, &mi_rec);

	/* Shared instance: disabling one reference keeps counting. */
	disable(&t, again);
	tap_ok(mt_phase(&t, "calls", 10000) == 0, "phase calls again");
	tap_eq(mt_value(&t, mi_phase), 2000, "one reference left: still "
	       "counting (2000)");
	tap_ok(mt_phase(&t, "release", 10000) == 0, "phase release");
	disable(&t, mi_phase);
	disable(&t, mi_rec);
	disable(&t, mi_all);
	for (int k = 0; k < 4; k++)
		disable(&t, mi_thr[k]);
	tap_eq(mt_code_mismatches(&t), 0, "every byte of the executable "
	       "equals the file after the last disable");
	tap_ok(mt_quit(&t) == 0, "target exits 0");
	mt_fini(&t);
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		run(argv[i]);
	return tap_done();
}

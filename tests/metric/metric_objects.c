/*
 * metric_objects.c - object constraints and argument/return operands:
 * calls of pthread_mutex_lock counted only for one mutex (exact for the
 * focused one, the other's excluded), time waiting on one mutex (a
 * replace constraint comparing $arg0 with the key, as default.json's
 * sync_object does), bytes written summed from write()'s $return, per
 * descriptor (the comparison made at entry carried to the exit) and
 * inside one function.  Target: progs/mcalls.c.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mt_defs.h"
#include "mt_util.h"
#include "tap.h"

static const char *const lock_fn[] = { "pthread_mutex_lock" };
static const char *const write_fn[] = { "write" };
static const char *const libc_fns[] = { "pthread_mutex_lock", "write" };

static const struct eng_mclause locks_cl[] = {
	{ .funcs = ENG_MF_NAMES, .names = lock_fn, .nnames = 1,
	  .point = ENG_MPT_ENTRY, .constrained = true, .prims = mt_add1,
	  .nprims = 1 },
};
static const struct eng_mdef locks_def = { .name = "lock_calls",
	.type = ENG_MVAR_COUNTER, .clauses = locks_cl, .nclauses = 1 };

/* sync_wait and default.json's sync_object replacement. */
static const struct eng_mclause wait_cl[] = {
	{ .funcs = ENG_MF_NAMES, .names = lock_fn, .nnames = 1,
	  .point = ENG_MPT_ENTRY, .constrained = true, .prims = mt_tstart,
	  .nprims = 1 },
	{ .funcs = ENG_MF_NAMES, .names = lock_fn, .nnames = 1,
	  .point = ENG_MPT_EXIT, .constrained = true, .prims = mt_tstop,
	  .nprims = 1 },
};
static const struct eng_mdef wait_def = { .name = "lock_wait",
	.type = ENG_MVAR_WALL_TIMER, .clauses = wait_cl, .nclauses = 2 };
static const struct eng_mpred is_key[] = { { .cmp = ENG_MC_EQ,
	.lhs = { .kind = ENG_MO_ARG, .arg = 0 },
	.rhs = { .kind = ENG_MO_KEY } } };
static const struct eng_mprim start_if_key[] = { { .op = ENG_MOP_START,
	.preds = is_key, .npreds = 1 } };
static const struct eng_mclause wait_repl[] = {
	{ .funcs = ENG_MF_NAMES, .names = lock_fn, .nnames = 1,
	  .point = ENG_MPT_ENTRY, .constrained = true,
	  .prims = start_if_key, .nprims = 1 },
	{ .funcs = ENG_MF_NAMES, .names = lock_fn, .nnames = 1,
	  .point = ENG_MPT_EXIT, .constrained = true, .prims = mt_tstop,
	  .nprims = 1 },
};

/* io_bytes: add $return if $return > 0, at exit. */
static const struct eng_mpred ret_pos[] = { { .cmp = ENG_MC_GT,
	.lhs = { .kind = ENG_MO_RETURN }, .rhs = { .kind = ENG_MO_CONST } } };
static const struct eng_mprim add_ret[] = { { .op = ENG_MOP_ADD,
	.value = { .kind = ENG_MO_RETURN }, .preds = ret_pos, .npreds = 1 } };
static const struct eng_mprim add1_ret[] = { { .op = ENG_MOP_ADD,
	.value = { .kind = ENG_MO_CONST, .c = 1 }, .preds = ret_pos,
	.npreds = 1 } };
static const struct eng_mclause bytes_cl[] = {
	{ .funcs = ENG_MF_NAMES, .names = write_fn, .nnames = 1,
	  .point = ENG_MPT_EXIT, .constrained = true, .prims = add_ret,
	  .nprims = 1 },
};
static const struct eng_mdef bytes_def = { .name = "io_bytes",
	.type = ENG_MVAR_COUNTER, .clauses = bytes_cl, .nclauses = 1 };
static const struct eng_mclause ops_cl[] = {
	{ .funcs = ENG_MF_NAMES, .names = write_fn, .nnames = 1,
	  .point = ENG_MPT_EXIT, .constrained = true, .prims = add1_ret,
	  .nprims = 1 },
};
static const struct eng_mdef ops_def = { .name = "io_ops",
	.type = ENG_MVAR_COUNTER, .clauses = ops_cl, .nclauses = 1 };

static struct eng_minst *enable(struct mt *t, const struct eng_mdef *d,
				const struct eng_mfocus *f, const char *what)
{
	struct hunch_err err = { 0 };
	struct eng_minst *mi = NULL;

	if (!tap_ok(eng_metric_enable(t->m, d, f, &mi, &err) == 0,
		    "enable %s on %s", d->name, what))
		tap_diag("  %s", err.msg);
	return mi;
}

struct seen_list {
	char v[32][128];
	int n;
};

static void on_seen(void *arg, const struct eng_seen *s)
{
	struct seen_list *l = arg;

	if (l->n < 32)
		snprintf(l->v[l->n++], 128, "%s %s %llu", s->class_name,
			 s->name, (unsigned long long)s->value);
}

static bool seen_has(const struct seen_list *l, const char *prefix)
{
	for (int i = 0; i < l->n; i++)
		if (strncmp(l->v[i], prefix, strlen(prefix)) == 0)
			return true;
	return false;
}

static bool seen_has_sub(const struct seen_list *l, const char *prefix,
			 const char *end)
{
	for (int i = 0; i < l->n; i++) {
		size_t n = strlen(l->v[i]), e = strlen(end);

		if (strncmp(l->v[i], prefix, strlen(prefix)) == 0 && n >= e &&
		    strcmp(l->v[i] + n - e, end) == 0)
			return true;
	}
	return false;
}

static void show(const struct seen_list *l)
{
	for (int i = 0; i < l->n; i++)
		tap_diag("  seen: %s", l->v[i]);
}

static int64_t val(struct mt *t, struct eng_minst *mi)
{
	return mi ? mt_value(t, mi) : -1;
}

static void locks(struct mt *t)
{
	uint64_t a = mt_data(t, "mc_lock_a"), b = mt_data(t, "mc_lock_b");
	struct eng_mfocus fa = { .has_key = true, .key = a };
	struct eng_mfocus fb = { .has_key = true, .key = b };
	struct eng_mfocus wa = fa, wb = fb;
	struct eng_minst *ca, *cb, *ta, *tb;
	struct seen_list seen = { .n = 0 };
	const char *l;
	double ms_a, ms_b, held;

	tap_ok(a != 0 && b != 0, "data symbols mc_lock_a, mc_lock_b");
	ca = enable(t, &locks_def, &fa, "mc_lock_a");
	cb = enable(t, &locks_def, &fb, "mc_lock_b");
	wa.replace = wb.replace = wait_repl;
	wa.nreplace = wb.nreplace = 2;
	wa.replace_name = wb.replace_name = "sync_object";
	ta = enable(t, &wait_def, &wa, "mc_lock_a (replace)");
	tb = enable(t, &wait_def, &wb, "mc_lock_b (replace)");
	tap_ok(mt_phase(t, "locks", 10000) == 0, "phase locks");
	tap_eq(val(t, ca), 102, "pthread_mutex_lock on mc_lock_a: exactly "
	       "102 (101 main + 1 thread)");
	tap_eq(val(t, cb), 50, "pthread_mutex_lock on mc_lock_b: exactly 50");
	ms_a = (double)val(t, ta) / 1e6;
	ms_b = (double)val(t, tb) / 1e6;
	l = mt_line(t, "held ");
	held = l ? atof(l + 5) / 1e3 : -1;
	/* The thread waits from its lock call (after it started: a loaded
	 * machine may delay that) until it runs again after main unlocked
	 * (a wake-up later than main's own clock reading). */
	tap_ok(ms_a > 20 && ms_a <= held + 5 && ms_a > held - 20,
	       "time waiting for mc_lock_a: %.2f ms (main held it %.2f ms "
	       "while the thread existed)", ms_a, held);
	tap_ok(ms_b < 2, "time waiting for mc_lock_b: %.3f ms (never "
	       "contended; the other mutex's wait excluded)", ms_b);
	eng_metric_seen_poll(t->m, on_seen, &seen);
	show(&seen);
	tap_ok(seen_has(&seen, "Mutex mc_lock_a "), "discovered: Mutex "
	       "mc_lock_a, named by its data symbol");
	tap_ok(seen_has(&seen, "Mutex mc_lock_b "), "discovered: Mutex "
	       "mc_lock_b");
	seen.n = 0;
	eng_metric_seen_poll(t->m, on_seen, &seen);
	tap_eq(seen.n, 0, "each object is reported once");
	eng_metric_disable(t->m, ca, NULL);
	eng_metric_disable(t->m, cb, NULL);
	eng_metric_disable(t->m, ta, NULL);
	eng_metric_disable(t->m, tb, NULL);
}

static void writes(struct mt *t)
{
	struct eng_mfocus fa = { .has_key = true }, fb = { .has_key = true };
	struct eng_mfocus in_phase = { .code = ENG_CODE_FUNCTION,
		.function = "mc_write_phase", .cons = &mt_procedure,
		.ncons = 1 };
	struct eng_minst *ba, *bb, *oa, *bp;
	const char *l;
	struct seen_list seen = { .n = 0 };
	char want[64];
	int da = -1, db = -1;

	tap_ok(mt_phase(t, "open", 10000) == 0, "phase open");
	l = mt_line(t, "fd ");
	if (l == NULL || sscanf(l, "fd %d %d", &da, &db) != 2)
		tap_diag("no fd line");
	fa.key = (uint64_t)da;
	fb.key = (uint64_t)db;
	ba = enable(t, &bytes_def, &fa, "descriptor A");
	bb = enable(t, &bytes_def, &fb, "descriptor B");
	oa = enable(t, &ops_def, &fa, "descriptor A");
	bp = enable(t, &bytes_def, &in_phase, "mc_write_phase");
	tap_ok(mt_phase(t, "write", 10000) == 0, "phase write");
	tap_eq(val(t, ba), 1021, "bytes written on A: $return summed at exit, "
	       "$arg0 compared at entry (1021)");
	tap_eq(val(t, bb), 250, "bytes written on B: 250");
	tap_eq(val(t, oa), 13, "write calls on A: 13");
	tap_eq(val(t, bp), 1271, "bytes written inside mc_write_phase: 1271 "
	       "(stdout's writes excluded)");
	eng_metric_seen_poll(t->m, on_seen, &seen);
	show(&seen);
	snprintf(want, sizeof want, "File /dev/null %d", da);
	tap_ok(seen_has(&seen, want), "discovered: %s", want);
	snprintf(want, sizeof want, "File /dev/null %d", db);
	tap_ok(seen_has(&seen, want), "discovered: %s", want);
	eng_metric_disable(t->m, ba, NULL);
	eng_metric_disable(t->m, bb, NULL);
	eng_metric_disable(t->m, oa, NULL);
	eng_metric_disable(t->m, bp, NULL);
}

/* A socket is named by its peer. */
static void sock(struct mt *t)
{
	struct eng_mfocus all = { .code = ENG_CODE_ALL };
	struct seen_list seen = { .n = 0 };
	struct eng_minst *b = enable(t, &bytes_def, &all, "the whole program");
	char want[96];
	const char *l;
	int fd = -1, port = -1;

	tap_ok(mt_phase(t, "sock", 10000) == 0, "phase sock");
	l = mt_line(t, "sock ");
	if (l != NULL)
		sscanf(l, "sock %d %d", &fd, &port);
	eng_metric_seen_poll(t->m, on_seen, &seen);
	show(&seen);
	snprintf(want, sizeof want, "->127.0.0.1:%d %d", port, fd);
	tap_ok(seen_has_sub(&seen, "File tcp:127.0.0.1:", want), "discovered: "
	       "the client socket named by its peer, tcp:127.0.0.1:*%s", want);
	eng_metric_disable(t->m, b, NULL);
}

static void run(const char *prog)
{
	struct mt t;

	if (mt_launch(&t, prog) < 0) {
		tap_ok(0, "launch %s", prog);
		return;
	}
	tap_diag("%s", prog);
	locks(&t);
	writes(&t);
	sock(&t);
	tap_eq(mt_code_mismatches(&t), 0, "every byte restored");
	tap_eq(mt_lib_mismatches(&t, "libc.so.6", libc_fns, 2), 0, "every "
	       "byte of libc's pthread_mutex_lock and write restored");
	tap_ok(mt_quit(&t) == 0, "target exits 0");
	mt_fini(&t);
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		run(argv[i]);
	return tap_done();
}

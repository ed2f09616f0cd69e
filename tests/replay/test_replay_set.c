/*
 * test_replay_set.c - replay with changed thresholds (--set) re-judges
 * the recorded data: exactly the expected conclusions change, and
 * experiments the recorded search never ran are answered "not recorded"
 * and conclude nothing.
 *
 * The program: CPU hot in main (0.9) and, less so, compute (0.45) and
 * work (0.4); everything else cold (0.05).  PC_CPUThreshold is 0.3 (the
 * default) in the recording.
 */
#include <math.h>

#include "pc_diff.h"
#include "replay_world.h"

static void sc_warm(struct src_sim *sim)
{
	src_sim_script(sim, "cpu_inclusive", "*", 0, 0.05, 0);
	src_sim_script(sim, "cpu_inclusive", TOP, 0, 0.9, 0.02);
	src_sim_script(sim, "cpu_inclusive", AT(F_MAIN), 0, 0.9, 0.02);
	src_sim_script(sim, "cpu_inclusive", AT(F_COMPUTE), 0, 0.45, 0.02);
	src_sim_script(sim, "cpu_inclusive", AT(F_WORK), 0, 0.4, 0.02);
}

static const struct scenario warm = { "warm compute", sc_warm, 8.0 };

#define CPU "CPUbound"

static const struct pc_change *change(const struct pc_change *c, size_t n,
				      const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(c[i].name, name) == 0)
			return &c[i];
	return NULL;
}

static void dump(const struct pc_change *c, size_t n)
{
	pc_diff_print(c, n, stderr);
}

/* Same tunables: nothing changes. */
static void test_same(const char *path)
{
	struct replayed *a = rw_replay(path, NULL);
	struct replayed *b = rw_replay(path, NULL);
	struct pc_change *c;
	size_t n = pc_diff_conclusions(a->pc, b->pc, &c);

	tap_eq(n, 0, "the recorded tunables change no conclusion");
	pc_changes_free(c, n);
	rw_replayed_free(a);
	rw_replayed_free(b);
}

/* Raised to 0.5: compute (0.45) and work (0.4) are no longer CPU bound;
 * work is then never tested (its parent is false).  main stays true. */
static void test_raised(const char *path)
{
	static const char *sets[] = { "PC_CPUThreshold=0.5", NULL };
	struct replayed *was = rw_replay(path, NULL);
	struct replayed *now = rw_replay(path, sets);
	struct pc_change *c;
	size_t n = pc_diff_conclusions(was->pc, now->pc, &c);
	const struct pc_change *x;

	x = change(c, n, CPU AT(F_COMPUTE));
	tap_ok(x && x->was == PC_TRUE && x->now == PC_FALSE,
	       "threshold 0.5: compute true -> false");
	x = change(c, n, CPU AT(F_WORK));
	tap_ok(x && x->was == PC_TRUE && x->now == PC_UNKNOWN,
	       "threshold 0.5: work true -> not tested (its parent is false)");
	tap_ok(change(c, n, CPU AT(F_MAIN)) == NULL &&
	       change(c, n, CPU TOP) == NULL,
	       "threshold 0.5: main and the whole program stay true, at the same times");
	x = change(c, n, CPU "<" F_WORK ",/Process/100,/SyncObject,/Files>");
	tap_ok(x && x->was == PC_FALSE && x->now == PC_UNKNOWN,
	       "threshold 0.5: work in process 100 false -> not tested");
	tap_eq(n, 3, "threshold 0.5: exactly those three conclusions change");
	if (n != 3)
		dump(c, n);
	/* With compute concluded sooner, the search has room for main in
	 * process 100, which the recording never got to: not recorded. */
	tap_eq(src_replay_unrecorded(now->rp), 1,
	       "threshold 0.5: one experiment was never recorded");
	tap_ok(strcmp(world_trace((struct world *)&(struct world){
				.pc = now->pc, .cfg = now->cfg }, 0, CPU,
			"<" F_MAIN ",/Process/100,/SyncObject,/Files>"),
		      "queued pending failed") == 0,
	       "threshold 0.5: main in process 100 is shown failed (not recorded), not judged");
	pc_changes_free(c, n);
	rw_replayed_free(was);
	rw_replayed_free(now);
}

/* Nodes whose experiment was never recorded: failed, never true. */
static int invented(const struct replayed *r)
{
	const struct pc_search *s = pc_consult_search(r->pc, 0);
	int bad = 0;

	for (size_t i = 0; i < s->nn; i++) {
		const struct pc_node *nd = s->nodes[i];

		for (int k = 0; k < nd->nin; k++) {
			const struct pc_minst *m = pc_dm_get(&r->pc->dm,
							     nd->inst[k]);

			if (m && m->fail_reason &&
			    strstr(m->fail_reason, SRC_REPLAY_NOT_RECORDED) &&
			    nd->truth != PC_UNKNOWN)
				bad++;
		}
	}
	return bad;
}

/* Lowered to 0.03: the cold functions (0.05) become CPU bound; their
 * refinements were never recorded and stay unknown. */
static void test_lowered(const char *path)
{
	static const char *sets[] = { "PC_CPUThreshold=0.03", NULL };
	struct replayed *was = rw_replay(path, NULL);
	struct replayed *now = rw_replay(path, sets);
	struct pc_change *c;
	size_t n = pc_diff_conclusions(was->pc, now->pc, &c);
	const struct pc_change *w = change(c, n, CPU AT(F_WRITER));
	const struct pc_change *l = change(c, n, CPU AT(F_LOCKER));
	int only_up = 1;

	tap_ok(w && w->was == PC_FALSE && w->now == PC_TRUE,
	       "threshold 0.03: writer false -> true");
	tap_ok(l && l->was == PC_FALSE && l->now == PC_TRUE,
	       "threshold 0.03: locker false -> true");
	for (size_t i = 0; i < n; i++)
		only_up &= c[i].was == PC_FALSE && c[i].now == PC_TRUE;
	tap_ok(only_up, "threshold 0.03: every change is a recorded experiment turning true (%zu)",
	       n);
	if (!only_up)
		dump(c, n);
	tap_ok(src_replay_unrecorded(now->rp) > 0,
	       "threshold 0.03: the new refinements were never recorded (%d enables answered \"not recorded\")",
	       src_replay_unrecorded(now->rp));
	tap_eq(invented(now), 0,
	       "no conclusion rests on an experiment that was not recorded");
	pc_changes_free(c, n);
	rw_replayed_free(was);
	rw_replayed_free(now);
}

int main(void)
{
	char dir[] = "/tmp/hunch-replay-XXXXXX", path[300];
	struct world *live;

	if (mkdtemp(dir) == NULL)
		return 2;
	snprintf(path, sizeof(path), "%s/warm.jsonl", dir);
	live = rw_record(&warm, path, NULL);
	tap_ok(strcmp(world_trace(live, 0, CPU, AT(F_WORK)),
		      "(none)") != 0 &&
	       world_node(live, 0, CPU, AT(F_WORK))->truth == PC_TRUE,
	       "recorded: CPU bound down to work");
	world_free(live);
	test_same(path);
	test_raised(path);
	test_lowered(path);
	unlink(path);
	rmdir(dir);
	return tap_done();
}

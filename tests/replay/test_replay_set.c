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
	pc_diff_changes_free(c, n);
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
	pc_diff_changes_free(c, n);
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
			const struct pc_minst *m = pc_datamgr_get(&r->pc->dm,
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
	tap_ok(only_up,
	       "threshold 0.03: every change is a recorded experiment turning true (%zu)",
	       n);
	if (!only_up)
		dump(c, n);
	tap_ok(src_replay_unrecorded(now->rp) > 0,
	       "threshold 0.03: the new refinements were never recorded (%d enables answered \"not recorded\")",
	       src_replay_unrecorded(now->rp));
	tap_eq(invented(now), 0,
	       "no conclusion rests on an experiment that was not recorded");
	pc_diff_changes_free(c, n);
	rw_replayed_free(was);
	rw_replayed_free(now);
}

/* Borderline: the program and main read 1.0 for 12 s, then 0.93
 * (+-0.01) for 48 s: against a threshold of 0.95 they turn true at
 * once, then sit inside the hysteresis band [0.9025, 0.9975] below the
 * threshold, where the guess stays true; their mean since they turned
 * true crosses 0.95 about 20 s later. */
static void sc_border(struct src_sim *sim)
{
	src_sim_script(sim, "cpu_inclusive", "*", 0, 0.05, 0);
	src_sim_script(sim, "cpu_inclusive", TOP, 0, 1.0, 0.01);
	src_sim_script(sim, "cpu_inclusive", AT(F_MAIN), 0, 1.0, 0.01);
	src_sim_script(sim, "cpu_inclusive", TOP, 12, 0.93, 0.01);
	src_sim_script(sim, "cpu_inclusive", AT(F_MAIN), 12, 0.93, 0.01);
}

static const struct scenario border = { "borderline", sc_border, 60.0 };

/* The what-if: replayed with PC_CPUThreshold=0.95, every node true is
 * true by the value the report gives (its mean, pc_shg_node_judged), and
 * every "value > threshold" line of the text report says so. */
static void test_whatif(const char *path)
{
	static const char *sets[] = { "PC_CPUThreshold=0.95", NULL };
	struct replayed *r = rw_replay(path, sets);
	const struct pc_search *s = pc_consult_search(r->pc, 0);
	struct pc_report_meta m = { .target = "demo", .mode = "replay" };
	int ntrue = 0, bad = 0, lastbad = 0, lines = 0, badlines = 0;
	char *text = rw_text(r->pc, &m), *line, *save = NULL;
	int nearlier = 0, badearlier = 0;

	for (size_t i = 0; i < s->nn; i++) {
		const struct pc_node *n = s->nodes[i];

		if (n->truth != PC_TRUE || n->is_virtual ||
		    pc_truth_node_hyp(r->pc, n)->cmp != PC_CMP_GT)
			continue;
		ntrue++;
		bad += !(pc_shg_node_judged(n) > n->threshold);
		lastbad += !(n->value > n->threshold);
	}
	tap_eq(bad, 0, "threshold 0.95: every true node's mean is above "
	       "0.95 (%d true, %d whose last interval alone was not)", ntrue,
	       lastbad);
	for (line = strtok_r(text, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save)) {
		double v, t;
		char hyp[64];

		if (sscanf(line, " %*d. %63[^:]: %lf > %lf", hyp, &v,
			   &t) != 3)
			continue;
		if (strstr(line, " since ") == NULL) {
			nearlier++;
			badearlier += !(v > t);
			continue;
		}
		lines++;
		if (!(v > t)) {
			badlines++;
			tap_diag("listed: %s", line);
		}
	}
	tap_eq(badlines, 0, "threshold 0.95: none of the %d bottlenecks "
	       "listed is below its threshold", lines);
	for (int k = 0; k < 2; k++) {
		const char *f = k ? AT(F_MAIN) : TOP;
		const char *tr = world_trace((struct world *)&(struct world){
				.pc = r->pc, .cfg = r->cfg }, 0, CPU, f);
		const char *t = strstr(tr, "true");

		tap_ok(t != NULL && strstr(t, "false") != NULL, "threshold "
		       "0.95: %s turned true, then false when its mean "
		       "crossed 0.95 (%s)", k ? "main" : "the program", tr);
	}
	tap_ok(nearlier > 0 && badearlier == 0, "threshold 0.95: the "
	       "report lists %d as earlier findings, each with the mean it "
	       "was true with, above 0.95", nearlier);
	free(text);
	rw_replayed_free(r);
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
	snprintf(path, sizeof(path), "%s/border.jsonl", dir);
	world_free(rw_record(&border, path, NULL));
	test_whatif(path);
	unlink(path);
	rmdir(dir);
	return tap_done();
}

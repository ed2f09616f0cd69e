/*
 * test_replay_sim.c - a search on the sim source, journaled, then
 * replayed: the replayed search must be the same search (every node, its
 * trace with the times of its state changes, every log line) and print
 * the same text and JSON reports.  Several scenarios, scripted as in
 * tests/consultant.
 */
#include "replay_world.h"

static void sc_chain(struct src_sim *sim)
{
	src_sim_script(sim, "cpu_inclusive", "*", 0, 0.05, 0);
	src_sim_script(sim, "cpu_inclusive", TOP, 0, 0.9, 0.05);
	src_sim_script(sim, "cpu_inclusive", AT(F_MAIN), 0, 0.9, 0.05);
	src_sim_script(sim, "cpu_inclusive", AT(F_COMPUTE), 0, 0.85, 0.05);
	src_sim_script(sim, "cpu_inclusive", AT(F_WORK), 0, 0.8, 0.05);
}

static void sc_propagation(struct src_sim *sim)
{
	src_sim_script(sim, "cpu_inclusive", "*", 0, 0.9, 0.05);
	src_sim_script(sim, "cpu_inclusive", AT(F_WRITER), 0, 0.05, 0);
	src_sim_hint(sim, F_COMPUTE, 0.8);
	src_sim_hint(sim, F_WRITER, 0.05);
	src_sim_enable_delay(sim, 1);
}

static void sc_true_to_false(struct src_sim *sim)
{
	src_sim_script(sim, "cpu_inclusive", "*", 0, 0.9, 0.05);
	src_sim_script(sim, "cpu_inclusive", TOP, 3.0, 0.1, 0.0);
	src_sim_script(sim, "cpu_inclusive", TOP, 5.0, 0.9, 0.05);
}

static void sc_hysteresis(struct src_sim *sim)
{
	src_sim_script(sim, "cpu_inclusive", TOP, 0, 0.6, 0.05);
	src_sim_script(sim, "cpu_inclusive", TOP, 2.0, 0.29, 0);
	src_sim_script(sim, "cpu_inclusive", TOP, 12.0, 0.20, 0);
}

static void sc_sync(struct src_sim *sim)
{
	src_sim_script(sim, "sync_wait", "*", 0, 0.6, 0.05);
	src_sim_script(sim, "cpu_inclusive", "*", 0, 0.3, 0.02);
}

static void sc_failing(struct src_sim *sim)
{
	src_sim_script(sim, "cpu_inclusive", "*", 0, 0.9, 0.05);
	src_sim_fail(sim, "sync_wait", "no such probe in this sim");
	src_sim_cost(sim, "cpu_inclusive", 0.01, 1.5);
}

static const struct scenario scenarios[] = {
	{ "cpu chain main->compute->work", sc_chain, 8.0 },
	{ "propagation with hints and a delayed enable", sc_propagation, 6.0 },
	{ "true then false then true", sc_true_to_false, 8.0 },
	{ "hysteresis", sc_hysteresis, 14.0 },
	{ "sync waits", sc_sync, 8.0 },
	{ "failing enables and observed cost", sc_failing, 6.0 },
};

static void same_reports(const char *name, struct world *live,
			 struct replayed *rp)
{
	struct pc_report_meta m = { .target = "demo", .pid = 100,
				    .mode = "sim" };
	char *a = rw_text(live->pc, &m), *b = rw_text(rp->pc, &m);
	char *ja = rw_json(live->pc, &m), *jb = rw_json(rp->pc, &m);

	tap_ok(strcmp(a, b) == 0, "%s: text report identical (%zu bytes)",
	       name, strlen(a));
	if (strcmp(a, b) != 0)
		tap_diag("live:\n%s\nreplay:\n%s", a, b);
	tap_ok(ja && jb && strcmp(ja, jb) == 0,
	       "%s: JSON report identical (%zu bytes)", name, ja ? strlen(ja) : 0);
	free(a);
	free(b);
	free(ja);
	free(jb);
}

static void check(const struct scenario *sc, const char *path)
{
	struct world *live = rw_record(sc, path, NULL);
	struct replayed *rp = rw_replay(path, NULL);
	struct pc_search *s;

	if (rp->pc == NULL) {
		tap_ok(0, "%s: the journal opens", sc->name);
		return;
	}
	s = pc_consult_search(live->pc, 0);
	tap_ok(rw_diff(live->pc, rp->pc) == 0,
	       "%s: same search: %zu nodes, every trace (states and times) and %zu log lines equal",
	       sc->name, s->nn, live->pc->nlog);
	tap_ok(pc_consult_ended(rp->pc) && src_replay_done(rp->rp) &&
	       src_replay_end_message(rp->rp) == NULL &&
	       src_replay_nbad(rp->rp) == 0,
	       "%s: the replay ended with the journal (%zu ticks), nothing skipped",
	       sc->name, src_replay_ticks(rp->rp));
	tap_eq(src_replay_unrecorded(rp->rp), 0,
	       "%s: every enable was recorded", sc->name);
	same_reports(sc->name, live, rp);
	rw_replayed_free(rp);
	world_free(live);
}

int main(void)
{
	char dir[] = "/tmp/hunch-replay-XXXXXX", path[300];

	if (mkdtemp(dir) == NULL)
		return 2;
	for (size_t i = 0; i < sizeof(scenarios) / sizeof(*scenarios); i++) {
		snprintf(path, sizeof(path), "%s/sc%zu.jsonl", dir, i);
		check(&scenarios[i], path);
		unlink(path);
	}
	rmdir(dir);
	return tap_done();
}

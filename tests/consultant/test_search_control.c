/*
 * test_search_control.c - steering the search on the sim source: pause
 * and resume, phases (global + current, each its own search), prune
 * lists, every expand policy; and the histograms behind it (folding, the
 * sampling period following the bucket width); an exec while enables
 * are pending: the search starts over with instances of its own.
 */
#include <math.h>

#include "sim_world.h"
#include "pc_hist.h"

#define AT(f) "<" f ",/Process,/SyncObject,/Files>"

/* Paused: nothing is evaluated or launched.  On resume the experiment
 * (active since 0.2 s, so past its floor) needs two intervals of data
 * after the pause: 3.6 s. */
static void test_pause(void)
{
	struct world *w = world_new(NULL, NULL);

	src_sim_script(w->sim, "cpu_inclusive", "*", 0, 0.9, 0.05);
	world_run(w, 0.6);
	pc_consult_pause(w->pc, 0, true);
	LOGGED(w, "+0.6) Search for the global phase paused.");
	world_run(w, 3.0);
	TRACE_IS(w, 0, "CPUbound", TOP, "queued pending active");
	tap_ok(world_node(w, 0, "CPUbound", TOP)->truth == PC_UNKNOWN,
	       "no conclusion while paused");
	pc_consult_pause(w->pc, 0, false);
	LOGGED(w, "+3.0) Search for the global phase resumed.");
	world_run(w, 4.0);
	LOGGED(w, "+3.6) CPUbound tested true for " TOP);
	world_free(w);
}

/* A CPU-bound first half, an I/O-bound second half.  The current phase
 * started at 4 s finds the I/O; the global search sees both. */
static void test_phases(void)
{
	struct world *w = world_new(NULL, NULL);
	struct pc_search *cur;

	src_sim_script(w->sim, "cpu_inclusive", "*", 0, 0.9, 0.05);
	src_sim_script(w->sim, "cpu_inclusive", "*", 4.0, 0.05, 0);
	src_sim_script(w->sim, "io_wait", "*", 4.0, 0.7, 0.05);
	world_run(w, 4.0);
	tap_eq(pc_consult_phase_start(w->pc, "second half"), 1, "phase 1");
	LOGGED(w, "+4.0) Search for Phase 1 (second half) started.");
	world_run(w, 8.0);
	cur = pc_consult_search(w->pc, 1);
	tap_ok(cur && cur != pc_consult_search(w->pc, 0),
	       "the current phase has its own search");
	TRACE_IS(w, 1, "ExcessiveIOBlockingTime", TOP,
		 "queued pending active true");
	TRACE_IS(w, 1, "CPUbound", TOP, "queued pending active false");
	LOGGED(w, "+5.2) ExcessiveIOBlockingTime tested true for " TOP);
	TRACE_IS(w, 0, "CPUbound", TOP, "queued pending active true false");
	TRACE_IS(w, 0, "ExcessiveIOBlockingTime", TOP,
		 "queued pending active false true");
	/* A new phase ends the previous one's search. */
	tap_eq(pc_consult_phase_start(w->pc, "third"), 2, "phase 2");
	LOGGED(w, "+8.0) Search for Phase 1 ended: end of phase.");
	tap_ok(cur->state == PC_SEARCH_ENDED, "phase 1's search ended");
	{
		struct pc_minst *m = pc_datamgr_get(&w->pc->dm, 1);

		if (!tap_ok(m && fabs(m->current.start - 8.0) < 1e-9 &&
			    m->global.start == 0, "a live instance's "
			    "current-phase histogram restarts with the phase; "
			    "the global one does not"))
			tap_diag("%s state %d current.start %g", m->metric,
				 m->state, m->current.start);
	}
	TRACE_IS(w, 1, "ExcessiveIOBlockingTime", TOP,
		 "queued pending active true ended");
	tap_ok(pc_consult_search(w->pc, 0)->state == PC_SEARCH_RUNNING,
	       "the global search goes on");
	world_free(w);
}

/* CPUbound prunes /SyncObject and /Files; sync waiting prunes /Files and
 * refines along /SyncObject; I/O blocking (whyAndWhere: consultant/
 * README.md says why) asks why (TooManySmallIOOps) at once, beside its
 * where refinements (the file, the code, the thread), and refines that
 * along the same hierarchies: the same nodes are reached by both paths
 * (shadows). */
static void test_pruning(void)
{
	struct world *w = world_new(NULL, NULL);
	struct pc_search *s;
	int bad = 0;

	src_sim_script(w->sim, "cpu_inclusive", "*", 0, 0.9, 0.05);
	src_sim_script(w->sim, "sync_wait", "*", 0, 0.6, 0.05);
	src_sim_script(w->sim, "io_wait", "*", 0, 0.5, 0.05);
	src_sim_script(w->sim, "io_bytes", "*", 0, 100, 0);
	src_sim_script(w->sim, "io_ops", "*", 0, 10, 0);
	world_run(w, 12.0);
	s = pc_consult_search(w->pc, 0);
	for (size_t i = 0; i < s->nn; i++) {
		const char *h = w->cfg->hyp[s->nodes[i]->hyp].name;
		const char *n = s->nodes[i]->name;

		if (strcmp(h, "CPUbound") == 0 &&
		    (strstr(n, "/SyncObject/") || strstr(n, "/Files/")))
			bad++;
		if (strcmp(h, "ExcessiveSyncWaitingTime") == 0 &&
		    strstr(n, "/Files/"))
			bad++;
		if (strcmp(h, "ExcessiveIOBlockingTime") == 0 &&
		    strstr(n, "/SyncObject/"))
			bad++;
	}
	tap_eq(bad, 0, "no node refines a pruned hierarchy");
	TRACE_IS(w, 0, "ExcessiveSyncWaitingTime",
		 "</Code,/Process,/SyncObject/Mutex,/Files>",
		 "queued pending active true");
	TRACE_IS(w, 0, "ExcessiveIOBlockingTime",
		 "</Code,/Process,/SyncObject,/Files/tmp/out.log>",
		 "queued pending active true");
	TRACE_IS(w, 0, "TooManySmallIOOps", TOP, "queued pending active true");
	TRACE_IS(w, 0, "TooManySmallIOOps",
		 "</Code,/Process,/SyncObject,/Files/tmp/out.log>",
		 "queued shadow pending active true");
	TRACE_IS(w, 0, "TooManySmallIOOps", "</Code/demo/io.c/writer,"
		 "/Process/100/100:main,/SyncObject,/Files/tmp/out.log>",
		 "queued shadow pending active shadow true");
	world_free(w);
}

/* A test hypothesis P (children: the why-child Q, and where-children
 * along /Code only) under each expand policy: which children appear, in
 * which order. */
static void test_policy(const char *policy, const char *want)
{
	char user[2048], got[1024] = "";
	struct world *w;
	struct pc_node *p;

	snprintf(user, sizeof(user),
		 "{\"version\": 1, \"hypotheses\": {"
		 "\"P\": {\"parent\": \"topLevelHypothesis\", \"metric\": "
		 "\"alloc_time\", \"threshold\": \"PC_AllocThreshold\", "
		 "\"expand\": \"%s\", \"prune\": [\"/Process\", "
		 "\"/SyncObject\", \"/Files\"]},"
		 "\"Q\": {\"parent\": \"P\", \"metric\": \"alloc_time\", "
		 "\"threshold\": \"PC_AllocThreshold\"}}}", policy);
	w = world_new(user, NULL);
	src_sim_script(w->sim, "alloc_time", "*", 0, 0.5, 0.05);
	world_run(w, 1.4);
	p = world_node(w, 0, "P", TOP);
	for (size_t i = 0; p && i < p->nkids; i++) {
		struct pc_node *c = pc_shg_node(pc_consult_search(w->pc, 0),
					    p->kids[i].child);

		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s",
			 i ? " " : "", c->name);
	}
	if (!tap_ok(strcmp(got, want) == 0, "%s: %s", policy, want))
		tap_diag("  got: %s", got);
	world_free(w);
}

static void test_policies(void)
{
	const char *q = "Q" TOP, *pm = "P" AT(F_MAIN);
	char both[512], rboth[512];

	snprintf(both, sizeof(both), "%s %s", q, pm);
	snprintf(rboth, sizeof(rboth), "%s %s", pm, q);
	test_policy("whyAndWhere", both);
	test_policy("whereAndWhy", rboth);
	test_policy("whyBeforeWhere", q);
	test_policy("whereBeforeWhy", pm);
	test_policy("whyOnly", q);
	test_policy("whereOnly", pm);
}

/* Lowering a threshold re-tests the refinements that had been found
 * false under the old one; the search kind is locked once searching. */
static void test_threshold_change(void)
{
	struct world *w = world_new(NULL, NULL);
	struct hunch_err e = { 0 };

	src_sim_script(w->sim, "cpu_inclusive", "*", 0, 0.9, 0.05);
	src_sim_script(w->sim, "cpu_inclusive", AT(F_WRITER), 0, 0.1, 0);
	world_run(w, 5.0);
	TRACE_IS(w, 0, "CPUbound", AT(F_WRITER),
		 "queued pending active false stopped");
	tap_eq(pc_consult_set_tunable(w->pc, "PC_CPUThreshold", 0.05, &e), 0,
	       "threshold lowered to 0.05");
	LOGGED(w, "+5.0) Tunable PC_CPUThreshold set to 0.05.");
	LOGGED(w, "+5.0) 1 refinement re-queued for the new threshold.");
	world_run(w, 8.0);
	TRACE_IS(w, 0, "CPUbound", AT(F_WRITER), "queued pending active false "
		 "stopped queued pending active true");
	tap_ok(pc_consult_set_tunable(w->pc, "useCallGraphSearch", 0, &e) < 0 &&
	       strcmp(e.msg, "useCallGraphSearch cannot change once a search "
		      "has started") == 0, "call-graph search locked: %s", e.msg);
	tap_ok(pc_consult_set_tunable(w->pc, "PC_CPUThreshold", 7, &e) < 0,
	       "out of range refused: %s", e.msg);
	world_free(w);
}

static void test_hist(void)
{
	struct pc_hist h;
	int folds;

	pc_hist_init(&h, 0, PC_HIST_BASE_WIDTH);
	for (int i = 0; i < 1000; i++)
		pc_hist_add(&h, i * 0.2, (i + 1) * 0.2, i < 500 ? 1.0 : 3.0);
	tap_ok(fabs(pc_hist_rate(&h, 999) - 3.0) < 1e-9, "bucket 999 = 3");
	folds = pc_hist_add(&h, 200.0, 200.2, 5.0);
	tap_eq(folds, 1, "a sample past the end folds once");
	tap_ok(fabs(h.width - 0.4) < 1e-12, "width doubled to 0.4");
	tap_ok(fabs(pc_hist_rate(&h, 0) - 1.0) < 1e-9 &&
	       fabs(pc_hist_rate(&h, 499) - 3.0) < 1e-9,
	       "pairs summed: rates kept");
	tap_ok(fabs(pc_hist_rate(&h, 500) - 2.5) < 1e-9,
	       "the new sample half fills bucket 500 (5 x 0.2 / 0.4)");
	tap_ok(isnan(pc_hist_rate(&h, 501)), "the upper half is empty (NaN)");
	tap_ok(fabs(pc_hist_width_for(250) - 0.4) < 1e-12 &&
	       fabs(pc_hist_width_for(150) - 0.2) < 1e-12,
	       "a phase histogram picks the smallest width covering its span");
}

/* After 200 s every global histogram has folded once, and the sampling
 * period (and the evaluation interval) follow the bucket width. */
static void test_sample_period(void)
{
	struct world *w = world_new(NULL, NULL);
	struct pc_minst *m;

	world_run(w, 200.0);
	tap_ok(fabs(src_sim_period(w->sim) - 0.2) < 1e-12, "0.2 s at 200 s");
	world_run(w, 200.4);
	tap_ok(fabs(src_sim_period(w->sim) - 0.4) < 1e-12,
	       "0.4 s after the fold");
	tap_ok(fabs(pc_consult_sample_period(w->pc) - 0.4) < 1e-12,
	       "the consultant asks for 0.4 s");
	m = pc_datamgr_get(&w->pc->dm, 1);
	tap_ok(m && fabs(m->global.width - 0.4) < 1e-12 && m->global.folds == 1,
	       "instance histograms folded with it");
	world_free(w);
}

/* The program replaces its image while the first enables are still
 * pending (a chain of wrappers: env, a shell, a version manager's shim):
 * the source drops them and answers them as refused; the search that
 * starts over asks again for instances of its own and concludes.  (It
 * once shared the old pending instances and waited for them for ever.) */
static void test_exec_pending(void)
{
	struct world *w = world_new(NULL, NULL);
	const struct pc_node *n;
	bool failed = false;

	src_sim_script(w->sim, "cpu_inclusive", "*", 0, 0.9, 0.05);
	src_sim_enable_delay(w->sim, 3);
	world_run(w, 0.4);
	n = world_node(w, 0, "CPUbound", TOP);
	tap_ok(n != NULL && n->pending, "CPUbound on the program pending at "
	       "the exec");
	src_sim_exec(w->sim);
	world_run(w, 4.0);
	LOGGED(w, "+0.6) The program replaced its image (exec).");
	LOGGED(w, "+0.6) Search for the global phase started again over the "
	       "new image.");
	n = world_node(w, 0, "CPUbound", TOP);
	tap_ok(n != NULL && n->truth == PC_TRUE, "the new search's CPUbound "
	       "on the program concludes true");
	for (size_t i = 0; i < w->pc->nlog; i++)
		failed |= strstr(w->pc->log[i], "Could not enable") != NULL;
	tap_ok(!failed, "no experiment of the new search failed for the old "
	       "image's dropped requests");
	world_free(w);
}

int main(void)
{
	test_exec_pending();
	test_pause();
	test_phases();
	test_pruning();
	test_policies();
	test_threshold_change();
	test_hist();
	test_sample_period();
	return tap_done();
}

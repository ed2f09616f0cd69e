/*
 * sim_world.h - a small simulated program for the search tests: the
 * defaults (plus optional user JSON and --set assignments), a resource
 * tree, the sim source and a consultant, with a call graph
 *   main -> compute -> work, main -> writer, main -> locker
 * one process (100) with threads 100:main and 101:worker, a mutex, a
 * condition variable and two files.
 */
#ifndef SIM_WORLD_H
#define SIM_WORLD_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pc_search.h"
#include "src_sim.h"
#include "tap.h"

#define TOP "</Code,/Process,/SyncObject,/Files>"
#define F_MAIN "/Code/demo/demo.c/main"
#define F_COMPUTE "/Code/demo/demo.c/compute"
#define F_WORK "/Code/demo/demo.c/work"
#define F_WRITER "/Code/demo/io.c/writer"
#define F_LOCKER "/Code/demo/demo.c/locker"

struct world {
	struct pc_config *cfg;
	struct pc_restree *res;
	struct src_sim *sim;
	struct pc_consult *pc;
};

static inline void world_program(struct src_sim *sim)
{
	src_sim_function(sim, "demo", "demo.c", "main");
	src_sim_function(sim, "demo", "demo.c", "compute");
	src_sim_function(sim, "demo", "demo.c", "work");
	src_sim_function(sim, "demo", "demo.c", "locker");
	src_sim_function(sim, "demo", "io.c", "writer");
	src_sim_thread(sim, 100, 100, "main");
	src_sim_thread(sim, 100, 101, "worker");
	src_sim_syncobj(sim, "Mutex", "big_lock", 0x1000);
	src_sim_syncobj(sim, "CondVar", "ready", 0x2000);
	src_sim_file(sim, "/tmp/out.log");
	src_sim_file(sim, "/tmp/data.bin");
	src_sim_call(sim, NULL, F_MAIN);
	src_sim_call(sim, F_MAIN, F_COMPUTE);
	src_sim_call(sim, F_MAIN, F_WRITER);
	src_sim_call(sim, F_MAIN, F_LOCKER);
	src_sim_call(sim, F_COMPUTE, F_WORK);
}

/* `user` is extra hypotheses JSON (or NULL); `sets` NAME=VALUE, NULL-ended. */
static inline struct world *world_new(const char *user, const char **sets)
{
	struct world *w = calloc(1, sizeof(*w));
	const char *src = getenv("HUNCH_SOURCE_ROOT");
	char path[4096];
	struct hunch_err e = { 0 };

	snprintf(path, sizeof(path), "%s/hypotheses/default.json",
		 src ? src : ".");
	w->cfg = pc_config_new();
	if (pc_config_load_file(w->cfg, path, NULL, &e) != 0)
		tap_diag("defaults: %s", e.msg);
	if (user && pc_config_load_string(w->cfg, "user.json", user, NULL,
					  &e) != 0)
		tap_diag("user: %s", e.msg);
	/* The sim tests pin Paradyn's level-by-level refinement (their
	 * exact node sequences name /Process/100), whatever the defaults;
	 * test_search_fast and test_search_deep turn the skips on.  And
	 * Paradyn's 1 s floor (0.4 s intervals) with the normal-quantile
	 * interval: their exact conclusion times are counted in those;
	 * refinements start at their parent's conclusion and the one
	 * process waits in the queue like any refinement (refineEarly=0,
	 * loneChildFirst=false: test_search_early turns them on); room is
	 * made only once every experiment charged a cost has concluded
	 * (roomWaitsForNeed=false: their launch sequences are counted in
	 * that), and nothing unconcluded is stopped for a narrower why
	 * (narrowerWhyFirst=false: test_search_room turns it on). */
	if (pc_tunables_set_str(w->cfg, "skipSingleChildLevels=false", &e) ||
	    pc_tunables_set_str(w->cfg, "refineEarly=0", &e) ||
	    pc_tunables_set_str(w->cfg, "loneChildFirst=false", &e) ||
	    pc_tunables_set_str(w->cfg, "roomWaitsForNeed=false", &e) ||
	    pc_tunables_set_str(w->cfg, "narrowerWhyFirst=false", &e) ||
	    pc_tunables_set_str(w->cfg, "skipDominantLevels=0", &e) ||
	    pc_tunables_set_str(w->cfg, "minObservationTime=1", &e) ||
	    pc_tunables_set_str(w->cfg, "studentT=false", &e))
		tap_diag("%s", e.msg);
	for (int i = 0; sets && sets[i]; i++)
		if (pc_tunables_set_str(w->cfg, sets[i], &e) != 0)
			tap_diag("%s", e.msg);
	w->res = pc_res_tree_new();
	w->sim = src_sim_new();
	world_program(w->sim);
	w->pc = pc_consult_new(w->cfg, src_sim_source(w->sim), w->res);
	return w;
}

/* A program blocked 90% of the time in 1-byte writes, 100 a second:
 * what the I/O metrics are predicted to cost (the blocking one `wait`,
 * the byte and operation counts `op` each), and the observed cost's
 * factor over that (src_sim_cost). */
static inline void world_writes(struct world *w, double wait, double op,
				double factor)
{
	src_sim_cost(w->sim, "io_wait", wait, factor);
	src_sim_cost(w->sim, "io_bytes", op, factor);
	src_sim_cost(w->sim, "io_ops", op, factor);
	src_sim_script(w->sim, "io_wait", "*", 0, 0.9, 0.02);
	src_sim_script(w->sim, "io_bytes", "*", 0, 100, 0);
	src_sim_script(w->sim, "io_ops", "*", 0, 100, 0);
}

/* Like bn_smallwrites: the I/O blocking metric alone takes most of the
 * 5% budget, and small operations are what is wrong. */
static inline struct world *world_write_heavy(const char **sets)
{
	struct world *w = world_new(NULL, sets);

	world_writes(w, 0.04, 0.01, 1);
	return w;
}

static inline void world_free(struct world *w)
{
	pc_consult_free(w->pc);
	src_sim_free(w->sim);
	pc_res_tree_free(w->res);
	pc_config_free(w->cfg);
	free(w);
}

/* Run until the target's clock reaches `t`. */
static inline void world_run(struct world *w, double t)
{
	struct pc_source *s = src_sim_source(w->sim);

	if (!w->pc->started)
		pc_consult_start(w->pc);
	while (s->ops->now(s) + 1e-9 < t && !pc_consult_ended(w->pc)) {
		src_sim_advance(w->sim);
		pc_consult_tick(w->pc);
	}
}

/* The trace of (hyp, focus) in search `sid`, or "(none)". */
static inline const char *world_trace(struct world *w, int sid,
				      const char *hyp, const char *focus)
{
	struct pc_search *s = pc_consult_search(w->pc, sid);
	int id = s ? pc_shg_lookup(s, w->cfg, hyp, focus) : -1;

	return id < 0 ? "(none)" : pc_shg_node(s, id)->trace;
}

static inline struct pc_node *world_node(struct world *w, int sid,
					 const char *hyp, const char *focus)
{
	struct pc_search *s = pc_consult_search(w->pc, sid);
	int id = s ? pc_shg_lookup(s, w->cfg, hyp, focus) : -1;

	return id < 0 ? NULL : pc_shg_node(s, id);
}

/* Is `line` in the log? */
static inline bool world_logged(struct world *w, const char *line)
{
	for (size_t i = 0; i < w->pc->nlog; i++)
		if (strcmp(w->pc->log[i], line) == 0)
			return true;
	return false;
}

static inline void world_dump(struct world *w)
{
	for (size_t i = 0; i < w->pc->nlog; i++)
		tap_diag("log: %s", w->pc->log[i]);
	for (int sid = 0; sid <= w->pc->nphases; sid++) {
		struct pc_search *s = pc_consult_search(w->pc, sid);

		for (size_t i = 0; s && i < s->nn; i++)
			tap_diag("node[%d] %s: %s", sid, s->nodes[i]->name,
				 s->nodes[i]->trace);
	}
}

#define TRACE_IS(w, sid, hyp, focus, want) do {                          \
	const char *got_ = world_trace((w), (sid), (hyp), (focus));      \
	if (!tap_ok(strcmp(got_, (want)) == 0, "%s%s: %s", (hyp),       \
		    (focus), (want)))                                    \
		tap_diag("  got: %s", got_);                             \
} while (0)

#define LOGGED(w, line) do {                                             \
	if (!tap_ok(world_logged((w), (line)), "log: %s", (line)))       \
		world_dump(w);                                           \
} while (0)

#endif

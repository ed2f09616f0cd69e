/*
 * replay_world.h - record a sim search into a journal, replay it.
 *
 * A scenario scripts the sim program of tests/consultant/sim_world.h;
 * rw_record runs it to `until` seconds through jnl_source_wrap, ends the
 * target and closes the journal (header: default.json and the tunables);
 * rw_replay runs a fresh consultant on src_replay over that journal.
 */
#ifndef REPLAY_WORLD_H
#define REPLAY_WORLD_H

#include <time.h>
#include <unistd.h>

#include "jnl_source.h"
#include "jnl_write.h"
#include "pc_report.h"
#include "sim_world.h"
#include "src_replay.h"

#define AT(f) "<" f ",/Process,/SyncObject,/Files>"

struct scenario {
	const char *name;
	void (*script)(struct src_sim *sim);
	double until;
};

/* The header's hypotheses: the defaults file as JSON. */
static inline json_t *rw_defaults(void)
{
	const char *src = getenv("HUNCH_SOURCE_ROOT");
	char path[4096];

	snprintf(path, sizeof(path), "%s/hypotheses/default.json",
		 src ? src : ".");
	return json_load_file(path, 0, NULL);
}

static inline json_t *rw_tunables(const struct pc_config *c)
{
	json_t *t = json_object();

	for (size_t i = 0; i < c->ntun; i++)
		json_object_set_new(t, c->tun[i].name, json_real(c->tun[i].value));
	return t;
}

/* Called once a second of the sim's time while recording, with the
 * world and the writer: tests add records of their own (target output)
 * and act as a user would (pause, phase), journaling it. */
struct world;
typedef void (*rw_second_fn)(struct world *w, struct jnl_writer *jw,
			     int second);

/* Run `sc` on the sim source, journaled into `path`, calling `each`
 * (when not NULL) at every whole second.  The world is left for the
 * caller to compare with (and free). */
static inline struct world *rw_record_with(const struct scenario *sc,
					   const char *path, const char **sets,
					   rw_second_fn each)
{
	struct world *w = world_new(NULL, sets);
	json_t *hyp = rw_defaults(), *tun = rw_tunables(w->cfg);
	struct jnl_header h = {
		.program = "demo", .pid = 100, .mode = "batch",
		.start_wall = { 1795334400, 0 }, .hypotheses = hyp,
		.tunables = tun,
	};
	struct jnl_writer *jw;
	struct hunch_err e = { 0 };
	struct timespec mono;

	clock_gettime(CLOCK_MONOTONIC, &mono);
	h.start_mono_ns = (uint64_t)mono.tv_sec * 1000000000u +
			  (uint64_t)mono.tv_nsec;
	if (jnl_write_open(&jw, path, &h, NULL, &e) != 0)
		tap_diag("%s", e.msg);
	pc_consult_free(w->pc);
	w->pc = pc_consult_new(w->cfg, jnl_source_wrap(src_sim_source(w->sim),
						       jw, 100), w->res);
	sc->script(w->sim);
	for (int sec = 1; each != NULL && sec < sc->until; sec++) {
		world_run(w, sec);
		each(w, jw, sec);
	}
	world_run(w, sc->until);
	src_sim_end(w->sim, PC_TARGET_EXITED, 0);
	src_sim_advance(w->sim);
	pc_consult_tick(w->pc);
	jnl_write_end(jw, jnl_write_ts_now(jw), "target_exited", NULL);
	jnl_write_close(jw, NULL);
	/* The wrapper goes; the consultant keeps the sim for world_free. */
	w->pc->src = jnl_source_unwrap(w->pc->src);
	json_decref(hyp);
	json_decref(tun);
	return w;
}

static inline struct world *rw_record(const struct scenario *sc,
				      const char *path, const char **sets)
{
	return rw_record_with(sc, path, sets, NULL);
}

struct replayed {
	struct pc_config *cfg;
	struct pc_restree *res;
	struct src_replay *rp;
	struct pc_consult *pc;
};

/* Play the journal to its last tick; sets: NAME=VALUE, NULL-ended. */
static inline struct replayed *rw_replay(const char *path, const char **sets)
{
	struct replayed *r = calloc(1, sizeof(*r));
	struct world *w = world_new(NULL, sets);   /* borrow its config */
	struct hunch_err e = { 0 };

	r->cfg = w->cfg;
	w->cfg = NULL;
	pc_consult_free(w->pc);
	w->pc = NULL;
	src_sim_free(w->sim);
	pc_res_tree_free(w->res);
	free(w);
	r->res = pc_res_tree_new();
	if (src_replay_open(&r->rp, path, &e) != 0) {
		tap_diag("%s", e.msg);
		return r;
	}
	r->pc = pc_consult_new(r->cfg, src_replay_source(r->rp), r->res);
	pc_consult_start(r->pc);
	src_replay_actions(r->rp, r->pc);
	while (!src_replay_done(r->rp) && !pc_consult_ended(r->pc)) {
		pc_consult_tick(r->pc);
		src_replay_actions(r->rp, r->pc);
	}
	return r;
}

static inline void rw_replayed_free(struct replayed *r)
{
	if (r->pc)
		pc_consult_free(r->pc);
	src_replay_free(r->rp);
	pc_res_tree_free(r->res);
	pc_config_free(r->cfg);
	free(r);
}

/* Differences between two searches: nodes (names, traces), the log. */
static inline int rw_diff(const struct pc_consult *a,
			  const struct pc_consult *b)
{
	int diff = a->nphases != b->nphases || a->nlog != b->nlog;

	for (int sid = 0; !diff && sid <= a->nphases; sid++) {
		struct pc_search *sa = pc_consult_search(a, sid);
		struct pc_search *sb = pc_consult_search(b, sid);

		diff += (sa == NULL) != (sb == NULL);
		if (sa == NULL || sb == NULL || diff)
			continue;
		diff += sa->nn != sb->nn;
		for (size_t i = 0; !diff && i < sa->nn; i++)
			if (strcmp(sa->nodes[i]->name, sb->nodes[i]->name) ||
			    strcmp(sa->nodes[i]->trace, sb->nodes[i]->trace)) {
				tap_diag("%s: %s / %s", sa->nodes[i]->name,
					 sa->nodes[i]->trace,
					 sb->nodes[i]->trace);
				diff++;
			}
	}
	for (size_t i = 0; !diff && i < a->nlog; i++)
		if (strcmp(a->log[i], b->log[i]) != 0) {
			tap_diag("log: %s / %s", a->log[i], b->log[i]);
			diff++;
		}
	return diff;
}

static inline char *rw_text(const struct pc_consult *pc,
			    const struct pc_report_meta *m)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	pc_report_text(pc, m, f);
	fclose(f);
	return buf;
}

static inline char *rw_json(const struct pc_consult *pc,
			    const struct pc_report_meta *m)
{
	json_t *j = pc_report_json(pc, m);
	char *s = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS);

	json_decref(j);
	return s;
}

#endif

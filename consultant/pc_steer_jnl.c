/*
 * pc_steer_jnl.c - the dashboard's steering in the journal, and again in
 * a replay.
 *
 * What a user does by hand changes the search as much as the data does,
 * so a replay that skipped it would diverge at the first edit.  Each
 * action is written as an `action` record when it has taken effect,
 * between two ticks, with everything needed to redo it without the
 * dashboard: names, the focus as its four paths (a focus name cannot be
 * split again once a C++ name holds a comma), and for a hypotheses
 * reload every file's whole document (the replaying machine may have
 * other files, or none).  The replay source applies them after the same
 * tick (src_replay_actions, then pc_steer_jnl_replay here), so the search
 * makes the same requests in the same order and reaches the same
 * conclusions.  docs/journal-format.md lists the records.
 */
#include "pc_steer.h"
#include "pc_steer_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jnl_record.h"
#include "jnl_write.h"

/* A display instance a replay holds: the one the recording called
 * `rec`, here `inst` (the same number when the replay is faithful, but
 * the release must not depend on that). */
struct held {
	long long rec;
	int inst;
};

/* One consultant's steering journal (live: a writer) or replay state. */
struct steer {
	const struct pc_consult *pc;
	struct jnl_writer *w;
	struct held *held;
	size_t nheld, capheld;
};
static struct steer *st;
static size_t nst;

static struct steer *find(const struct pc_consult *pc, bool make)
{
	for (size_t i = 0; i < nst; i++)
		if (st[i].pc == pc)
			return &st[i];
	if (!make)
		return NULL;
	st = realloc(st, (nst + 1) * sizeof(*st));
	if (st == NULL)
		abort();
	st[nst] = (struct steer){ .pc = pc };
	return &st[nst++];
}

void pc_steer_jnl_write(const struct pc_consult *pc, struct jnl_writer *w)
{
	find(pc, true)->w = w;
}

void pc_steer_jnl_forget(const struct pc_consult *pc)
{
	struct steer *s = find(pc, false);

	if (s == NULL)
		return;
	free(s->held);
	*s = st[--nst];
}

bool pc_steer_jnl_holds(const struct pc_consult *pc)
{
	const struct steer *s = find(pc, false);

	return s != NULL && s->nheld > 0;
}

size_t pc_steer_jnl_held(const struct pc_consult *pc, int *inst, size_t max)
{
	const struct steer *s = find(pc, false);
	size_t n = 0;

	for (size_t i = 0; s != NULL && i < s->nheld; i++)
		if (n < max)
			inst[n++] = s->held[i].inst;
	return n;
}

/* ---- writing ---- */

/* Write the action `o` (taken) when `pc` is journaled. */
static void put(const struct pc_consult *pc, json_t *o)
{
	struct steer *s = find(pc, false);

	if (o != NULL && s != NULL && s->w != NULL)
		jnl_write_json(s->w, "action", jnl_write_ts_now(s->w), o);
	json_decref(o);
}

static bool journaled(const struct pc_consult *pc)
{
	const struct steer *s = find(pc, false);

	return s != NULL && s->w != NULL;
}

/* "focus" (the name, for people and jq) and "paths" (exact). */
static void add_focus(const struct pc_consult *pc, json_t *o,
		      const struct pc_focus *f)
{
	struct pc_src_focus sf;
	char name[1024];

	pc_focus_paths(pc->res, f, &sf);
	json_object_set_new(o, "focus", json_string(pc_focus_name(pc->res, f,
						    name, sizeof(name))));
	json_object_set_new(o, "paths", jnl_record_focus_json(&sf));
}

int pc_steer_jnl_set_tunable(struct pc_consult *pc, const char *name,
			 double value, struct hunch_err *e)
{
	double old = pc_tunables_get(pc->cfg, name);
	int r = pc_consult_set_tunable(pc, name, value, e);

	if (r == 0 && journaled(pc))
		put(pc, json_pack("{s:s,s:s,s:f,s:f}", "action", "tunable",
				  "name", name, "old", old, "value",
				  pc_tunables_get(pc->cfg, name)));
	return r;
}

void pc_steer_jnl_enable(const struct pc_consult *pc, const char *metric,
			 const struct pc_focus *f, int inst)
{
	json_t *o;

	if (!journaled(pc))
		return;
	o = json_pack("{s:s,s:s,s:i}", "action", "metric_enable", "name",
		      metric, "inst", inst);
	add_focus(pc, o, f);
	put(pc, o);
}

void pc_steer_jnl_release(const struct pc_consult *pc, int inst)
{
	const struct pc_minst *m = pc_datamgr_get(&pc->dm, inst);
	json_t *o;

	if (!journaled(pc) || m == NULL)
		return;
	o = json_pack("{s:s,s:s,s:i}", "action", "metric_disable", "name",
		      m->metric, "inst", inst);
	add_focus(pc, o, &m->focus);
	put(pc, o);
}

void pc_steer_jnl_experiment(const struct pc_consult *pc,
			     const struct pc_search *s, const char *hyp,
			     const struct pc_focus *f, int node)
{
	json_t *o;

	if (!journaled(pc))
		return;
	o = json_pack("{s:s,s:s,s:i,s:i}", "action", "experiment", "hyp",
		      hyp, "node", node, "phase", s->id);
	add_focus(pc, o, f);
	put(pc, o);
}

void pc_steer_jnl_stop(const struct pc_consult *pc,
		       const struct pc_search *s, const char *hyp,
		       const struct pc_focus *f, int node)
{
	json_t *o;

	if (!journaled(pc))
		return;
	o = json_pack("{s:s,s:s,s:i,s:i}", "action", "experiment_stop", "hyp",
		      hyp, "node", node, "phase", s->id);
	add_focus(pc, o, f);
	put(pc, o);
}

/* Every file of the configuration, as loaded: `{"file", "document"}`
 * each, in load order, so a replay loads the same documents in the same
 * order (a reload record, and the header when there are several). */
json_t *pc_steer_jnl_config_files(const struct pc_config *cfg)
{
	json_t *files = json_array();
	json_error_t je;

	for (size_t i = 0; files != NULL && i < cfg->nfiles; i++) {
		const char *f = cfg->files[i];
		json_t *doc = json_load_file(f, JSON_REJECT_DUPLICATES, &je);

		json_array_append_new(files, json_pack("{s:s,s:o}", "file", f,
			"document", doc ? doc : json_null()));
	}
	return files;
}

int pc_steer_jnl_load_files(struct pc_config *c, const json_t *files,
			struct hunch_err *e)
{
	struct pc_diags ds = { 0 };   /* for the first error's text */
	const json_t *f;
	size_t i;
	int r = 0;

	json_array_foreach(files, i, f) {
		const char *name = json_string_value(json_object_get(f,
								     "file"));
		char *text = json_dumps(json_object_get(f, "document"),
					JSON_ENCODE_ANY);

		r = text ? pc_config_load_string(c, name ? name : "recorded",
						 text, &ds, e)
			 : hunch_err_set(e, -EINVAL, "file %zu has no document",
				      i);
		free(text);
		if (r != 0)
			break;
	}
	pc_jx_diags_free(&ds);
	if (r != 0)
		return r;
	return json_array_size(files) == 0 ?
	       hunch_err_set(e, -EINVAL, "no files") : 0;
}

void pc_steer_jnl_header_config(const struct pc_config *cfg, json_t **hyp,
			    json_t **files, json_t **tun)
{
	*hyp = cfg->nfiles == 1 ? json_load_file(cfg->files[0],
					JSON_REJECT_DUPLICATES, NULL) : NULL;
	*files = cfg->nfiles > 1 ? pc_steer_jnl_config_files(cfg) : NULL;
	*tun = json_object();
	for (size_t i = 0; *tun && i < cfg->ntun; i++)
		json_object_set_new(*tun, cfg->tun[i].name,
				    json_real(cfg->tun[i].value));
}

void pc_steer_jnl_reload(const struct pc_consult *pc, int added)
{
	json_t *o;

	if (!journaled(pc))
		return;
	o = json_pack("{s:s,s:o,s:i}", "action", "hypotheses", "files",
		      pc_steer_jnl_config_files(pc->cfg), "added", added);
	put(pc, o);
}

/* ---- replaying ---- */

static int focus_of(struct pc_consult *pc, const json_t *rec,
		    struct pc_focus *f, struct hunch_err *e)
{
	struct pc_src_focus sf;
	const json_t *paths = json_object_get(rec, "paths");

	if (!json_is_array(paths) ||
	    jnl_record_focus_decode(paths, &sf, e) != 0)
		return hunch_err_set(e, -EINVAL, "no focus paths");
	for (int i = 0; i < PC_NHIER; i++) {
		f->r[i] = pc_res_find(pc->res, sf.path[i]);
		if (f->r[i] == PC_RES_NONE)
			return hunch_err_set(e, -ENOENT, "%s is not a known "
					  "resource", sf.path[i]);
	}
	return 0;
}

static int replay_experiment(struct pc_consult *pc, const json_t *rec,
			     struct hunch_err *e)
{
	const char *hyp = json_string_value(json_object_get(rec, "hyp"));
	struct pc_focus f;
	bool existed;
	int r;

	if (hyp == NULL)
		return hunch_err_set(e, -EINVAL, "no hypothesis");
	if ((r = focus_of(pc, rec, &f, e)) < 0)
		return r;
	r = pc_steer_experiment(pc, hyp, &f, &existed, e);
	return r < 0 ? r : 1;
}

/* The node is found again by hypothesis and focus in the recorded
 * phase's search, not by its recorded id: a replay with other tunables
 * (--set) numbers its nodes differently. */
static int replay_stop(struct pc_consult *pc, const json_t *rec,
		       struct hunch_err *e)
{
	const char *hyp = json_string_value(json_object_get(rec, "hyp"));
	int sid = (int)json_integer_value(json_object_get(rec, "phase"));
	const struct pc_search *s = pc_consult_search(pc, sid);
	struct pc_focus f;
	int h = hyp ? pc_config_hypo_find(pc->cfg, hyp) : -1, id, r;

	if (h < 0)
		return hunch_err_set(e, -EINVAL, "no hypothesis %s",
				  hyp ? hyp : "given");
	if ((r = focus_of(pc, rec, &f, e)) < 0)
		return r;
	id = s ? pc_shg_find(s, h, &f) : -1;
	if (id < 0)
		return hunch_err_set(e, -ENOENT, "%s is not in search %d", hyp,
				  sid);
	r = pc_steer_stop(pc, sid, id, e);
	return r < 0 ? r : 1;
}

static int replay_enable(struct pc_consult *pc, const json_t *rec,
			 struct hunch_err *e)
{
	const char *metric = json_string_value(json_object_get(rec, "name"));
	struct steer *s = find(pc, true);
	struct pc_focus f;
	int r;

	if (metric == NULL)
		return hunch_err_set(e, -EINVAL, "no metric");
	if ((r = focus_of(pc, rec, &f, e)) < 0)
		return r;
	if ((r = pc_steer_enable(pc, metric, &f, e)) < 0)
		return r;
	if (s->nheld == s->capheld) {
		s->capheld = s->capheld ? 2 * s->capheld : 8;
		s->held = realloc(s->held, s->capheld * sizeof(*s->held));
		if (s->held == NULL)
			abort();
	}
	s->held[s->nheld++] = (struct held){
		json_integer_value(json_object_get(rec, "inst")), r };
	return 1;
}

static int replay_disable(struct pc_consult *pc, const json_t *rec,
			  struct hunch_err *e)
{
	long long rec_inst = json_integer_value(json_object_get(rec, "inst"));
	struct steer *s = find(pc, false);

	for (size_t i = 0; s != NULL && i < s->nheld; i++) {
		if (s->held[i].rec != rec_inst)
			continue;
		pc_steer_release(pc, s->held[i].inst);
		memmove(&s->held[i], &s->held[i + 1],   /* keeps the order */
			(--s->nheld - i) * sizeof(*s->held));
		return 1;
	}
	return hunch_err_set(e, -ENOENT, "instance %lld was not enabled by "
			  "hand", rec_inst);
}

static int replay_hypotheses(struct pc_consult *pc, const json_t *rec,
			     struct hunch_err *e)
{
	struct pc_config *c = pc_config_new();
	int added, r;

	r = pc_steer_jnl_load_files(c, json_object_get(rec, "files"), e);
	if (r != 0) {
		pc_config_free(c);
		return r;
	}
	r = pc_steer_apply_config(pc, c, true, &added, e);
	return r < 0 ? r : 1;
}

int pc_steer_jnl_replay(struct pc_consult *pc, const json_t *rec)
{
	const char *a = json_string_value(json_object_get(rec, "action"));
	struct hunch_err e = { 0 };
	int r;

	if (a == NULL)
		return 0;
	if (strcmp(a, "experiment") == 0)
		r = replay_experiment(pc, rec, &e);
	else if (strcmp(a, "experiment_stop") == 0)
		r = replay_stop(pc, rec, &e);
	else if (strcmp(a, "metric_enable") == 0)
		r = replay_enable(pc, rec, &e);
	else if (strcmp(a, "metric_disable") == 0)
		r = replay_disable(pc, rec, &e);
	else if (strcmp(a, "hypotheses") == 0)
		r = replay_hypotheses(pc, rec, &e);
	else
		return 0;
	if (r < 0)
		pc_consult_logf(pc, "Recorded action %s not replayed: %s.", a,
				e.msg);
	return r;
}

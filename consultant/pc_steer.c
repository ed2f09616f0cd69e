/*
 * pc_steer.c - the dashboard's hand on a running search (see pc_steer.h):
 * display instances, experiments started by hand, hypotheses reloaded
 * and applied live.
 */
#include "pc_steer.h"
#include "pc_steer_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- display instances ---- */

static const char *nearest_metric(const struct pc_config *c, const char *w)
{
	const char **names = calloc(c->nmet + 1, sizeof(*names));
	const char *best;

	if (names == NULL)
		abort();
	for (size_t i = 0; i < c->nmet; i++)
		names[i] = c->met[i].name;
	best = pc_jx_suggest(w, names, c->nmet);
	free(names);
	return best;
}

int pc_steer_enable(struct pc_consult *pc, const char *metric,
		    const struct pc_focus *f, struct hunch_err *e)
{
	char focus[512];
	int id;

	if (pc_metric_def_find(pc->cfg, metric) == NULL) {
		const char *near = nearest_metric(pc->cfg, metric);

		return hunch_err_set(e, -ENOENT, "no metric %s%s%s%s", metric,
				  near ? " (did you mean " : "",
				  near ? near : "", near ? "?)" : "");
	}
	if (pc->target_ended)
		return hunch_err_set(e, -ESRCH, "cannot enable %s: the program "
				  "has ended", metric);
	id = pc_datamgr_acquire(&pc->dm, metric, f, pc->now);
	pc_focus_name(pc->res, f, focus, sizeof(focus));
	if (id < 0)
		return hunch_err_set(e, id,
				     "cannot enable %s on %s: the source "
				     "refused (%s)",
				     metric, focus, strerror(-id));
	pc_consult_logf(pc, "Metric %s enabled on %s for display.", metric,
			focus);
	pc_steer_jnl_enable(pc, metric, f, id);
	return id;
}

void pc_steer_release(struct pc_consult *pc, int inst)
{
	pc_steer_jnl_release(pc, inst);
	pc_datamgr_release(&pc->dm, inst);
}

/* ---- experiments by hand ---- */

static bool stopped_by_hand(const struct pc_node *n);

static struct pc_search *running_search(struct pc_consult *pc)
{
	struct pc_search *s = pc->current ? pc->current : pc->global;

	if (s == NULL || s->state == PC_SEARCH_ENDED)
		return NULL;
	return s;
}

/* A node of hypothesis `hyp` at the top focus made persistent under the
 * root: it runs whatever its parents concluded, as search_begin's
 * top-level nodes do. */
static int add_persistent(struct pc_consult *pc, struct pc_search *s,
			  int hyp, const struct pc_focus *f)
{
	int id = pc_truth_add_node(pc, s, s->root, hyp, f, true);
	struct pc_node *n = pc_shg_node(s, id);

	n->persistent = true;
	n->by_hand = true;
	if (n->is_virtual)
		pc_truth_expand(pc, s, n);
	else if (!n->queued && !n->active && !n->pending &&
		 n->truth == PC_UNKNOWN)
		pc_cost_queue(pc, s, n, 1);
	return id;
}

int pc_steer_experiment(struct pc_consult *pc, const char *hyp,
			const struct pc_focus *f, bool *existed,
			struct hunch_err *e)
{
	struct pc_search *s = running_search(pc);
	int h = pc_config_hypo_find(pc->cfg, hyp), id;
	char focus[512];

	*existed = false;
	if (h < 0)
		return hunch_err_set(e, -ENOENT, "no hypothesis %s", hyp);
	if (pc->cfg->hyp[h].is_virtual)
		return hunch_err_set(e, -EINVAL, "%s has no metric of its own "
				  "(it is true when one of its children is): "
				  "start one of its children", hyp);
	if (s == NULL)
		return hunch_err_set(e, -ESRCH, "no running search to start "
				  "%s in", hyp);
	pc_focus_name(pc->res, f, focus, sizeof(focus));
	id = pc_shg_find(s, h, f);
	if (id >= 0 && !stopped_by_hand(pc_shg_node(s, id))) {
		*existed = true;
		return id;
	}
	if (id >= 0)
		pc_cost_queue(pc, s, pc_shg_node(s, id), 1); /* started again */
	else
		id = add_persistent(pc, s, h, f);
	pc_consult_logf(pc, "Experiment %s%s started by hand.", hyp, focus);
	pc_steer_jnl_experiment(pc, s, hyp, f, id);
	if (pc->started && !pc->target_ended)
		pc_cost_gate(pc);
	return id;
}

static bool running(const struct pc_node *n)
{
	return n->queued || n->active || n->pending;
}

/* A node the user started and then stopped (not one that failed). */
static bool stopped_by_hand(const struct pc_node *n)
{
	return n->by_hand && !running(n) && !n->failed && !n->is_virtual;
}

/* Only what the user started can be stopped: the search's own nodes
 * are what its conclusions rest on (a parent waits for them). */
int pc_steer_stop(struct pc_consult *pc, int search, int node,
		  struct hunch_err *e)
{
	struct pc_search *s = pc_consult_search(pc, search);
	struct pc_node *n = s ? pc_shg_node(s, node) : NULL;
	char focus[512];
	const char *hyp;

	if (n == NULL)
		return hunch_err_set(e, -ENOENT, "no node %d in search %d",
				     node, search);
	hyp = pc_truth_node_hyp(pc, n)->name;
	pc_focus_name(pc->res, &n->focus, focus, sizeof(focus));
	if (!n->by_hand)
		return hunch_err_set(e, -EPERM, "%s%s was not started by hand: "
				  "only those can be stopped", hyp, focus);
	if (!running(n))
		return hunch_err_set(e, -EALREADY, "%s%s is not running", hyp,
				  focus);
	if (n->queued) {
		n->queued = false;
		pc_shg_node_trace(n, "stopped by hand");
	} else {
		pc_cost_node_stop(pc, n, "stopped by hand");
	}
	pc_consult_logf(pc, "Experiment %s%s stopped by hand.", hyp, focus);
	pc_steer_jnl_stop(pc, s, hyp, &n->focus, node);
	if (pc->started && !pc->target_ended)
		pc_cost_gate(pc);   /* its room goes to the queue */
	return 0;
}

/* ---- the user's hypotheses file ---- */

static int mkdirs(char *path)
{
	for (char *p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
		*p = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST) {
			*p = '/';
			return -errno;
		}
		*p = '/';
	}
	return 0;
}

static int copy_file(const char *from, const char *to, struct hunch_err *e)
{
	FILE *in = fopen(from, "r"), *out;
	char buf[8192];
	size_t n;
	int r = 0;

	if (in == NULL)
		return hunch_err_set(e, -errno, "cannot read %s: %s", from,
				  strerror(errno));
	out = fopen(to, "wx");
	if (out == NULL) {
		r = hunch_err_set(e, -errno, "cannot create %s: %s", to,
			       strerror(errno));
		fclose(in);
		return r;
	}
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			r = -EIO;
	fclose(in);
	if (fclose(out) != 0 || r < 0)
		return hunch_err_set(e, -EIO, "cannot write %s", to);
	return 0;
}

int pc_steer_user_file(const struct pc_config *cfg, char *buf, size_t len,
		       bool *made, struct hunch_err *e)
{
	int r;

	*made = false;
	if (cfg->nfiles == 0)
		return hunch_err_set(e, -ENOENT,
				     "no hypotheses file was loaded");
	if (cfg->nfiles > 1) {
		snprintf(buf, len, "%s", cfg->files[cfg->nfiles - 1]);
		return 0;
	}
	if (pc_config_xdg_path(buf, len) < 0)
		return hunch_err_set(e, -ENOENT,
				     "no place for a hypotheses file: "
				     "neither XDG_CONFIG_HOME nor HOME is set");
	if (access(buf, F_OK) == 0)
		return 0;
	if (mkdirs(buf) < 0)
		return hunch_err_set(e, -errno, "cannot make the directory of "
				  "%s: %s", buf, strerror(errno));
	r = copy_file(cfg->files[0], buf, e);
	*made = r == 0;
	return r;
}

/* ---- reloading the hypotheses ---- */

/* Definitions replaced by a reload.  The live source keeps pointers into
 * the configuration it was given (metric definitions, function lists of
 * instances already compiled), so the old arrays must outlive the
 * search; pc_steer_forget frees them with it. */
struct retired {
	const struct pc_consult *pc;
	struct pc_config *cfg;    /* the contents replaced */
	struct pc_config *into;   /* the struct they were replaced in */
	bool replayed;            /* by a recorded reload (replay) */
};
static struct retired *retired;
static size_t nretired;

static bool has_file(const struct pc_config *c, const char *f)
{
	for (size_t i = 0; i < c->nfiles; i++)
		if (strcmp(c->files[i], f) == 0)
			return true;
	return false;
}

/* Every file of `old` again, in order, then `extra`: a fresh config or
 * NULL with the loader's errors in `ds`. */
static struct pc_config *load_again(const struct pc_config *old,
				    const char *extra, struct pc_diags *ds,
				    struct hunch_err *e)
{
	struct pc_config *c = pc_config_new();
	size_t n = old->nfiles;
	int r = 0;

	for (size_t i = 0; i < n && r == 0; i++)
		r = pc_config_load_file(c, old->files[i], ds, e);
	if (r == 0 && extra != NULL && !has_file(old, extra))
		r = pc_config_load_file(c, extra, ds, e);
	if (r == 0)
		return c;
	pc_config_free(c);
	return NULL;
}

/* A running search refers to hypotheses by index: the new config must
 * keep every old one at its place (files merge by name, so an edit adds
 * at the end; only removing one from the user's file breaks this). */
static int check_kept(const struct pc_config *old, const struct pc_config *c,
		      struct hunch_err *e)
{
	for (size_t i = 0; i < old->nhyp; i++) {
		if (i < c->nhyp && strcmp(old->hyp[i].name,
					  c->hyp[i].name) == 0)
			continue;
		return hunch_err_set(e, -EINVAL, "hypothesis %s is no longer "
				  "defined: a running search can gain and "
				  "change hypotheses but not lose one (restart "
				  "hunch to drop it)", old->hyp[i].name);
	}
	return 0;
}

/* Values set live (the dashboard, --set) survive a reload unless the
 * file changed that tunable's default or sets it itself. */
static int keep_live_values(const struct pc_config *old, struct pc_config *c,
			    bool started, struct hunch_err *e)
{
	for (size_t i = 0; i < c->ntun; i++) {
		struct pc_tunable *t = &c->tun[i];
		const struct pc_tunable *o = pc_tunables_find(old, t->name);

		if (o == NULL)
			continue;
		if (o->def == t->def && t->value == t->def &&
		    o->value >= t->min && o->value <= t->max)
			t->value = o->value;
		if (started && strcmp(t->name, "useCallGraphSearch") == 0 &&
		    t->value != o->value)
			return hunch_err_set(e, -EBUSY,
					  "useCallGraphSearch cannot "
					  "change once a search has started");
	}
	return 0;
}

/* The new definitions take the old ones' place in the same struct (the
 * search and the live source hold that pointer); the old contents are
 * kept in `retired`. */
static void swap_in(struct pc_consult *pc, struct pc_config *c,
		    bool replayed)
{
	struct pc_config tmp = *pc->cfg;

	*pc->cfg = *c;
	*c = tmp;
	retired = realloc(retired, (nretired + 1) * sizeof(*retired));
	if (retired == NULL)
		abort();
	retired[nretired++] = (struct retired){ pc, c, pc->cfg, replayed };
}

/* Tunables whose value the reload changes go through
 * pc_consult_set_tunable, so a new threshold re-tests what it gates. */
static void apply_values(struct pc_consult *pc, const struct pc_config *old)
{
	for (size_t i = 0; i < pc->cfg->ntun; i++) {
		struct pc_tunable *t = &pc->cfg->tun[i];
		const struct pc_tunable *o = pc_tunables_find(old, t->name);
		double v = t->value;

		if (o == NULL || o->value == v)
			continue;
		t->value = o->value;
		if (pc_consult_set_tunable(pc, t->name, v, NULL) < 0)
			t->value = v;
	}
}

/* A new hypothesis joins a search: under the root (persistent, like the
 * search's first nodes), or under every expanded node of its parent. */
static void add_hyp(struct pc_consult *pc, struct pc_search *s, int h)
{
	int p = pc->cfg->hyp[h].parent_idx;
	size_t nn = s->nn;

	if (p == pc_shg_node(s, s->root)->hyp) {
		struct pc_focus top;

		pc_focus_top(pc->res, &top);
		add_persistent(pc, s, h, &top);
		return;
	}
	for (size_t i = 0; i < nn; i++) {
		struct pc_node *n = s->nodes[i];

		if (n->hyp == p && n->expanded)
			pc_truth_add_node(pc, s, n->id, h, &n->focus, true);
	}
}

static void add_new_hyps(struct pc_consult *pc, size_t from)
{
	struct pc_search *ss[2] = { pc->global, pc->current };

	for (int k = 0; k < 2; k++) {
		if (ss[k] == NULL || ss[k]->state == PC_SEARCH_ENDED)
			continue;
		for (size_t h = from; h < pc->cfg->nhyp; h++)
			add_hyp(pc, ss[k], (int)h);
	}
}

int pc_steer_apply_config(struct pc_consult *pc, struct pc_config *c,
			  bool replayed, int *added, struct hunch_err *e)
{
	size_t old_nhyp = pc->cfg->nhyp;
	int r = check_kept(pc->cfg, c, e);

	*added = 0;
	if (r == 0)
		r = keep_live_values(pc->cfg, c, pc->started, e);
	if (r < 0) {
		pc_config_free(c);
		return r;
	}
	swap_in(pc, c, replayed);
	apply_values(pc, c);
	*added = (int)(pc->cfg->nhyp - old_nhyp);
	pc_consult_logf(pc, "Hypotheses reloaded: %zu hypotheses, %d new.",
		pc->cfg->nhyp, *added);
	if (pc->started && !pc->target_ended) {
		add_new_hyps(pc, old_nhyp);
		pc_cost_gate(pc);
	}
	return 0;
}

int pc_steer_reload(struct pc_consult *pc, const char *extra,
		    struct pc_diags *ds, int *added, struct hunch_err *e)
{
	struct pc_config *c = load_again(pc->cfg, extra, ds, e);
	int r;

	*added = 0;
	if (c == NULL)
		return e && e->code ? e->code : -EINVAL;
	r = pc_steer_apply_config(pc, c, false, added, e);
	if (r == 0)
		pc_steer_jnl_reload(pc, *added);
	return r;
}

/* A search rebuilt on the same configuration (the replay dashboard's
 * backward seek) must start from the hypotheses the journal's header
 * had: the contents before the first reload a replay applied go back
 * into the struct, and the later ones are freed with the rest. */
static void restore_replayed(const struct pc_consult *pc)
{
	for (size_t i = 0; i < nretired; i++) {
		struct pc_config tmp;

		if (retired[i].pc != pc || !retired[i].replayed)
			continue;
		tmp = *retired[i].into;
		*retired[i].into = *retired[i].cfg;
		*retired[i].cfg = tmp;
		return;
	}
}

void pc_steer_forget(const struct pc_consult *pc)
{
	size_t k = 0;

	restore_replayed(pc);
	for (size_t i = 0; i < nretired; i++) {
		if (retired[i].pc == pc)
			pc_config_free(retired[i].cfg);
		else
			retired[k++] = retired[i];
	}
	nretired = k;
	pc_steer_jnl_forget(pc);
}

bool pc_steer_holds(const struct pc_consult *pc)
{
	for (size_t i = 0; i < nretired; i++)
		if (retired[i].pc == pc)
			return true;
	return pc_steer_jnl_holds(pc);
}

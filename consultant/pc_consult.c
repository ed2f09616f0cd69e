/*
 * pc_consult.c - the consultant's loop: one tick takes in what the source
 * has (resources, target events, enable replies, samples), closes
 * evaluation intervals, judges active experiments, then sheds or launches
 * under the cost limit.  Also phases, pause/resume and the end of the
 * search when the target goes away.
 */
#include "pc_search.h"
#include "pc_procend.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pc_where.h"

#define EPS 1e-9

void pc_consult_logf(struct pc_consult *pc, const char *fmt, ...)
{
	char text[1024], *line;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (asprintf(&line, "+%.1f) %s", pc->now, text) < 0)
		abort();
	if (pc->nlog == pc->caplog) {
		pc->caplog = pc->caplog ? pc->caplog * 2 : 64;
		pc->log = realloc(pc->log, pc->caplog * sizeof(*pc->log));
		if (pc->log == NULL)
			abort();
	}
	pc->log[pc->nlog++] = line;
	if (pc->log_fn)
		pc->log_fn(pc->log_arg, pc->now, line);
}

void pc_consult_set_log(struct pc_consult *pc, pc_log_fn fn, void *arg)
{
	pc->log_fn = fn;
	pc->log_arg = arg;
}

struct pc_consult *pc_consult_new(struct pc_config *cfg,
				  struct pc_source *src,
				  struct pc_restree *res)
{
	struct pc_consult *pc = calloc(1, sizeof(*pc));

	if (pc == NULL)
		abort();
	pc->cfg = cfg;
	pc->src = src;
	pc->res = res;
	pc->cost_factor = 1;
	pc->calm_since = -1;
	pc->unseen_t = -1e9;
	pc->shed_t = -1;
	pc_datamgr_init(&pc->dm, src, res);
	return pc;
}

void pc_consult_free(struct pc_consult *pc)
{
	if (pc == NULL)
		return;
	pc_shg_free(pc->global);
	pc_shg_free(pc->current);
	for (size_t i = 0; i < pc->nended; i++)
		pc_shg_free(pc->ended[i]);
	free(pc->ended);
	for (size_t i = 0; i < pc->ngone; i++)
		pc_shg_free(pc->gone[i]);
	free(pc->gone);
	pc_datamgr_fini(&pc->dm);
	free(pc->hyp_factor);
	for (size_t i = 0; i < pc->nlog; i++)
		free(pc->log[i]);
	free(pc->log);
	free(pc);
}

double pc_consult_sample_period(const struct pc_consult *pc)
{
	double p = pc_tunables_get(pc->cfg, "samplePeriod");

	return p > 0 ? p : pc->dm.global_width;
}

/* Paradyn's filter interval: the smallest bucket width * 2^k that is at
 * least minObservationTime / 4 (0.4 s with the defaults). */
static double eval_interval(const struct pc_consult *pc)
{
	double want = pc_tunables_get(pc->cfg, "minObservationTime") / 4;
	double w = pc->dm.global_width;

	while (w + EPS < want)
		w *= 2;
	return w;
}

static void poll_resources(struct pc_consult *pc)
{
	if (pc->src->ops->poll_resources)
		pc->src->ops->poll_resources(pc->src, pc_where_apply_cb,
					     pc->res);
	pc_procend_stop(pc);   /* ended processes end their experiments */
}

/* One persistent node per top-level hypothesis at the top focus, under
 * the virtual root (PCsearch.C initPersistentNodes). */
static struct pc_search *search_begin(struct pc_consult *pc, int id,
				      const char *label)
{
	struct pc_search *s = pc_shg_new(id, label, pc->now);
	int root_h = pc_config_hypo_find(pc->cfg, "topLevelHypothesis");
	struct pc_focus top;
	struct pc_node *root;

	pc_focus_top(pc->res, &top);
	s->root = pc_truth_add_node(pc, s, -1, root_h, &top, true);
	root = pc_shg_node(s, s->root);
	root->expanded = true;
	for (size_t i = 0; i < pc->cfg->nhyp; i++) {
		struct pc_node *n;
		bool created;

		if (pc->cfg->hyp[i].parent_idx != root_h)
			continue;
		/* Create first, mark persistent, then queue: persistence is
		 * what lets it run without a true parent. */
		char name[640], focus[512];

		snprintf(name, sizeof(name), "%s%s", pc->cfg->hyp[i].name,
			 pc_focus_name(pc->res, &top, focus, sizeof(focus)));
		n = pc_shg_node(s, pc_shg_add(s, s->root, (int)i, &top, true,
					      name, pc->now, &created));
		n->persistent = true;
		n->is_virtual = pc->cfg->hyp[i].is_virtual;
		n->pred_cost = 0;
		for (int k = 0; k < pc->cfg->hyp[i].nin; k++)
			n->pred_cost += pc_datamgr_predict(&pc->dm,
					pc->cfg->hyp[i].in[k].metric, &top);
		if (n->is_virtual)
			pc_truth_expand(pc, s, n);
		else
			pc_cost_queue(pc, s, n, 1);
	}
	return s;
}

int pc_consult_start(struct pc_consult *pc)
{
	if (pc->started)
		return 0;
	pc->started = true;
	pc->now = pc->src->ops->now ? pc->src->ops->now(pc->src) : 0;
	poll_resources(pc);
	pc->eval_interval = eval_interval(pc);
	pc->next_eval = pc->now + pc->eval_interval;
	if (pc->src->ops->set_sample_period)
		pc->src->ops->set_sample_period(pc->src,
						pc_consult_sample_period(pc));
	pc->global = search_begin(pc, 0, "global");
	pc_consult_logf(pc, "Search for the global phase started.");
	pc_cost_gate(pc);
	return 0;
}

/* A search ends: every node inactive, the queue flushed. */
static void search_end(struct pc_consult *pc, struct pc_search *s,
		       const char *reason)
{
	if (s == NULL || s->state == PC_SEARCH_ENDED)
		return;
	for (size_t i = 0; i < s->nn; i++) {
		struct pc_node *n = s->nodes[i];

		/* Cut short: the reports say so (pc_untested.h). */
		n->cut_short = n->active || n->pending || n->queued;
		n->cut_waiting = n->queued && !n->active && !n->pending &&
				 pc->throttle == PC_THR_COST;
		if (n->active || n->pending)
			pc_cost_node_stop(pc, n, "ended");
		if (n->queued) {
			n->queued = false;
			pc_shg_node_trace(n, "ended");
		}
	}
	s->state = PC_SEARCH_ENDED;
	s->t_end = pc->now;
	snprintf(s->end_reason, sizeof(s->end_reason), "%s", reason);
	if (s->id == 0)
		pc_consult_logf(pc, "Search for the global phase ended: %s.",
				reason);
	else
		pc_consult_logf(pc, "Search for Phase %d ended: %s.", s->id,
				reason);
}

int pc_consult_phase_start(struct pc_consult *pc, const char *label)
{
	char name[64];

	if (pc->target_ended)
		return -1;
	if (pc->current) {
		search_end(pc, pc->current, "end of phase");
		pc->ended = realloc(pc->ended,
				    (pc->nended + 1) * sizeof(*pc->ended));
		if (pc->ended == NULL)
			abort();
		pc->ended[pc->nended++] = pc->current;
	}
	pc->nphases++;
	pc_datamgr_phase_start(&pc->dm, pc->now);
	snprintf(name, sizeof(name), "%s", label ? label : "phase");
	pc->current = search_begin(pc, pc->nphases, name);
	pc_consult_logf(pc, "Search for Phase %d (%s) started.", pc->nphases,
			name);
	pc_cost_gate(pc);
	return pc->nphases;
}

struct pc_search *pc_consult_search(const struct pc_consult *pc, int id)
{
	if (id == 0)
		return pc->global;
	if (pc->current && pc->current->id == id)
		return pc->current;
	for (size_t i = 0; i < pc->nended; i++)
		if (pc->ended[i]->id == id)
			return pc->ended[i];
	return NULL;
}

int pc_consult_pause(struct pc_consult *pc, int search_id, bool pause)
{
	struct pc_search *s = pc_consult_search(pc, search_id);

	if (s == NULL || s->state == PC_SEARCH_ENDED)
		return -1;
	if (pause == (s->state == PC_SEARCH_PAUSED))
		return 0;
	s->state = pause ? PC_SEARCH_PAUSED : PC_SEARCH_RUNNING;
	pc_consult_logf(pc, "Search for %s %s.", s->id ? "the current phase" :
		"the global phase", pause ? "paused" : "resumed");
	if (!pause)
		pc_cost_gate(pc);
	return 0;
}

/* The program replaced its image (exec): what was learnt is about an
 * image that is gone (a wrapper, `sh -c 'exec T'`, is not what the user
 * wants diagnosed), and the old image's code was retired from the where
 * axis, so the search starts over on the new image, as if hunch had
 * started the new program: the old searches end (kept until the
 * consultant is freed, for the journal's log they wrote), new ones
 * begin.  When the new image was ready before the search began there is
 * nothing to redo.  Code 1:
 * the new image is measured by the kernel only. */
static struct pc_search *restart(struct pc_consult *pc, struct pc_search *s,
				 const char *label)
{
	if (s == NULL)
		return NULL;
	search_end(pc, s, "the program replaced its image (exec)");
	pc->gone = realloc(pc->gone, (pc->ngone + 1) * sizeof(*pc->gone));
	if (pc->gone == NULL)
		abort();
	pc->gone[pc->ngone++] = s;
	return search_begin(pc, s->id, label);
}

static void on_exec(struct pc_consult *pc, const struct pc_src_event *e)
{
	char label[64];

	pc->nexec++;
	pc->exec_kernel_only = e->code == 1;
	pc_consult_logf(pc, "The program replaced its image (exec)%s.", e->code == 1 ?
		", which cannot be instrumented: kernel-side measures only" :
		"");
	/* The new image was ready (e->t) before the search began: every
	 * enable went to it already. */
	if (!pc->started || pc->global == NULL ||
	    e->t <= pc->global->t_start)
		return;
	pc->probe = NULL;
	pc_datamgr_image_gone(&pc->dm);
	pc->global = restart(pc, pc->global, "global");
	if (pc->current != NULL) {
		snprintf(label, sizeof(label), "%s", pc->current->label);
		pc->current = restart(pc, pc->current, label);
	}
	pc_consult_logf(
		pc, "Search for the global phase started again over the new "
		    "image.");
	pc_cost_gate(pc);
}

static void on_event(void *arg, const struct pc_src_event *e)
{
	struct pc_consult *pc = arg;
	char why[160];

	if (e->ev == PC_TARGET_EXEC) {
		on_exec(pc, e);
		return;
	}
	switch (e->ev) {
	case PC_TARGET_EXITED:
		snprintf(why, sizeof(why), "target exited with status %d",
			 e->code);
		break;
	case PC_TARGET_KILLED:
		snprintf(why, sizeof(why), "target killed by signal %d",
			 e->code);
		break;
	default:
		snprintf(why, sizeof(why), "detached from the target");
		break;
	}
	if (pc->target_ended)
		return;
	pc->target_ended = true;
	snprintf(pc->target_end, sizeof(pc->target_end), "%s", why);
	search_end(pc, pc->global, why);
	search_end(pc, pc->current, why);
}

static void on_reply(void *arg, const struct pc_src_reply *r)
{
	pc_datamgr_reply(&((struct pc_consult *)arg)->dm, r);
}

static void on_sample(void *arg, const struct pc_src_sample *s)
{
	pc_datamgr_sample(&((struct pc_consult *)arg)->dm, s);
}

static void finish_pending(struct pc_consult *pc, struct pc_search *s)
{
	for (size_t i = 0; s && i < s->nn; i++)
		if (s->nodes[i]->pending)
			pc_cost_launch_done(pc, s, s->nodes[i]);
}

static void evaluate_search(struct pc_consult *pc, struct pc_search *s,
			    double t0)
{
	if (s == NULL || s->state != PC_SEARCH_RUNNING)
		return;
	/* Nodes may be added while judging (expansion): walk by index. */
	for (size_t i = 0; i < s->nn; i++) {
		struct pc_node *n = s->nodes[i];

		/* Only whole intervals: the experiment must have been active
		 * from the interval's start. */
		if (n->active && n->t_start <= t0 + EPS)
			pc_experiment_evaluate(pc, s, n, pc->eval_interval);
	}
}

static void evaluate_due(struct pc_consult *pc)
{
	while (pc->now + EPS >= pc->next_eval) {
		double t1 = pc->next_eval, t0 = t1 - pc->eval_interval;
		double now = pc->now;

		pc_datamgr_close_interval(&pc->dm, t1);
		pc->now = t1;   /* conclusions are stamped with the interval */
		evaluate_search(pc, pc->global, t0);
		evaluate_search(pc, pc->current, t0);
		pc->now = now;
		pc->next_eval = t1 + pc->eval_interval;
	}
}

static void track_cost(struct pc_consult *pc)
{
	double predicted = pc_cost_predicted_active(pc);

	pc->observed = pc->src->ops->observed_cost ?
		       pc->src->ops->observed_cost(pc->src) : 0;
	if (pc->src->ops->held != NULL)
		pc->src->ops->held(pc->src, &pc->holds, &pc->held_s);
	if (pc->observed > pc->peak_observed)
		pc->peak_observed = pc->observed;
	pc->sum_observed += pc->observed;
	pc->ncost_samples++;
	/* Observed 0 counts too: a factor learnt from experiments that
	 * have stopped must not outlive them (bn_smallwrites: stale at 100,
	 * it kept every prediction over the limit with nothing running). */
	if (predicted > 0 && pc->observed >= 0) {
		double f = pc->observed / predicted;

		pc->cost_factor = f < 1 ? 1 : f > 100 ? 100 : f;
	}
}

static void tick(struct pc_consult *pc)
{
	const struct pc_source_ops *o = pc->src->ops;

	if (!pc->started || pc->target_ended)
		return;
	pc_datamgr_new_tick(&pc->dm);
	pc->now = o->now ? o->now(pc->src) : pc->now;
	poll_resources(pc);
	if (o->poll_events)
		o->poll_events(pc->src, on_event, pc);
	if (pc->target_ended)
		return;
	if (o->poll_replies)
		o->poll_replies(pc->src, on_reply, pc);
	finish_pending(pc, pc->global);
	finish_pending(pc, pc->current);
	if (o->poll_samples)
		o->poll_samples(pc->src, on_sample, pc);
	if (pc_datamgr_fold(&pc->dm, pc->now)) {
		pc->eval_interval = eval_interval(pc);
		if (o->set_sample_period &&
		    pc_tunables_get(pc->cfg, "samplePeriod") == 0)
			o->set_sample_period(pc->src, pc->dm.global_width);
	}
	evaluate_due(pc);
	track_cost(pc);
	pc_cost_learn_probe_next(pc);
	pc_cost_relax(pc);
	pc_cost_shed(pc);
	pc_unseen_conclude(pc);
	if (pc->observed <= pc_tunables_get(pc->cfg, "costLimit"))
		pc_cost_gate(pc);
	/* Never stall silently: say when there is nothing left to learn. */
	if (pc_consult_idle(pc) != pc->idle_told) {
		pc->idle_told = !pc->idle_told;
		if (pc->idle_told)
			pc_consult_logf(
				pc, "Search idle: nothing left to test, every "
				    "active experiment has concluded.");
	}
}

/* One step: the enables and disables it makes share one stop of the
 * program (pc_source_ops.step): a step that launched eight experiments
 * and ended three stopped it eleven times. */
void pc_consult_tick(struct pc_consult *pc)
{
	const struct pc_source_ops *o = pc->src->ops;

	if (o->step)
		o->step(pc->src, true);
	tick(pc);
	if (o->step)
		o->step(pc->src, false);
}

static int retest_children(struct pc_consult *pc, struct pc_search *s,
			   const char *threshold)
{
	int n = 0;

	if (s == NULL || s->state == PC_SEARCH_ENDED)
		return 0;
	for (size_t i = 0; i < s->nn; i++) {
		struct pc_node *p = s->nodes[i];
		const char *t = pc_truth_node_hyp(pc, p)->threshold;

		if (p->truth != PC_TRUE || t == NULL || strcmp(t, threshold))
			continue;
		for (size_t k = 0; k < p->nkids; k++) {
			struct pc_node *c = pc_shg_node(s, p->kids[k].child);

			if (c->active || c->pending || c->queued || c->skipped ||
			    c->failed || c->is_virtual)
				continue;
			pc_cost_queue(pc, s, c, p->kids[k].why ? 5 : 10);
			n++;
		}
	}
	return n;
}

int pc_consult_set_tunable(struct pc_consult *pc, const char *name,
			   double value, struct hunch_err *e)
{
	int r, n;

	if (pc->started && strcmp(name, "useCallGraphSearch") == 0)
		return hunch_err_set(e, -EBUSY,
				     "useCallGraphSearch cannot change "
				     "once a search has started");
	r = pc_tunables_set(pc->cfg, name, value, e);
	if (r)
		return r;
	pc_consult_logf(pc, "Tunable %s set to %g.", name, value);
	n = retest_children(pc, pc->global, name) +
	    retest_children(pc, pc->current, name);
	if (n)
		pc_consult_logf(
			pc, "%d refinement%s re-queued for the new threshold.",
			n, n == 1 ? "" : "s");
	if (pc->started && !pc->target_ended)
		pc_cost_gate(pc);
	return 0;
}

static bool search_idle(const struct pc_search *s)
{
	if (s == NULL || s->state == PC_SEARCH_ENDED)
		return true;
	for (size_t i = 0; i < s->nn; i++) {
		const struct pc_node *n = s->nodes[i];

		if (n->queued || n->pending)
			return false;
		if (n->active && n->truth == PC_UNKNOWN)
			return false;
	}
	return true;
}

bool pc_consult_idle(const struct pc_consult *pc)
{
	return search_idle(pc->global) && search_idle(pc->current);
}

bool pc_consult_ended(const struct pc_consult *pc)
{
	return pc->target_ended;
}

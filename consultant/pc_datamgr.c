/* pc_datamgr.c - metric instances and their histograms (see pc_datamgr.h). */
#include "pc_datamgr.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void pc_datamgr_init(struct pc_datamgr *dm, struct pc_source *src,
		const struct pc_restree *res)
{
	memset(dm, 0, sizeof(*dm));
	dm->src = src;
	dm->res = res;
	dm->global_width = PC_HIST_BASE_WIDTH;
	dm->current_width = PC_HIST_BASE_WIDTH;
}

static void forget_predictions(struct pc_datamgr *dm);

void pc_datamgr_fini(struct pc_datamgr *dm)
{
	for (size_t i = 0; i < dm->n; i++) {
		free(dm->mi[i]->metric);
		free(dm->mi[i]->fail_reason);
		free(dm->mi[i]);
	}
	free(dm->mi);
	forget_predictions(dm);
	free(dm->pred);
}

/* Ids are positions + 1: instances are never removed, so ids are never
 * reused, and a released instance keeps its data for reports. */
struct pc_minst *pc_datamgr_get(const struct pc_datamgr *dm, int id)
{
	if (id <= 0 || (size_t)id > dm->n)
		return NULL;
	return dm->mi[id - 1];
}

static bool live(const struct pc_minst *m)
{
	return m->state == PC_MI_PENDING || m->state == PC_MI_ENABLED;
}

static void forget_predictions(struct pc_datamgr *dm)
{
	for (size_t i = 0; i < dm->npred; i++)
		free(dm->pred[i].metric);
	dm->npred = 0;
}

void pc_datamgr_new_tick(struct pc_datamgr *dm)
{
	dm->gen++;
}

static bool same_focus(const struct pc_focus *a, const struct pc_focus *b)
{
	for (int k = 0; k < PC_NHIER; k++)
		if (a->r[k] != b->r[k])
			return false;
	return true;
}

static double predict_raw(struct pc_datamgr *dm, const char *metric,
			  const struct pc_focus *f);

double pc_datamgr_predict(struct pc_datamgr *dm, const char *metric,
		     const struct pc_focus *f)
{
	double v = predict_raw(dm, metric, f);

	return v < 0 ? 0 : v;
}

bool pc_datamgr_measuring(struct pc_datamgr *dm, const char *metric,
		     const struct pc_focus *f)
{
	return predict_raw(dm, metric, f) < 0;
}

static double predict_raw(struct pc_datamgr *dm, const char *metric,
			  const struct pc_focus *f)
{
	struct pc_src_focus sf;
	struct pc_datamgr_pred *p;

	if (dm->src->ops->predict_cost == NULL)
		return 0;
	if (dm->pred_gen != dm->gen) {
		forget_predictions(dm);
		dm->pred_gen = dm->gen;
	}
	for (size_t i = 0; i < dm->npred; i++)
		if (same_focus(&dm->pred[i].f, f) &&
		    strcmp(dm->pred[i].metric, metric) == 0)
			return dm->pred[i].v;
	if (dm->npred == dm->cappred) {
		dm->cappred = dm->cappred ? dm->cappred * 2 : 32;
		dm->pred = realloc(dm->pred, dm->cappred * sizeof(*dm->pred));
		if (dm->pred == NULL)
			abort();
	}
	p = &dm->pred[dm->npred];
	pc_focus_paths(dm->res, f, &sf);
	p->v = dm->src->ops->predict_cost(dm->src, metric, &sf);
	p->metric = strdup(metric);
	if (p->metric == NULL)
		abort();
	p->f = *f;
	dm->npred++;
	return p->v;
}

int pc_datamgr_acquire(struct pc_datamgr *dm, const char *metric,
		  const struct pc_focus *f, double now)
{
	struct pc_src_focus sf;
	struct pc_minst *m;
	int r;

	for (size_t i = 0; i < dm->n; i++) {
		m = dm->mi[i];
		if (live(m) && strcmp(m->metric, metric) == 0 &&
		    pc_focus_eq(&m->focus, f)) {
			m->refs++;
			return m->id;
		}
	}
	if (dm->src->ops->enable == NULL)
		return -ENOTSUP;
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		abort();
	m->metric = strdup(metric);
	m->focus = *f;
	m->refs = 1;
	m->req = ++dm->next_req;
	m->last = NAN;
	pc_hist_init(&m->global, 0, dm->global_width);
	pc_hist_init(&m->current, dm->current_start, dm->current_width);
	(void)now;
	pc_focus_paths(dm->res, f, &sf);
	r = dm->src->ops->enable(dm->src, metric, &sf, m->req);
	m->state = r < 0 ? PC_MI_FAILED : PC_MI_PENDING;
	if (dm->n == dm->cap) {
		dm->cap = dm->cap ? dm->cap * 2 : 32;
		dm->mi = realloc(dm->mi, dm->cap * sizeof(*dm->mi));
		if (dm->mi == NULL)
			abort();
	}
	dm->mi[dm->n++] = m;
	m->id = (int)dm->n;
	return r < 0 ? r : m->id;
}

void pc_datamgr_image_gone(struct pc_datamgr *dm)
{
	for (size_t i = 0; i < dm->n; i++)
		if (live(dm->mi[i]))
			dm->mi[i]->state = PC_MI_RELEASED;
}

void pc_datamgr_release(struct pc_datamgr *dm, int id)
{
	struct pc_minst *m = pc_datamgr_get(dm, id);

	if (m == NULL || m->refs == 0)
		return;
	if (--m->refs > 0)
		return;
	/* The last subscriber left: stop paying for it (a pending enable
	 * is disabled when its reply arrives). */
	if (m->state == PC_MI_ENABLED && dm->src->ops->disable)
		dm->src->ops->disable(dm->src, m->handle);
	if (m->state != PC_MI_PENDING)
		m->state = PC_MI_RELEASED;
}

void pc_datamgr_reply(struct pc_datamgr *dm, const struct pc_src_reply *r)
{
	for (size_t i = 0; i < dm->n; i++) {
		struct pc_minst *m = dm->mi[i];

		if (m->req != r->req || m->state != PC_MI_PENDING)
			continue;
		if (r->status < 0) {
			m->state = PC_MI_FAILED;
			m->fail_reason = strdup(r->reason ? r->reason :
						"the source refused");
			return;
		}
		m->handle = r->handle;
		m->state = PC_MI_ENABLED;
		m->sampled = r->sampled;
		if (m->refs == 0) {   /* released while pending */
			if (dm->src->ops->disable)
				dm->src->ops->disable(dm->src, m->handle);
			m->state = PC_MI_RELEASED;
		}
		return;
	}
}

void pc_datamgr_sample(struct pc_datamgr *dm, const struct pc_src_sample *s)
{
	for (size_t i = 0; i < dm->n; i++) {
		struct pc_minst *m = dm->mi[i];

		if (m->state != PC_MI_ENABLED || m->handle != s->handle)
			continue;
		if (isnan(s->value) || s->t1 <= s->t0)
			return;
		pc_hist_add(&m->global, s->t0, s->t1, s->value);
		pc_hist_add(&m->current, s->t0, s->t1, s->value);
		m->acc += s->value * (s->t1 - s->t0);
		m->acc_t += s->t1 - s->t0;
		return;
	}
}

void pc_datamgr_close_interval(struct pc_datamgr *dm, double t)
{
	for (size_t i = 0; i < dm->n; i++) {
		struct pc_minst *m = dm->mi[i];

		m->last = m->acc_t > 0 ? m->acc / m->acc_t : NAN;
		m->last_t1 = t;
		m->acc = m->acc_t = 0;
	}
}

bool pc_datamgr_fold(struct pc_datamgr *dm, double now)
{
	bool changed = false;

	/* All global histograms start at 0 and fold together (Paradyn folds
	 * every histogram with the same start time in one round). */
	while (now > dm->global_width * PC_HIST_BUCKETS) {
		dm->global_width *= 2;
		changed = true;
	}
	while (now > dm->current_start + dm->current_width * PC_HIST_BUCKETS)
		dm->current_width *= 2;
	for (size_t i = 0; i < dm->n; i++) {
		struct pc_minst *m = dm->mi[i];

		while (m->global.width < dm->global_width)
			pc_hist_fold(&m->global);
		while (m->current.start == dm->current_start &&
		       m->current.width < dm->current_width)
			pc_hist_fold(&m->current);
	}
	return changed;
}

void pc_datamgr_phase_start(struct pc_datamgr *dm, double now)
{
	dm->current_start = now;
	dm->current_width = PC_HIST_BASE_WIDTH;
	for (size_t i = 0; i < dm->n; i++)
		if (live(dm->mi[i]))
			pc_hist_init(&dm->mi[i]->current, now,
				     dm->current_width);
}

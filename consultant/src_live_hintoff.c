/*
 * src_live_hintoff.c - the window of off-CPU observations (see
 * src_live_hintoff.h).
 */
#include "src_live_hintoff.h"

#include <stdlib.h>
#include <string.h>

#include "src_live_hintwin.h"

struct offobs {
	uint64_t seq;             /* its place in the order of arrival */
	double t, off_s;
	double arrived;           /* when it was added */
	int *ids;
	int nids;
};

struct src_live_hintoff {
	double window;
	struct offobs *obs;       /* in order of arrival */
	size_t nobs, capobs;
	uint64_t added;           /* observations ever added */
};

struct src_live_hintoff *src_live_hintoff_new(double window_s)
{
	struct src_live_hintoff *o = calloc(1, sizeof(*o));

	if (o == NULL)
		abort();
	o->window = window_s;
	return o;
}

void src_live_hintoff_free(struct src_live_hintoff *o)
{
	if (o == NULL)
		return;
	for (size_t i = 0; i < o->nobs; i++)
		free(o->obs[i].ids);
	free(o->obs);
	free(o);
}

void src_live_hintoff_add(struct src_live_hintoff *o, double t,
			  double arrived, const int *ids, int nids,
			  double off_s)
{
	struct offobs *b;

	if (o->nobs == o->capobs) {
		o->capobs = o->capobs ? o->capobs * 2 : 256;
		o->obs = realloc(o->obs, o->capobs * sizeof(*o->obs));
		if (o->obs == NULL)
			abort();
	}
	b = &o->obs[o->nobs++];
	b->seq = ++o->added;
	b->t = t;
	b->arrived = arrived;
	b->off_s = off_s;
	b->nids = nids;
	b->ids = malloc((size_t)(nids > 0 ? nids : 1) * sizeof(int));
	if (b->ids == NULL)
		abort();
	memcpy(b->ids, ids, (size_t)nids * sizeof(int));
}

/* By arrival: a switch-out arrives when its thread gets a CPU back,
 * which after a long sleep is more than a window after it left. */
void src_live_hintoff_expire(struct src_live_hintoff *o, double now)
{
	size_t k = 0;

	for (size_t i = 0; i < o->nobs; i++) {
		if (o->obs[i].arrived < now - o->window)
			free(o->obs[i].ids);
		else
			o->obs[k++] = o->obs[i];
	}
	o->nobs = k;
}

/* Does the observation hold an id of mask m (ids past the mask were
 * interned after it was made: none of them matches)? */
static bool holds(const struct offobs *b, const bool *m, size_t nm)
{
	for (int i = 0; i < b->nids; i++)
		if ((size_t)b->ids[i] < nm && m[b->ids[i]])
			return true;
	return false;
}

void src_live_hintoff_sum_after(const struct src_live_hintoff *o,
				const struct src_live_hintwin *w,
				const struct src_live_hintoff_query *q,
				struct src_live_hintoff_sums *out)
{
	size_t nm = src_live_hintwin_npaths(w);
	bool *mf = src_live_hintwin_match_funcs(w, q->names, q->nnames);
	bool *mc = q->code ? src_live_hintwin_match_path(w, q->code) : NULL;
	bool *mw = q->within ? src_live_hintwin_match_path(w, q->within) :
		   NULL;

	*out = (struct src_live_hintoff_sums){ .latest = o->added };
	for (size_t i = 0; i < o->nobs; i++) {
		const struct offobs *b = &o->obs[i];
		double off = b->off_s;

		if (b->seq <= q->after)
			continue;
		if (mw != NULL && !holds(b, mw, nm))
			continue;
		if (b->t < q->from)
			off = off > q->from - b->t ? off - (q->from - b->t) : 0;
		out->off_all += off;
		if (holds(b, mf, nm) && (mc == NULL || holds(b, mc, nm))) {
			out->off_in += off;
			out->n_in++;
		}
	}
	free(mf);
	free(mc);
	free(mw);
}

size_t src_live_hintoff_count(const struct src_live_hintoff *o)
{
	return o->nobs;
}

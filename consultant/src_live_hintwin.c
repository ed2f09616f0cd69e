/*
 * src_live_hintwin.c - the sliding window of cheap evidence (see
 * src_live_hintwin.h).
 *
 * Sizes: at 99 samples/s per busy thread and a few seconds of window,
 * a window holds hundreds to a few thousand observations, and the
 * consultant asks a handful of hints per refinement, so a query is a
 * linear scan: no index to keep up to date on every sample.
 */
#include "src_live_hintwin.h"
#include "xmalloc.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct obs {
	double t;
	enum src_live_hintwin_kind kind;
	int *ids;
	int nids;
	int *stack;            /* its complete stack, folded, innermost
				* first; NULL when it has none */
	int nstack;
	int *gone;             /* functions folding took off its stack (not
				* in ids); NULL when none */
	int ngone;
};

/* A call edge seen on stacks; `seq` orders ties by first sight. */
struct edge {
	int caller, callee;    /* -1: an empty slot */
	unsigned long count, seq;
};

struct src_live_hintwin {
	double window;
	char **paths;          /* interned, by id */
	size_t npaths, cappaths;
	struct obs *obs;       /* oldest first */
	size_t nobs, capobs;
	struct edge *edges;    /* open addressing, capedges a power of 2 */
	size_t nedges, capedges;
};

struct src_live_hintwin *src_live_hintwin_new(double window_s)
{
	struct src_live_hintwin *w = calloc(1, sizeof(*w));

	if (w == NULL)
		abort();
	w->window = window_s;
	return w;
}

void src_live_hintwin_free(struct src_live_hintwin *w)
{
	if (w == NULL)
		return;
	for (size_t i = 0; i < w->npaths; i++)
		free(w->paths[i]);
	for (size_t i = 0; i < w->nobs; i++) {
		free(w->obs[i].ids);
		free(w->obs[i].stack);
		free(w->obs[i].gone);
	}
	free(w->paths);
	free(w->obs);
	free(w->edges);
	free(w);
}

/* Linear: the paths interned are those seen in samples (hundreds), and
 * the caller caches pc -> id, so this runs once per new function. */
int src_live_hintwin_intern(struct src_live_hintwin *w, const char *path)
{
	for (size_t i = 0; i < w->npaths; i++)
		if (strcmp(w->paths[i], path) == 0)
			return (int)i;
	if (w->npaths == w->cappaths) {
		w->cappaths = w->cappaths ? w->cappaths * 2 : 256;
		w->paths = xrealloc(w->paths, w->cappaths * sizeof(char *));
	}
	w->paths[w->npaths] = strdup(path);
	if (w->paths[w->npaths] == NULL)
		abort();
	return (int)w->npaths++;
}

const char *src_live_hintwin_path(const struct src_live_hintwin *w, int id)
{
	return id >= 0 && (size_t)id < w->npaths ? w->paths[id] : NULL;
}

static bool has_id(const int *ids, int n, int id)
{
	for (int i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

static struct obs *add_obs(struct src_live_hintwin *w, double t, enum src_live_hintwin_kind kind,
			   const int *ids, int nids, int extra)
{
	struct obs *o;

	if (w->nobs == w->capobs) {
		w->capobs = w->capobs ? w->capobs * 2 : 1024;
		w->obs = xrealloc(w->obs, w->capobs * sizeof(*w->obs));
	}
	o = &w->obs[w->nobs++];
	o->t = t;
	o->kind = kind;
	o->ids = xrealloc(NULL, (size_t)(nids + extra) * sizeof(int));
	o->nids = 0;
	o->stack = NULL;
	o->nstack = 0;
	o->gone = NULL;
	o->ngone = 0;
	for (int i = 0; i < nids; i++)
		if (!has_id(o->ids, o->nids, ids[i]))
			o->ids[o->nids++] = ids[i];
	return o;
}

void src_live_hintwin_add(struct src_live_hintwin *w, double t, enum src_live_hintwin_kind kind, const int *ids,
	    int nids)
{
	add_obs(w, t, kind, ids, nids, 0);
}

static size_t edge_slot(const struct edge *e, size_t cap, int caller,
			int callee)
{
	size_t i = ((size_t)caller * 2654435761u ^ (size_t)callee) & (cap - 1);

	while (e[i].caller >= 0 &&
	       (e[i].caller != caller || e[i].callee != callee))
		i = (i + 1) & (cap - 1);
	return i;
}

static void grow_edges(struct src_live_hintwin *w)
{
	size_t cap = w->capedges ? w->capedges * 2 : 256;
	struct edge *e = xrealloc(NULL, cap * sizeof(*e));

	for (size_t i = 0; i < cap; i++)
		e[i].caller = -1;
	for (size_t i = 0; i < w->capedges; i++)
		if (w->edges[i].caller >= 0)
			e[edge_slot(e, cap, w->edges[i].caller,
				    w->edges[i].callee)] = w->edges[i];
	free(w->edges);
	w->edges = e;
	w->capedges = cap;
}

static void add_edge(struct src_live_hintwin *w, int caller, int callee)
{
	struct edge *e;

	if (2 * (w->nedges + 1) > w->capedges)
		grow_edges(w);
	e = &w->edges[edge_slot(w->edges, w->capedges, caller, callee)];
	if (e->caller < 0) {
		*e = (struct edge){ caller, callee, 0, w->nedges++ };
	}
	e->count++;
}

/* Fold a stack (innermost first) from its outermost frame in: a
 * function found again inside its own activation takes the place of
 * every frame between the two, so that an interpreter's loop entered
 * again through a builtin and a generator (eval -> sum -> next -> eval)
 * is one activation of eval and the frames between are not on the
 * stack: the time under the inner activation is the loop's, not the
 * builtin's.  Returns the folded length (out: innermost first). */
static int fold(const int *stack, int n, int *out)
{
	int k = 0;

	for (int i = n - 1; i >= 0; i--) {
		int j = 0;

		while (j < k && out[j] != stack[i])
			j++;
		if (j < k)
			k = j + 1;    /* back to the outer activation */
		else
			out[k++] = stack[i];
	}
	for (int i = 0; i < k / 2; i++) {
		int x = out[i];

		out[i] = out[k - 1 - i];
		out[k - 1 - i] = x;
	}
	return k;
}

void src_live_hintwin_add_stack(struct src_live_hintwin *w, double t, enum src_live_hintwin_kind kind, const int *ids,
		  int nids, const int *given, int ngiven, int complete)
{
	src_live_hintwin_add_joined(w, t, kind, ids, nids, given, ngiven, NULL,
				    0, complete);
}

/* A frame off the observation's stack (folded or left out), once. */
static void add_gone(struct obs *o, int id, int cap)
{
	if (has_id(o->ids, o->nids, id) || has_id(o->gone, o->ngone, id))
		return;
	if (o->gone == NULL)
		o->gone = xrealloc(NULL, (size_t)cap * sizeof(int));
	o->gone[o->ngone++] = id;
}

void src_live_hintwin_add_joined(struct src_live_hintwin *w, double t,
				 enum src_live_hintwin_kind kind,
				 const int *ids, int nids, const int *given,
				 int ngiven, const int *left, int nleft,
				 int complete)
{
	struct obs *o = add_obs(w, t, kind, ids, nids, ngiven);
	int *stack = xrealloc(NULL, (size_t)(ngiven + 1) * sizeof(int));
	int nstack = fold(given, ngiven, stack);

	for (int i = 0; i < nstack; i++) {
		if (!has_id(o->ids, o->nids, stack[i]))
			o->ids[o->nids++] = stack[i];
		if (i + 1 < nstack)
			add_edge(w, stack[i + 1], stack[i]);
	}
	for (int i = 0; i < ngiven; i++)
		add_gone(o, given[i], ngiven + nleft);
	for (int i = 0; i < nleft; i++)
		add_gone(o, left[i], ngiven + nleft);
	if (complete && nstack > 0) {
		o->stack = stack;
		o->nstack = nstack;
	} else {
		free(stack);
	}
}

void src_live_hintwin_expire(struct src_live_hintwin *w, double now)
{
	size_t k = 0;

	while (k < w->nobs && w->obs[k].t < now - w->window) {
		free(w->obs[k].stack);
		free(w->obs[k].gone);
		free(w->obs[k++].ids);
	}
	if (k == 0)
		return;
	memmove(w->obs, w->obs + k, (w->nobs - k) * sizeof(*w->obs));
	w->nobs -= k;
}

/* A thread as the where axis names it, "/Process/<pid>/<tid>:<start>",
 * is interned as "/Process/<pid>/<tid>": drop the ":<start>". */
static void normalize(const char *path, char *out, size_t len)
{
	char *colon;

	strncpy(out, path, len - 1);
	out[len - 1] = '\0';
	if (strncmp(out, "/Process/", 9) == 0 &&
	    (colon = strchr(out + 9, ':')) != NULL)
		*colon = '\0';
}

static bool under(const char *p, const char *q, size_t qlen)
{
	return strncmp(p, q, qlen) == 0 &&
	       (p[qlen] == '\0' || p[qlen] == '/' || qlen == 1);
}

/* Which interned paths are `path` or below it. */
static bool *matching(const struct src_live_hintwin *w, const char *path)
{
	bool *m = xrealloc(NULL, w->npaths * sizeof(bool));
	char q[1024];
	size_t qlen;

	normalize(path, q, sizeof(q));
	qlen = strlen(q);
	while (qlen > 1 && q[qlen - 1] == '/')
		q[--qlen] = '\0';
	for (size_t i = 0; i < w->npaths; i++)
		m[i] = under(w->paths[i], q, qlen);
	return m;
}

static void count(const struct src_live_hintwin *w, const bool *m, size_t *all,
		  size_t *in)
{
	memset(all, 0, SRC_LIVE_HINTWIN_NKIND * sizeof(size_t));
	memset(in, 0, SRC_LIVE_HINTWIN_NKIND * sizeof(size_t));
	for (size_t i = 0; i < w->nobs; i++) {
		const struct obs *o = &w->obs[i];

		all[o->kind]++;
		for (int k = 0; k < o->nids; k++) {
			if (m[o->ids[k]]) {
				in[o->kind]++;
				break;
			}
		}
	}
}

/* Which kind of observation can name a resource of this hierarchy. */
static bool can_see(int kind, const char *path)
{
	if (strncmp(path, "/Files", 6) == 0)
		return kind == SRC_LIVE_HINTWIN_IO;
	if (strncmp(path, "/SyncObject", 11) == 0)
		return kind == SRC_LIVE_HINTWIN_SYNC;
	return true;   /* /Code: 0 when no CPU sample at all, as before */
}

double src_live_hintwin_hint(const struct src_live_hintwin *w, const char *path)
{
	return src_live_hintwin_hint_many(&w, 1, path, -1);
}

double src_live_hintwin_hint_many(const struct src_live_hintwin *const *w,
				  size_t n, const char *path, int kind)
{
	size_t all[SRC_LIVE_HINTWIN_NKIND] = { 0 }, in[SRC_LIVE_HINTWIN_NKIND] = { 0 };
	size_t wall[SRC_LIVE_HINTWIN_NKIND], win[SRC_LIVE_HINTWIN_NKIND];
	double best = -1;
	bool any = false;

	for (size_t i = 0; i < n; i++) {
		bool *m;

		if (w[i] == NULL || w[i]->nobs == 0)
			continue;
		any = true;
		m = matching(w[i], path);
		count(w[i], m, wall, win);
		free(m);
		for (int k = 0; k < SRC_LIVE_HINTWIN_NKIND; k++) {
			all[k] += wall[k];
			in[k] += win[k];
		}
	}
	if (!any)
		return -1;
	for (int k = 0; k < SRC_LIVE_HINTWIN_NKIND; k++) {
		double share = all[k] ? (double)in[k] / (double)all[k] : 0;

		/* Only kinds that could see it, and saw something: a file
		 * no thread was seen blocked on is unknown when none was
		 * seen blocked in I/O at all (page-cache writes). */
		if (all[k] && can_see(k, path) && share > best &&
		    (kind < 0 || k == kind))
			best = share;
	}
	return best;
}

static bool any_in(const int *ids, int n, const bool *m);

/* One window's observations of a wait (kind's blocked threads, and CPU
 * samples in the wait functions mf unless only blocked ones can name
 * the path), and those of them in m. */
static void count_wait(const struct src_live_hintwin *w, const bool *m,
		       const bool *mf, enum src_live_hintwin_kind kind,
		       bool blocked_only, size_t *all, size_t *in)
{
	for (size_t i = 0; i < w->nobs; i++) {
		const struct obs *o = &w->obs[i];

		if (o->kind != kind &&
		    (blocked_only || o->kind != SRC_LIVE_HINTWIN_CPU ||
		     !any_in(o->ids, o->nids, mf)))
			continue;
		(*all)++;
		*in += any_in(o->ids, o->nids, m);
	}
}

double src_live_hintwin_wait_many(const struct src_live_hintwin *const *w,
				  size_t n, const char *path,
				  enum src_live_hintwin_kind kind,
				  const char *const *names, size_t nnames)
{
	/* a file or an object is named by blocked observations alone */
	bool blocked_only = strncmp(path, "/Files", 6) == 0 ||
			    strncmp(path, "/SyncObject", 11) == 0;
	size_t all = 0, in = 0;

	for (size_t i = 0; i < n; i++) {
		bool *m, *mf;

		if (w[i] == NULL || w[i]->nobs == 0)
			continue;
		m = matching(w[i], path);
		mf = src_live_hintwin_match_funcs(w[i], names, nnames);
		count_wait(w[i], m, mf, kind, blocked_only, &all, &in);
		free(m);
		free(mf);
	}
	return all ? (double)in / (double)all : -1;
}

static int find_id(const struct src_live_hintwin *w, const char *path)
{
	for (size_t i = 0; i < w->npaths; i++)
		if (strcmp(w->paths[i], path) == 0)
			return (int)i;
	return -1;
}

/* Ids with counts, for a ranked answer. */
struct ranked {
	int id;
	unsigned long count, seq;
};

static int by_count(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void src_live_hintwin_callees(const struct src_live_hintwin *w, const char *path, src_live_hintwin_path_fn fn,
		void *arg)
{
	struct ranked *r = xrealloc(NULL, (w->nedges + 1) * sizeof(*r));
	size_t n = 0;
	int caller = find_id(w, path);

	for (size_t i = 0; caller >= 0 && i < w->capedges; i++)
		if (w->edges[i].caller == caller)
			r[n++] = (struct ranked){ w->edges[i].callee,
				w->edges[i].count, w->edges[i].seq };
	qsort(r, n, sizeof(*r), by_count);
	for (size_t i = 0; i < n; i++)
		fn(arg, w->paths[r[i].id]);
	free(r);
}

static bool holds_any(const struct obs *o, const int *ids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (has_id(o->ids, o->nids, ids[i]))
			return true;
	return false;
}

/* The root of an uncovered stack: its outermost function that no
 * covered stack holds (`covered`, by id), so that the thread entry code
 * every thread runs (clone3, start_thread) is not where a thread with an
 * unknown start function begins; -1 when there is none. */
static int root_of(const struct obs *o, const bool *covered)
{
	for (int i = o->nstack - 1; i >= 0; i--)
		if (!covered[o->stack[i]])
			return o->stack[i];
	return -1;
}

void src_live_hintwin_roots(const struct src_live_hintwin *w, const char *const *starts, size_t nstarts,
	      src_live_hintwin_path_fn fn, void *arg)
{
	struct ranked *r = xrealloc(NULL, (w->nobs + 1) * sizeof(*r));
	int *sid = xrealloc(NULL, (nstarts + 1) * sizeof(int));
	bool *covered = xrealloc(NULL, (w->npaths + 1) * sizeof(bool));
	size_t n = 0, ns = 0, k;

	for (size_t i = 0; i < nstarts; i++)
		if ((sid[ns] = find_id(w, starts[i])) >= 0)
			ns++;
	memset(covered, 0, (w->npaths + 1) * sizeof(bool));
	for (size_t i = 0; i < w->nobs; i++)
		if (w->obs[i].stack && holds_any(&w->obs[i], sid, ns))
			for (int f = 0; f < w->obs[i].nstack; f++)
				covered[w->obs[i].stack[f]] = true;
	for (size_t i = 0; i < w->nobs; i++) {
		const struct obs *o = &w->obs[i];
		int root;

		if (o->stack == NULL || holds_any(o, sid, ns) ||
		    (root = root_of(o, covered)) < 0)
			continue;
		for (k = 0; k < n && r[k].id != root; k++)
			;
		if (k == n)
			r[n++] = (struct ranked){ root, 0, i };
		r[k].count++;
	}
	qsort(r, n, sizeof(*r), by_count);
	for (size_t i = 0; i < n && r[i].count >= SRC_LIVE_HINTWIN_ROOT_MIN; i++)
		fn(arg, w->paths[r[i].id]);
	free(r);
	free(sid);
	free(covered);
}

size_t src_live_hintwin_count(const struct src_live_hintwin *w, enum src_live_hintwin_kind kind)
{
	size_t n = 0;

	for (size_t i = 0; i < w->nobs; i++)
		n += w->obs[i].kind == kind;
	return n;
}

size_t src_live_hintwin_count_in(const struct src_live_hintwin *w, enum src_live_hintwin_kind kind, const char *path)
{
	size_t all[SRC_LIVE_HINTWIN_NKIND], in[SRC_LIVE_HINTWIN_NKIND];
	bool *m = matching(w, path);

	count(w, m, all, in);
	free(m);
	return in[kind];
}

/* One pass over the observations of `kind` newer than `after`. */
void src_live_hintwin_count_after(const struct src_live_hintwin *w, enum src_live_hintwin_kind kind, double after,
		    const char *path, const char *within, size_t *n_within,
		    size_t *n_both, double *latest)
{
	bool *mp = matching(w, path), *mw = within ? matching(w, within) : NULL;

	*n_within = *n_both = 0;
	*latest = after;
	for (size_t i = 0; i < w->nobs; i++) {
		const struct obs *o = &w->obs[i];
		bool in_p = false, in_w = mw == NULL;

		if (o->kind != kind || !(o->t > after))
			continue;
		for (int k = 0; k < o->nids; k++) {
			in_p |= mp[o->ids[k]];
			in_w |= mw != NULL && mw[o->ids[k]];
		}
		if (o->t > *latest)
			*latest = o->t;
		*n_within += in_w;
		*n_both += in_w && in_p;
	}
	free(mp);
	free(mw);
}

/* One pass: each interned id's thread index (-1: not one of them). */
static int *thread_index(const struct src_live_hintwin *w,
			 const char *const *threads, size_t n)
{
	int *ix = xrealloc(NULL, (w->npaths + 1) * sizeof(int));

	for (size_t i = 0; i < w->npaths; i++) {
		ix[i] = -1;
		for (size_t k = 0; k < n && ix[i] < 0; k++) {
			char q[1024];

			normalize(threads[k], q, sizeof(q));
			if (strcmp(w->paths[i], q) == 0)
				ix[i] = (int)k;
		}
	}
	return ix;
}

void src_live_hintwin_count_threads(const struct src_live_hintwin *w, enum src_live_hintwin_kind kind,
		      double after, const char *path,
		      const char *const *threads, size_t n, size_t *n_in,
		      size_t *n_code, double *latest)
{
	bool *mp = matching(w, path);
	int *ix = thread_index(w, threads, n);

	memset(n_in, 0, n * sizeof(*n_in));
	memset(n_code, 0, n * sizeof(*n_code));
	*latest = after;
	for (size_t i = 0; i < w->nobs; i++) {
		const struct obs *o = &w->obs[i];
		bool in_p = false;
		int t = -1;

		if (o->kind != kind || !(o->t > after))
			continue;
		for (int k = 0; k < o->nids; k++) {
			in_p |= mp[o->ids[k]];
			if (t < 0)
				t = ix[o->ids[k]];
		}
		if (o->t > *latest)
			*latest = o->t;
		if (t < 0)
			continue;
		n_in[t]++;
		n_code[t] += in_p;
	}
	free(mp);
	free(ix);
}

static bool any_in(const int *ids, int n, const bool *m)
{
	for (int i = 0; i < n; i++)
		if (m[ids[i]])
			return true;
	return false;
}

bool *src_live_hintwin_match_path(const struct src_live_hintwin *w, const char *path)
{
	return matching(w, path);
}

bool *src_live_hintwin_match_funcs(const struct src_live_hintwin *w, const char *const *names,
		     size_t nnames)
{
	bool *m = xrealloc(NULL, (w->npaths + 1) * sizeof(bool));

	for (size_t i = 0; i < w->npaths; i++) {
		const char *p = w->paths[i], *fn = strrchr(p, '/');

		m[i] = false;
		if (strncmp(p, "/Code/", 6) != 0 || fn == NULL)
			continue;
		fn++;
		if (strncmp(fn, "PMPI_", 5) == 0)
			fn++;
		for (size_t k = 0; k < nnames && !m[i]; k++)
			m[i] = strcmp(fn, names[k]) == 0;
	}
	return m;
}

size_t src_live_hintwin_npaths(const struct src_live_hintwin *w)
{
	return w->npaths;
}

void src_live_hintwin_count_funcs_after(const struct src_live_hintwin *w, enum src_live_hintwin_kind kind,
			  double after, const char *const *names,
			  size_t nnames, const char *code, const char *within,
			  size_t *n_within, size_t *n_both, double *latest)
{
	bool *mf = src_live_hintwin_match_funcs(w, names, nnames);
	bool *mc = code ? matching(w, code) : NULL;
	bool *mw = within ? matching(w, within) : NULL;

	*n_within = *n_both = 0;
	*latest = after;
	for (size_t i = 0; i < w->nobs; i++) {
		const struct obs *o = &w->obs[i];

		if (o->kind != kind || !(o->t > after))
			continue;
		if (o->t > *latest)
			*latest = o->t;
		if (mw != NULL && !any_in(o->ids, o->nids, mw))
			continue;
		(*n_within)++;
		*n_both += any_in(o->ids, o->nids, mf) &&
			   (mc == NULL || any_in(o->ids, o->nids, mc));
	}
	free(mf);
	free(mc);
	free(mw);
}

void src_live_hintwin_count_reentered(const struct src_live_hintwin *w, enum src_live_hintwin_kind kind,
			const char *path, size_t *n_raw, size_t *n_gone)
{
	bool *m = matching(w, path);

	*n_raw = *n_gone = 0;
	for (size_t i = 0; i < w->nobs; i++) {
		const struct obs *o = &w->obs[i];
		bool kept, gone;

		if (o->kind != kind)
			continue;
		kept = any_in(o->ids, o->nids, m);
		gone = !kept && any_in(o->gone, o->ngone, m);
		*n_raw += kept || gone;
		*n_gone += gone;
	}
	free(m);
}

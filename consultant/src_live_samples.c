/*
 * src_live_samples.c - the whole-run tally of the live source's CPU
 * stack samples (see src_live_samples.h).  Functions are interned by
 * path, chains by their paths' indexes, each through a hash map: every
 * frame of every sample (99 a second per thread, of every process
 * followed) is looked up, among hundreds of functions.
 */
#include "src_live_samples.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hmap.h"

struct fn {
	char *path;
	unsigned long self, incl;
	unsigned long mark;        /* the last sample that counted it */
};

struct chain {
	int fn[SRC_LIVE_SAMPLES_DEPTH];
	int n;
	unsigned long count;
};

struct src_live_samples {
	double hz, last_t;
	unsigned long count;
	struct fn *fns;
	size_t nfns, capfns;
	struct chain *chains;
	size_t nchains, capchains;
	struct hmap fn_at;         /* path -> index in fns */
	struct hmap chain_at;      /* "i,j,k" -> index in chains */
};

static void *grow(void *p, size_t *cap, size_t n, size_t size)
{
	void *q;

	if (n < *cap)
		return p;
	*cap = *cap ? *cap * 2 : 64;
	q = realloc(p, *cap * size);
	if (q == NULL)
		abort();
	return q;
}

struct src_live_samples *src_live_samples_new(double hz)
{
	struct src_live_samples *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return NULL;
	t->hz = hz;
	hmap_init(&t->fn_at, true);
	hmap_init(&t->chain_at, true);
	return t;
}

void src_live_samples_free(struct src_live_samples *t)
{
	if (t == NULL)
		return;
	for (size_t i = 0; i < t->nfns; i++)
		free(t->fns[i].path);
	free(t->fns);
	free(t->chains);
	hmap_free(&t->fn_at);
	hmap_free(&t->chain_at);
	free(t);
}

static int fn_id(struct src_live_samples *t, const char *path)
{
	size_t *at = hmap_get_s(&t->fn_at, path);

	if (at != NULL)
		return (int)*at;
	t->fns = grow(t->fns, &t->capfns, t->nfns, sizeof(*t->fns));
	t->fns[t->nfns] = (struct fn){ .path = strdup(path) };
	if (t->fns[t->nfns].path == NULL ||
	    hmap_put_s(&t->fn_at, path, t->nfns) < 0)
		abort();
	return (int)t->nfns++;
}

static void count_incl(struct src_live_samples *t, int id)
{
	if (t->fns[id].mark == t->count)
		return;   /* recursion: once per sample */
	t->fns[id].mark = t->count;
	t->fns[id].incl++;
}

static void count_chain(struct src_live_samples *t, const int *fn, int n)
{
	char key[SRC_LIVE_SAMPLES_DEPTH * 12 + 1];
	size_t len = 0, *at;

	for (int i = 0; i < n; i++)
		len += (size_t)snprintf(key + len, sizeof(key) - len, "%d,",
					fn[i]);
	if ((at = hmap_get_s(&t->chain_at, key)) != NULL) {
		t->chains[*at].count++;
		return;
	}
	t->chains = grow(t->chains, &t->capchains, t->nchains,
			 sizeof(*t->chains));
	t->chains[t->nchains] = (struct chain){ .n = n, .count = 1 };
	memcpy(t->chains[t->nchains].fn, fn, (size_t)n * sizeof(int));
	if (hmap_put_s(&t->chain_at, key, t->nchains++) < 0)
		abort();
}

void src_live_samples_add(struct src_live_samples *t, double t_s,
			  const char *self, const char *const *stack,
			  int nstack)
{
	int chain[SRC_LIVE_SAMPLES_DEPTH], n = 0, id;

	if (t == NULL)
		return;
	t->count++;
	if (t_s > t->last_t)
		t->last_t = t_s;
	if (self != NULL) {
		id = fn_id(t, self);
		t->fns[id].self++;
		count_incl(t, id);
		chain[n++] = id;
	}
	for (int i = 0; i < nstack; i++) {
		id = fn_id(t, stack[i]);
		count_incl(t, id);
		/* the chain: distinct neighbours (a recursive call is one) */
		if (n < SRC_LIVE_SAMPLES_DEPTH && (n == 0 || chain[n - 1] != id))
			chain[n++] = id;
	}
	if (n > 0)
		count_chain(t, chain, n);
}

/* "/Code/<module>/<file>/<function>" as the where axis names it, or
 * "/Code/<module>" for code no function covers. */
static json_t *fn_json(const char *path)
{
	const char *m = strncmp(path, "/Code/", 6) == 0 ? path + 6 : path;
	const char *file = strchr(m, '/');
	const char *name = file ? strchr(file + 1, '/') : NULL;
	json_t *o = json_object();

	json_object_set_new(o, "function", name ? json_string(name + 1) :
			    json_null());
	json_object_set_new(o, "module", json_stringn(m, file ? (size_t)(file - m)
							   : strlen(m)));
	json_object_set_new(o, "path", json_string(path));
	return o;
}

static json_t *counted(json_t *o, unsigned long n, unsigned long total)
{
	json_object_set_new(o, "samples", json_integer((json_int_t)n));
	json_object_set_new(o, "percent", json_real(100.0 * (double)n /
						     (double)total));
	return o;
}

/* The index of the largest of `v` (n of them) not yet `taken`, ties to
 * the first seen; -1 when none is left above 0. */
static int largest(const unsigned long *v, bool *taken, size_t n)
{
	int best = -1;

	for (size_t i = 0; i < n; i++)
		if (!taken[i] && v[i] > 0 && (best < 0 || v[i] > v[best]))
			best = (int)i;
	if (best >= 0)
		taken[best] = true;
	return best;
}

static json_t *top_fns(const struct src_live_samples *t, bool self)
{
	unsigned long *v = calloc(t->nfns + 1, sizeof(*v));
	bool *taken = calloc(t->nfns + 1, sizeof(*taken));
	json_t *a = json_array();
	int k;

	if (v == NULL || taken == NULL)
		abort();
	for (size_t i = 0; i < t->nfns; i++)
		v[i] = self ? t->fns[i].self : t->fns[i].incl;
	for (int i = 0; i < SRC_LIVE_SAMPLES_TOP &&
	     (k = largest(v, taken, t->nfns)) >= 0; i++)
		json_array_append_new(a, counted(fn_json(t->fns[k].path), v[k],
						 t->count));
	free(v);
	free(taken);
	return a;
}

static json_t *top_chains(const struct src_live_samples *t)
{
	unsigned long *v = calloc(t->nchains + 1, sizeof(*v));
	bool *taken = calloc(t->nchains + 1, sizeof(*taken));
	json_t *a = json_array();
	int k;

	if (v == NULL || taken == NULL)
		abort();
	for (size_t i = 0; i < t->nchains; i++)
		v[i] = t->chains[i].count;
	for (int i = 0; i < SRC_LIVE_SAMPLES_CHAINS &&
	     (k = largest(v, taken, t->nchains)) >= 0; i++) {
		json_t *fns = json_array();

		for (int j = 0; j < t->chains[k].n; j++)
			json_array_append_new(fns, fn_json(
				t->fns[t->chains[k].fn[j]].path));
		json_array_append_new(a, counted(json_pack("{s:o}", "functions",
							   fns),
						 v[k], t->count));
	}
	free(v);
	free(taken);
	return a;
}

json_t *src_live_samples_json(const struct src_live_samples *t)
{
	double secs;

	if (t == NULL || t->count == 0)
		return NULL;
	secs = t->last_t > 0 ? t->last_t : 1.0 / t->hz;
	return json_pack("{s:I, s:f, s:f, s:f, s:o, s:o, s:o}",
		"count", (json_int_t)t->count, "seconds", secs,
		"cpus", (double)t->count / t->hz / secs, "hz", t->hz,
		"self", top_fns(t, true), "inclusive", top_fns(t, false),
		"chains", top_chains(t));
}

/*
 * pc_kids.c - which children a node is refined to along one hierarchy
 * (see pc_kids.h): the where axis's children, or the callees of a
 * function in call-graph search, ranked by the source's cheap evidence,
 * and the deep descendants that evidence says to test at once
 * (skipDominantLevels).
 */
#include "pc_kids.h"
#include "xmalloc.h"

#include <stdlib.h>
#include <string.h>

/* The least evidence a dominant kid needs, as a share of the window's
 * observations: 0.05 of a 3 s window at 99 Hz is still tens of samples.
 * A kid's share is of the whole program, not of its parent: the demo's
 * main thread holds a fifth of the CPU samples beside four lock workers
 * and a writer, and at 0.25 its chain down to demo_hot_loop (all of
 * main's samples) was never skipped, so the leaf waited for four levels
 * of experiments and was not reached in a 10 s run. */
#define DOMINANT_MIN 0.05
#define DOMINANT_DEPTH 16    /* deepest a dominant chain is followed */
#define DOMINANT_ALONE 0.75  /* least share of its parent an only busy kid needs */

static void add_kid_path(void *arg, const char *path)
{
	struct pc_kids *k = arg;
	pc_res_id id = pc_res_find(k->res, path);
	const struct pc_res *r = pc_res_get(k->res, id);

	if (id == PC_RES_NONE || r->retired || k->n == PC_KIDS_MAX)
		return;
	for (size_t i = 0; i < k->n; i++)
		if (k->r[i] == id)
			return;
	k->r[k->n++] = id;
}

/* The start function of the focus thread ("tid:func"), if it names one. */
static const char *thread_start_fn(const struct pc_consult *pc,
				   const struct pc_focus *f)
{
	const struct pc_res *t = pc_res_get(pc->res, f->r[1]);
	const char *colon;

	if (t == NULL || t->kind != PC_RES_THREAD)
		return NULL;
	colon = strchr(t->name, ':');
	return colon ? colon + 1 : NULL;
}

/* A thread's /Code refinement starts at its start function, when the
 * source names it among the roots; otherwise (a stripped main, a
 * thread started in code without names) at every root it gave: the
 * roots of sampled stacks. */
static void keep_start_fn(const struct pc_consult *pc, struct pc_kids *k,
			  const char *fn)
{
	size_t n = 0;

	for (size_t i = 0; fn != NULL && i < k->n; i++)
		if (strcmp(pc_res_get(pc->res, k->r[i])->name, fn) == 0)
			k->r[n++] = k->r[i];
	if (n > 0)
		k->n = n;
}

/* The one live child of r, or NULL when it has none or several. */
static const struct pc_res *only_child(const struct pc_consult *pc,
				       const struct pc_res *r)
{
	const struct pc_res *one = NULL;

	for (size_t i = 0; i < r->nchildren; i++) {
		const struct pc_res *c = pc_res_get(pc->res, r->children[i]);

		if (c->retired)
			continue;
		if (one != NULL)
			return NULL;
		one = c;
	}
	return one;
}

void pc_kids_where(struct pc_consult *pc, const struct pc_focus *f,
		       int h, struct pc_kids *k)
{
	const struct pc_res *r = pc_res_get(pc->res, f->r[h]);
	bool callgraph = pc_tunables_get(pc->cfg, "useCallGraphSearch") != 0;
	bool skip = pc_tunables_get(pc->cfg, "skipSingleChildLevels") != 0;

	k->n = 0;
	k->res = pc->res;
	if (h == 0 && callgraph && pc->src->ops->callees &&
	    (r->kind == PC_RES_HIERARCHY || r->kind == PC_RES_FUNCTION)) {
		pc->src->ops->callees(pc->src, r->kind == PC_RES_HIERARCHY ?
				      NULL : r->path, add_kid_path, k);
		if (r->kind == PC_RES_HIERARCHY)
			keep_start_fn(pc, k, thread_start_fn(pc, f));
		return;
	}
	/* A level with one child is no level (skipSingleChildLevels, off
	 * by default):
	 * /Process/<pid> when hunch searches one process, /SyncObject/Mutex
	 * when mutexes are the only objects seen.  Its children are
	 * refined to at once, saving an experiment's observation time per
	 * level (bn_mutex: the mutex and the threads one level sooner). */
	while (h != 0 && skip && only_child(pc, r) &&
	       only_child(pc, r)->nchildren)
		r = only_child(pc, r);
	for (size_t i = 0; i < r->nchildren && k->n < PC_KIDS_MAX; i++) {
		const struct pc_res *c = pc_res_get(pc->res, r->children[i]);

		if (!c->retired)
			k->r[k->n++] = c->id;
	}
}

void pc_kids_ask(const struct pc_consult *pc, int hy, char *ask, size_t len)
{
	ask[0] = '\0';
	for (int d = 0; hy >= 0 && d < 64; d++) {
		const struct pc_hypothesis *h = &pc->cfg->hyp[hy];
		const struct pc_metric_def *m = h->nin > 0 ?
			pc_metric_def_find(pc->cfg, h->in[0].metric) : NULL;

		if (m != NULL && m->kernel == PC_KERNEL_CPU) {
			if (d == 0)
				snprintf(ask, len, "%s", PC_SRC_HINT_CPU);
			return;
		}
		if (pc_metric_def_wait_kind(m) != PC_WAIT_NONE) {
			snprintf(ask, len, "%s%s", PC_SRC_HINT_WAIT, m->name);
			return;
		}
		hy = h->parent_idx;
	}
}

double pc_kids_hint(struct pc_consult *pc, const char *ask, pc_res_id r)
{
	const char *path = pc_res_get(pc->res, r)->path;
	size_t n = strlen(path) + strlen(ask) + 1;
	char *q;
	double v;

	if (ask[0] == '\0')
		return pc->src->ops->hint(pc->src, path);
	q = xrealloc(NULL, n);   /* a path may be as long as a file's */
	snprintf(q, n, "%s%s", path, ask);
	v = pc->src->ops->hint(pc->src, q);
	free(q);
	return v;
}

/* The source's hint of resource r, asked as k asks. */
static double ask_hint(struct pc_consult *pc, const struct pc_kids *k,
		       pc_res_id r)
{
	return pc_kids_hint(pc, k->ask, r);
}

/* Order refinements by the source's cheap evidence, likeliest first, so
 * that with a tight cost budget the likely culprits are tested first.
 * Stable: equal (or unknown) hints keep the source's order. */
void pc_kids_rank(struct pc_consult *pc, struct pc_kids *k)
{
	double *score = k->score;

	for (size_t i = 0; i < k->n; i++)
		score[i] = -1;
	if (pc->src->ops->hint == NULL)
		return;
	for (size_t i = 0; i < k->n; i++)
		score[i] = ask_hint(pc, k, k->r[i]);
	for (size_t i = 1; i < k->n; i++) {
		pc_res_id r = k->r[i];
		double sc = score[i];
		size_t j = i;

		while (j > 0 && score[j - 1] < sc) {
			k->r[j] = k->r[j - 1];
			score[j] = score[j - 1];
			j--;
		}
		k->r[j] = r;
		score[j] = sc;
	}
}

/* Is the first (ranked) kid dominant: nearly all of `share`, the
 * parent's evidence, and enough evidence to mean something? */
static bool dominant(const struct pc_kids *k, double share, double frac)
{
	if (k->n == 0 || k->score[0] < DOMINANT_MIN)
		return false;
	if (k->score[0] >= frac * share)
		return true;
	/* The only kid seen busy (its siblings together hold less than
	 * the parent's slack) with most of the parent: what the parent
	 * keeps is its own code and sampling noise.  Shares are counts of
	 * a few tens of samples when a thread gets little CPU: under load
	 * the demo's main read 0.32 and its only busy callee demo_run
	 * 0.28, short of 0.9 by one or two samples. */
	return k->score[0] >= DOMINANT_ALONE * share &&
	       (k->n < 2 || k->score[1] < (1 - frac) * share);
}

/* skipDominantLevels: follow the first kid down while it holds nearly
 * all of its parent's evidence (a deep call chain whose leaf takes the
 * CPU; the one process and its one busy thread) and return the deepest
 * such descendant when it lies two or more levels below the focus
 * (PC_RES_NONE otherwise).  It is tested at once beside the level's
 * ordinary refinements, which still run: the evidence only chooses
 * what to test, instrumentation concludes, and when the guess is false
 * the level-by-level search finds the answer as before.  `k` holds the
 * focus's ranked kids along h. */
/* skipDominantLevels, or 0 (off) when the configuration has no such
 * tunable: a journal recorded before it existed carries hypotheses
 * without it, and its replay must run the search it recorded. */
static double dominant_fraction(const struct pc_consult *pc)
{
	const struct pc_tunable *t = pc_tunables_find(pc->cfg,
						     "skipDominantLevels");

	return t ? t->value : 0;
}

/* Do two /Code resources lie in the same module (/Code/<module>/...)? */
static bool same_module(const struct pc_consult *pc, pc_res_id a,
			pc_res_id b)
{
	const char *pa = pc_res_get(pc->res, a)->path;
	const char *pb = pc_res_get(pc->res, b)->path;
	const char *ea = strchr(pa + strlen("/Code/"), '/');
	size_t n = ea ? (size_t)(ea - pa) : strlen(pa);

	return strncmp(pa, "/Code/", 6) == 0 && strncmp(pa, pb, n) == 0 &&
	       (pb[n] == '/' || pb[n] == '\0');
}

/* `edge` (may be NULL) gets the chain's last function in the module of
 * its first when the chain leaves that module (the program's function
 * calling libc's write() or pthread_mutex_lock()), PC_RES_NONE
 * otherwise. */
pc_res_id pc_kids_dominant_descendant(struct pc_consult *pc,
				     const struct pc_focus *f, int h,
				     const struct pc_kids *k, int min_depth,
				     pc_res_id *edge)
{
	double frac = dominant_fraction(pc);
	const struct pc_res *r = pc_res_get(pc->res, f->r[h]);
	double share = 1.0;
	pc_res_id seen[DOMINANT_DEPTH], deepest = PC_RES_NONE;
	struct pc_kids *cur, *next;
	int depth = 0;

	if (frac <= 0 || pc->src->ops->hint == NULL)
		return PC_RES_NONE;
	if (r->kind != PC_RES_HIERARCHY)
		share = ask_hint(pc, k, r->id);
	if (share <= 0 || !dominant(k, share, frac))
		return PC_RES_NONE;
	cur = malloc(sizeof(*cur));
	next = malloc(sizeof(*next));
	if (cur == NULL || next == NULL)
		abort();
	*cur = *k;
	memcpy(next->ask, k->ask, sizeof(next->ask));
	while (depth < DOMINANT_DEPTH && dominant(cur, share, frac)) {
		struct pc_focus g = *f;
		struct pc_kids *t;
		bool cycle = false;

		for (int i = 0; i < depth; i++)
			cycle |= seen[i] == cur->r[0];
		if (cycle)   /* recursion in the call graph */
			break;
		deepest = seen[depth++] = cur->r[0];
		share = cur->score[0];
		g.r[h] = deepest;
		pc_kids_where(pc, &g, h, next);
		pc_kids_rank(pc, next);
		t = cur, cur = next, next = t;
	}
	free(cur);
	free(next);
	if (edge != NULL) {
		*edge = PC_RES_NONE;
		for (int i = 1; h == 0 && i < depth; i++) {
			if (same_module(pc, seen[0], seen[i]))
				continue;
			*edge = seen[i - 1];
			break;
		}
	}
	return depth >= min_depth ? deepest : PC_RES_NONE;
}

/* skipDominantLevels below each of the focus's likeliest kids, not only
 * below the first: the kids' shares are of the whole window and of any
 * kind of observation, so at /Code the lock workers' sync waits (all of
 * the window's sync observations) rank first while the demo's main,
 * with a fifth of the CPU samples, holds all of them in one chain down
 * to demo_hot_loop.  Each kid with enough evidence whose own dominant
 * chain goes one or more levels below it has the chain's deepest
 * function tested at once (the first kid's chain is the one the focus
 * itself would follow); below the others only a chain that stays in
 * the kid's module: a share may count blocked observations, and the
 * demo's writer, blocked in write() (libc), led to a CPU timer on
 * write() at half a million calls a second, which took the budget from
 * the I/O refinements and ranked write()'s kernel time first.   `out` gets at most PC_KIDS_DOMINANT descendants,
 * `via` the kid each lies below; returns how many. */
int pc_kids_dominant_descendants(struct pc_consult *pc,
				const struct pc_focus *f, int h,
				const struct pc_kids *k, pc_res_id *out,
				pc_res_id *via)
{
	struct pc_kids *kk = malloc(sizeof(*kk));
	int n = 0;

	if (dominant_fraction(pc) <= 0 || pc->src->ops->hint == NULL) {
		free(kk);
		return 0;
	}
	for (size_t i = 0; i < k->n && i < PC_KIDS_DOMINANT; i++) {
		struct pc_focus g = *f;
		pc_res_id d;

		if (k->score[i] < DOMINANT_MIN)
			break;   /* ranked: the rest have less */
		g.r[h] = k->r[i];
		memcpy(kk->ask, k->ask, sizeof(kk->ask));
		pc_kids_where(pc, &g, h, kk);
		pc_kids_rank(pc, kk);
		d = pc_kids_dominant_descendant(pc, &g, h, kk, 1, NULL);
		if (d == PC_RES_NONE ||
		    (i > 0 && !same_module(pc, k->r[i], d)))
			continue;
		out[n] = d;
		via[n++] = k->r[i];
	}
	free(kk);
	return n;
}

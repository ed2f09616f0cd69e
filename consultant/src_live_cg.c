/*
 * src_live_cg.c - the static call graph for the live source's `callees`
 * operation (see src_live_cg.h): direct calls and tail calls found by the
 * instrumentation parser, each target named by its /Code path.  A call
 * or tail call through the PLT is named by the function it reaches (the
 * same name in another module: the PLT entry's symbol, or its GOT slot's
 * relocation, eng_sym_plt.h), so refinement goes from main into libc's
 * pthread_mutex_lock rather than stopping at its PLT entry.
 *
 * A function reached by a tail call is a callee of the function that
 * jumps to it and also of that function's callers (its frame is gone
 * while the tail-called one runs), transitively through chains of tail
 * calls within a module: src_live_cg_callees of bntc_a names bntc_c, which
 * bntc_b, called by bntc_a, only jumps to.
 *
 * src_live_cg_answer adds what the hint sampler's stacks saw (src_live_hint.h):
 * the callees reached through pointers (callbacks, comparators, an
 * interpreter's dispatch) and tail calls the parser cannot follow, and
 * at the root, the outermost functions of stacks that hold no start
 * function (a stripped executable's main has no name; a thread started
 * by code without symbols).
 */
#include "src_live_cg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eng_points.h"
#include "eng_sym_plt.h"
#include "pc_where.h"
#include "src_live_hint.h"

#define MAX_CALLEES 256

static const struct eng_func *find_fn(const struct src_live_cg_module *m,
				      const char *name)
{
	size_t n = eng_image_nfuncs(m->img);

	for (size_t i = 0; i < n; i++) {
		const struct eng_func *f = eng_image_func(m->img, i);

		if (strcmp(eng_sym_lazy_display_name(m->img, f), name) == 0)
			return f;
	}
	return NULL;
}

static void emit(const struct src_live_cg_module *m, const struct eng_func *f,
		 pc_path_fn fn, void *arg)
{
	const char *src = eng_sym_lazy_source_basename(m->img, f);
	char path[1024];

	snprintf(path, sizeof(path), "/Code/%s/%s/%s", m->name,
		 src ? src : PC_UNKNOWN_SRCFILE,
		 eng_sym_lazy_display_name(m->img, f));
	fn(arg, path);
}

/* "name@plt" -> the function `name` in the first module defining it. */
static bool emit_plt(const struct src_live_cg_module *mods, size_t nmods,
		     const char *plt_sym, pc_path_fn fn, void *arg)
{
	const char *at = strstr(plt_sym, "@plt");
	char name[512];

	if (at == NULL || (size_t)(at - plt_sym) >= sizeof(name))
		return false;
	memcpy(name, plt_sym, (size_t)(at - plt_sym));
	name[at - plt_sym] = '\0';
	for (size_t i = 0; i < nmods; i++) {
		const struct eng_func *f = mods[i].img ?
			eng_sym_lazy_func_by_name(mods[i].img, name) : NULL;

		if (f != NULL) {
			emit(&mods[i], f, fn, arg);
			return true;
		}
	}
	return true;  /* a PLT entry whose target is unknown */
}

/* The function `name` in the first module defining it, if any. */
static void emit_plt_name(const struct src_live_cg_module *mods, size_t nmods,
			  const char *name, pc_path_fn fn, void *arg)
{
	for (size_t i = 0; i < nmods; i++) {
		const struct eng_func *f = mods[i].img ?
			eng_sym_lazy_func_by_name(mods[i].img, name) : NULL;

		if (f != NULL) {
			emit(&mods[i], f, fn, arg);
			return;
		}
	}
}

static void emit_target(const struct src_live_cg_module *mods, size_t nmods,
			const struct src_live_cg_module *m, uint64_t target,
			pc_path_fn fn, void *arg)
{
	const struct eng_func *f = eng_image_func_at(m->img, target);
	char name[512];

	if (f == NULL || f->addr != target) {
		/* A PLT entry (no function there): the one it reaches. */
		if (eng_sym_plt_name(m->img, target, name, sizeof(name)))
			emit_plt_name(mods, nmods, name, fn, arg);
		if (f == NULL)
			return;
	}
	if (!emit_plt(mods, nmods, eng_sym_lazy_display_name(m->img, f), fn,
		      arg))
		emit(m, f, fn, arg);
}

/* Split "/Code/<module>/<file>/<function>"; the function may hold '/'. */
static const struct src_live_cg_module *parse(
	const struct src_live_cg_module *mods, size_t nmods, const char *path,
	const char **fname)
{
	const char *mod, *file, *fnc;
	size_t ml;

	if (strncmp(path, "/Code/", 6) != 0)
		return NULL;
	mod = path + 6;
	file = strchr(mod, '/');
	fnc = file ? strchr(file + 1, '/') : NULL;
	if (fnc == NULL)
		return NULL;
	ml = (size_t)(file - mod);
	*fname = fnc + 1;
	for (size_t i = 0; i < nmods; i++)
		if (mods[i].img && strlen(mods[i].name) == ml &&
		    strncmp(mods[i].name, mod, ml) == 0)
			return &mods[i];
	return NULL;
}

/* Functions already walked for one answer (a tail closure may cycle:
 * mutual recursion through jmps). */
struct walked {
	const struct eng_func *f[MAX_CALLEES];
	size_t n;
};

static bool walk_once(struct walked *w, const struct eng_func *f)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->f[i] == f)
			return false;
	if (w->n == MAX_CALLEES)
		return false;
	w->f[w->n++] = f;
	return true;
}

/* The callees of f in m: its direct calls and tail calls; with `tails`
 * (the function was reached by a call or tail call), only its tail
 * calls.  A function f reaches by a tail call runs with f's frame gone,
 * as a callee of whoever called f: so every function reached by a chain
 * of tail calls from a callee is a callee too, transitively (mutual
 * recursion included), within the module. */
static void callees_of(struct eng_points_cache *pc,
		       const struct src_live_cg_module *mods, size_t nmods,
		       const struct src_live_cg_module *m,
		       const struct eng_func *f, bool tails, struct walked *w,
		       pc_path_fn fn, void *arg)
{
	const struct x86_func *xf = eng_points_of(pc, m->img, f, NULL);

	for (size_t i = 0; xf != NULL && i < xf->npoints && i < MAX_CALLEES;
	     i++) {
		const struct x86_point *p = &xf->points[i];
		bool tail = p->kind == X86_PT_EXIT && p->tail_call;
		const struct eng_func *to;

		if (!(tail || (!tails && p->kind == X86_PT_CALL)) ||
		    p->indirect || p->target == 0)
			continue;
		emit_target(mods, nmods, m, p->target, fn, arg);
		to = eng_image_func_at(m->img, p->target);
		if (to != NULL && to->addr == p->target && walk_once(w, to))
			callees_of(pc, mods, nmods, m, to, true, w, fn, arg);
	}
}

int src_live_cg_callees(struct eng_points_cache *pc,
			const struct src_live_cg_module *mods, size_t nmods,
			const char *path, pc_path_fn fn, void *arg)
{
	const struct src_live_cg_module *m;
	const struct eng_func *f;
	const char *name;
	struct walked *w;

	m = parse(mods, nmods, path, &name);
	if (m == NULL || (f = find_fn(m, name)) == NULL)
		return 0;
	if ((w = calloc(1, sizeof(*w))) == NULL)
		return -ENOMEM;
	walk_once(w, f);
	callees_of(pc, mods, nmods, m, f, false, w, fn, arg);
	free(w);
	return 0;
}

int src_live_cg_starts(const struct src_live_cg_module *mods, size_t nmods,
		       const char *const *names, size_t nnames, pc_path_fn fn,
		       void *arg)
{
	for (size_t k = 0; k < nnames; k++) {
		for (size_t i = 0; i < nmods; i++) {
			const struct eng_func *f = mods[i].img ?
				find_fn(&mods[i], names[k]) : NULL;

			if (f != NULL) {
				emit(&mods[i], f, fn, arg);
				break;
			}
		}
	}
	return 0;
}

/* The answer being built: every path once, in the order first given. */
struct answer {
	char **p;
	size_t n, cap;
};

static void answer_add(void *arg, const char *path)
{
	struct answer *a = arg;

	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->p[i], path) == 0)
			return;
	if (a->n == a->cap) {
		a->cap = a->cap ? a->cap * 2 : 32;
		a->p = realloc(a->p, a->cap * sizeof(*a->p));
		if (a->p == NULL)
			abort();
	}
	if ((a->p[a->n] = strdup(path)) == NULL)
		abort();
	a->n++;
}

int src_live_cg_answer(struct eng_points_cache *pc,
		       const struct src_live_cg_module *mods, size_t nmods,
		       const char *const *starts, size_t nstarts,
		       struct src_live_hint *hint, const char *path,
		       pc_path_fn fn, void *arg)
{
	struct answer a = { 0 };
	int rc;

	if (path == NULL) {
		rc = src_live_cg_starts(mods, nmods, starts, nstarts,
					answer_add, &a);
		if (hint != NULL)
			src_live_hint_roots(hint, (const char *const *)a.p, a.n,
					    answer_add, &a);
	} else {
		rc = pc ? src_live_cg_callees(pc, mods, nmods, path, answer_add,
					      &a)
			: 0;
		if (hint != NULL)
			src_live_hint_callees(hint, path, answer_add, &a);
	}
	/* Not the function itself (a recursive call): the same resource is
	 * no refinement, and as the busiest callee of a recursive function
	 * (libc's msort_with_tmp under qsort) it stopped skipDominantLevels
	 * there, short of the comparator below it. */
	for (size_t i = 0; i < a.n; i++) {
		if (path == NULL || strcmp(a.p[i], path) != 0)
			fn(arg, a.p[i]);
		free(a.p[i]);
	}
	free(a.p);
	return rc;
}

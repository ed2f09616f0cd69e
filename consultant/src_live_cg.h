/*
 * src_live_cg.h - the static call graph behind the live source's
 * `callees` operation (internal to src_live.c): the consultant refines
 * /Code down it from main and the thread start functions (Paradyn's
 * call-graph search), one function at a time, which costs far less than
 * instrumenting a whole module.
 */
#ifndef SRC_LIVE_CG_H
#define SRC_LIVE_CG_H

#include <stddef.h>

#include "eng_symbols.h"
#include "pc_source.h"

struct eng_points_cache;
struct slh;

struct slcg_module {
	const char *name;          /* display name (file basename) */
	struct eng_image *img;     /* NULL: unreadable, skipped */
};

/* The callees of the function at `path` ("/Code/<module>/<file>/<fn>"),
 * each as its /Code path (possibly repeated). */
int slcg_callees(struct eng_points_cache *pc, const struct slcg_module *mods,
		 size_t nmods, const char *path, pc_path_fn fn, void *arg);
/* The /Code paths of the named start functions (first module that has
 * each). */
int slcg_starts(const struct slcg_module *mods, size_t nmods,
		const char *const *names, size_t nnames, pc_path_fn fn,
		void *arg);

/* The live source's `callees` answer: for `path`, its static callees
 * (slcg_callees, without the points cache `pc` when NULL) then the ones
 * the hint sampler's stacks saw it call; for NULL (the /Code root), the
 * start functions (slcg_starts) then the outermost functions of the
 * sampled stacks that hold none of them (slh_roots).  Every path once.
 * `hint` NULL: the static graph alone. */
int slcg_answer(struct eng_points_cache *pc, const struct slcg_module *mods,
		size_t nmods, const char *const *starts, size_t nstarts,
		struct slh *hint, const char *path, pc_path_fn fn, void *arg);

#endif

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

#include "eng_image.h"
#include "pc_source.h"

struct eng_points_cache;
struct src_live_hint;

struct src_live_cg_module {
	const char *name;          /* display name (file basename) */
	struct eng_image *img;     /* NULL: unreadable, skipped */
};

/* The callees of the function at `path` ("/Code/<module>/<file>/<fn>"),
 * each as its /Code path (possibly repeated). */
int src_live_cg_callees(struct eng_points_cache *pc,
			const struct src_live_cg_module *mods, size_t nmods,
			const char *path, pc_path_fn fn, void *arg);
/* The /Code paths of the named start functions (first module that has
 * each). */
int src_live_cg_starts(const struct src_live_cg_module *mods, size_t nmods,
		       const char *const *names, size_t nnames, pc_path_fn fn,
		       void *arg);

/* The live source's `callees` answer: for `path`, its static callees
 * (src_live_cg_callees, without the points cache `pc` when NULL) then the ones
 * the hint sampler's stacks saw it call; for NULL (the /Code root), the
 * start functions (src_live_cg_starts) then the outermost functions of the
 * sampled stacks that hold none of them (src_live_hint_roots).  Every path once.
 * `hint` NULL: the static graph alone. */
int src_live_cg_answer(struct eng_points_cache *pc,
		       const struct src_live_cg_module *mods, size_t nmods,
		       const char *const *starts, size_t nstarts,
		       struct src_live_hint *hint, const char *path,
		       pc_path_fn fn, void *arg);

#endif

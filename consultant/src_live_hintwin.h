/*
 * src_live_hintwin.h - a sliding window of cheap evidence and the shares
 * the consultant's `hint` op answers from it (no engine types: unit
 * tested alone, tests/hint/hint_window.c).
 *
 * An observation is one thing seen at one time: a CPU sample (the
 * resources are the thread and every /Code function, file and module on
 * its stack), or a thread seen blocked in a sync object or in I/O (the
 * thread and the object or file, when known).  Resources are interned
 * paths: "/Code/<module>/<file>/<function>", "/Process/<pid>/<tid>",
 * "/SyncObject/<class>/<name>", "/Files/<name>".
 *
 * hint(path) is the largest, over the three kinds, of the share of the
 * window's observations of that kind that fall in the resource (an
 * observation falls in it when one of its paths is `path` or below it).
 * So a function gets its inclusive share of CPU samples (of the stacks
 * as folded, src_live_hintwin_add_stack), a thread the
 * larger of its share of CPU samples and its share of blocked
 * observations, a mutex its share of the threads seen blocked in sync.
 * A thread path given as the where axis names it ("/Process/7/9:worker")
 * is matched by pid and tid.  < 0: no observation at all in the window
 * (for /SyncObject and /Files: no thread seen blocked in sync, or in
 * I/O - a file written through the page cache never blocks - rather
 * than a share of 0 that would put it last in the search's queue).
 */
#ifndef SRC_LIVE_HINTWIN_H
#define SRC_LIVE_HINTWIN_H

#include <stdbool.h>
#include <stddef.h>

enum src_live_hintwin_kind { SRC_LIVE_HINTWIN_CPU, SRC_LIVE_HINTWIN_SYNC, SRC_LIVE_HINTWIN_IO, SRC_LIVE_HINTWIN_NKIND };

struct src_live_hintwin;

struct src_live_hintwin *src_live_hintwin_new(double window_s);
void src_live_hintwin_free(struct src_live_hintwin *w);
/* The id of a path (the same id for the same path, for the window's
 * life). */
int src_live_hintwin_intern(struct src_live_hintwin *w, const char *path);
/* The path interned as `id`, or NULL. */
const char *src_live_hintwin_path(const struct src_live_hintwin *w, int id);
/* One observation at time t (seconds) with the resources `ids`
 * (duplicates are ignored).  Times must not go backwards. */
void src_live_hintwin_add(struct src_live_hintwin *w, double t, enum src_live_hintwin_kind kind, const int *ids,
	    int nids);
/* The same with the stack the observation was made on (a CPU sample's,
 * or a blocked thread's): `stack` holds the ids of the functions on it,
 * innermost first, frames that name no function left out (so a caller
 * is joined to the nearest function it reached, through code without
 * names).  Recursion is folded first: a function found again inside
 * its own activation (directly, or eval -> sum -> next -> eval in an
 * interpreter) replaces every frame between the two, so the inner
 * activation's time is the outer one's and the frames between hold
 * only the samples outside it.  Then each pair of neighbours is a call
 * edge (stack[i + 1] called stack[i]), counted for the window's life.
 * A `complete` stack (unwound to the thread's first frame) is kept
 * with the observation for src_live_hintwin_roots; a stack cut short (unwinding
 * stopped in code without CFI, or past the stack copied) is not: its
 * outermost function is only where the unwinding gave up.  The stack's
 * ids fall in the observation as `ids` do. */
void src_live_hintwin_add_stack(struct src_live_hintwin *w, double t, enum src_live_hintwin_kind kind, const int *ids,
		  int nids, const int *stack, int nstack, int complete);
/* The same for a stack a caller already took frames off (`left`: a
 * Python join leaves out the C frames between two activations of the
 * interpreter loop): they count as folded away
 * (src_live_hintwin_count_reentered), never as on the stack. */
void src_live_hintwin_add_joined(struct src_live_hintwin *w, double t,
				 enum src_live_hintwin_kind kind,
				 const int *ids, int nids, const int *stack,
				 int nstack, const int *left, int nleft,
				 int complete);
/* Forget observations older than now - window. */
void src_live_hintwin_expire(struct src_live_hintwin *w, double now);
double src_live_hintwin_hint(const struct src_live_hintwin *w, const char *path);
/* The same over n windows (NULL ones skipped) counted together: each
 * kind's observations in the resource over all the windows' of that
 * kind (a job's processes, each with its own sampler); of one kind
 * alone when kind >= 0 (an enum src_live_hintwin_kind). */
double src_live_hintwin_hint_many(const struct src_live_hintwin *const *w,
				  size_t n, const char *path, int kind);
/* A wait's share in `path`, over n windows: of the threads seen blocked
 * in `kind` (sync or I/O) and the CPU samples whose stack holds one of
 * the wait functions `names` (a write() to the page cache runs and is
 * never seen blocked; a lock spun on), the part whose resources are
 * `path` or below it.  A /Files or /SyncObject path counts the blocked
 * threads alone (only they name one).  < 0 when there is none. */
double src_live_hintwin_wait_many(const struct src_live_hintwin *const *w,
				  size_t n, const char *path,
				  enum src_live_hintwin_kind kind,
				  const char *const *names, size_t nnames);
typedef void (*src_live_hintwin_path_fn)(void *arg, const char *path);
/* The functions `path` was seen calling (src_live_hintwin_add_stack's edges), each
 * once, the most seen first (ties: first seen first). */
void src_live_hintwin_callees(const struct src_live_hintwin *w, const char *path, src_live_hintwin_path_fn fn,
		void *arg);
/* The roots of the window's complete stacks that hold none of the
 * functions `starts` (paths): the static call graph from the start
 * functions does not reach what these stacks ran.  A stack's root is
 * its outermost function that no stack holding a start function holds
 * (so not clone3 or start_thread, which every thread runs, when other
 * threads' start functions are known).  Each once, the roots of the
 * most stacks first, and only those of at least SRC_LIVE_HINTWIN_ROOT_MIN stacks (one
 * stray unwind is not a place to search). */
#define SRC_LIVE_HINTWIN_ROOT_MIN 2
void src_live_hintwin_roots(const struct src_live_hintwin *w, const char *const *starts, size_t nstarts,
	      src_live_hintwin_path_fn fn, void *arg);
/* Observations of `kind` newer than `after` (seconds): `*n_within`
 * those that fall in `within` (every one when NULL), `*n_both` those of
 * them that also fall in `path`; `*latest` the newest time of any
 * observation of `kind` newer than `after`, in `within` or not (`after`
 * when none: a drain brings every thread's samples up to its time).  A caller that passes its last `*latest` back
 * counts every observation once, however late it was drained. */
void src_live_hintwin_count_after(const struct src_live_hintwin *w, enum src_live_hintwin_kind kind, double after,
		    const char *path, const char *within, size_t *n_within,
		    size_t *n_both, double *latest);
/* src_live_hintwin_count_after split by thread: for each of the `n`
 * threads named by `threads` (/Process/<pid>/<tid> paths), `n_in[i]` its
 * observations newer than `after` and `n_code[i]` those of them whose
 * stack held `path`. */
void src_live_hintwin_count_threads(const struct src_live_hintwin *w, enum src_live_hintwin_kind kind,
		      double after, const char *path,
		      const char *const *threads, size_t n, size_t *n_in,
		      size_t *n_code, double *latest);
/* src_live_hintwin_count_after for a set of functions: `*n_both` counts the
 * observations in `within` whose stack held one of the functions named
 * `names` (in any module; a name also matches under MPI's profiling
 * name, PMPI_X for MPI_X, the one function's other symbol) and, unless
 * `code` is NULL, the /Code resource `code` too. */
void src_live_hintwin_count_funcs_after(const struct src_live_hintwin *w, enum src_live_hintwin_kind kind,
			  double after, const char *const *names,
			  size_t nnames, const char *code, const char *within,
			  size_t *n_within, size_t *n_both, double *latest);
/* Which interned ids (src_live_hintwin_npaths of them, malloc'd) are `path` or below
 * it; which are functions named `names` (as src_live_hintwin_count_funcs_after). */
bool *src_live_hintwin_match_path(const struct src_live_hintwin *w, const char *path);
bool *src_live_hintwin_match_funcs(const struct src_live_hintwin *w, const char *const *names,
		     size_t nnames);
size_t src_live_hintwin_npaths(const struct src_live_hintwin *w);
/* Observations of `kind` whose stack held `path` before recursion was
 * folded (`*n_raw`), and those of them whose folded stack no longer
 * holds it (`*n_gone`): `path` ran only between two activations of an
 * outer function then (sum and the generator between two activations
 * of an interpreter's loop), and that time is the outer function's.  A
 * timer on `path` counts it as path's all the same. */
void src_live_hintwin_count_reentered(const struct src_live_hintwin *w, enum src_live_hintwin_kind kind,
			const char *path, size_t *n_raw, size_t *n_gone);
/* Observations of a kind in the window (tests, messages). */
size_t src_live_hintwin_count(const struct src_live_hintwin *w, enum src_live_hintwin_kind kind);
/* Observations of a kind that fall in `path`. */
size_t src_live_hintwin_count_in(const struct src_live_hintwin *w, enum src_live_hintwin_kind kind, const char *path);

#endif

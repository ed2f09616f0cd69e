/*
 * src_live_pyname.h - where-axis names of Python code (the hint
 * sampler's Python frames, src_live_hintpy.h).
 *
 * A Python function is `/Code/<python>/<file>/<qualname>`: the where
 * axis's three levels (module, source file, function) with the module a
 * name no file has (like `<unknown>` for a source file), so that no
 * Python function is ever taken for a C function of the interpreter's
 * own module (a Python `main` is not the C `main` hunch would
 * instrument), the script's file as the source file (its basename, as
 * C files are shown), and the qualified name (`Thread.run`,
 * `f.<locals>.g`).  Kept unique: a file whose basename an earlier,
 * different file had is shown with its folder (`json:__init__.py`),
 * else its whole path with ':' for '/'; a second function of one
 * qualified name in one file (two lambdas, a redefinition) gets its
 * first line (`<lambda>:12`).
 */
#ifndef SRC_LIVE_PYNAME_H
#define SRC_LIVE_PYNAME_H

#include <stdbool.h>
#include <stddef.h>

#include "eng_pyframes.h"

#define SRC_LIVE_PYNAME_MODULE "<python>"
/* The hint question whose answer is a Python function's line (see
 * src_live_pyname_hint): its where path with this suffix. */
#define SRC_LIVE_PYNAME_LINE_Q "?line"
/* The hint question whose answer is how often a Python function was
 * called by another (see src_live_pyname_hint): its where path, this,
 * and the caller's where path. */
#define SRC_LIVE_PYNAME_CALLER_Q "?caller="

struct src_live_pyname;

/* A /Code path in Python code (SRC_LIVE_PYNAME_MODULE): there is no
 * machine code of its own to instrument, its CPU is estimated from the
 * stack samples. */
bool src_live_pyname_is_code(const char *path);
/* Whether the where axis refines the function at `caller` to its callee
 * at `callee`, in a process whose interpreter loop is in module
 * `interp` (the module of _PyEval_EvalFrameDefault: python3.11, or a
 * libpython): not when the caller is Python code and the callee is the
 * interpreter's own C code (PyNumber_Remainder for `%`, the eval loop's
 * helpers).  Those run the Python function's own lines: the Python
 * function is the deepest where a user can change, and its CPU is the
 * sum of them, so the finding stays there with its whole CPU instead of
 * one C helper's share.  Done when refining, not when grouping the
 * findings: the search spends no experiments below, and the lead node
 * measures the Python function itself.  A library's callee (zlib's
 * deflate under zlib.compress, a numpy kernel) is still refined to. */
bool src_live_pyname_refines(const char *caller, const char *callee,
			     const char *interp);

struct src_live_pyname *src_live_pyname_new(void);
/* Another handle on the names of `with`, with a code cache of its own:
 * for another process's sampler, so that one file and one function
 * have one name in the whole job (with a table per process, a pool's
 * worker that first saw multiprocessing's pool.py named the script
 * `e2e-pool.x:pool.py`, where the parent said `pool.py`), and a
 * function's lines count over every process.  The names live until
 * their last handle is freed. */
struct src_live_pyname *src_live_pyname_share(struct src_live_pyname *with);
void src_live_pyname_free(struct src_live_pyname *n);
/* The code objects named so far are gone (their reader was closed: the
 * program replaced its image); the names stay. */
void src_live_pyname_forget_codes(struct src_live_pyname *n);
/* Name the file at path (a co_filename) now, if it has no name yet:
 * the script a program runs, so that it is shown by its basename
 * whatever file of that basename the samples hold first (a pool
 * worker's first sample, innermost first, named multiprocessing's
 * pool.py `pool.py` and the script `e2e-pool.x:pool.py`). */
void src_live_pyname_first_file(struct src_live_pyname *n, const char *path);
/* The names of code object c: its shown file and function (stable
 * while n lives).  *is_new: the first time this function is named (to
 * be discovered).  Code objects of one function (the same file, name
 * and first line) share one name. */
void src_live_pyname_of(struct src_live_pyname *n, const struct eng_pycode *c,
			const char **file, const char **function,
			bool *is_new);

/* A stack sample ran code object c at `line` (the line its frame was
 * executing: the innermost frame's own, a caller's call): counted for
 * the function's most sampled line.  A line <= 0 is not counted. */
void src_live_pyname_line_seen(struct src_live_pyname *n,
			       const struct eng_pycode *c, int line);
/* A stack sample held a frame of code object c, with one of `caller`
 * right under it (NULL: none, or not read). */
void src_live_pyname_caller_seen(struct src_live_pyname *n,
				 const struct eng_pycode *c,
				 const struct eng_pycode *caller);
/* The answer to a hint question about Python code, -1 when path is not
 * one:
 * - "/Code/<python>/FILE/FN?line" (SRC_LIVE_PYNAME_LINE_Q): the line of
 *   FN where the samples put most of its time (the first such line on a
 *   tie), 0 when none was counted;
 * - "/Code/<python>/FILE/FN?caller=/Code/<python>/FILE2/FN2"
 *   (SRC_LIVE_PYNAME_CALLER_Q): the share of FN's frames in the samples
 *   that FN2 called directly (no Python frame between), 0 when none.
 * Counted over the whole run: a finding names the line its CPU was
 * spent at and its caller then, not the last moment's. */
double src_live_pyname_hint(const struct src_live_pyname *n, const char *path);

#endif

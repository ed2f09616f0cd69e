/*
 * src_live_hint.h - the live source's cheap evidence (internal to
 * src_live.c): perf cpu-clock stack samples of every thread and the
 * threads' states from /proc, kept over a sliding window and turned into
 * the shares the consultant's `hint` op asks for (src_live_hintwin.h says
 * what a share is).
 *
 * Every tick (at most every SRC_LIVE_HINT_TICK_S) it drains the perf rings, unwinds
 * and resolves each sample's stack to /Code paths, follows the target's
 * threads (new ones sampled, exited ones dropped), and reads each
 * thread's state: a thread blocked in futex counts for the sync object
 * at the futex address (a mutex or condition variable discovered by the
 * live source, or else the data symbol there, its class told by its
 * size), a thread blocked in read/write/fsync/... for the file behind
 * its descriptor (/proc/PID/fd).  The target is never stopped.
 */
#ifndef SRC_LIVE_HINT_H
#define SRC_LIVE_HINT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "hunch_err.h"
#include "pc_config.h"
#include "pc_source.h"

#define SRC_LIVE_HINT_HZ 99           /* perf samples per second of a thread's CPU */
#define SRC_LIVE_HINT_WINDOW_S 3.0    /* the evidence the shares are taken over */
#define SRC_LIVE_HINT_TICK_S 0.1      /* how often rings are drained, states read */

struct eng_image;
struct eng_perfsample;
struct src_live_hint;
struct src_live_hintoff_query;
struct src_live_hintoff_sums;
struct src_live_samples;

/* The image mapped at a runtime address and its base (runtime address
 * of image-relative 0), or NULL. */
typedef struct eng_image *(*src_live_hint_image_fn)(void *arg, uint64_t addr,
					  uint64_t *base);

struct src_live_hint_stats {
	uint64_t ticks;
	uint64_t tick_cpu_ns;   /* hunch CPU time in src_live_hint_tick, all ticks */
	uint64_t cpu_obs, sync_obs, io_obs;   /* observations made */
	uint64_t blocked_unwinds;  /* blocked threads' stacks unwound */
	uint64_t off_obs;       /* off-CPU observations (src_live_hint_offcpu_start) */
	uint64_t py_joined;     /* CPU samples given their Python frames */
};

/* The rate to sample at: the tunable hintSampleRate when the loaded
 * hypotheses define it (0: no hints), else SRC_LIVE_HINT_HZ. */
double src_live_hint_rate(const struct pc_config *cfg);
/* `t0_ns`: CLOCK_MONOTONIC of the source's time 0.  Errors name the pid
 * (perf refused, process gone). */
int src_live_hint_new(pid_t pid, double hz, uint64_t t0_ns, src_live_hint_image_fn image_at,
	    void *arg, struct src_live_hint **out, struct hunch_err *err);
void src_live_hint_free(struct src_live_hint *h);
/* Drain, resolve, read states, age the window (no-op until SRC_LIVE_HINT_TICK_S
 * has passed since the last tick, unless `force`). */
void src_live_hint_tick(struct src_live_hint *h, int force);
/* A thread the live source saw created: sample it from its first
 * instruction (the tick's /proc scan would find it up to SRC_LIVE_HINT_TICK_S
 * later; exited threads are dropped by the tick, after their last
 * samples are read). */
void src_live_hint_thread_new(struct src_live_hint *h, pid_t tid);
/* A CPython target (src_live_hintpy.h): each CPU sample whose stack
 * holds the interpreter loop (_PyEval_EvalFrameDefault) gets, below it,
 * the Python frames of its thread read nearest its time, as /Code
 * functions named by src_live_pyname.h; each is discovered through fn
 * the first time it is seen (the live source's queue), so that the
 * where axis holds it when the search refines to it. */
void src_live_hint_set_disc(struct src_live_hint *h, pc_disc_fn fn, void *arg);
/* Every CPU sample from now on is counted in `t` too (the whole
 * run's tally, src_live_samples.h; NULL: none). */
void src_live_hint_set_tally(struct src_live_hint *h, struct src_live_samples *t);
/* The Python stacks' reader, NULL when the target is not a CPython
 * hunch reads (src_live_hintpy_stats). */
struct src_live_hintpy *src_live_hint_python(struct src_live_hint *h);
/* Name the Python code h samples in `names` (src_live_pyname.h), the
 * job's one table, shared by the program's sampler and its children's
 * and kept by the caller past h: the findings ask a Python function's
 * line after the search's end.  "?line" questions to src_live_hint_hint
 * (SRC_LIVE_PYNAME_LINE_Q) are answered from them, over every process.
 * Without it, h names its Python code in a table of its own. */
struct src_live_pyname;
void src_live_hint_share_names(struct src_live_hint *h,
			       struct src_live_pyname *names);
/* Libraries were loaded or unloaded (the unwinder re-reads the map). */
void src_live_hint_modules_changed(struct src_live_hint *h);
/* The program replaced its image: addresses and Python code objects
 * name other code now.  The new image is read for CPython at once and,
 * if it is not one yet, at each library load after (a libpython comes
 * with the libraries). */
void src_live_hint_exec(struct src_live_hint *h);
/* A discovery of the live source: sync objects are remembered by
 * address so that futex waits can be matched to them. */
void src_live_hint_note(struct src_live_hint *h, const struct pc_discovery *d);
/* The share (0..1) of the window's evidence in the resource at `path`,
 * < 0 when there is none. */
double src_live_hint_hint(struct src_live_hint *h, const char *path);
/* The same over the windows of n samplers counted together (the first
 * answers a Python line question): a job's processes.  "PATH?cpu"
 * asks the share of the CPU samples alone. */
double src_live_hint_hint_many(struct src_live_hint *const *h, size_t n,
			       const char *path);
/* "PATH?wait=METRIC" over the windows of n samplers (src_live.c finds
 * the metric's wait functions and kind): the share of the threads seen
 * blocked in that kind (an enum src_live_hintwin_kind) and of the CPU
 * samples inside those functions that falls in PATH; < 0 when there is
 * none of either (src_live_hintwin_wait_many). */
double src_live_hint_wait_many(struct src_live_hint *const *h, size_t n,
			       const char *path, int kind,
			       const char *const *names, size_t nnames);
/* The functions seen called by the one at `path` on the stacks sampled
 * (CPU samples and blocked threads' stacks), the most seen first: calls
 * through pointers and tail calls the static call graph lacks. */
void src_live_hint_callees(struct src_live_hint *h, const char *path, pc_path_fn fn, void *arg);
/* The outermost functions of the window's stacks that hold none of the
 * `starts` (paths of the start functions the static call graph begins
 * at): where the search must begin to reach what those stacks ran. */
void src_live_hint_roots(struct src_live_hint *h, const char *const *starts, size_t nstarts,
	       pc_path_fn fn, void *arg);
const struct src_live_hint_stats *src_live_hint_stats(const struct src_live_hint *h);
/* CPU samples newer than `after` in the thread `within` (a /Process
 * path; NULL or the process: every thread), and how many of them had
 * the /Code resource `path` on their stack (src_live_hintwin_count_after). */
void src_live_hint_cpu_counts(const struct src_live_hint *h, const char *path,
		    const char *within, double after, size_t *n_within,
		    size_t *n_both, double *latest);
/* src_live_hint_cpu_counts for each of `n` threads at once
 * (src_live_hintwin_count_threads). */
void src_live_hint_cpu_counts_threads(const struct src_live_hint *h, const char *path,
			    const char *const *threads, size_t n, double after,
			    size_t *n_in, size_t *n_code, double *latest);
/* The window's CPU samples whose stack held `path` before recursion
 * was folded, and those whose folded stack lost it: time of an outer
 * function entered again below it (src_live_hintwin_count_reentered). */
void src_live_hint_cpu_reentered(const struct src_live_hint *h, const char *path, size_t *n_raw,
		       size_t *n_gone);
/* The sampler itself: recent stacks per thread, with times (see
 * eng_perfsample_on_stack_since). */
struct eng_perfsample *src_live_hint_sampler(struct src_live_hint *h);
/* Observations of one kind (0 CPU, 1 sync, 2 I/O) in the window. */
size_t src_live_hint_count(const struct src_live_hint *h, int kind);

/* CPU samples newer than `after` in `within` (NULL: every thread), and
 * how many had one of the functions `names` on their stack, and `code`
 * when not NULL (src_live_hintwin_count_funcs_after). */
void src_live_hint_funcs_counts(const struct src_live_hint *h, const char *const *names,
		      size_t nnames, const char *code, const char *within,
		      double after, size_t *n_within, size_t *n_both,
		      double *latest);
/* Sample where each thread leaves its CPU and how long it stays off,
 * from now on (eng_perfsample_offcpu_start; kept in an off-CPU window,
 * src_live_hintoff.h).  0, or -errno and why. */
int src_live_hint_offcpu_start(struct src_live_hint *h, struct hunch_err *err);
/* The off-CPU observations q takes, summed (src_live_hintoff_sum_after);
 * none, and latest q->after, before off-CPU sampling started. */
void src_live_hint_off_sums(const struct src_live_hint *h,
			    const struct src_live_hintoff_query *q,
			    struct src_live_hintoff_sums *out);

#endif

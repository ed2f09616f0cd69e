/*
 * pc_source.h - the seam between the consultant and whatever feeds it.
 *
 * The consultant never talks to ptrace or files: it talks to a source.
 * A live source wraps the engine (src_live.c); a replay source reads a
 * journal; a sim source scripts values for tests (src_sim.c).  It carries
 * resource discovery and target events, and the metric side:
 * predicted cost, enable and disable, samples, observed cost, the static
 * call graph and the sampling period.
 *
 * Time is the target's: seconds since the source started it (`now`).  A
 * source that cannot do an operation leaves the pointer NULL.
 */
#ifndef PC_SOURCE_H
#define PC_SOURCE_H

#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

enum pc_disc_kind {
	PC_DISC_FUNCTION,   /* module, srcfile, function, addr */
	PC_DISC_PROCESS,    /* pid */
	PC_DISC_THREAD,     /* pid, tid, function (start routine) */
	PC_DISC_SYNCOBJ,    /* sync_class, name, addr */
	PC_DISC_FILE,       /* name (path) */
};

/* One resource found (or, with `retired`, gone). Strings are borrowed. */
struct pc_discovery {
	enum pc_disc_kind kind;
	bool retired;
	const char *module;     /* functions: the module's display name */
	const char *srcfile;    /* functions: source file basename or NULL */
	const char *function;   /* functions; threads: start function */
	const char *sync_class; /* "Mutex", "CondVar", ... */
	const char *name;       /* sync objects and files; processes: the
				   label shown for it ("rank 2"), or NULL */
	uint64_t addr;
	int pid, tid;
	/* A process's retirement: its end as far as hunch saw it.  end is
	 * 'x' exited (code: status), 's' killed (code: signal), '?' ended
	 * with its status unseen (its parent reaped it first), 0 not said;
	 * end_t: search seconds when hunch saw it. */
	char end;
	int end_code;
	double end_t;
};

/* Target events the consultant must know about. */
enum pc_target_event {
	PC_TARGET_EXITED,    /* code = exit status */
	PC_TARGET_KILLED,    /* code = signal number */
	PC_TARGET_EXEC,
	PC_TARGET_DETACHED,
};

typedef void (*pc_disc_fn)(void *arg, const struct pc_discovery *d);

/* A focus as the source sees it: one resource path per hierarchy, in the
 * order /Code, /Process, /SyncObject, /Files; a hierarchy's root means
 * "not constrained". */
#define PC_SRC_NHIER 4
struct pc_src_focus {
	const char *path[PC_SRC_NHIER];
};

/* A metric instance inside the source.  Handles are never reused: the
 * same (metric, focus) enabled again gets a new one. */
typedef uint64_t pc_src_handle;

/* The reply to enable(req): status 0 and a handle, or a negative errno
 * and a reason (the engine could not instrument the focus). */
struct pc_src_reply {
	uint64_t req;
	int status;
	pc_src_handle handle;
	const char *reason;
	/* Estimated from stack samples, not counted by instrumentation
	 * (the live source's fallback for code it cannot instrument within
	 * the cost limit): the report labels what it concludes. */
	bool sampled;
};

/* One sample: the instance's average over [t0, t1].  Event counters and
 * timers arrive as rates (delta / (t1 - t0): CPU seconds per second,
 * bytes per second); sampled functions (active_threads) as their mean. */
struct pc_src_sample {
	pc_src_handle handle;
	double t0, t1;
	double value;
};

struct pc_src_event {
	enum pc_target_event ev;
	int code;
	double t;
};

typedef void (*pc_reply_fn)(void *arg, const struct pc_src_reply *r);
typedef void (*pc_sample_fn)(void *arg, const struct pc_src_sample *s);
typedef void (*pc_event_fn)(void *arg, const struct pc_src_event *e);
typedef void (*pc_path_fn)(void *arg, const char *path);

struct pc_source;

/* A prediction not known yet (predict_cost). */
#define PC_SRC_MEASURING (-1.0)

/* A hint question about the CPU samples alone: PATH followed by this
 * (asked for a CPU hypothesis's refinements; a source that keeps no
 * kinds answers as for PATH). */
#define PC_SRC_HINT_CPU "?cpu"
/* A hint question about a wait metric's evidence: PATH followed by this
 * and the metric's name ("PATH?wait=io_wait", asked for a wait
 * hypothesis's refinements): the share, of the threads seen blocked in
 * that kind of wait (sync or I/O) and of the CPU samples inside the
 * metric's wait functions (a write() to the page cache runs, it never
 * blocks), that falls in PATH.  A source that keeps no kinds answers as
 * for PATH. */
#define PC_SRC_HINT_WAIT "?wait="

/* A question asked by kind (PATH then PC_SRC_HINT_CPU, or
 * PC_SRC_HINT_WAIT and a metric's name): its PATH into bare (len
 * bytes) and the suffix's start returned; NULL, bare untouched, for a
 * bare path (which may hold a '?' of its own: a file's name). */
static inline const char *pc_source_hint_kind(const char *q, char *bare,
					      size_t len)
{
	const char *k = strrchr(q, '?');
	size_t n, w = sizeof(PC_SRC_HINT_WAIT) - 1;

	if (k == NULL || k == q || (size_t)(k - q) >= len)
		return NULL;
	if (strcmp(k, PC_SRC_HINT_CPU) != 0) {
		if (strncmp(k, PC_SRC_HINT_WAIT, w) != 0 || k[w] == '\0')
			return NULL;
		for (const char *c = k + w; *c; c++)
			if (!(isalnum((unsigned char)*c) || *c == '_'))
				return NULL;
	}
	n = (size_t)(k - q);
	memcpy(bare, q, n);
	bare[n] = '\0';
	return k;
}

struct pc_source_ops {
	const char *kind;  /* "live", "replay", "sim" */
	/* Report every resource discovered or retired since the last call. */
	int (*poll_resources)(struct pc_source *s, pc_disc_fn fn, void *arg);
	void (*close)(struct pc_source *s);

	/* Seconds since the target started. */
	double (*now)(struct pc_source *s);
	/* Predicted cost of enabling `metric` on `f`, as a slowdown fraction
	 * (seconds of instrumentation per second of run time), or
	 * PC_SRC_MEASURING: the source is measuring what it needs to know
	 * (how often the functions are called); ask again next tick. */
	double (*predict_cost)(struct pc_source *s, const char *metric,
			       const struct pc_src_focus *f);
	/* Ask for an instance; the answer comes through poll_replies with
	 * the same `req`.  Returns 0, or a negative errno when the request
	 * could not even be made. */
	int (*enable)(struct pc_source *s, const char *metric,
		      const struct pc_src_focus *f, uint64_t req);
	void (*disable)(struct pc_source *s, pc_src_handle h);
	int (*poll_replies)(struct pc_source *s, pc_reply_fn fn, void *arg);
	int (*poll_samples)(struct pc_source *s, pc_sample_fn fn, void *arg);
	/* Slowdown caused by instrumentation over the last sample period. */
	double (*observed_cost)(struct pc_source *s);
	/* Optional: how often, and how long in all (s), the source held
	 * the program stopped (to patch it, to call into it): a pause its
	 * tracing costs beside the instrumentation.  Asked after
	 * observed_cost, each tick. */
	void (*held)(struct pc_source *s, long *holds, double *seconds);
	/* Optional: a step of the search begins (true) or ends (false).
	 * Between the two the enables and disables it makes may share one
	 * stop of the program, held to the step's end, instead of one
	 * each. */
	void (*step)(struct pc_source *s, bool begins);
	int (*poll_events)(struct pc_source *s, pc_event_fn fn, void *arg);
	void (*set_sample_period)(struct pc_source *s, double seconds);
	/* The static call graph: callees of the function at `path`, or with
	 * path NULL the start functions (main and thread start routines). */
	int (*callees)(struct pc_source *s, const char *path, pc_path_fn fn,
		       void *arg);
	/* Cheap evidence, not a conclusion: the share (0..1) of recent
	 * statistical samples (perf cpu-clock, thread states from /proc)
	 * that fall in the resource at `path`, or < 0 when unknown.  The
	 * search tests likely refinements first; only instrumentation
	 * experiments conclude. */
	double (*hint)(struct pc_source *s, const char *path);
	/* What the stack samples of the whole run saw, for the report
	 * (src_live_samples.h gives the object's fields): a new reference,
	 * or NULL when there were none.  Not a conclusion; optional (NULL
	 * op: no samples). */
	struct json_t *(*stack_samples)(struct pc_source *s);
};

struct pc_source {
	const struct pc_source_ops *ops;
	void *impl;
};

#endif

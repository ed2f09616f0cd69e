/*
 * jnl_write.h - the journal writer: crash-safe, never in the way.
 *
 * Records go into a buffer in memory, one complete line each; jnl_write_flush()
 * hands the buffer to the kernel with write(2), so a SIGKILL of hunch
 * after a tick loses nothing of that tick, and a cut anywhere leaves
 * whole lines plus at most one incomplete last line (which the reader
 * reports).  A write error (full disk, I/O error, file size limit) puts
 * the writer in an error state with a message for the dashboard and the
 * batch output; from then on records are dropped and counted, and every
 * call still returns quickly: the journal never stops the search.
 *
 * Times: `ts` is seconds since the start of the search (the header's
 * start_mono_ns), rounded to the microsecond; a ts earlier than the last
 * one written is raised to it, so the journal is in time order.
 */
#ifndef JNL_WRITE_H
#define JNL_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>

#include "hunch_err.h"
#include "jnl_format.h"
#include "jnl_record.h"
#include "pc_source.h"

struct jnl_header {
	const char *program;          /* short name of the target */
	const char *const *argv;      /* launched: NULL-terminated, else NULL */
	int pid;                      /* attached: its pid (argv == NULL) */
	const char *mode;             /* "batch", "dashboard" or NULL */
	struct timespec start_wall;   /* CLOCK_REALTIME at the start */
	uint64_t start_mono_ns;       /* CLOCK_MONOTONIC then: ts = 0 */
	double tsc_hz;                /* 0 when not calibrated */
	bool tsc_invariant;
	const json_t *hypotheses;     /* the full document in effect, or NULL */
	const json_t *hypotheses_files; /* several files: [{file, document}] */
	const json_t *tunables;       /* the values in effect, or NULL */
	const json_t *config;         /* files loaded, differences from the
				       * shipped defaults, or NULL */
};

struct jnl_writer_opts {
	/* fdatasync(2) at every tick.  Off by default: write(2) already
	 * survives a crash or kill of hunch; fdatasync only adds safety
	 * against a power cut, and it can stall the one loop for a disk's
	 * flush time (docs/journal-format.md has the measurements). */
	bool sync;
	/* Buffered bytes that trigger a write before the tick (0 = 1 MiB):
	 * keeps memory bounded when 10,000 resources arrive at once. */
	size_t flush_bytes;
};

struct jnl_stats {
	uint64_t records;   /* records accepted (header included) */
	uint64_t written;   /* records handed to the kernel */
	uint64_t dropped;   /* records lost to the error state */
	uint64_t oversize;  /* records refused for exceeding JNL_MAX_LINE */
	uint64_t bytes;     /* bytes handed to the kernel */
	uint64_t ticks;
};

struct jnl_writer;

/* Create (or truncate) `path`, mode 0600 (journals hold command lines and
 * program output), and write the header.  Fails only if the file cannot
 * be opened; a failed header write leaves the writer in its error state. */
int jnl_write_open(struct jnl_writer **out, const char *path,
		    const struct jnl_header *h,
		    const struct jnl_writer_opts *opts, struct hunch_err *err);
/* The same on an open fd, which the writer closes; `name` is used in
 * messages.  O_EXCL creation is done by jnl_path_open_for_search. */
int jnl_write_fdopen(struct jnl_writer **out, int fd, const char *name,
		      const struct jnl_header *h,
		      const struct jnl_writer_opts *opts,
		      struct hunch_err *err);

/* Seconds since the header's start for a CLOCK_MONOTONIC time. */
double jnl_write_ts_now(const struct jnl_writer *w);

/* Every writer returns 0, or a negative errno when the record was not
 * kept (error state: -EIO or the write's errno; -EMSGSIZE oversize). */

/* Any record: `fields` (an object, borrowed) goes after "t" and "ts".
 * For the consultant's own records (node, edge, node_state, action),
 * whose fields docs/journal-format.md lists. */
int jnl_write_json(struct jnl_writer *w, const char *kind, double ts,
		   const json_t *fields);
int jnl_write_discovery(struct jnl_writer *w, double ts,
			const struct pc_discovery *d);
/* One line of target output without its newline (eol = a newline ended
 * it); longer than JNL_OUTPUT_CHUNK, it becomes several records. */
int jnl_write_output(struct jnl_writer *w, double ts, enum jnl_stream s,
		     const void *bytes, size_t len, bool eol);
int jnl_write_target(struct jnl_writer *w, double ts,
		     const struct jnl_target *t);
/* The consultant's tick: `now` is the source's time (pc_source now()). */
int jnl_write_tick(struct jnl_writer *w, double ts, double now);
/* Samples as the source delivered them; runs with one [t0, t1] share a
 * record. */
int jnl_write_samples(struct jnl_writer *w, double ts,
		      const struct pc_src_sample *s, size_t n);
/* The same from arrays: ids[k] averaged vals[k] over [t0, t1]. */
int jnl_write_sample_arrays(struct jnl_writer *w, double ts, double t0,
			    double t1, size_t n, const uint64_t *ids,
			    const double *vals);
/* The metric side of the source (pc_source_ops): each call and its
 * answer, so that a replay source can give the same answers.  `node`
 * and `phase` of an enable: the SHG node that asked, or -1; a negative
 * predicted_cost is not written (not known).  jnl_source.h writes all of
 * these by wrapping the source. */
int jnl_write_enable(struct jnl_writer *w, double ts, const char *metric,
		     const struct pc_src_focus *f, uint64_t req,
		     double predicted_cost, int node, int phase);
int jnl_write_reply(struct jnl_writer *w, double ts,
		    const struct pc_src_reply *r);
int jnl_write_disable(struct jnl_writer *w, double ts, pc_src_handle h,
		      const char *reason);
/* predicted and limit < 0: not written; holds 0: neither holds nor
 * held (the source's holds of the program so far, and their seconds). */
int jnl_write_cost(struct jnl_writer *w, double ts, double observed,
		   double predicted, double limit, long holds, double held_s);
int jnl_write_predict(struct jnl_writer *w, double ts, const char *metric,
		      const struct pc_src_focus *f, double cost);
/* path NULL: the start functions. */
int jnl_write_callees(struct jnl_writer *w, double ts, const char *path,
		      const char *const *callees, size_t n);
int jnl_write_hint(struct jnl_writer *w, double ts, const char *path,
		   double share);
int jnl_write_period(struct jnl_writer *w, double ts, double seconds);
/* The last record; `message` may be NULL. */
int jnl_write_end(struct jnl_writer *w, double ts, const char *reason,
		  const char *message);

/* Hand everything buffered to the kernel (and fdatasync if asked). */
int jnl_write_flush(struct jnl_writer *w);

/* NULL while all is well; else the error to show (stays set). */
const struct hunch_err *jnl_write_error(const struct jnl_writer *w);
void jnl_write_get_stats(const struct jnl_writer *w, struct jnl_stats *st);
const char *jnl_write_path(const struct jnl_writer *w);

/* Tick, close and free.  Returns the error state's code (0 if none). */
int jnl_write_close(struct jnl_writer *w, struct hunch_err *err);

#endif

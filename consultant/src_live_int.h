/*
 * src_live_int.h - the live source's private state, shared by
 * src_live.c and src_live_exec.c (following exec).
 */
#ifndef SRC_LIVE_INT_H
#define SRC_LIVE_INT_H

#include "src_live.h"
#include "src_live_ops.h"

struct eng_image;
struct eng_points_cache;
struct eng_event;

struct live_module {
	char *path;
	uint64_t bias;
	struct eng_image *img;   /* NULL if the file could not be read */
	bool reported;
};

struct pending_thread {
	pid_t tid;
	uint64_t seen_ms;
	int tries;               /* namings that found no start function */
};

struct queued {
	struct pc_discovery d;
	char *strs[3];           /* owned copies of the strings in d */
};

struct src_live {
	struct pc_source src;
	struct eng_proc *proc;   /* NULL when reading a file only */
	struct eng_shm *shm;
	bool rtlib_ready;
	struct live_module *mods;
	size_t nmods;
	struct pending_thread *pending;
	size_t npending;
	struct queued *queue;
	size_t nqueue, capqueue;
	struct src_live_status status;
	uint64_t t0_ns;          /* CLOCK_MONOTONIC when the target started */
	struct src_live_ops *slo;         /* the metric side, once enabled */
	bool told_end;           /* the end event went to the consultant */
	struct eng_points_cache *pcache;  /* for callees, made on first use */
	char **starts;           /* start functions of threads seen */
	size_t nstarts;
	struct src_live_hint *hint;        /* cheap evidence, with the metric side */
	struct src_live_samples *tally;    /* its CPU samples over the whole run */
	/* the job's Python names, shared by the program's sampler and its
	 * children's, kept when they go at the end: the findings still
	 * ask their line and caller (src_live_pyname_hint) */
	struct src_live_pyname *pynames;
	unsigned dbg_gen;        /* debuginfod fetches seen ended */
	struct eng_image **old_imgs;  /* replaced by fuller ones, or by an */
	size_t nold;                  /* exec; pointers into them may still
				       * be held */
	/* Following exec (src_live_exec.c) */
	char *rtlib;                  /* loaded into each new image */
	const struct pc_config *cfg;  /* the metric side's, to rebuild it */
	pc_src_handle last_h;         /* handles go on across images */
	bool kernel_only;             /* the image cannot be instrumented */
	char *kernel_why;             /* and why */
	struct pc_src_event *execq;   /* exec events for the consultant */
	size_t nexecq;
	uint64_t *dropped;            /* requests an exec dropped before */
	size_t ndropped;              /* their reply: answered as refused */
	/* Following child processes (src_live_fork.c) */
	bool follow;
	struct src_live_kids *kids;             /* the children, from /proc */
	struct src_live_rank *ranks;            /* their MPI ranks, once named */
	struct src_live_kidimg *kidimgs;         /* exec'ed children's own images */
	size_t forks;                 /* fork events seen */
	double fork_next_scan;        /* CLOCK_MONOTONIC s of the next */
	bool parent_ended;            /* the program ended; the search goes
				       * on while children live */
};

/* src_live.c */
void src_live_enqueue(struct src_live *l, const struct pc_discovery *d);
int src_live_add_module(struct src_live *l, const char *path, uint64_t bias,
			struct hunch_err *err);
/* Hook the hint sampler (if any) into a new metric side. */
void src_live_hook_hints(struct src_live *l);

/* src_live_threads.c: the process and its threads at the start; a
 * thread new (named after a delay), gone (false: it was never reported,
 * nothing to retire); name those due (the process is stopped briefly). */
void src_live_threads_report_process(struct src_live *l);
void src_live_threads_new(struct src_live *l, pid_t tid);
bool src_live_threads_gone(struct src_live *l, pid_t tid);
void src_live_threads_name_pending(struct src_live *l);

/* src_live_exec.c */
void src_live_exec_begin(struct src_live *l, const struct eng_event *ev);
void src_live_exec_entry(struct src_live *l);
/* The exec events not yet told, then none (poll_events). */
int src_live_exec_events(struct src_live *l, pc_event_fn fn, void *arg);
/* A metric side that reads only the kernel (an image that cannot be
 * instrumented), 0 or an error. */
int src_live_exec_kernel_side(struct src_live *l, struct hunch_err *err);

/* The image at a runtime address of the program (src_live_hint_image_fn). */
struct eng_image *src_live_image_at(void *arg, uint64_t addr,
				    uint64_t *base);

/* src_live_fork.c */
void src_live_fork_follow(struct src_live *l, bool on);
void src_live_fork_event(struct src_live *l, const struct eng_event *ev);
/* New children, threads and ends found in /proc, as discoveries (at
 * most every 0.1 s unless forced). */
void src_live_fork_tick(struct src_live *l, bool force);
/* The callees answer from the children: the sampled edges and roots of
 * those that run the program's own image (a pool's workers), and the
 * images of those that exec'ed another program (their static call
 * graph, their samplers' edges and roots). */
void src_live_fork_callees(struct src_live *l, const char *path,
			   pc_path_fn fn, void *arg);
/* The program itself ended: the job ends with its last child. */
void src_live_fork_parent_end(struct src_live *l);
/* The followed children's stack samplers, at most max into out: with
 * the program's, a job's evidence for the search's hints. */
size_t src_live_fork_hints(struct src_live *l, struct src_live_hint **out,
			   size_t max);
/* Sleep up to timeout_ms (at most 50), the pump's wait once the engine
 * has no process left to wait for. */
void src_live_fork_wait(int timeout_ms);

#endif

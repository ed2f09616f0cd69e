/*
 * src_live_hintpy.h - the Python stacks of a CPython target's threads,
 * read about every SRC_LIVE_HINTPY_PERIOD_S while the search runs, for
 * the hint sampler to join with its CPU stack samples
 * (src_live_hint.c): a perf sample is drained up to a tick after it was
 * taken, and a Python stack can only be read now, so the stacks are read
 * on their own clock by a thread of hunch (eng_pyframes.h reads with
 * process_vm_readv, never stopping the target) and each sample is
 * given the stack of its thread read nearest its time that matches its
 * own nesting, if one was read within SRC_LIVE_HINTPY_BOUND_S of it.
 */
#ifndef SRC_LIVE_HINTPY_H
#define SRC_LIVE_HINTPY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "eng_pyframes.h"

#define SRC_LIVE_HINTPY_PERIOD_S 0.01   /* a read of every thread */
#define SRC_LIVE_HINTPY_BOUND_S 0.02    /* the farthest read joined */
#define SRC_LIVE_HINTPY_DEPTH 48        /* innermost frames kept */

struct src_live_hintpy;

/* A thread's Python stack as read at t_ns (CLOCK_MONOTONIC); at most
 * the innermost SRC_LIVE_HINTPY_DEPTH frames (`cut` when there were
 * more). */
struct src_live_hintpy_stack {
	uint64_t t_ns;
	int nframes;
	int ngroups;             /* its frames' groups (entry frames + 1) */
	bool cut;
	struct eng_pyframe f[SRC_LIVE_HINTPY_DEPTH];
};

struct src_live_hintpy_stats {
	uint64_t reads;          /* passes over every thread */
	uint64_t stacks;         /* stacks read */
	uint64_t dropped;        /* stacks that failed a check */
	uint64_t read_ns;        /* hunch CPU time reading */
	uint64_t joined;         /* samples given a Python stack */
	uint64_t missed;         /* samples in the interpreter with no
				  * read near enough that matches */
};

/* Start reading pid's Python stacks, or NULL when pid is not a CPython
 * hunch can read (why, when not NULL, gets the reason). */
struct src_live_hintpy *src_live_hintpy_new(pid_t pid,
					    enum eng_pyframes_why *why);
void src_live_hintpy_free(struct src_live_hintpy *hp);
/* The stack of `tid` read nearest t_ns, within SRC_LIVE_HINTPY_BOUND_S,
 * among those whose groups (the frames each C-level call of the
 * interpreter loop runs, split at entry frames) match the `loops`
 * activations of the loop on a CPU sample's native stack, one to one
 * or as far as one of the two stacks was cut (`complete`: the sample's
 * was not).  A program that goes in and out of a generator thousands
 * of times a second is in either at a read 10 ms off a sample, so the
 * nearest read alone named the generator for about half the samples
 * whatever their native stacks showed; the sample's own nesting picks
 * the read that matches it.  Returns how many groups to join (*out and
 * starts[g], the first frame of group g, starts[groups] the frame
 * count), or 0 when no read fits (counted as missed). */
int src_live_hintpy_match(struct src_live_hintpy *hp, pid_t tid,
			  uint64_t t_ns, int loops, bool complete,
			  struct src_live_hintpy_stack *out, int *starts);
void src_live_hintpy_stats(struct src_live_hintpy *hp,
			   struct src_live_hintpy_stats *out);

#endif

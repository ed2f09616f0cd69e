/*
 * src_live_hintoff.h - a sliding window of off-CPU observations (internal
 * to the live source's hint sampler): each is a thread seen leaving its
 * CPU (a sampled switch-out, eng_perfsample's ENG_PS_OFFCPU) with the
 * functions on its stack and the time off a CPU it stands for.  Its
 * sums answer "how long were the thread(s) off a CPU inside one of these
 * functions": a rank that waits in MPI_Barrier by yielding its CPU
 * spends most of that wait in the run queue, where cpu-clock samples
 * never see it.  Ids are those of the hint window (src_live_hintwin.h),
 * whose paths the questions match.
 */
#ifndef SRC_LIVE_HINTOFF_H
#define SRC_LIVE_HINTOFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct src_live_hintwin;
struct src_live_hintoff;

struct src_live_hintoff *src_live_hintoff_new(double window_s);
void src_live_hintoff_free(struct src_live_hintoff *o);
/* One observation: the thread left its CPU at t and the observation
 * arrived at `arrived` (seconds, not going backwards), the resources
 * `ids` (the thread, the functions and modules on its stack) and the
 * seconds off a CPU it stands for. */
void src_live_hintoff_add(struct src_live_hintoff *o, double t,
			  double arrived, const int *ids, int nids,
			  double off_s);
/* Forget observations that arrived before now - window. */
void src_live_hintoff_expire(struct src_live_hintoff *o, double now);
/* Which observations a sum takes. */
struct src_live_hintoff_query {
	/* Those added after the `after`-th one (0: every one in the window;
	 * by order of arrival, not time: a thread's switch-out arrives when
	 * it gets its CPU back, after other threads' later ones). */
	uint64_t after;
	/* Time off before `from` (seconds) is left out: an observation that
	 * left its CPU before counts only its part after (a wait begun
	 * before an estimate started is not that estimate's). */
	double from;
	/* One of these functions on the stack (as
	 * src_live_hintwin_count_funcs_after matches them), and `code` too
	 * unless NULL. */
	const char *const *names;
	size_t nnames;
	const char *code;
	const char *within;     /* a /Process path; NULL: every one */
};

struct src_live_hintoff_sums {
	double off_all;         /* seconds off a CPU of those within */
	double off_in;          /* of those of them in the functions */
	size_t n_in;            /* how many such */
	uint64_t latest;        /* how many were ever added (pass it back
				 * as `after` to count each once) */
};

void src_live_hintoff_sum_after(const struct src_live_hintoff *o,
				const struct src_live_hintwin *w,
				const struct src_live_hintoff_query *q,
				struct src_live_hintoff_sums *out);
/* Observations in the window. */
size_t src_live_hintoff_count(const struct src_live_hintoff *o);

#endif

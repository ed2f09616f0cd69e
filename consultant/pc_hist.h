/*
 * pc_hist.h - Paradyn's histogram (devguide §1.2): 1,000 buckets starting
 * 0.2 s wide; when time runs past the last bucket the width doubles and
 * pairs of buckets are summed into the lower half (folding), so a
 * histogram always covers its whole phase in bounded memory.
 *
 * Buckets hold amounts (rate x seconds), not rates, so that folding is a
 * plain sum; an empty bucket is NaN ("no data"), not zero.
 */
#ifndef PC_HIST_H
#define PC_HIST_H

#define PC_HIST_BUCKETS 1000
#define PC_HIST_BASE_WIDTH 0.2

struct pc_hist {
	double start;        /* phase start, seconds */
	double width;        /* bucket width, seconds */
	double b[PC_HIST_BUCKETS];
	int folds;
};

/* A histogram starting at `start` with bucket width `width` (use
 * pc_hist_width_for to pick one for a phase that began earlier). */
void pc_hist_init(struct pc_hist *h, double start, double width);
/* Smallest 0.2 * 2^k whose 1,000 buckets cover `span` seconds. */
double pc_hist_width_for(double span);
/* Add `rate` held over [t0, t1]; folds first if t1 is past the end.
 * Returns the number of folds done (the caller follows the new width). */
int pc_hist_add(struct pc_hist *h, double t0, double t1, double rate);
/* Fold once: width doubles, pairs summed, upper half cleared. */
void pc_hist_fold(struct pc_hist *h);
/* The rate in bucket i (amount / width), NaN when empty. */
double pc_hist_rate(const struct pc_hist *h, int i);
/* Buckets in use up to time t. */
int pc_hist_used(const struct pc_hist *h, double t);

#endif

/* pc_hist.c - folding histograms (see pc_hist.h). */
#include "pc_hist.h"

#include <math.h>

void pc_hist_init(struct pc_hist *h, double start, double width)
{
	h->start = start;
	h->width = width;
	h->folds = 0;
	for (int i = 0; i < PC_HIST_BUCKETS; i++)
		h->b[i] = NAN;
}

double pc_hist_width_for(double span)
{
	double w = PC_HIST_BASE_WIDTH;

	while (w * PC_HIST_BUCKETS < span)
		w *= 2;
	return w;
}

/* NaN-aware sum: an empty bucket adds nothing; two empties stay empty. */
static double nsum(double a, double b)
{
	if (isnan(a))
		return b;
	if (isnan(b))
		return a;
	return a + b;
}

void pc_hist_fold(struct pc_hist *h)
{
	for (int j = 0; j < PC_HIST_BUCKETS / 2; j++)
		h->b[j] = nsum(h->b[2 * j], h->b[2 * j + 1]);
	for (int j = PC_HIST_BUCKETS / 2; j < PC_HIST_BUCKETS; j++)
		h->b[j] = NAN;
	h->width *= 2;
	h->folds++;
}

int pc_hist_add(struct pc_hist *h, double t0, double t1, double rate)
{
	int folds = 0;

	if (t1 <= t0 || isnan(rate))
		return 0;
	while (t1 > h->start + h->width * PC_HIST_BUCKETS) {
		pc_hist_fold(h);
		folds++;
	}
	if (t0 < h->start)
		t0 = h->start;
	/* Spread the amount over the buckets the interval overlaps. */
	for (double t = t0; t < t1;) {
		int i = (int)((t - h->start) / h->width + 1e-9);
		double end = h->start + (i + 1) * h->width;

		if (i >= PC_HIST_BUCKETS)
			break;
		/* A bucket end a rounding error short of t1 would leave a
		 * sliver (~1e-16 s) as a bucket of its own. */
		if (end > t1 || t1 - end < 1e-9)
			end = t1;
		if (end <= t)
			end = t + 1e-12;
		h->b[i] = nsum(h->b[i], rate * (end - t));
		t = end;
	}
	return folds;
}

double pc_hist_rate(const struct pc_hist *h, int i)
{
	return h->b[i] / h->width;
}

int pc_hist_used(const struct pc_hist *h, double t)
{
	int n = (int)ceil((t - h->start) / h->width - 1e-9);

	return n < 0 ? 0 : n > PC_HIST_BUCKETS ? PC_HIST_BUCKETS : n;
}

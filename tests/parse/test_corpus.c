/*
 * test_corpus.c - parse every function of real, large binaries (Debian's
 * libc.so.6, python3.11, libLLVM-14): no crash, the invariants of
 * parse_check.h on every function, and a share of functions ok no lower
 * than a floor measured when this test was written (so a regression
 * fails).  Diagnostic lines give the share and the reasons for refusals.
 *
 *   test-parse-corpus FILE:FLOOR_PERCENT...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eng_points.h"
#include "eng_image.h"
#include "parse_check.h"
#include "tap.h"

#define MAX_WHY 16

struct tally {
	enum x86_refusal why[MAX_WHY];
	size_t n[MAX_WHY];
};

static void count_why(struct tally *t, enum x86_refusal why)
{
	for (int k = 0; k < MAX_WHY; k++) {
		if (t->why[k] == X86_REFUSAL_NONE)
			t->why[k] = why;
		if (t->why[k] == why) {
			t->n[k]++;
			return;
		}
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void corpus(const char *path, double floor_pct)
{
	struct eng_image *img;
	struct eng_points_cache *c;
	struct hunch_err err = { 0 };
	struct tally t = { 0 };
	size_t n, ok = 0, bad = 0, failed = 0, points = 0, points_ok = 0;
	char why[256];
	double t0;

	if (eng_image_open(path, &img, &err) < 0) {
		printf("ok %d - # SKIP %s\n", ++tap_n, err.msg);
		return;
	}
	if (eng_points_cache_new(&c, &err) < 0) {
		eng_image_close(img);
		return;
	}
	n = eng_image_nfuncs(img);
	t0 = now();
	for (size_t i = 0; i < n; i++) {
		const struct x86_func *f = eng_points_of(c, img,
							 eng_image_func(img, i),
							 &err);

		if (f == NULL) {
			failed++;
			continue;
		}
		ok += f->ok;
		points += f->npoints;
		for (size_t k = 0; k < f->npoints; k++)
			points_ok += f->points[k].ok;
		if (!f->ok)
			count_why(&t, f->why);
		if (!pc_invariants(f, why, sizeof(why)) && bad++ < 5)
			tap_diag("  %s: %s", eng_image_func(img, i)->name, why);
	}
	tap_diag("%s: %zu functions parsed in %.2f s", path, n, now() - t0);
	tap_eq(failed, 0, "%s: every function parses", path);
	tap_eq(bad, 0, "%s: invariants hold for every function", path);
	tap_diag("%s: %zu of %zu functions ok (%.1f%%), %zu of %zu points ok "
		 "(%.1f%%)", path, ok, n, 100.0 * (double)ok / (double)n,
		 points_ok, points, 100.0 * (double)points_ok / (double)points);
	for (int k = 0; k < MAX_WHY && t.why[k]; k++)
		tap_diag("  refused %6zu: %s", t.n[k],
			 x86_refusal_str(t.why[k]));
	tap_ok(100.0 * (double)ok >= floor_pct * (double)n,
	       "%s: at least %.1f%% of functions ok", path, floor_pct);
	eng_points_cache_free(c);
	eng_image_close(img);
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		char path[4096];
		const char *colon = strrchr(argv[i], ':');

		if (colon == NULL)
			continue;
		snprintf(path, sizeof(path), "%.*s", (int)(colon - argv[i]),
			 argv[i]);
		corpus(path, atof(colon + 1));
	}
	return tap_done();
}

/*
 * bench_symbols.c - how fast the symbol reader makes a module's Code
 * hierarchy available, against `nm -D --defined-only` measured in the
 * same run on the same file (best of 5 each, warm page cache).
 *
 *   ./build/bench/symbols/bench-symbols [file...]
 *
 * Without arguments: libLLVM-14.so.1, libc.so.6, python3.11 and the
 * hunch executable itself (which has DWARF, so the source-file column
 * means something).  Goal: libLLVM-14 under 500 ms.
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "eng_image.h"
#include "hunch_config.h"

#define RUNS 5

extern char **environ;

enum step { OPEN, FUNCS, DISPLAY, SOURCE, NSTEPS };

static const char *const step_name[NSTEPS] = {
	"open", "open+funcs", "+display names", "+source files" };

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

/* One run of nm with its output thrown away; seconds, or -1. */
static double time_nm(const char *path)
{
	char *argv[] = { "nm", "-D", "--defined-only", (char *)path, NULL };
	posix_spawn_file_actions_t fa;
	double t0 = now();
	pid_t pid;
	int st;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", 1, 0);
	if (posix_spawnp(&pid, "nm", &fa, NULL, argv, environ) != 0)
		return -1;
	posix_spawn_file_actions_destroy(&fa);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0)
		return -1;
	return now() - t0;
}

/* Open the image and do everything up to `step`; seconds, or -1.  The
 * checksum keeps the compiler from dropping the loops. */
static double time_reader(const char *path, enum step step, size_t *nfuncs,
			  size_t *sum)
{
	struct hunch_err err = { 0 };
	struct eng_image *img;
	double t0 = now();
	size_t n;

	if (eng_image_open(path, &img, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return -1;
	}
	n = eng_image_nfuncs(img);
	for (size_t i = 0; step >= FUNCS && i < n; i++) {
		const struct eng_func *f = eng_image_func(img, i);
		const char *s;

		*sum += f->name[0] + f->size;
		if (step >= DISPLAY)
			*sum += eng_sym_lazy_display_name(img, f)[0];
		if (step >= SOURCE && (s = eng_sym_lazy_source_file(img, f)))
			*sum += s[0];
	}
	eng_image_close(img);
	*nfuncs = n;
	return now() - t0;
}

/* Open with `flags` (no debug file either way) and close; seconds. */
static double time_open_flags(const char *path, unsigned flags,
			      size_t *nfuncs)
{
	struct hunch_err err = { 0 };
	struct eng_image *img;
	double t0 = now(), t;

	if (eng_image_open_flags(path, flags | ENG_IMAGE_NO_DEBUG_FILE, &img,
				 &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return -1;
	}
	*nfuncs = eng_image_nfuncs(img);
	eng_image_close(img);
	t = now() - t0;
	return t;
}

static double best(double v[RUNS])
{
	double b = v[0];

	for (int i = 1; i < RUNS; i++)
		if (v[i] < b)
			b = v[i];
	return b;
}

static int bench_file(const char *path)
{
	double nm[RUNS], rd[NSTEPS][RUNS], bnm;
	size_t n = 0, sum = 0;
	const char *b = strrchr(path, '/');

	if (access(path, R_OK) != 0) {
		printf("%-22s (not installed, skipped)\n", b ? b + 1 : path);
		return 0;
	}
	/* Interleave the runs so that a noisy moment hurts both sides. */
	for (int r = 0; r < RUNS; r++) {
		nm[r] = time_nm(path);
		for (int s = 0; s < NSTEPS; s++)
			rd[s][r] = time_reader(path, s, &n, &sum);
	}
	bnm = best(nm);
	printf("%-22s %7zu funcs  nm -D %8.1f ms\n", b ? b + 1 : path, n,
	       bnm * 1e3);
	for (int s = 0; s < NSTEPS; s++) {
		double t = best(rd[s]);

		printf("  %-20s %8.1f ms %10.0f ns/func  %5.2fx nm\n",
		       step_name[s], t * 1e3, n ? t * 1e9 / n : 0.0,
		       bnm > 0 ? t / bnm : 0.0);
	}
	return sum == 0;   /* never true; uses sum */
}

/* Functions from the unwind table alone (symbols ignored: what a fully
 * stripped file costs) against functions from the symbol tables alone,
 * interleaved in the same run.  Goal: at most 2x. */
static void bench_fde(const char *path)
{
	double sym[RUNS], fde[RUNS], bs, bf;
	size_t ns = 0, nf = 0;
	const char *b = strrchr(path, '/');

	if (access(path, R_OK) != 0)
		return;
	for (int r = 0; r < RUNS; r++) {
		sym[r] = time_open_flags(path, ENG_IMAGE_NO_FDE, &ns);
		fde[r] = time_open_flags(path, ENG_IMAGE_FDE_ONLY, &nf);
	}
	bs = best(sym);
	bf = best(fde);
	printf("%-22s symbol tables %7.2f ms (%zu funcs), unwind table "
	       "%7.2f ms (%zu funcs): %.2fx%s\n", b ? b + 1 : path, bs * 1e3,
	       ns, bf * 1e3, nf, bs > 0 ? bf / bs : 0.0,
	       bs > 0 && bf / bs <= 2.0 ? "" : "  (goal 2x missed)");
}

int main(int argc, char **argv)
{
	static const char *const defaults[] = {
		"/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1",
		"/usr/lib/x86_64-linux-gnu/libc.so.6",
		"/usr/bin/python3.11",
		HUNCH_BENCH_SELF,
	};

	size_t nd = sizeof(defaults) / sizeof(*defaults);

	printf("symbol reader vs nm -D --defined-only, best of %d\n", RUNS);
	if (argc > 1)
		for (int i = 1; i < argc; i++)
			bench_file(argv[i]);
	else
		for (size_t i = 0; i < nd; i++)
			bench_file(defaults[i]);
	printf("\nfunctions from the unwind table (symbols ignored) vs from "
	       "the symbol tables, best of %d\n", RUNS);
	if (argc > 1)
		for (int i = 1; i < argc; i++)
			bench_fde(argv[i]);
	else
		for (size_t i = 0; i < nd; i++)
			bench_fde(defaults[i]);
	return 0;
}

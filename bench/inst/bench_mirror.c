/*
 * bench_mirror.c - what the fork mirror adds to each commit: every
 * write a commit makes into the program is made in each mirrored child
 * too, with the child's threads stopped meanwhile (engine
 * eng_inst_mirror.c).  bn_forkers (tests/targets) forks its 3 workers,
 * which count their calls of bnfk_work and then linger (--wait-file);
 * each gets its own segment at the fork, as the live source gives it.
 * Then ROUNDS commits add counters at main's entry and exits and as
 * many take them out again, timed one by one.  The same run is made
 * twice in this process: once with the 3 children mirrored, once with
 * them followed but not mirrored (the baseline); the medians and their
 * ratio are printed, and the added time per child per commit, which is
 * also how long each child is held stopped.
 *
 *   bench_mirror BN_FORKERS [ROUNDS]
 */
#include "eng_fork_shm.h"
#include "inst_util.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define KIDS 3
#define CALLS "1000"
#define MAX_ROUNDS 1000

struct kids {
	struct tgt *t;
	struct eng_fork_shm *k[KIDS];
	size_t n;
	bool mirror;
	int mirrored;
};

/* The fork hook, the parent and the child stopped: the child's own
 * segment and, when asked, a place in the mirror. */
static void hook(void *arg, pid_t child)
{
	struct kids *ks = arg;
	struct hunch_err e = { 0 };

	if (ks->n == KIDS ||
	    eng_fork_shm_new(ks->t->shm, child, &ks->k[ks->n], &e) < 0) {
		eng_inst_fork_restore(ks->t->in, child);
		return;
	}
	ks->n++;
	if (ks->mirror && eng_inst_mirror_add(ks->t->in, child) == 0)
		ks->mirrored++;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Pump until every worker has counted its calls of bnfk_work (worker i
 * makes (i+1) * CALLS) and lingers. */
static bool wait_lingering(struct tgt *t, struct kids *ks, uint64_t h)
{
	for (int waited = 0; waited < 60000; waited += 10) {
		size_t done = 0;

		for (size_t i = 0; i < ks->n; i++)
			done += eng_fork_shm_counter(ks->k[i], h, 0, NULL) ==
				atoll(CALLS) * (int64_t)(i + 1);
		if (ks->n == KIDS && done == KIDS)
			return true;
		tgt_pump(t, 10);
	}
	return false;
}

/* One run: the commit medians (add, remove) in ms, or false. */
static bool run(const char *prog, bool mirror, int rounds, double *add_ms,
		double *rm_ms, int *mirrored)
{
	char wf[] = "/tmp/hunch-bench-mirror-XXXXXX", wend[64];
	char *av[] = { (char *)prog, "--calls", CALLS, "--wait-file", wf,
		       NULL };
	static double add[MAX_ROUNDS], rm[MAX_ROUNDS];
	struct kids ks = { .mirror = mirror };
	struct fn_ctr *c, *mc = NULL;
	size_t n = 0, nm = 0, work = 0;
	struct tgt t;
	bool ok = false;
	int fd;

	if ((fd = mkstemp(wf)) < 0)
		return false;
	close(fd);   /* the workers count at once, then wait for wf.end */
	snprintf(wend, sizeof(wend), "%s.end", wf);
	if (tgt_launch(&t, prog, av) != 0)
		goto out_file;
	ks.t = &t;
	c = fns_prepare(&t, "bnfk_", &n);
	while (work < n && strcmp(c[work].f->name, "bnfk_work") != 0)
		work++;
	if (work == n || fns_instrument(&t, c, n, IM_COUNTERS) <= 0) {
		fprintf(stderr, "bench_mirror: bnfk_work not counted\n");
		goto out;
	}
	eng_fork_follow(t.p, false, hook, &ks);
	eng_ptrace_resume_all(t.p, NULL);
	tgt_send(&t, "go\n");
	if (!wait_lingering(&t, &ks, c[work].entry_h)) {
		fprintf(stderr, "bench_mirror: the workers did not all count "
			"their calls (%zu forked)\n", ks.n);
		goto out;
	}
	mc = fns_prepare(&t, "main", &nm);
	for (int r = 0; nm == 1 && r < rounds; r++) {
		double a = now_ms();

		if (fns_instrument(&t, mc, nm, IM_COUNTERS) <= 0)
			goto out;
		add[r] = now_ms() - a;
		a = now_ms();
		if (fns_remove(&t, mc, nm) < 0)
			goto out;
		rm[r] = now_ms() - a;
		tgt_pump(&t, 2);
	}
	*add_ms = median(add, rounds);
	*rm_ms = median(rm, rounds);
	*mirrored = ks.mirrored;
	ok = nm == 1;
out:
	close(open(wend, O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
	if (tgt_wait_line(&t, "bn_forkers done", 60000) == 0) {
		tgt_send(&t, "exit\n");
		ok = ok && tgt_wait_exit(&t, 30000) == 0 && t.status == 0;
	} else {
		ok = false;
	}
	for (size_t i = 0; i < ks.n; i++)
		eng_fork_shm_free(ks.k[i]);
	fns_free(mc, nm);
	fns_free(c, n);
	tgt_fini(&t);
out_file:
	unlink(wend);
	unlink(wf);
	return ok;
}

int main(int argc, char **argv)
{
	int rounds = argc > 2 ? atoi(argv[2]) : 100, nm0 = 0, nm3 = 0;
	double a0, r0, a3, r3;

	if (argc < 2 || rounds < 1 || rounds > MAX_ROUNDS) {
		fprintf(stderr, "usage: bench_mirror BN_FORKERS [ROUNDS "
			"(1-%d)]\n", MAX_ROUNDS);
		return 2;
	}
	if (!run(argv[1], false, rounds, &a0, &r0, &nm0) ||
	    !run(argv[1], true, rounds, &a3, &r3, &nm3) || nm3 != KIDS) {
		fprintf(stderr, "bench_mirror: a run failed (children "
			"mirrored: %d of %d)\n", nm3, KIDS);
		return 1;
	}
	printf("commit, median of %d (counters at main's entry and exits, "
	       "%d lingering children with their own segments)\n", rounds,
	       KIDS);
	printf("%-34s %10s %10s\n", "", "add ms", "remove ms");
	printf("%-34s %10.3f %10.3f\n", "children not mirrored (baseline)",
	       a0, r0);
	printf("%-34s %10.3f %10.3f\n", "3 children mirrored", a3, r3);
	printf("%-34s %9.2fx %9.2fx\n", "ratio", a3 / a0, r3 / r0);
	printf("%-34s %10.3f %10.3f\n", "added per mirrored child",
	       (a3 - a0) / KIDS, (r3 - r0) / KIDS);
	return 0;
}

/*
 * inst_fork.c - instrumentation inherited at fork counts into the
 * child's own segment: bn_forkers --calls N (tests/targets, -O2 PIE)
 * under counters at the entry of its functions; at each fork stop the
 * child gets a segment of its own at the inherited address
 * (eng_fork_shm_new) and keeps the parent's patches.  Each child's
 * bnfk_work count is exactly its calls (N, 2N, 3N), in one thread (the
 * forking one, keeping its index), bnfk_count_worker once; the parent's
 * slots read N and 0, whatever the children ran; each child's observed
 * cost (eng_fork_shm_cost_ns) steps with its calls; the children exit 0
 * and the program's output is its usual one.  Then with the workers
 * lingering (--wait-file) after their calls: they run the parent's
 * patches (their code differs from the file); eng_fork_patch_restore
 * gives every one of them the file's bytes back, leaves none traced or
 * stopped, and they finish as usual.
 *
 *   inst_fork BN_FORKERS
 */
#include "eng_fork_patch.h"
#include "eng_fork_shm.h"
#include "inst_util.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CALLS 1000
#define KIDS 3

struct kids {
	struct tgt *t;
	struct eng_fork_shm *k[8];
	struct eng_fork_patch *p[8];
	size_t np[8];
	double max_ms;          /* longest eng_fork_shm_new */
	uint64_t carry_h;       /* a CPU timer running at the fork, or 0 */
	size_t n, failed;
	char why[1024];
};

/* The fork hook: the parent and the child are stopped. */
static void hook(void *arg, pid_t child)
{
	struct kids *ks = arg;
	struct hunch_err e = { 0 };
	struct eng_fork_shm *k;
	struct timespec a, b;
	int rc;

	clock_gettime(CLOCK_MONOTONIC, &a);
	rc = ks->n < 8 ? eng_fork_shm_new(ks->t->shm, child, &k, &e) : -1;
	clock_gettime(CLOCK_MONOTONIC, &b);
	if ((double)(b.tv_sec - a.tv_sec) * 1e3 +
	    (double)(b.tv_nsec - a.tv_nsec) / 1e6 > ks->max_ms)
		ks->max_ms = (double)(b.tv_sec - a.tv_sec) * 1e3 +
			     (double)(b.tv_nsec - a.tv_nsec) / 1e6;
	if (rc == 0 && ks->carry_h != 0)
		eng_fork_shm_carry_timer(k, ks->t->shm, ks->carry_h, true);
	if (rc == 0) {
		ks->np[ks->n] = eng_inst_fork_patches(ks->t->in, &ks->p[ks->n]);
		if (eng_fork_patch_read(child, ks->p[ks->n], ks->np[ks->n]))
			ks->np[ks->n] = 0;
		ks->k[ks->n++] = k;
		return;
	}
	ks->failed++;
	snprintf(ks->why, sizeof(ks->why), "%s", e.msg);
	eng_inst_fork_restore(ks->t->in, child);
}

static const struct fn_ctr *fn(const struct fn_ctr *c, size_t n,
			       const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(c[i].f->name, name) == 0)
			return &c[i];
	return NULL;
}

static int64_t parent_count(struct tgt *t, uint32_t var)
{
	struct eng_var_agg ag;

	return eng_sampler_var_agg(t->smp, var, &ag) == 0 ? ag.sum : -1;
}

/* Functions of the executable whose code in process pid differs from
 * the file. */
static size_t code_mismatches(struct tgt *t, pid_t pid)
{
	size_t nf = eng_image_nfuncs(t->img), bad = 0;
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return (size_t)-1;
	for (size_t i = 0; i < nf; i++) {
		const struct eng_func *f = eng_image_func(t->img, i);
		uint8_t a[4096], b[4096];
		size_t len = f->size < sizeof a ? f->size : sizeof a;

		if (len == 0 || eng_image_read(t->img, f->addr, a, len) < 0)
			continue;
		if (pread(fd, b, len, (off_t)(t->base + f->addr)) !=
		    (ssize_t)len || memcmp(a, b, len) != 0)
			bad++;
	}
	close(fd);
	return bad;
}

/* Traced or stopped now? */
static bool traced_or_stopped(pid_t pid)
{
	char path[64], line[256];
	bool bad = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return false;
	while (fgets(line, sizeof(line), f) != NULL)
		if ((strncmp(line, "TracerPid:", 10) == 0 &&
		     atoi(line + 10) != 0) ||
		    (strncmp(line, "State:", 6) == 0 &&
		     strpbrk(line + 6 + strspn(line + 6, " \t"), "tT") ==
		     line + 6 + strspn(line + 6, " \t")))
			bad = true;
	fclose(f);
	return bad;
}

/* The CPU ns of process pid's main thread (schedstat field 1). */
static uint64_t process_cpu_ns(pid_t pid)
{
	char path[64];
	unsigned long long ns = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return 0;
	if (fscanf(f, "%llu", &ns) != 1)
		ns = 0;
	fclose(f);
	return ns;
}

/* Pump until the 3 children counted all their calls. */
static bool wait_counts(struct tgt *t, struct kids *ks, uint64_t h, int ms)
{
	for (int waited = 0; waited < ms; waited += 10) {
		size_t done = 0;

		for (size_t i = 0; i < ks->n; i++)
			done += eng_fork_shm_counter(ks->k[i], h, 0, NULL) ==
				(int64_t)CALLS * (int64_t)(i + 1);
		if (ks->n == KIDS && done == KIDS)
			return true;
		tgt_pump(t, 10);
	}
	return false;
}

static void linger_test(const char *prog)
{
	char wf[] = "/tmp/hunch-inst-fork-XXXXXX";
	char *av[] = { (char *)prog, "--calls", "1000", "--wait-file", wf,
		       NULL };
	const struct fn_ctr *work;
	struct kids ks = { 0 };
	struct hunch_err e = { 0 };
	struct fn_ctr *c, *mc;
	size_t nm;
	struct tgt t;
	size_t n;
	char wend[64];
	int fd;

	if ((fd = mkstemp(wf)) < 0)
		return (void)tap_ok(0, "linger: mkstemp");
	close(fd);   /* the workers count at once */
	snprintf(wend, sizeof(wend), "%s.end", wf);
	if (!tap_ok(tgt_launch(&t, prog, av) == 0, "linger: launched"))
		return;
	ks.t = &t;
	c = fns_prepare(&t, "bnfk_", &n);
	work = fn(c, n, "bnfk_work");
	tap_ok(work != NULL && fns_instrument(&t, c, n, IM_COUNTERS) > 0,
	       "linger: bnfk_* counted");
	mc = fns_prepare(&t, "main", &nm);
	tap_ok(work != NULL && nm == 1 &&
	       add_timer(&t, &work->xf, work->cpu_h, true) > 0 &&
	       add_timer(&t, &mc[0].xf, mc[0].cpu_h, true) > 0 &&
	       eng_inst_commit(t.in, &e) == 0, "linger: and bnfk_work and "
	       "main CPU-timed (%s)", e.msg);
	ks.carry_h = nm == 1 ? mc[0].cpu_h : 0;
	eng_fork_follow(t.p, false, hook, &ks);
	eng_ptrace_resume_all(t.p, NULL);
	tgt_send(&t, "go\n");
	tap_ok(work != NULL && wait_counts(&t, &ks, work->entry_h, 60000),
	       "linger: each of the 3 lingering workers counted its calls "
	       "in its own segment");
	for (size_t i = 0; i < ks.n; i++) {
		pid_t pid = eng_fork_shm_pid(ks.k[i]);
		int64_t cpu = eng_fork_shm_timer(ks.k[i], work->cpu_h, true, pid, NULL);
		uint64_t all = process_cpu_ns(pid);

		/* Its CPU time is mostly bnfk_work's; the rest is its start
		 * and its polls for the file. */
		tap_ok(cpu > 0 && (double)cpu >= 0.5 * (double)all &&
		       (double)cpu <= 1.01 * (double)all + 1e6,
		       "linger: worker %zu's CPU timer of bnfk_work, in its own "
		       "segment, is most of its CPU time and no more (%.1f of "
		       "%.1f ms)", i, (double)cpu / 1e6, (double)all / 1e6);
		/* main runs in the child from the fork: its timer there
		 * started at the fork and holds the worker's calls. */
		int64_t in_main = eng_fork_shm_timer(ks.k[i], ks.carry_h, true,
						     pid, NULL);

		tap_ok(in_main >= cpu && (double)in_main <= 1.01 * (double)all +
		       1e6, "linger: worker %zu's CPU timer of main, running at "
		       "the fork, runs on in it: %.1f ms, at least bnfk_work's",
		       i, (double)in_main / 1e6);
		tap_ok(ks.np[i] > 0 && code_mismatches(&t, pid) > 0,
		       "linger: worker %zu runs the %zu patches it inherited",
		       i, ks.np[i]);
		tap_eq(eng_fork_patch_restore(pid, ks.p[i], ks.np[i], &e), 0,
		       "linger: worker %zu's patches taken out (%s)", i,
		       e.msg);
		tap_eq(code_mismatches(&t, pid), 0, "linger: worker %zu's code "
		       "equals the file", i);
		tap_ok(!traced_or_stopped(pid), "linger: worker %zu is neither "
		       "traced nor stopped", i);
	}
	close(open(wend, O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
	tap_ok(tgt_wait_line(&t, "bn_forkers done", 60000) == 0,
	       "linger: the workers finished");
	tgt_send(&t, "exit\n");
	tap_ok(tgt_wait_exit(&t, 30000) == 0 && t.status == 0,
	       "linger: the program exited 0: every worker exited 0");
	unlink(wf);
	unlink(wend);
	for (size_t i = 0; i < ks.n; i++) {
		eng_fork_shm_free(ks.k[i]);
		free(ks.p[i]);
	}
	fns_free(c, n);
	fns_free(mc, nm);
	tgt_fini(&t);
}

int main(int argc, char **argv)
{
	char *av[] = { argv[1], "--calls", "1000", NULL };
	const struct fn_ctr *work, *cw;
	struct kids ks = { 0 };
	struct fn_ctr *c;
	struct tgt t;
	uint32_t nt;
	size_t n;

	if (argc != 2)
		return tap_ok(0, "usage: inst_fork BN_FORKERS"), tap_done();
	if (!tap_ok(tgt_launch(&t, argv[1], av) == 0, "launched"))
		return tap_done();
	ks.t = &t;
	c = fns_prepare(&t, "bnfk_", &n);
	work = fn(c, n, "bnfk_work");
	cw = fn(c, n, "bnfk_count_worker");
	if (!tap_ok(work != NULL && cw != NULL,
		    "bnfk_work and bnfk_count_worker found")) {
		tgt_fini(&t);
		return tap_done();
	}
	tap_ok(fns_instrument(&t, c, n, IM_COUNTERS) > 0,
	       "counters at the entries and exits of bnfk_*");
	eng_fork_follow(t.p, false, hook, &ks);
	eng_ptrace_resume_all(t.p, NULL);
	tgt_send(&t, "go\n");
	tap_ok(tgt_wait_line(&t, "bn_forkers done", 60000) == 0,
	       "the parent waited for its 3 workers");
	tap_ok(tgt_wait_asleep(&t, 30000) == 0, "the parent sits in read");
	tap_eq(ks.failed, 0, "no child was refused its own segment (%s)",
	       ks.failed ? ks.why : "none");
	tap_eq(ks.n, KIDS, "3 children got a segment of their own");
	tap_diag("longest eng_fork_shm_new (the parent held at its fork): "
		 "%.2f ms", ks.max_ms);
	for (size_t i = 0; i < ks.n; i++) {
		struct eng_fork_shm *k = ks.k[i];

		tap_eq(eng_fork_shm_counter(k, work->entry_h, 0, &nt),
		       (int64_t)CALLS * (int64_t)(i + 1),
		       "child %zu (pid %d): bnfk_work entered exactly %d times "
		       "in its own segment", i, (int)eng_fork_shm_pid(k),
		       CALLS * (int)(i + 1));
		tap_eq(nt, 1, "child %zu: one thread, the forking one", i);
		tap_ok(eng_fork_shm_forker(k) >= 0, "child %zu: the forking "
		       "thread kept its index (%d)", i, eng_fork_shm_forker(k));
		tap_eq(eng_fork_shm_counter(k, cw->entry_h, eng_fork_shm_pid(k), NULL), 1,
		       "child %zu: bnfk_count_worker entered once, in its main "
		       "thread", i);
		tap_eq(eng_fork_shm_header(k)->rt_pid, eng_fork_shm_pid(k),
		       "child %zu: its header names it", i);
	}
	/* Each pass through a trampoline charges its constant to the
	 * thread's observed cost: child i made (i+1)*CALLS calls of
	 * bnfk_work and otherwise the same passes, so the children's
	 * costs step by the same amount, in their own segments. */
	if (ks.n == KIDS) {
		uint64_t c0 = eng_fork_shm_cost_ns(ks.k[0]);
		uint64_t c1 = eng_fork_shm_cost_ns(ks.k[1]);
		uint64_t c2 = eng_fork_shm_cost_ns(ks.k[2]);
		int64_t d = (int64_t)(c2 - c1) - (int64_t)(c1 - c0);

		tap_ok(c0 > 0 && c1 > c0 && c2 > c1 && d >= -2 && d <= 2,
		       "the children's instrumentation cost, in their own "
		       "segments, steps by the same %llu ns per %d calls "
		       "(%llu, %llu, %llu ns)", (unsigned long long)(c1 - c0),
		       CALLS, (unsigned long long)c0, (unsigned long long)c1,
		       (unsigned long long)c2);
	}
	tap_eq(parent_count(&t, work->entry_var), CALLS,
	       "the parent's bnfk_work slot reads its own %d calls only",
	       CALLS);
	tap_eq(parent_count(&t, cw->entry_var), 0,
	       "the parent's bnfk_count_worker slot reads 0");
	tgt_send(&t, "exit\n");
	tap_ok(tgt_wait_exit(&t, 30000) == 0 && t.status == 0,
	       "the program exited 0: every worker exited 0");
	tap_ok(strcmp(t.out, "bn_forkers workers=3 seconds=10\n"
		      "bn_forkers done\n") == 0, "stdout as without hunch");
	for (size_t i = 0; i < ks.n; i++) {
		eng_fork_shm_free(ks.k[i]);
		free(ks.p[i]);
	}
	fns_free(c, n);
	tgt_fini(&t);
	linger_test(argv[1]);
	return tap_done();
}

/*
 * e2e_cpu_values.c - CPU used and run-queue wait, as the live source
 * gives them to the consultant, checked against the kernel's own
 * counters read by the test (/proc/PID/task/TID/schedstat: field 1 ns
 * on a CPU, field 2 ns waiting on a run queue).
 *
 * spin1 (always runnable) is pinned to CPU 0 with two spinner processes
 * of ours beside it, so it gets about a third of that CPU and waits for
 * it the rest of the time.  cpu_inclusive on the whole program must
 * read the CPU it used (never more than the one CPU it may run on: no
 * interval over 1), cpu_wait the time it waited, each as the test's
 * own schedstat readings over the same seconds give them, and the two
 * add up to the one thread it has.  Then the competitors go: CPU used
 * and wait still match schedstat and still add up to one thread.
 *
 * usage: e2e_cpu_values SPIN1   (env HUNCHRT, HUNCH_SOURCE_ROOT)
 */
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pc_config.h"
#include "src_live.h"
#include "tap.h"

#define NCOMPETE 2

struct t {
	struct pc_source *src;
	struct src_live_status st;
	int to, from;
	pc_src_handle h[2];          /* cpu_inclusive, cpu_wait */
	int refused;
	double cpu, wait;            /* integrals over the samples */
	double span[2];              /* seconds sampled, per instance */
	double cpu_max;              /* the largest CPU sample */
	double k_run, k_wait, k_t;   /* the test's schedstat: s, s, when */
};

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void on_reply(void *arg, const struct pc_src_reply *r)
{
	struct t *t = arg;

	if (r->status < 0) {
		t->refused++;
		tap_diag("refused req %llu: %s", (unsigned long long)r->req,
			 r->reason ? r->reason : "?");
	} else if (r->req < 2) {
		t->h[r->req] = r->handle;
	}
}

static void on_sample(void *arg, const struct pc_src_sample *s)
{
	struct t *t = arg;
	double dt = s->t1 - s->t0;

	if (s->handle == t->h[0]) {
		t->cpu += s->value * dt;
		t->span[0] += dt;
		if (s->value > t->cpu_max)
			t->cpu_max = s->value;
	} else if (s->handle == t->h[1]) {
		t->wait += s->value * dt;
		t->span[1] += dt;
	}
}

/* The sums over every thread of PID of schedstat's two fields, in
 * seconds. */
static void schedstat(int pid, double *run, double *wait)
{
	unsigned long long r, w;
	char path[300];
	struct dirent *e;
	DIR *d;
	FILE *f;

	*run = *wait = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/schedstat",
			 pid, e->d_name);
		f = fopen(path, "r");
		if (f != NULL && fscanf(f, "%llu %llu", &r, &w) == 2) {
			*run += (double)r / 1e9;
			*wait += (double)w / 1e9;
		}
		if (f != NULL)
			fclose(f);
	}
	closedir(d);
}

static void pump(struct t *t, double secs)
{
	double end = mono() + secs;

	do {
		src_live_pump(t->src, 10, &t->st);
		t->src->ops->poll_replies(t->src, on_reply, t);
		t->src->ops->poll_samples(t->src, on_sample, t);
	} while (mono() < end && !t->st.ended);
}

/* The samples of `secs` seconds, and the test's own schedstat over
 * the same seconds (from the first tick after the start to the last
 * one before the end: the ticks come every 0.2 s, so the two windows
 * differ by at most a tick at each end). */
static void measure(struct t *t, double secs)
{
	int pid = src_live_pid(t->src);
	double r0, w0, t0;

	pump(t, 0.5);  /* past the tick that straddles the change */
	t->cpu = t->wait = t->span[0] = t->span[1] = t->cpu_max = 0;
	schedstat(pid, &r0, &w0);
	t0 = mono();
	pump(t, secs);
	schedstat(pid, &t->k_run, &t->k_wait);
	t->k_t = mono() - t0;
	t->k_run -= r0;
	t->k_wait -= w0;
}

/* Rates over the measured seconds against schedstat's: the same to
 * 0.1 of a CPU (a tick at each end of ~2 s, and the competitors' and
 * the machine's other load changing the share meanwhile). */
static void check(struct t *t, const char *when)
{
	double cpu = t->cpu / t->span[0], wait = t->wait / t->span[1];
	double kcpu = t->k_run / t->k_t, kwait = t->k_wait / t->k_t;

	tap_ok(t->span[0] > 1.5 && t->span[1] > 1.5, "%s: sampled %.2f s "
	       "and %.2f s", when, t->span[0], t->span[1]);
	tap_ok(t->cpu_max <= 1.0 + 1e-9, "%s: no interval reads more than "
	       "the 1 CPU spin1 may run on (largest %.3f CPUs)", when,
	       t->cpu_max);
	tap_ok(cpu > kcpu - 0.1 && cpu < kcpu + 0.1, "%s: CPU used %.3f "
	       "CPUs, schedstat's run time %.3f", when, cpu, kcpu);
	tap_ok(wait > kwait - 0.1 && wait < kwait + 0.1, "%s: run-queue "
	       "wait %.3f threads, schedstat's wait %.3f", when, wait, kwait);
	tap_ok(cpu + wait > 0.85 && cpu + wait < 1.1, "%s: used + waited "
	       "= %.3f: the one thread, always runnable", when, cpu + wait);
}

static struct pc_config *load_config(void)
{
	const char *root = getenv("HUNCH_SOURCE_ROOT");
	struct pc_config *c = pc_config_new();
	struct pc_diags ds = { 0 };
	struct hunch_err e = { 0 };
	char def[4096];

	snprintf(def, sizeof(def), "%s/hypotheses/default.json",
		 root ? root : ".");
	if (pc_config_load_file(c, def, &ds, &e) < 0) {
		tap_diag("config: %s", e.msg);
		pc_config_free(c);
		c = NULL;
	}
	pc_jx_diags_free(&ds);
	return c;
}

static int launch(struct t *t, const char *prog)
{
	int in[2], out[2];
	char *argv[] = { (char *)prog, NULL };
	struct src_live_launch lo = {
		.argv = argv, .rtlib = getenv("HUNCHRT"), .stderr_fd = -1,
	};
	struct hunch_err err = { 0 };

	memset(t, 0, sizeof(*t));
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0)
		return -1;
	lo.stdin_fd = in[0];
	lo.stdout_fd = out[1];
	if (src_live_launch(&lo, &t->src, &err) < 0) {
		tap_diag("launch %s: %s", prog, err.msg);
		return -1;
	}
	close(in[0]);
	close(out[1]);
	t->to = in[1];
	t->from = out[0];
	return 0;
}

/* Pin every thread of PID (and so what it starts later) to CPU 0. */
static int pin_all(int pid)
{
	cpu_set_t one;
	char path[64];
	struct dirent *e;
	DIR *d;
	int n = 0;

	CPU_ZERO(&one);
	CPU_SET(0, &one);
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.' &&
		    sched_setaffinity(atoi(e->d_name), sizeof(one), &one) == 0)
			n++;
	closedir(d);
	return n;
}

static pid_t competitor(void)
{
	pid_t pid = fork();
	cpu_set_t one;

	if (pid != 0)
		return pid;
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	sched_setaffinity(0, sizeof(one), &one);
	for (volatile unsigned long i = 0;; i++)
		;
}

static void enable(struct t *t)
{
	struct pc_src_focus top = { .path = { "/Code", "/Process",
		"/SyncObject", "/Files" } };
	const struct pc_source_ops *ops = t->src->ops;

	tap_ok(ops->enable(t->src, "cpu_inclusive", &top, 0) == 0 &&
	       ops->enable(t->src, "cpu_wait", &top, 1) == 0,
	       "cpu_inclusive and cpu_wait enabled on the whole program");
	pump(t, 0.1);
	tap_ok(t->refused == 0 && t->h[0] && t->h[1], "both accepted");
}

static void run(const char *prog)
{
	struct hunch_err err = { 0 };
	struct pc_config *cfg = load_config();
	pid_t comp[NCOMPETE];
	struct t t;

	if (!tap_ok(cfg != NULL, "default hypotheses load") ||
	    !tap_ok(launch(&t, prog) == 0, "spin1 launched"))
		return;
	if (!tap_ok(src_live_metrics_start(t.src, cfg, &err) == 0,
		    "metrics start"))
		tap_diag("  %s", err.msg);
	enable(&t);
	tap_ok(pin_all(src_live_pid(t.src)) >= 1, "spin1 pinned to CPU 0");
	for (int i = 0; i < NCOMPETE; i++)
		comp[i] = competitor();
	src_live_resume(t.src, NULL);
	measure(&t, 2.0);
	check(&t, "2 spinners beside it");
	tap_ok(t.cpu / t.span[0] < 0.6 && t.wait / t.span[1] > 0.4,
	       "  it used a share of CPU 0 (%.3f) and waited the rest "
	       "(%.3f)", t.cpu / t.span[0], t.wait / t.span[1]);
	for (int i = 0; i < NCOMPETE; i++) {
		kill(comp[i], SIGKILL);
		waitpid(comp[i], NULL, 0);
	}
	measure(&t, 2.0);
	check(&t, "competitors gone");
	close(t.to);
	pump(&t, 5);
	tap_ok(t.st.ended && t.st.exit_code == 0, "spin1 exited 0 when its "
	       "stdin closed");
	t.src->ops->close(t.src);
	close(t.from);
	pc_config_free(cfg);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: e2e_cpu_values SPIN1\n");
		return 2;
	}
	run(argv[1]);
	return tap_done();
}

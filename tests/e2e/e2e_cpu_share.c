/*
 * e2e_cpu_share.c - CPUbound reads what the code demands, not what a
 * busy machine lets it have (hypotheses/README.md, cpu_share).
 *
 * spin1 (always runnable) is pinned to CPU 0 with two spinner processes
 * of ours beside it, so it gets about a third of that CPU.  Through the
 * live source's operations, as the consultant uses them: cpu_inclusive
 * on the whole program reads that third, cpu_share the fraction of its
 * runnable time it ran, and their quotient (the CPUbound value) one CPU:
 * a thread that never waits for anything but the CPU demands one whole
 * CPU however many tasks compete for it.  Then the competitors go and
 * the quotient still reads one CPU.
 *
 * usage: e2e_cpu_share SPIN1   (env HUNCHRT, HUNCH_SOURCE_ROOT)
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
	pc_src_handle h[2];          /* cpu_inclusive, cpu_share */
	int refused;
	double cpu, demand, span;    /* integrals over the samples */
	double share_min;
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

/* Both instances are sampled at the same ticks over the same intervals:
 * pair them by interval. */
static double last_cpu, last_t0 = -1;

static void on_sample(void *arg, const struct pc_src_sample *s)
{
	struct t *t = arg;
	double dt = s->t1 - s->t0;

	if (s->handle == t->h[0]) {
		last_cpu = s->value;
		last_t0 = s->t0;
		return;
	}
	if (s->handle != t->h[1] || last_t0 != s->t0 || s->value <= 0)
		return;
	t->cpu += last_cpu * dt;
	t->demand += last_cpu / s->value * dt;
	t->span += dt;
	if (s->value < t->share_min)
		t->share_min = s->value;
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

static void measure(struct t *t, double secs)
{
	pump(t, 0.5);  /* past the tick that straddles the change */
	t->cpu = t->demand = t->span = 0;
	t->share_min = 1;
	pump(t, secs);
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
	pc_diags_free(&ds);
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
	       ops->enable(t->src, "cpu_share", &top, 1) == 0,
	       "cpu_inclusive and cpu_share enabled on the whole program");
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
	tap_ok(t.span > 1.5, "sampled %.2f s with %d spinners beside it",
	       t.span, NCOMPETE);
	tap_ok(t.cpu / t.span < 0.6, "  CPU time used: %.3f CPUs (a share "
	       "of CPU 0, lowest sampled cpu_share %.3f)", t.cpu / t.span,
	       t.share_min);
	tap_ok(t.demand / t.span > 0.85 && t.demand / t.span < 1.1,
	       "  CPU time used or waited for: %.3f CPUs (one whole CPU)",
	       t.demand / t.span);
	for (int i = 0; i < NCOMPETE; i++) {
		kill(comp[i], SIGKILL);
		waitpid(comp[i], NULL, 0);
	}
	measure(&t, 1.0);
	tap_ok(t.demand / t.span > 0.85 && t.demand / t.span < 1.1,
	       "competitors gone: still %.3f CPUs (used %.3f)",
	       t.demand / t.span, t.cpu / t.span);
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
		fprintf(stderr, "usage: e2e_cpu_share SPIN1\n");
		return 2;
	}
	run(argv[1]);
	return tap_done();
}

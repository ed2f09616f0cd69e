/*
 * e2e_kcpu.c - cpu_inclusive measured by the kernel ("kernel": "cpu" in
 * hypotheses/default.json) through the live source's operations, as the
 * consultant uses them, on tests/metric/progs/kspin.c:
 * 1. on </Code,/Process,..>, </Code,/Process/PID,..> and the spinning
 *    thread's </Code,/Process/PID/TID:ks_spinner,..>: predicted cost 0,
 *    enabled with nothing inserted in the target (no instrumented
 *    instance), samples in contiguous intervals;
 * 2. the samples' integral (value × interval) equals the kernel's own
 *    count: for the thread, its schedstat from enabling to its stop,
 *    bracketed by fresh reads just before and after the enable (it
 *    advances only at ticks); for the process, the sum over its threads
 *    the same way plus a thread that spun 200 ms and exited while the
 *    instance ran (its CPU time up to its exit, + < 2 ms for exiting);
 * 3. refused with their reasons: another process, a thread that is not
 *    there, a sync object focus (the kernel does not know what a thread
 *    waits on, and cpu_inclusive has no /SyncObject constraint);
 * 4. a focus with /Code constrained is instrumented (predicted cost > 0,
 *    one instrumented instance);
 * 5. a user file that redefines cpu_inclusive without "kernel" gets
 *    today's instrumentation on the whole program.
 *
 * usage: e2e_kcpu KSPIN   (env HUNCHRT, HUNCH_SOURCE_ROOT)
 */
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kspin_drive.h"
#include "pc_config.h"
#include "src_live.h"
#include "tap.h"

#define MS 1000000.0
#define NH 3                    /* top, process, thread */

static const char no_kernel[] =
	"{ \"version\": 1, \"metrics\": { \"cpu_inclusive\": {\n"
	"  \"title\": \"CPU time (inclusive)\", \"units\": \"CPUs\",\n"
	"  \"unit_style\": \"normalized\", \"aggregate\": \"sum\",\n"
	"  \"style\": \"event_counter\", \"type\": \"cpu_timer\",\n"
	"  \"constraints\": [ \"procedure\", \"module\", \"thread\" ],\n"
	"  \"base\": [\n"
	"   { \"foreach\": \"$start_functions\", \"at\": \"entry\",\n"
	"     \"constrained\": true, \"do\": [ { \"op\": \"start\" } ] },\n"
	"   { \"foreach\": \"$start_functions\", \"at\": \"exit\",\n"
	"     \"constrained\": true, \"do\": [ { \"op\": \"stop\" } ] } ] } } }\n";

struct t {
	struct pc_source *src;
	struct src_live_status st;
	int to, from, pid;
	char out[4096];
	size_t outlen;
	pc_src_handle h[8];
	int status[8];
	char reason[8][300];
	int replies;
	double sum[NH], last_t1[NH];
	int nsamples[NH];
	bool gap;
};

static void on_reply(void *arg, const struct pc_src_reply *r)
{
	struct t *t = arg;

	if (r->req >= 8)
		return;
	t->replies++;
	t->status[r->req] = r->status;
	t->h[r->req] = r->handle;
	snprintf(t->reason[r->req], sizeof(t->reason[0]), "%s",
		 r->reason ? r->reason : "");
}

static void on_sample(void *arg, const struct pc_src_sample *s)
{
	struct t *t = arg;

	for (int i = 0; i < NH; i++) {
		if (t->h[i] == 0 || s->handle != t->h[i])
			continue;
		if (t->nsamples[i] > 0 && fabs(s->t0 - t->last_t1[i]) > 1e-9)
			t->gap = true;
		t->sum[i] += s->value * (s->t1 - s->t0);
		t->last_t1[i] = s->t1;
		t->nsamples[i]++;
	}
}

static void pump_once(struct t *t)
{
	ssize_t n;

	src_live_pump(t->src, 10, &t->st);
	t->src->ops->poll_replies(t->src, on_reply, t);
	t->src->ops->poll_samples(t->src, on_sample, t);
	while (t->outlen < sizeof(t->out) - 1 &&
	       (n = read(t->from, t->out + t->outlen,
			 sizeof(t->out) - 1 - t->outlen)) > 0)
		t->outlen += (size_t)n;
	t->out[t->outlen] = '\0';
}

/* Send a command (or none) and pump until kspin answers one line. */
static void cmd(struct t *t, const char *c, char *line, size_t len)
{
	char *nl;
	size_t n;

	if (c != NULL && (write(t->to, c, strlen(c)) < 0 ||
			  write(t->to, "\n", 1) < 0))
		tap_diag("write to kspin failed");
	while ((nl = strchr(t->out, '\n')) == NULL && !t->st.ended)
		pump_once(t);
	line[0] = '\0';
	if (nl == NULL)
		return;
	*nl = '\0';
	n = strlen(t->out) < len ? strlen(t->out) : len - 1;
	memcpy(line, t->out, n);
	line[n] = '\0';
	memmove(t->out, nl + 1, t->outlen - (size_t)(nl + 1 - t->out) + 1);
	t->outlen -= (size_t)(nl + 1 - t->out);
}

/* The source's clock has passed `when` and a tick after it sampled. */
static void pump_past(struct t *t, double when)
{
	while (!t->st.ended &&
	       (t->nsamples[0] == 0 || t->last_t1[0] <= when ||
		t->last_t1[1] <= when || t->last_t1[2] <= when))
		pump_once(t);
}

/* Fresh schedstat of every thread listed now. */
static double sum_threads(int pid)
{
	char path[48];
	struct dirent *e;
	double s = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	while (d != NULL && (e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			s += (double)kspin_sched(pid, atol(e->d_name));
	if (d != NULL)
		closedir(d);
	return s;
}

static struct pc_config *load_config(const char *extra)
{
	const char *root = getenv("HUNCH_SOURCE_ROOT");
	struct pc_config *c = pc_config_new();
	struct pc_diags ds = { 0 };
	struct hunch_err e = { 0 };
	char def[4096];
	int rc;

	snprintf(def, sizeof(def), "%s/hypotheses/default.json",
		 root ? root : ".");
	rc = pc_config_load_file(c, def, &ds, &e);
	if (rc == 0 && extra != NULL)
		rc = pc_config_load_string(c, "no_kernel.json", extra, &ds, &e);
	pc_jx_diags_free(&ds);
	if (rc < 0) {
		tap_diag("config: %s", e.msg);
		pc_config_free(c);
		return NULL;
	}
	return c;
}

static int launch(struct t *t, const char *prog, struct pc_config *cfg)
{
	int in[2], out[2];
	char *argv[] = { (char *)prog, NULL }, line[64];
	struct src_live_launch lo = {
		.argv = argv, .rtlib = getenv("HUNCHRT"), .stderr_fd = -1,
	};
	struct hunch_err err = { 0 };

	memset(t, 0, sizeof(*t));
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0)
		return -1;
	lo.stdin_fd = in[0];
	lo.stdout_fd = out[1];
	if (src_live_launch(&lo, &t->src, &err) < 0 ||
	    src_live_metrics_start(t->src, cfg, &err) < 0 ||
	    src_live_resume(t->src, &err) < 0) {
		tap_diag("launch %s: %s", prog, err.msg);
		return -1;
	}
	close(in[0]);
	close(out[1]);
	t->to = in[1];
	t->from = out[0];
	fcntl(t->from, F_SETFL, O_NONBLOCK);
	cmd(t, NULL, line, sizeof(line));
	return sscanf(line, "ready %d", &t->pid) == 1 ? 0 : -1;
}

static struct pc_src_focus focus(const char *code, const char *proc,
				 const char *sync)
{
	return (struct pc_src_focus){ .path = { code, proc, sync,
						"/Files" } };
}

static void finish(struct t *t)
{
	if (write(t->to, "q\n", 2) < 0)
		tap_diag("write q failed");
	while (!t->st.ended)
		pump_once(t);
	t->src->ops->close(t->src);
	close(t->to);
	close(t->from);
}

/* Refusals (req 3-5) and a /Code focus (req 6). */
static void check_refusals(struct t *t)
{
	const struct pc_source_ops *ops = t->src->ops;
	char p_other[64], p_nothread[64], want[300];
	struct pc_src_focus other, nothread, sync, code;

	snprintf(p_other, sizeof(p_other), "/Process/%d", t->pid + 1000000);
	snprintf(p_nothread, sizeof(p_nothread), "/Process/%d/1", t->pid);
	other = focus("/Code", p_other, "/SyncObject");
	nothread = focus("/Code", p_nothread, "/SyncObject");
	sync = focus("/Code", "/Process", "/SyncObject/Mutex/mu");
	code = focus("/Code/kspin/<unknown>/ks_spinner", "/Process",
		     "/SyncObject");
	ops->enable(t->src, "cpu_inclusive", &other, 3);
	ops->enable(t->src, "cpu_inclusive", &nothread, 4);
	ops->enable(t->src, "cpu_inclusive", &sync, 5);
	pump_once(t);
	snprintf(want, sizeof(want), "metric cpu_inclusive: focus %s is not "
		 "the process hunch follows (%d)", p_other, t->pid);
	tap_ok(t->status[3] < 0 && strcmp(t->reason[3], want) == 0,
	       "another process: refused: %s", t->reason[3]);
	snprintf(want, sizeof(want), "thread 1 of process %d has exited (or "
		 "never was): no CPU time to read", t->pid);
	tap_ok(t->status[4] < 0 && strcmp(t->reason[4], want) == 0,
	       "a thread that is not there: refused: %s", t->reason[4]);
	tap_ok(t->status[5] < 0 && strcmp(t->reason[5], "metric "
	       "cpu_inclusive cannot be constrained to /SyncObject/Mutex/mu: "
	       "none of its constraints matches that level; choose a focus "
	       "its constraints cover") == 0,
	       "a sync object focus: refused: %s", t->reason[5]);
	tap_ok(ops->predict_cost(t->src, "cpu_inclusive", &code) > 0,
	       "with /Code constrained: instrumentation, predicted cost > 0");
	ops->enable(t->src, "cpu_inclusive", &code, 6);
	pump_once(t);
	tap_ok(t->status[6] == 0 && src_live_ninstances(t->src) == 1,
	       "and enabled as one instrumented instance%s%s",
	       t->reason[6][0] ? ": " : "", t->reason[6]);
	ops->disable(t->src, t->h[6]);
}

static void run_kernel(const char *prog, struct pc_config *cfg)
{
	char proc[64], thr[96], line[96];
	double a_thr, b_thr, a_all, b_all, f_thr, f_all, when;
	const struct pc_source_ops *ops;
	long spin = 0, burst = 0, tid = 0;
	long long own_burst = 0, own_spin = 0;
	struct pc_src_focus fo[NH];
	struct t t;
	int zero = 0;

	if (!tap_ok(launch(&t, prog, cfg) == 0, "kspin runs under hunch"))
		return;
	ops = t.src->ops;
	cmd(&t, "r", line, sizeof(line));
	tap_ok(sscanf(line, "run %ld", &spin) == 1, "spinner: %s", line);
	snprintf(proc, sizeof(proc), "/Process/%d", t.pid);
	snprintf(thr, sizeof(thr), "/Process/%d/%ld:ks_spinner", t.pid, spin);
	fo[0] = focus("/Code", "/Process", "/SyncObject");
	fo[1] = focus("/Code", proc, "/SyncObject");
	fo[2] = focus("/Code", thr, "/SyncObject");
	for (int i = 0; i < NH; i++)
		zero += ops->predict_cost(t.src, "cpu_inclusive", &fo[i]) == 0;
	tap_eq(zero, NH, "predicted cost 0 on the program, the process and "
	       "the thread");
	a_thr = (double)kspin_sched(t.pid, spin);
	a_all = sum_threads(t.pid);
	for (int i = 0; i < NH; i++)
		ops->enable(t.src, "cpu_inclusive", &fo[i], (uint64_t)i);
	b_thr = (double)kspin_sched(t.pid, spin);
	b_all = sum_threads(t.pid);
	pump_once(&t);
	tap_ok(t.replies == NH && t.status[0] == 0 && t.status[1] == 0 &&
	       t.status[2] == 0, "all three enabled%s%s",
	       t.reason[2][0] ? ": " : "", t.reason[2]);
	tap_eq(src_live_ninstances(t.src), 0, "nothing inserted in the "
	       "target: no instrumented instance");
	cmd(&t, "x 200", line, sizeof(line));
	tap_ok(sscanf(line, "exited %ld %lld", &burst, &own_burst) == 2 &&
	       own_burst >= 200 * MS, "a thread spun 200 ms and exited "
	       "while measured: %s", line);
	check_refusals(&t);
	cmd(&t, "s", line, sizeof(line));
	tap_ok(sscanf(line, "stopped %ld %lld", &tid, &own_spin) == 2 &&
	       tid == spin, "the spinner stopped: %s", line);
	tap_ok(kspin_wait_blocked(t.pid, spin) == 0 &&
	       kspin_wait_blocked(t.pid, t.pid) == 0,
	       "the spinner and main are blocked");
	f_thr = (double)kspin_sched(t.pid, spin);
	f_all = sum_threads(t.pid);
	when = ops->now(t.src);
	pump_past(&t, when);
	tap_ok(t.nsamples[0] >= 2 && !t.gap, "samples in contiguous "
	       "intervals (%d, %d, %d)", t.nsamples[0], t.nsamples[1],
	       t.nsamples[2]);
	if (!tap_ok(t.sum[2] * 1e9 >= f_thr - b_thr - 1000 &&
		    t.sum[2] * 1e9 <= f_thr - a_thr + 1000,
		    "the thread: CPU seconds = its schedstat since the enable "
		    "(%.6f s)", t.sum[2]))
		tap_diag("  %.0f <= %.0f <= %.0f ns", f_thr - b_thr,
			 t.sum[2] * 1e9, f_thr - a_thr);
	for (int i = 0; i < 2; i++)
		if (!tap_ok(t.sum[i] * 1e9 >= f_all - b_all + own_burst - 1000 &&
			    t.sum[i] * 1e9 <= f_all - a_all + own_burst + 2 * MS,
			    "%s: the threads' schedstat since the enable + the "
			    "exited thread's own CPU time (%.6f s)",
			    i ? "the process" : "the program", t.sum[i]))
			tap_diag("  %.0f <= %.0f <= %.0f ns",
				 f_all - b_all + own_burst, t.sum[i] * 1e9,
				 f_all - a_all + own_burst + 2 * MS);
	for (int i = 0; i < NH; i++)
		ops->disable(t.src, t.h[i]);
	finish(&t);
}

/* A user file without "kernel": the whole program is instrumented. */
static void run_user(const char *prog, struct pc_config *cfg)
{
	struct pc_src_focus top = focus("/Code", "/Process", "/SyncObject");
	const struct pc_source_ops *ops;
	struct t t;

	tap_ok(pc_metric_def_find(cfg, "cpu_inclusive")->kernel ==
		       PC_KERNEL_NONE,
	       "a user file redefining cpu_inclusive without \"kernel\"");
	if (!tap_ok(launch(&t, prog, cfg) == 0, "kspin runs under hunch"))
		return;
	ops = t.src->ops;
	tap_ok(ops->predict_cost(t.src, "cpu_inclusive", &top) > 0,
	       "there: the whole program's cpu_inclusive is instrumented "
	       "(predicted cost > 0)");
	ops->enable(t.src, "cpu_inclusive", &top, 0);
	pump_once(&t);
	tap_ok(t.status[0] == 0 && src_live_ninstances(t.src) == 1,
	       "on the start functions: one instrumented instance");
	ops->disable(t.src, t.h[0]);
	finish(&t);
}

int main(int argc, char **argv)
{
	struct pc_config *cfg = load_config(NULL);
	struct pc_config *user = load_config(no_kernel);

	signal(SIGPIPE, SIG_IGN);
	if (argc < 2 || cfg == NULL || user == NULL) {
		tap_ok(0, "usage: e2e_kcpu KSPIN, and the configs load");
		return tap_done();
	}
	tap_ok(pc_metric_def_find(cfg, "cpu_inclusive")->kernel ==
		       PC_KERNEL_CPU,
	       "default.json: cpu_inclusive has \"kernel\": \"cpu\"");
	run_kernel(argv[1], cfg);
	run_user(argv[1], user);
	pc_config_free(cfg);
	pc_config_free(user);
	return tap_done();
}

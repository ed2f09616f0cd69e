/*
 * e2e_live_ops.c - the live source's metric operations on a real target,
 * through the pc_source interface only (as the consultant uses them):
 * predict, enable on a focus, replies, samples that add up to the exact
 * counts of tests/metric/progs/mcalls.c, discovery of the mutexes a sync
 * metric sees, observed cost, disable restoring the code bytes, and the
 * end of the target as an event.
 *
 * The metric is a test metric loaded next to the shipped defaults: calls
 * of mc_counted (mcalls' "calls" phase makes 1600 in all, 1000 of them
 * inside mc_calls_phase).
 *
 * usage: e2e_live_ops MCALLS...   (env HUNCHRT, HUNCH_SOURCE_ROOT)
 */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pc_config.h"
#include "src_live.h"
#include "tap.h"

static const char test_metric[] =
	"{ \"version\": 1,\n"
	"  \"lists\": { \"mc_funcs\": [ \"mc_counted\" ] },\n"
	"  \"metrics\": { \"mc_calls\": {\n"
	"    \"title\": \"mc_counted calls\", \"units\": \"calls/s\",\n"
	"    \"unit_style\": \"unnormalized\", \"aggregate\": \"sum\",\n"
	"    \"style\": \"event_counter\", \"type\": \"counter\",\n"
	"    \"constraints\": [ \"procedure\", \"module\", \"thread\" ],\n"
	"    \"base\": [ { \"foreach\": \"mc_funcs\", \"at\": \"entry\",\n"
	"      \"constrained\": true,\n"
	"      \"do\": [ { \"op\": \"add\", \"value\": 1 } ] } ] } } }\n";

struct t {
	struct pc_source *src;
	struct src_live_status st;
	int to, from;
	char out[8192];
	size_t outlen;
	char prog[64];             /* module name: basename of the program */
	uint64_t counted_addr;     /* mc_counted, from discovery */
	int nmutex;                /* mc_lock_a/b discovered */
	pc_src_handle h[4];
	int replies, refused;
	double sum[4];             /* integral of each handle's samples */
	int nsamples[4];
	double last_t1[4];
	bool gap;                  /* samples not contiguous in time */
	int exited;                /* PC_TARGET_EXITED events, status 0 */
};

static void on_event(void *arg, const struct pc_src_event *e)
{
	struct t *t = arg;

	t->exited += e->ev == PC_TARGET_EXITED && e->code == 0;
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void on_disc(void *arg, const struct pc_discovery *d)
{
	struct t *t = arg;

	if (d->kind == PC_DISC_FUNCTION && d->function != NULL &&
	    strcmp(d->function, "mc_counted") == 0 &&
	    strcmp(d->module, t->prog) == 0)
		t->counted_addr = d->addr;
	if (d->kind == PC_DISC_SYNCOBJ && d->name != NULL &&
	    (strcmp(d->name, "mc_lock_a") == 0 ||
	     strcmp(d->name, "mc_lock_b") == 0))
		t->nmutex++;
}

static void on_reply(void *arg, const struct pc_src_reply *r)
{
	struct t *t = arg;

	t->replies++;
	if (r->status < 0) {
		t->refused++;
		tap_diag("refused req %llu: %s", (unsigned long long)r->req,
			 r->reason ? r->reason : "?");
		return;
	}
	if (r->req < 4)
		t->h[r->req] = r->handle;
}

static void on_sample(void *arg, const struct pc_src_sample *s)
{
	struct t *t = arg;

	for (int i = 0; i < 4; i++) {
		if (t->h[i] == 0 || t->h[i] != s->handle)
			continue;
		if (t->nsamples[i] > 0 && fabs(s->t0 - t->last_t1[i]) > 1e-9)
			t->gap = true;
		t->sum[i] += s->value * (s->t1 - s->t0);
		t->nsamples[i]++;
		t->last_t1[i] = s->t1;
	}
}

static void pump(struct t *t, double secs)
{
	double end = mono() + secs;
	ssize_t n;

	do {
		src_live_pump(t->src, 10, &t->st);
		t->src->ops->poll_resources(t->src, on_disc, t);
		t->src->ops->poll_replies(t->src, on_reply, t);
		t->src->ops->poll_samples(t->src, on_sample, t);
		while (t->outlen < sizeof(t->out) - 1 &&
		       (n = read(t->from, t->out + t->outlen,
				 sizeof(t->out) - 1 - t->outlen)) > 0)
			t->outlen += (size_t)n;
		t->out[t->outlen] = '\0';
	} while (mono() < end && !t->st.ended);
}

/* Send a phase command and wait for "ok CMD", then one more sample. */
static int phase(struct t *t, const char *cmd)
{
	char want[64];
	double end = mono() + 20;

	snprintf(want, sizeof(want), "ok %s\n", cmd);
	t->outlen = 0;
	t->out[0] = '\0';
	if (dprintf(t->to, "%s\n", cmd) < 0)
		return -1;
	while (strstr(t->out, want) == NULL && mono() < end && !t->st.ended)
		pump(t, 0.01);
	pump(t, 0.5);  /* past at least one sample period */
	return strstr(t->out, want) ? 0 : -1;
}

static int read_code(struct t *t, uint8_t *buf, size_t n)
{
	char path[64];
	int fd;
	ssize_t got;

	snprintf(path, sizeof(path), "/proc/%d/mem",
		 (int)src_live_pid(t->src));
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	got = pread(fd, buf, n, (off_t)t->counted_addr);
	close(fd);
	return got == (ssize_t)n ? 0 : -1;
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
	if (pc_config_load_file(c, def, &ds, &e) < 0 ||
	    pc_config_load_string(c, "test", test_metric, &ds, &e) < 0) {
		tap_diag("config: %s", e.msg);
		pc_jx_diags_free(&ds);
		pc_config_free(c);
		return NULL;
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
	const char *slash = strrchr(prog, '/');

	memset(t, 0, sizeof(*t));
	snprintf(t->prog, sizeof(t->prog), "%s", slash ? slash + 1 : prog);
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
	fcntl(t->from, F_SETFL, O_NONBLOCK);
	return 0;
}

static struct pc_src_focus focus(const char *code, const char *sync)
{
	return (struct pc_src_focus){ .path = { code, "/Process",
		sync ? sync : "/SyncObject", "/Files" } };
}

/* Enable mc_calls on the whole program and inside mc_calls_phase. */
static void enable_calls(struct t *t, const struct pc_source_ops *ops)
{
	char in_phase[256];
	struct pc_src_focus top = focus("/Code", NULL), ph;
	double cost;

	snprintf(in_phase, sizeof(in_phase), "/Code/%s/mcalls.c/"
		 "mc_calls_phase", t->prog);
	ph = focus(in_phase, NULL);
	cost = ops->predict_cost(t->src, "mc_calls", &ph);
	tap_ok(cost == PC_SRC_MEASURING, "the first prediction of mc_calls "
	       "in mc_calls_phase: the source measures call rates first");
	/* The counters at the functions' entries go in at the source's
	 * next tick, with every probe queued since, and end 30 ms after
	 * (a prediction only queues them). */
	for (int i = 0; cost == PC_SRC_MEASURING && i < 1000; i++) {
		pump(t, 0.01);
		cost = ops->predict_cost(t->src, "mc_calls", &ph);
	}
	tap_ok(cost > 0 && cost < 1, "then predicted cost of mc_calls in "
	       "mc_calls_phase is a small slowdown (%g)", cost);
	tap_ok(ops->enable(t->src, "mc_calls", &top, 0) == 0 &&
	       ops->enable(t->src, "mc_calls", &ph, 1) == 0 &&
	       ops->enable(t->src, "active_threads", &top, 2) == 0 &&
	       ops->enable(t->src, "no_such_metric", &top, 3) == 0,
	       "four enable requests made");
	ops->poll_replies(t->src, on_reply, t);
	tap_ok(t->replies == 4 && t->refused == 1 && t->h[0] && t->h[1] &&
	       t->h[2] && t->h[0] != t->h[1],
	       "replies: three handles, the unknown metric refused");
}

/* A step of the search (pc_source_ops.step): its enable goes in at the
 * step's end, in one commit, and replies at the next step as always. */
static void stepped(struct t *t, const struct pc_source_ops *ops,
		    const uint8_t *before)
{
	char in_phase[256];
	uint8_t code[16];

	snprintf(in_phase, sizeof(in_phase), "/Code/%s/mcalls.c/"
		 "mc_calls_phase", t->prog);
	t->h[3] = 0;
	t->sum[3] = 0;
	t->nsamples[3] = 0;
	ops->step(t->src, true);
	tap_ok(ops->enable(t->src, "mc_calls", &(struct pc_src_focus){
		.path = { in_phase, "/Process", "/SyncObject", "/Files" } },
		3) == 0, "in a step: mc_calls inside mc_calls_phase requested");
	read_code(t, code, 16);
	tap_ok(memcmp(code, before, 16) == 0, "  mc_counted is not patched "
	       "before the step ends");
	ops->step(t->src, false);
	read_code(t, code, 16);
	tap_ok(memcmp(code, before, 16) != 0, "  and is at its end");
	ops->poll_replies(t->src, on_reply, t);
	tap_ok(t->h[3] != 0, "  its reply carries a handle");
	phase(t, "calls");
	tap_ok(fabs(t->sum[3] - 1000) < 1e-6, "  its samples add up to the "
	       "1000 calls inside mc_calls_phase (%.9g)", t->sum[3]);
	phase(t, "release");
	ops->disable(t->src, t->h[3]);
	t->h[3] = 0;
	read_code(t, code, 16);
	tap_ok(memcmp(code, before, 16) == 0, "  disabled outside a step: "
	       "the code bytes are restored");
}

static void run(const char *prog, struct pc_config *cfg)
{
	const struct pc_source_ops *ops;
	struct hunch_err err = { 0 };
	uint8_t before[16], patched[16], after[16];
	struct t t;

	if (launch(&t, prog) < 0) {
		tap_ok(0, "launch %s", prog);
		return;
	}
	tap_diag("%s", prog);
	ops = t.src->ops;
	t.src->ops->poll_resources(t.src, on_disc, &t);
	tap_ok(ops->enable(t.src, "mc_calls", &(struct pc_src_focus){
		.path = { "/Code", "/Process", "/SyncObject", "/Files" } },
		9) < 0, "enable before src_live_metrics_start is refused");
	if (!tap_ok(src_live_metrics_start(t.src, cfg, &err) == 0,
		    "metrics start after the rtlib handshake"))
		tap_diag("  %s", err.msg);
	tap_ok(t.counted_addr != 0 && read_code(&t, before, 16) == 0,
	       "mc_counted found by discovery; its code read");
	enable_calls(&t, ops);
	read_code(&t, patched, 16);
	tap_ok(memcmp(before, patched, 16) != 0, "mc_counted is patched");
	src_live_resume(t.src, NULL);
	tap_ok(phase(&t, "calls") == 0, "phase calls ran");
	tap_ok(fabs(t.sum[0] - 1600) < 1e-6, "samples of mc_calls on /Code "
	       "add up to 1600 calls (%.9g in %d samples)", t.sum[0],
	       t.nsamples[0]);
	tap_ok(fabs(t.sum[1] - 1000) < 1e-6, "samples of mc_calls inside "
	       "mc_calls_phase add up to 1000 (%.9g)", t.sum[1]);
	tap_ok(t.nsamples[0] >= 2 && !t.gap, "samples are contiguous "
	       "intervals (%d)", t.nsamples[0]);
	tap_ok(t.nsamples[2] > 0 && t.sum[2] > 0, "active_threads sampled "
	       "(mean %.3g threads)", t.sum[2] / (t.last_t1[2] - 0.0 + 1e-9));
	tap_ok(ops->observed_cost(t.src) >= 0 &&
	       ops->observed_cost(t.src) < 1, "observed cost is a fraction "
	       "(%g)", ops->observed_cost(t.src));
	phase(&t, "release");
	ops->disable(t.src, t.h[0]);
	ops->disable(t.src, t.h[1]);
	tap_ok(src_live_ninstances(t.src) == 0, "no instance left enabled");
	read_code(&t, after, 16);
	tap_ok(memcmp(before, after, 16) == 0, "disable restored mc_counted's "
	       "code bytes");
	t.sum[0] = 0;
	phase(&t, "calls");
	tap_ok(t.sum[0] == 0, "a disabled handle gets no more samples");
	phase(&t, "release");
	stepped(&t, ops, before);
	tap_ok(ops->enable(t.src, "sync_ops", &(struct pc_src_focus){
		.path = { "/Code", "/Process", "/SyncObject", "/Files" } },
		0) == 0, "sync_ops enabled");
	ops->poll_replies(t.src, on_reply, &t);
	phase(&t, "locks");
	tap_ok(t.nmutex == 2, "discovery: mc_lock_a and mc_lock_b reported "
	       "as sync objects (%d)", t.nmutex);
	dprintf(t.to, "quit\n");
	pump(&t, 5);
	tap_ok(t.st.ended && !t.st.killed && t.st.exit_code == 0,
	       "target exited 0");
	tap_ok(ops->poll_events(t.src, on_event, &t) == 1 &&
	       t.exited == 1 && ops->poll_events(t.src, on_event, &t) == 0,
	       "the exit is reported once as a target event");
	ops->close(t.src);
	close(t.to);
	close(t.from);
}

int main(int argc, char **argv)
{
	struct pc_config *cfg = load_config();

	if (!tap_ok(cfg != NULL, "defaults + test metric load"))
		return tap_done();
	for (int i = 1; i < argc; i++)
		run(argv[i], cfg);
	pc_config_free(cfg);
	return tap_done();
}

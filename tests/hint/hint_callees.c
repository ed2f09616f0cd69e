/*
 * hint_callees.c - the live source's `callees` with the hint sampler's
 * call edges, on tests/hint/hint_fnptr (-O2; given twice: as built, and
 * stripped with only .dynsym left), through the pc_source interface as
 * the consultant asks it:
 *   - the program file alone (no samples): fnp_dispatch has no callee
 *     (its calls go through fnp_table), fnp_run calls fnp_dispatch and
 *     fnp_now;
 *   - running, once 3.5 s of samples have passed since its loop began
 *     (the window holds the loop only): fnp_dispatch's callees are
 *     exactly fnp_hot, seen on the stacks; fnp_run's are fnp_dispatch
 *     and fnp_now once each (the static edge and the sampled one are one
 *     answer); the root (/Code) is exactly main, which every stack
 *     holds; fnp_hot's hint is over 0.8.
 *
 * usage: hint_callees PROGRAM...   (env HUNCHRT, HUNCH_SOURCE_ROOT)
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pc_config.h"
#include "src_live.h"
#include "tap.h"

#define MAXP 64

struct answer {
	char *p[MAXP];
	int n;
};

struct t {
	struct pc_source *src;
	struct src_live_status st;
	int from;
	char out[4096];
	size_t outlen;
	char prog[128];
	char hot[512], dispatch[512], run[512], now[512], main[512];
};

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void on_path(void *arg, const char *path)
{
	struct answer *a = arg;

	if (a->n < MAXP)
		a->p[a->n++] = strdup(path);
}

static void ask(struct t *t, const char *path, struct answer *a)
{
	for (int i = 0; i < a->n; i++)
		free(a->p[i]);
	a->n = 0;
	t->src->ops->callees(t->src, path, on_path, a);
}

static int count(const struct answer *a, const char *path)
{
	int n = 0;

	for (int i = 0; i < a->n; i++)
		n += strcmp(a->p[i], path) == 0;
	return n;
}

static void show(const struct answer *a)
{
	for (int i = 0; i < a->n; i++)
		tap_diag("    %s", a->p[i]);
}

static void on_disc(void *arg, const struct pc_discovery *d)
{
	struct t *t = arg;
	struct { const char *name; char *path; } fns[] = {
		{ "fnp_hot", t->hot }, { "fnp_dispatch", t->dispatch },
		{ "fnp_run", t->run }, { "fnp_now", t->now },
		{ "main", t->main },
	};

	if (d->kind != PC_DISC_FUNCTION || d->function == NULL ||
	    strcmp(d->module, t->prog) != 0)
		return;
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		if (strcmp(d->function, fns[i].name) == 0)
			snprintf(fns[i].path, 512, "/Code/%s/%s/%s", d->module,
				 d->srcfile ? d->srcfile : "<unknown>",
				 d->function);
}

static void pump(struct t *t, double secs)
{
	double end = mono() + secs;
	ssize_t n;

	do {
		src_live_pump(t->src, 10, &t->st);
		t->src->ops->poll_resources(t->src, on_disc, t);
		while (t->outlen < sizeof(t->out) - 1 &&
		       (n = read(t->from, t->out + t->outlen,
				 sizeof(t->out) - 1 - t->outlen)) > 0)
			t->outlen += (size_t)n;
		t->out[t->outlen] = '\0';
	} while (mono() < end && !t->st.ended);
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

static void static_graph(const char *prog, struct t *t)
{
	struct hunch_err err = { 0 };
	struct answer a = { 0 };

	if (!tap_ok(src_live_open_file(prog, &t->src, &err) == 0,
		    "%s read as a file", t->prog)) {
		tap_diag("  %s", err.msg);
		return;
	}
	t->src->ops->poll_resources(t->src, on_disc, t);
	tap_ok(t->hot[0] && t->dispatch[0] && t->run[0] && t->now[0] &&
	       t->main[0], "fnp_hot, fnp_dispatch, fnp_run, fnp_now and "
	       "main are on the where axis");
	ask(t, t->dispatch, &a);
	tap_eq(a.n, 0, "the file alone: fnp_dispatch has no callee (it "
	       "calls through a pointer)");
	ask(t, t->run, &a);
	if (!tap_ok(a.n == 2 && count(&a, t->dispatch) == 1 &&
		    count(&a, t->now) == 1, "the file alone: fnp_run calls "
		    "fnp_dispatch and fnp_now"))
		show(&a);
	ask(t, "/Code/nosuch/x.c/f", &a);
	tap_eq(a.n, 0, "a function of no module has no callee");
	for (int i = 0; i < a.n; i++)
		free(a.p[i]);
	t->src->ops->close(t->src);
	t->src = NULL;
}

static int launch(struct t *t, const char *prog)
{
	int out[2];
	char *argv[] = { (char *)prog, "60", NULL };
	struct src_live_launch lo = {
		.argv = argv, .rtlib = getenv("HUNCHRT"), .stderr_fd = -1,
		.stdin_fd = -1,
	};
	struct hunch_err err = { 0 };

	if (pipe2(out, O_CLOEXEC) < 0)
		return -1;
	lo.stdout_fd = out[1];
	if (src_live_launch(&lo, &t->src, &err) < 0) {
		tap_diag("launch %s: %s", prog, err.msg);
		return -1;
	}
	close(out[1]);
	t->from = out[0];
	fcntl(t->from, F_SETFL, O_NONBLOCK);
	return 0;
}

static void sampled(const char *prog, struct t *t, struct pc_config *cfg)
{
	struct hunch_err err = { 0 };
	struct answer a = { 0 };
	double end;

	if (!tap_ok(launch(t, prog) == 0, "%s launched", t->prog))
		return;
	t->src->ops->poll_resources(t->src, on_disc, t);
	if (!tap_ok(src_live_metrics_start(t->src, cfg, &err) == 0,
		    "metrics (and the hint sampler) start"))
		tap_diag("  %s", err.msg);
	src_live_resume(t->src, NULL);
	end = mono() + 30;
	while (strstr(t->out, "hint_fnptr running") == NULL &&
	       mono() < end && !t->st.ended)
		pump(t, 0.05);
	tap_ok(strstr(t->out, "hint_fnptr running") != NULL,
	       "the loop began");
	/* the window (3 s) then holds the loop's samples only */
	pump(t, 3.5);
	ask(t, t->dispatch, &a);
	if (!tap_ok(a.n == 1 && count(&a, t->hot) == 1, "running: "
		    "fnp_dispatch's callees are exactly fnp_hot, seen on "
		    "the sampled stacks"))
		show(&a);
	ask(t, t->run, &a);
	if (!tap_ok(a.n == 2 && count(&a, t->dispatch) == 1 &&
		    count(&a, t->now) == 1, "running: fnp_run's callees are "
		    "fnp_dispatch and fnp_now, each once"))
		show(&a);
	ask(t, NULL, &a);
	if (!tap_ok(a.n == 1 && count(&a, t->main) == 1, "running: the "
		    "root's callees are exactly main (every stack holds it)"))
		show(&a);
	tap_ok(t->src->ops->hint(t->src, t->hot) > 0.8, "fnp_hot holds "
	       "over 0.8 of the samples (%.3f)",
	       t->src->ops->hint(t->src, t->hot));
	for (int i = 0; i < a.n; i++)
		free(a.p[i]);
	src_live_kill(t->src);
	t->src->ops->close(t->src);
	close(t->from);
}

int main(int argc, char **argv)
{
	struct pc_config *cfg = load_config();

	if (!tap_ok(cfg != NULL, "default hypotheses load"))
		return tap_done();
	for (int i = 1; i < argc; i++) {
		struct t t;
		const char *slash = strrchr(argv[i], '/');

		memset(&t, 0, sizeof(t));
		snprintf(t.prog, sizeof(t.prog), "%s",
			 slash ? slash + 1 : argv[i]);
		tap_diag("%s", argv[i]);
		static_graph(argv[i], &t);
		sampled(argv[i], &t, cfg);
	}
	pc_config_free(cfg);
	return tap_done();
}

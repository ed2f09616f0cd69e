/*
 * ui_bench.c - the dashboard's two costs.
 *
 * 1. Frame time with 100,000 where-axis resources: the real pc_restree
 *    filled through pc_where_apply with 100,000 functions (10 modules x
 *    100 source files x 100 functions) and every node open, drawn by the
 *    real panes into a newterm() on /dev/null.  A "full redraw" repaints
 *    every pane and makes ncurses send every cell (clearok(curscr)); the
 *    baseline, measured in the same run, is ncurses alone filling the
 *    same screen with fixed text and sending it the same way.
 *
 *    With them, a search history graph of 5,000 nodes (search_fill.c):
 *    the Search pane drawn in full, 200 pages of it, and what a tick
 *    costs it (the change check and the rebuild of its rows).
 *
 * 2. Bytes sent to the terminal per second by a steady session at 80x24:
 *    hunch (the real binary) runs in a pseudo-terminal; everything it
 *    writes is counted.  Baseline: the bytes of one full first paint.
 *
 *   ui_bench [HUNCH [DEMO]]     defaults: ../../hunch and
 *                               ../../tests/targets/hunch-demo from here
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pc_search.h"
#include "pc_where.h"
#include "search_fill.h"
#include "ui.h"
#include "ui_search.h"

#define NMOD 10
#define NFILE 100
#define NFUNC 100
#define FRAMES 200
#define SEARCH_NODES 5000

static void fill_tree(struct pc_restree *t)
{
	char mod[32], file[32], fn[64];

	for (int m = 0; m < NMOD; m++) {
		snprintf(mod, sizeof(mod), "libbench%d.so", m);
		for (int f = 0; f < NFILE; f++) {
			snprintf(file, sizeof(file), "file%03d.c", f);
			for (int k = 0; k < NFUNC; k++) {
				struct pc_discovery d = {
					.kind = PC_DISC_FUNCTION, .module = mod,
					.srcfile = file, .function = fn,
					.addr = 0x1000u + (uint64_t)k * 16,
				};

				snprintf(fn, sizeof(fn), "bench_fn_%d_%d_%d", m,
					 f, k);
				pc_where_apply(t, &d);
			}
		}
	}
	for (int i = 0; i < 8; i++) {
		struct pc_discovery d = {
			.kind = PC_DISC_THREAD, .pid = 4242, .tid = 4242 + i,
			.function = i ? "worker" : "main",
		};

		pc_where_apply(t, &d);
	}
}

static double median(double *v, int n)
{
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
			double x = v[j];

			v[j] = v[j - 1];
			v[j - 1] = x;
		}
	return v[n / 2];
}

static void set_size(struct ui *u, int rows, int cols)
{
	resize_term(rows, cols);
	u->rows = rows;
	u->cols = cols;
	ui_layout(u);
}

/* A full redraw of every pane, every cell sent. */
static double frame_ms(struct ui *u)
{
	double t = ui_screen_now();

	u->dirty = UI_D_ALL;
	u->force_full = true;
	ui_layout_draw(u);
	return (ui_screen_now() - t) * 1e3;
}

/* ncurses alone: the same screen filled with text, every cell sent. */
static double baseline_ms(int rows, int cols)
{
	double t = ui_screen_now();

	clearok(curscr, TRUE);
	for (int y = 0; y < rows; y++) {
		move(y, 0);
		for (int x = 0; x < cols; x++)
			addch((chtype)('a' + (x + y) % 26));
	}
	wnoutrefresh(stdscr);
	doupdate();
	return (ui_screen_now() - t) * 1e3;
}

static void bench_frames(struct ui *u, int rows, int cols)
{
	double ours[FRAMES], base[FRAMES], t;

	set_size(u, rows, cols);
	for (int i = 0; i < FRAMES; i++) {
		ui_where_key(u, KEY_NPAGE);  /* a different page each frame */
		ui_layout_pane_ops(UI_PANE_SEARCH)->key(u, KEY_NPAGE);
		ours[i] = frame_ms(u);
		base[i] = baseline_ms(rows, cols);
	}
	t = ui_screen_now();
	ui_where_changed(u);  /* as when a thread appears */
	ui_where_rebuild(u);
	t = (ui_screen_now() - t) * 1e3;
	printf("%3dx%-3d full redraw  median %.3f ms  (ncurses alone %.3f ms, "
	       "%.1fx)  rebuild of the 100k-row tree %.2f ms\n", cols, rows,
	       median(ours, FRAMES), median(base, FRAMES),
	       median(ours, FRAMES) / median(base, FRAMES), t);
}

/* The Search pane as the main pane: its 5,000 nodes, page by page; and
 * what a tick costs it when a node changed (sum, then rebuild). */
static void bench_search(struct ui *u, int rows, int cols)
{
	double ours[FRAMES], tick[FRAMES];

	u->main_pane = u->active = UI_PANE_SEARCH;
	set_size(u, rows, cols);
	for (int i = 0; i < FRAMES; i++) {
		double t;

		ui_layout_pane_ops(UI_PANE_SEARCH)->key(u, KEY_NPAGE);
		ours[i] = frame_ms(u);
		u->pc->global->nodes[i * 7 % SEARCH_NODES]->value += 0.01;
		t = ui_screen_now();
		if (ui_search_changed(u))
			ui_search_rebuild(u);
		tick[i] = (ui_screen_now() - t) * 1e3;
	}
	printf("%3dx%-3d search pane   median %.3f ms full redraw; a tick "
	       "with a changed node (sum + rebuild of %zu rows) %.3f ms\n",
	       cols, rows, median(ours, FRAMES), u->pc->global->nn,
	       median(tick, FRAMES));
	u->main_pane = u->active = UI_PANE_WHERE;
}

static struct pc_config *load_hypotheses(const char *path)
{
	struct pc_config *c = pc_config_new();
	struct pc_diags ds = { 0 };
	struct hunch_err e = { 0 };

	if (pc_config_load_file(c, path, &ds, &e) < 0) {
		fprintf(stderr, "ui_bench: %s\n", e.msg);
		exit(1);
	}
	pc_jx_diags_free(&ds);
	return c;
}

static void frames(const char *hypotheses)
{
	struct ui u;
	FILE *out = fopen("/dev/null", "w"), *in = fopen("/dev/null", "r");
	double t;

	memset(&u, 0, sizeof(u));
	u.label = "bench";
	u.pid = 4242;
	u.t0 = ui_screen_now();
	u.active = u.main_pane = UI_PANE_WHERE;
	ui_where_init(&u.where);
	ui_log_init(&u.log, 1000);
	u.tree = pc_res_tree_new();
	t = ui_screen_now();
	fill_tree(u.tree);
	printf("where axis: %zu resources (filled in %.0f ms)\n",
	       pc_res_tree_count(u.tree), (ui_screen_now() - t) * 1e3);
	for (int i = 0; i < 50; i++)
		ui_log_add(&u, i % 3 ? UI_LOG_STDOUT : UI_LOG_HUNCH,
			   "log line %d of the benchmark", i);
	if (ui_screen_init_on(&u, "xterm-256color", out, in) < 0) {
		fprintf(stderr, "ui_bench: no terminfo for xterm-256color\n");
		exit(1);
	}
	u.pc = search_fill(load_hypotheses(hypotheses), u.tree,
			   SEARCH_NODES);
	printf("search history graph: %zu nodes\n", u.pc->global->nn);
	ui_where_changed(&u);
	ui_where_expand_all(&u);
	t = ui_screen_now();
	ui_where_rebuild(&u);
	printf("first rebuild with every node open (sorts 100k names): "
	       "%.1f ms, %zu rows\n",
	       (ui_screen_now() - t) * 1e3, u.where.nrows);
	bench_frames(&u, 24, 80);
	bench_frames(&u, 60, 200);
	bench_search(&u, 24, 80);
	bench_search(&u, 60, 200);
	ui_screen_end(&u);
	ui_where_free(&u.where);
	ui_log_free(&u.log);
	pc_res_tree_free(u.tree);
}

/* --- bytes per second through a pty ------------------------------------ */

struct pty_run {
	int fd;
	pid_t pid;
	unsigned long total;
};

static int pty_start(struct pty_run *r, char *const argv[])
{
	struct winsize ws = { .ws_row = 24, .ws_col = 80 };

	r->total = 0;
	r->pid = forkpty(&r->fd, NULL, NULL, &ws);
	if (r->pid < 0)
		return -errno;
	if (r->pid == 0) {
		setenv("TERM", "xterm-256color", 1);
		setenv("LANG", "C.UTF-8", 1);
		execv(argv[0], argv);
		_exit(127);
	}
	return 0;
}

/* Read (and count) what hunch writes for `secs` seconds. */
static unsigned long pty_read(struct pty_run *r, double secs)
{
	double end = ui_screen_now() + secs;
	unsigned long n = 0;
	char buf[65536];

	while (ui_screen_now() < end) {
		struct pollfd p = { r->fd, POLLIN, 0 };
		ssize_t k;

		if (poll(&p, 1, 50) <= 0)
			continue;
		k = read(r->fd, buf, sizeof(buf));
		if (k <= 0)
			break;
		n += (unsigned long)k;
	}
	r->total += n;
	return n;
}

static void pty_stop(struct pty_run *r)
{
	int st;

	if (write(r->fd, "qy", 2) < 0)
		kill(r->pid, SIGTERM);
	pty_read(r, 0.5);
	kill(r->pid, SIGTERM);
	waitpid(r->pid, &st, 0);
	close(r->fd);
}

/* `keys` are typed once the dashboard is up (NULL: none). */
static void bandwidth(const char *name, char *const argv[], double secs,
		      const char *keys)
{
	struct pty_run r;
	unsigned long first, steady;

	if (pty_start(&r, argv) < 0) {
		perror("ui_bench: forkpty");
		return;
	}
	first = pty_read(&r, 1.0);
	if (keys != NULL && write(r.fd, keys, strlen(keys)) < 0)
		perror("ui_bench: write");
	first += pty_read(&r, 2.0);   /* start, first paint, settle */
	steady = pty_read(&r, secs);
	pty_stop(&r);
	printf("%-28s steady %7.1f B/s over %.0f s  (first 3 s: %lu B; "
	       "steady = %.3f first paints per second)\n", name,
	       (double)steady / secs, secs, first,
	       (double)steady / secs / (double)first);
}

static void path_near_self(char out[PATH_MAX], size_t len, const char *rel)
{
	char self[PATH_MAX - 64];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	self[n > 0 ? n : 0] = '\0';
	slash = strrchr(self, '/');
	if (slash != NULL)
		*slash = '\0';
	snprintf(out, len, "%s/%s", self, rel);
}

int main(int argc, char **argv)
{
	char hunch[PATH_MAX], demo[PATH_MAX], hyp[PATH_MAX];
	static char chatty[] = "i=0; while :; do i=$((i+1)); "
			       "echo \"tick $i\"; sleep 0.01; done";

	path_near_self(hunch, sizeof(hunch), "../../hunch");
	path_near_self(demo, sizeof(demo), "../../tests/targets/hunch-demo");
	path_near_self(hyp, sizeof(hyp), "../../consultant/default.json");
	if (argc > 1)
		snprintf(hunch, sizeof(hunch), "%s", argv[1]);
	if (argc > 2)
		snprintf(demo, sizeof(demo), "%s", argv[2]);
	frames(hyp);
	{
		char *a1[] = { hunch, "run", "--", demo, "--seconds", "30",
			       NULL };
		char *a2[] = { hunch, "run", "--", "/bin/sh", "-c", chatty,
			       NULL };

		bandwidth("demo, where pane + log", a1, 10, "2");  /* it opens on the search */
		bandwidth("demo, Search pane + log", a1, 10, "1");
		bandwidth("sh printing 100 lines/s", a2, 10, NULL);
	}
	return 0;
}

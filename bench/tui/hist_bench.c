/*
 * hist_bench.c - frame time of the Histograms pane at its heaviest: ten
 * curves with all 1,000 buckets full (200 s of 0.2 s samples from the
 * real consultant on the sim source), the pane alone redrawn and sent to
 * a newterm("xterm-256color") on /dev/null, as every consultant tick
 * does.  Baseline in the same run: the Tunables pane (text only) redrawn
 * the same way at the same size.  Goal: well under the 250 ms tick (the
 * dashboard's frame goal is 10 ms).
 *
 *     ./build/bench/tui/hist_bench
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim_world.h"
#include "ui.h"
#include "ui_panes.h"

#define FRAMES 1000

static struct ui u;

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* Microseconds per frame of pane p redrawn alone. */
static double frame_us(enum ui_pane p)
{
	double t0;

	ui_layout_select_pane(&u, p);
	u.dirty = UI_D_ALL;
	ui_layout_draw(&u);
	t0 = now_us();
	for (int i = 0; i < FRAMES; i++) {
		u.dirty = UI_D_PANE(p);
		u.force_full = i % 2 == 0;   /* every cell sent, half the time */
		ui_layout_draw(&u);
	}
	return (now_us() - t0) / FRAMES;
}

static void run(int cols, int rows)
{
	double hist, tun;

	resize_term(rows, cols);
	u.rows = rows;
	u.cols = cols;
	ui_layout(&u);
	hist = frame_us(UI_PANE_HIST);
	tun = frame_us(UI_PANE_TUNABLES);
	printf("%dx%d: histograms (%d curves x 1000 buckets) %.0f us per "
	       "frame; tunables pane %.0f us (%.1fx)\n", cols, rows,
	       ui_hist_count(&u), hist, tun, hist / tun);
}

int main(void)
{
	FILE *out = fopen("/dev/null", "w"), *in = fopen("/dev/null", "r");
	struct pc_focus f;
	struct world *w;

	setenv("LC_ALL", "C.UTF-8", 1);
	if (getenv("HUNCH_SOURCE_ROOT") == NULL)
		setenv("HUNCH_SOURCE_ROOT", HUNCH_SRC, 1);
	w = world_new(NULL, NULL);
	src_sim_script(w->sim, "cpu_inclusive", "*", 0, 0.5, 0.2);
	src_sim_script(w->sim, "sync_wait", "*", 0, 0.3, 0.1);
	world_run(w, 0.4);
	u.label = "bench";
	u.active = u.main_pane = UI_PANE_HIST;
	ui_where_init(&u.where);
	ui_log_init(&u.log, 8);
	u.tree = w->res;
	u.pc = w->pc;
	if (ui_screen_init_on(&u, "xterm-256color", out, in) < 0)
		return 1;
	pc_focus_top(w->res, &f);
	for (size_t i = 0; i < w->cfg->nmet && ui_hist_count(&u) < 9; i++)
		ui_hist_add(&u, w->cfg->met[i].name, &f);
	f.r[0] = pc_res_find(w->res, F_WORK);
	ui_hist_add(&u, "cpu_inclusive", &f);
	world_run(w, 199.8);   /* 999 buckets of 0.2 s, before any fold */
	run(80, 24);
	run(200, 60);
	ui_screen_end(&u);
	return 0;
}

/*
 * test_panes.c - the Histograms, Tunables and Hypotheses panes and the
 * where pane's picker on a newterm() over /dev/null, with a real search
 * on the sim source (tests/consultant/sim_world.h) behind them; the
 * screen is read back with ui_shot.
 *
 * Checks: `m` on a focus enables a metric and opens its histogram, whose
 * legend gains points as the search ticks; braille dots in UTF-8 and the
 * curve's letter in ASCII; `x` starts an experiment by hand; a tunable
 * edited live (out of range refused with the range, a threshold applied
 * and shown in the Hypotheses pane); the why axis as loaded; `e` with
 * $EDITOR scripts: an error shown with file, line and column and the
 * search unchanged, the fix applied (a new hypothesis in the search), a
 * second error dropped with `x` (the file as it was).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pc_steer.h"
#include "pc_where.h"
#include "sim_world.h"
#include "ui.h"
#include "ui_panes.h"

#define AT(f) "<" f ",/Process,/SyncObject,/Files>"

static struct ui u;
static struct world *w;
static char shot_path[] = "/tmp/hunch-test-panes-XXXXXX";

static void setup(void)
{
	FILE *out = fopen("/dev/null", "w"), *in = fopen("/dev/null", "r");

	w = world_new(NULL, NULL);
	src_sim_script(w->sim, "cpu_inclusive", AT(F_WORK), 0, 0.75, 0);
	src_sim_script(w->sim, "cpu_inclusive", "*", 0, 0.05, 0);
	world_run(w, 1.0);
	memset(&u, 0, sizeof(u));
	u.label = "prog";
	u.pid = 100;
	u.t0 = ui_screen_now();
	u.active = u.main_pane = UI_PANE_WHERE;
	u.launched = true;
	ui_where_init(&u.where);
	ui_log_init(&u.log, 8);
	u.tree = w->res;
	u.pc = w->pc;
	if (ui_screen_init_on(&u, "xterm-256color", out, in) < 0) {
		printf("1..0 # SKIP no terminfo for xterm-256color\n");
		exit(0);
	}
	resize_term(24, 80);
	u.rows = 24;
	u.cols = 80;
	ui_layout(&u);
	ui_where_changed(&u);
}

static char lines[64][1024];
static int nlines;

/* Draw everything and read the (virtual) terminal back. */
static void snap(void)
{
	FILE *f;

	u.dirty = UI_D_ALL;
	ui_layout_draw(&u);
	ui_shot_write(&u, shot_path);
	f = fopen(shot_path, "r");
	nlines = 0;
	while (f != NULL && nlines < 64 &&
	       fgets(lines[nlines], sizeof(lines[0]), f)) {
		lines[nlines][strcspn(lines[nlines], "\n")] = '\0';
		nlines++;
	}
	if (f != NULL)
		fclose(f);
}

static bool has(const char *s)
{
	for (int y = 0; y < nlines; y++)
		if (strstr(lines[y], s) != NULL)
			return true;
	return false;
}

/* An exact line on screen. */
static bool has_line(const char *s)
{
	for (int y = 0; y < nlines; y++)
		if (strcmp(lines[y], s) == 0)
			return true;
	return false;
}

static void dump(void)
{
	for (int y = 0; y < nlines; y++)
		tap_diag("| %s", lines[y]);
}

#define SEEN(s, ...) do { snap(); if (!tap_ok(has(s), __VA_ARGS__)) dump(); \
} while (0)
#define LINE(s, ...) do { snap(); if (!tap_ok(has_line(s), __VA_ARGS__))   \
	dump(); } while (0)

static void keys(const char *s)
{
	for (; *s; s++)
		ui_keys_press(&u, *s == '\n' ? '\r' : (unsigned char)*s);
}

static void tick(double until)
{
	world_run(w, until);
}

/* `/work`, f, m, Enter on cpu_inclusive: the histogram pane opens on
 * the new curve, which gains two points per 0.4 s. */
static void test_enable_metric(void)
{
	keys("/work\n");
	keys("f");
	LINE(" focus " AT(F_WORK), "f puts work in the focus");
	keys("m");
	LINE("Enable a metric on " F_WORK ":",
	     "m opens the metric picker on the focus");
	SEEN(" cpu_inclusive      CPU time (inclusive) (CPUs)",
	     "the picker lists the document's metrics with title and units");
	keys("\n");
	tap_eq(u.main_pane, UI_PANE_HIST, "Enter opens the Histograms pane");
	tap_eq(ui_hist_count(&u), 1, "with one curve");
	LINE(">a cpu_inclusive /Code/demo/demo.c/work  enabling",
	     "the legend: letter, metric, focus, state");
	/* The reply comes with the tick at 1.2, the first sample with the
	 * next. */
	tick(1.4);
	LINE(">a cpu_inclusive /Code/demo/demo.c/work  0.75 CPUs, 1 pts",
	     "two ticks later: the value and its first point");
	tick(1.8);
	LINE(">a cpu_inclusive /Code/demo/demo.c/work  0.75 CPUs, 3 pts",
	     "two more ticks: 3 points");
	SEEN("\xe2\xa0", "the curve is drawn in braille (UTF-8)");
	LINE(" global phase, buckets of 0.2s", "the header names the phase "
	     "and the bucket width");
	SEEN("1       \xe2\x94\x82", "the y axis is labelled with the scale's "
	     "top (1)");
	SEEN("CPUs    \xe2\x94\x82", "and the units");
}

/* A phase started at 1.8 s: its start is marked on the time axis; `p`
 * shows the phase's own histograms, which start with it. */
static void test_phase(void)
{
	pc_consult_phase_start(w->pc, "second");
	tick(2.6);
	keys("3");
	SEEN("P1", "the current phase's start is marked P1");
	keys("p");
	LINE(" current phase, buckets of 0.2s", "p: the current phase");
	LINE(">a cpu_inclusive /Code/demo/demo.c/work  0.75 CPUs, 4 pts",
	     "its histogram holds the phase's 4 points");
	SEEN(" 1.8s ", "and its time axis starts at the phase (1.8 s)");
	keys("p");
}

static void test_ascii(void)
{
	bool has_a = false;

	u.utf8 = false;
	ui_layout(&u);
	snap();
	for (int y = 0; y < nlines; y++)
		if (strstr(lines[y], "|") && strchr(strchr(lines[y], '|'), 'a'))
			has_a = true;
	if (!tap_ok(has_a && !has("\xe2\xa0") && !has("\xe2\xa1") &&
		    !has("\xe2\xa2") && !has("\xe2\xa3"), "ASCII: the curve "
		    "is its letter beside a '|' axis, no braille"))
		dump();
	u.utf8 = true;
	ui_layout(&u);
}

/* 160x44: the where axis on the left, the histograms on the right. */
static void test_wide(void)
{
	resize_term(44, 160);
	u.rows = 44;
	u.cols = 160;
	ui_layout(&u);
	keys("3");
	SEEN("\xe2\x94\x82>a cpu_inclusive /Code/demo/demo.c/work  0.75 CPUs, ",
	     "wide: the legend beside the where axis");
	resize_term(24, 80);
	u.rows = 24;
	u.cols = 80;
	ui_layout(&u);
}

/* Ten curves at most (Paradyn's rthist); d removes the selected one. */
static void test_ten_curves(void)
{
	struct pc_focus f;
	const struct pc_config *c = w->cfg;
	int n = 0;

	pc_focus_top(w->res, &f);
	for (size_t i = 0; i < c->nmet && ui_hist_count(&u) < UI_HIST_MAX; i++)
		n += ui_hist_add(&u, c->met[i].name, &f) == 0;
	f.r[0] = pc_res_find(w->res, F_MAIN);
	while (ui_hist_count(&u) < UI_HIST_MAX)
		ui_hist_add(&u, c->met[n++ % c->nmet].name, &f);
	tap_eq(ui_hist_count(&u), UI_HIST_MAX, "ten curves");
	tap_eq(ui_hist_add(&u, "io_ops", &f), -1, "an eleventh is refused");
	LINE("10 curves already: d in the histograms pane removes one",
	     "with the reason in the hint line");
	keys("3");
	LINE(">j active_threads whole program  enabling", "the tenth curve is "
	     "selected: j");
	for (int i = 0; i < 9; i++)
		keys("d");
	tap_eq(ui_hist_count(&u), 1, "d nine times leaves one curve");
	LINE(">a cpu_inclusive /Code/demo/demo.c/work  0.75 CPUs, 7 pts",
	     "the first curve, selected");
}

static void test_experiment(void)
{
	keys("2");
	keys("x");
	LINE("Start an experiment on " F_WORK ":",
	     "x opens the hypothesis picker on the focus");
	keys("\n");
	LINE("CPUbound on " F_WORK " started by hand",
	     "Enter starts CPUbound there (hint line)");
	tap_ok(world_node(w, 1, "CPUbound", AT(F_WORK)) != NULL,
	       "the node is in the running search (phase 1's)");
	tick(4.0);
	TRACE_IS(w, 1, "CPUbound", AT(F_WORK), "queued pending active true");
}

static void test_tunables(void)
{
	keys("4");
	LINE(" costLimit                  0.05     [0.001, 1]     slowdown",
	     "Tunables: name, value, range, units");
	tap_ok(!has("hysteresisRange"), "developer tunables are hidden");
	keys("D");
	SEEN(" hysteresisRange            0.05     [0, 1]         fraction "
	     "(dev)", "D shows them, marked (dev)");
	keys("D");
	for (size_t i = 0; i < w->cfg->ntun; i++) {  /* to PC_CPUThreshold */
		if (strcmp(w->cfg->tun[i].name, "PC_CPUThreshold") == 0)
			break;
		if (!w->cfg->tun[i].developer)
			keys("j");
	}
	keys("\n5\n");
	SEEN("refused: threshold PC_CPUThreshold = 5 is out of its tunable's "
	     "range [0, 1]", "5 is refused with the range");
	keys("\n0.8\n");
	SEEN("PC_CPUThreshold = 0.8 (was 0.3)", "0.8 is applied");
	tap_ok(pc_tunables_get(w->cfg, "PC_CPUThreshold") == 0.8,
	       "the search has it");
	keys("\nabc\n");
	SEEN("PC_CPUThreshold: \"abc\" is not a number", "text is refused");
	keys("5");
	tap_eq(u.active, UI_PANE_HYP, "the prompt is closed: 5 switches to "
	       "the Hypotheses pane again");
}

static void test_hypotheses(void)
{
	keys("5");
	LINE(" topLevelHypothesis  (true when a child is)",
	     "Hypotheses: the virtual root");
	LINE("   CPUbound  cpu_inclusive / active_processes@top > "
	     "PC_CPUThreshold = 0.8", "CPUbound's expression, comparison "
	     "and the threshold's current value");
}

static char dir[] = "/tmp/hunch-test-panes-d-XXXXXX";

static void write_script(const char *name, const char *sed)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	fprintf(f, "#!/bin/sh\nsed -i '%s' \"$1\"\n", sed);
	fclose(f);
	chmod(path, 0755);
}

static void use_editor(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	setenv("EDITOR", path, 1);
}

/* " FILE:LINE:COL:" of the "threshold" key on HotLoop's line. */
static void where_error(const char *file, char *buf, size_t len)
{
	FILE *f = fopen(file, "r");
	char line[1024];
	int n = 0;

	snprintf(buf, len, "(no HotLoop in %s)", file);
	while (f && fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, "\"HotLoop\"") && strstr(line, "\"threshold\""))
			snprintf(buf, len, " %s:%d:%d:", file, n,
				 (int)(strstr(line, "\"threshold\"") - line + 1));
	}
	if (f)
		fclose(f);
}

/* `e` with an editor that breaks the file, then one that fixes it;
 * then a break dropped with `x`. */
static void test_edit(void)
{
	char file[512], want[1024], msg[700];
	char *before;
	FILE *f;

	setenv("XDG_CONFIG_HOME", dir, 1);
	unsetenv("VISUAL");
	snprintf(file, sizeof(file), "%s/hunch/hypotheses.json", dir);
	write_script("bad.sh", "s/^  \"hypotheses\": {$/  \"hypotheses\": {\\n"
		     "    \"HotLoop\": { \"parent\": \"topLevelHypothesis\", "
		     "\"description\": \"x\", \"metric\": \"cpu_inclusive\", "
		     "\"threshold\": \"PC_CPUThreshld\", \"compare\": \"gt\" },/");
	write_script("fix.sh", "s/PC_CPUThreshld/PC_CPUThreshold/");
	use_editor("bad.sh");
	keys("5e");
	LINE(" 1 error: the search is unchanged. e edits again, x drops the "
	     "change.", "a broken edit is not applied");
	where_error(file, want, sizeof(want));
	LINE(want, "the error names file, line and column:%s", want);
	LINE(" $.hypotheses.HotLoop.threshold: unknown tunable "
	     "\"PC_CPUThreshld\"; expected a", "then the JSON path and what "
	     "is wrong");
	tap_eq(pc_config_hypo_find(w->cfg, "HotLoop"), -1,
	       "the search is unchanged");
	use_editor("fix.sh");
	keys("e");
	snprintf(msg, sizeof(msg), " applied %s: 1 new hypothesis", file);
	LINE(msg, "the fixed file is applied");
	ui_keys_press(&u, KEY_DOWN);   /* the why axis is a line taller than the pane */
	LINE("   HotLoop  cpu_inclusive > PC_CPUThreshold = 0.8",
	     "HotLoop is on the why axis, with the live threshold kept");
	tap_ok(world_node(w, 1, "HotLoop", TOP) != NULL,
	       "and in the running search");
	f = fopen(file, "r");
	before = NULL;
	if (f) {
		size_t n = 0;

		if (getdelim(&before, &n, '\0', f) < 0)
			before = NULL;
		fclose(f);
	}
	write_script("bad2.sh", "s/\"HotLoop\": {/\"HotLoop\": {{/");
	use_editor("bad2.sh");
	keys("e");
	SEEN("error", "a second broken edit is listed");
	keys("x");
	SEEN(" change dropped: /tmp/hunch-test-panes-d-", "x drops it");
	{
		char *after = NULL;
		size_t n = 0;

		f = fopen(file, "r");
		if (f && getdelim(&after, &n, '\0', f) < 0)
			after = NULL;
		if (f)
			fclose(f);
		tap_ok(before && after && strcmp(before, after) == 0,
		       "the file is back as it was before the broken edit");
		free(after);
	}
	free(before);
}

/* A first edit that breaks the file the edit made: x removes the file
 * (a search of its own, so that the defaults are its only file). */
static void test_drop_made(void)
{
	struct world *w2 = world_new(NULL, NULL);
	char d2[600], file[700];

	snprintf(d2, sizeof(d2), "%s/second", dir);
	mkdir(d2, 0755);
	setenv("XDG_CONFIG_HOME", d2, 1);
	snprintf(file, sizeof(file), "%s/hunch/hypotheses.json", d2);
	world_run(w2, 0.4);
	u.pc = w2->pc;
	use_editor("bad.sh");
	keys("5e");
	LINE(" 1 error: the search is unchanged. e edits again, x drops the "
	     "change.", "a broken first edit");
	tap_eq(access(file, F_OK), 0, "the edit made %s", file);
	keys("x");
	SEEN(" change dropped: /tmp/hunch-test-panes-d-", "x drops it");
	tap_ok(access(file, F_OK) < 0, "and removes the file it made");
	u.pc = w->pc;
	pc_steer_forget(w2->pc);
	world_free(w2);
}

int main(void)
{
	int fd = mkstemp(shot_path);

	if (fd < 0)
		return 1;
	close(fd);
	setenv("LC_ALL", "C.UTF-8", 1);   /* braille needs UTF-8 */
	setup();
	test_enable_metric();
	test_phase();
	test_ascii();
	test_wide();
	test_ten_curves();
	test_experiment();
	test_tunables();
	test_hypotheses();
	if (mkdtemp(dir) != NULL) {
		test_edit();
		test_drop_made();
	}
	ui_screen_end(&u);
	unlink(shot_path);
	return tap_done();
}

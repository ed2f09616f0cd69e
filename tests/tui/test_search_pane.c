/*
 * test_search_pane.c - the Search pane on a graph whose every node is
 * known: the real consultant (pc_consult over a sim source, the shipped
 * hypotheses) with its global search built through pc_shg_add and each
 * node's state set by hand, drawn on a newterm() over /dev/null at 80x24
 * and read back from curscr (ui_shot), as tests/tui/test_ui.c does.
 *
 * Checks the rows exactly: markers for every state (T F ? . x; * + :),
 * why '>' and where '@' refinements and a shadow node '^', the bar and
 * numbers; the filters; follow and back; folding; the detail view's
 * numbers; pause and a new phase through the keys; the change check;
 * the pane's state kept per dashboard (two views of one search).
 *
 *   test_search_pane HYPOTHESES.json
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pc_search.h"
#include "pc_where.h"
#include "src_sim.h"
#include "tap.h"
#include "ui.h"
#include "ui_search.h"

/* String equality; both strings in the output on failure. */
static void tap_str_eq(const char *got, const char *want, const char *name)
{
	if (!tap_ok(strcmp(got, want) == 0, "%s", name)) {
		tap_diag("  got:  |%s|", got);
		tap_diag("  want: |%s|", want);
	}
}

static struct ui u;
static char shot_path[] = "/tmp/hunch-test-search-XXXXXX";
static int n_main, n_thread, n_eswt;

static void add_fn(const char *fn)
{
	struct pc_discovery d = {
		.kind = PC_DISC_FUNCTION, .module = "prog", .srcfile = "main.c",
		.function = fn, .addr = 0x1000,
	};

	pc_where_apply(u.tree, &d);
}

static int hyp(const char *name)
{
	for (size_t i = 0; i < u.pc->cfg->nhyp; i++)
		if (strcmp(u.pc->cfg->hyp[i].name, name) == 0)
			return (int)i;
	tap_diag("no hypothesis %s", name);
	exit(1);
}

/* Add (hypothesis, focus path or NULL for the top) under `parent`. */
static struct pc_node *node(int parent, const char *h, const char *path,
			    bool why)
{
	struct pc_focus f;
	char name[512], fname[400];
	bool created;
	int id;

	pc_focus_top(u.tree, &f);
	if (path != NULL) {
		pc_res_id r = pc_res_find(u.tree, path);
		int k = strncmp(path, "/Process", 8) == 0 ? 1 : 0;

		f.r[k] = r;
	}
	pc_focus_name(u.tree, &f, fname, sizeof(fname));
	snprintf(name, sizeof(name), "%s%s", h, fname);
	id = pc_shg_add(u.pc->global, parent, hyp(h), &f, why, name, 1.0,
			&created);
	return u.pc->global->nodes[id];
}

static void concluded(struct pc_node *n, enum pc_truth t, double v,
		      double th, double when)
{
	n->truth = t;
	n->value = v;
	n->threshold = th;
	n->guess = t == PC_TRUE;
	n->t_start = when - 1;
	n->t_concluded = when;
	if (t == PC_TRUE)
		n->t_true_since = when;
}

/* The graph: the root; CPUbound false; ExcessiveSyncWaitingTime true
 * and active, refined where into main (tested, not concluded, active)
 * and the thread (never evaluated, queued), which main's refinement
 * reaches a second time (a shadow); ExcessiveIOBlockingTime could not be
 * enabled. */
static void build(void)
{
	struct pc_node *root, *n;

	u.pc->global = pc_shg_new(0, "global", 0);
	root = node(-1, "topLevelHypothesis", NULL, true);
	u.pc->global->root = root->id;
	root->truth = PC_TRUE;
	root->is_virtual = true;
	root->t_true_since = 2.5;
	concluded(node(root->id, "CPUbound", NULL, true), PC_FALSE, 0.06, 0.3,
		  2.5);
	n = node(root->id, "ExcessiveSyncWaitingTime", NULL, true);
	concluded(n, PC_TRUE, 0.6, 0.2, 3.5);
	n->active = true;
	n->hys = 0.15;
	n->held_s = 1.2;
	snprintf(n->how, sizeof(n->how), "statistics");
	snprintf(n->trace, sizeof(n->trace), "queued pending active true");
	n_eswt = n->id;
	n = node(n_eswt, "ExcessiveSyncWaitingTime",
		 "/Code/prog/main.c/main", false);
	n->active = true;
	n->guess = 1;
	n->value = 0.1;
	n->threshold = 0.2;
	n->t_start = 4.0;
	n_main = n->id;
	n = node(n_eswt, "ExcessiveSyncWaitingTime", "/Process/42/42:main",
		 false);
	n->queued = true;
	n_thread = n->id;
	node(n_main, "ExcessiveSyncWaitingTime", "/Process/42/42:main", false);
	n = node(root->id, "ExcessiveIOBlockingTime", NULL, true);
	n->failed = true;
	u.pc->started = true;
	u.pc->now = 6.0;
}

static void setup(const char *hypotheses)
{
	FILE *out = fopen("/dev/null", "w"), *in = fopen("/dev/null", "r");
	struct pc_config *cfg = pc_config_new();
	struct pc_diags ds = { 0 };
	struct hunch_err e = { 0 };
	struct pc_discovery t = {
		.kind = PC_DISC_THREAD, .pid = 42, .tid = 42,
		.function = "main",
	};

	if (pc_config_load_file(cfg, hypotheses, &ds, &e) < 0) {
		printf("Bail out! %s\n", e.msg);
		exit(1);
	}
	memset(&u, 0, sizeof(u));
	u.label = "prog";
	u.pid = 42;
	u.t0 = ui_screen_now();
	u.active = u.main_pane = UI_PANE_SEARCH;
	ui_where_init(&u.where);
	ui_log_init(&u.log, 8);
	u.tree = pc_res_tree_new();
	add_fn("main");
	add_fn("compute");
	pc_where_apply(u.tree, &t);
	u.pc = pc_consult_new(cfg, src_sim_source(src_sim_new()), u.tree);
	build();
	if (ui_screen_init_on(&u, "xterm-256color", out, in) < 0) {
		printf("1..0 # SKIP no terminfo for xterm-256color\n");
		exit(0);
	}
	resize_term(24, 80);
	u.rows = 24;
	u.cols = 80;
	ui_layout(&u);
}

/* Line y of what is on the (virtual) terminal. */
static const char *line(int y)
{
	static char buf[64][1024];
	FILE *f;
	int i = 0;

	u.dirty = UI_D_ALL;
	ui_layout_draw(&u);
	ui_shot_write(&u, shot_path);
	f = fopen(shot_path, "r");
	while (f != NULL && i < 64 && fgets(buf[i], sizeof(buf[i]), f)) {
		buf[i][strcspn(buf[i], "\n")] = '\0';
		i++;
	}
	if (f != NULL)
		fclose(f);
	return y < i ? buf[y] : "";
}

/* Rows 3.. of the pane (after its header), joined with '\n'. */
static const char *rows(int n)
{
	static char all[8192];
	size_t off = 0;

	all[0] = '\0';
	for (int y = 4; y < 4 + n; y++)
		off += (size_t)snprintf(all + off, sizeof(all) - off, "%s%s",
					y > 4 ? "\n" : "", line(y));
	return all;
}

static void key(int k)
{
	ui_keys_press(&u, k);
}

static void test_rows(void)
{
	tap_str_eq(line(3), " Global search: 6 nodes, 2 true, 2 active, "
		   "searching", "header: nodes, true, active, state");
	tap_str_eq(rows(7),
		"  T  topLevelHypothesis  whole program                  "
		"                    2.5s\n"
		"   >F  CPUbound  whole program                       "
		"\xe2\x96\x88\xc2\xb7\xc2\xb7\xc2\xb7|\xc2\xb7\xc2\xb7"
		"\xc2\xb7  0.06/0.3     2.5s\n"
		"   >T* ExcessiveSyncWaitingTime  whole program       "
		"\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88\xe2\x96"
		"\x88\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88   0.6/0.2     3"
		".5s\n"
		"     @?* ExcessiveSyncWaitingTime  main              "
		"\xe2\x96\x88\xe2\x96\x88\xc2\xb7\xc2\xb7|\xc2\xb7\xc2"
		"\xb7\xc2\xb7   0.1/0.2     4.0s\n"
		"       ^.: ExcessiveSyncWaitingTime  42:main            "
		"                    1.0s\n"
		"     @.: ExcessiveSyncWaitingTime  42:main              "
		"                    1.0s\n"
		"   >x  ExcessiveIOBlockingTime  whole program           "
		"                    1.0s",
		"rows: every state's letter, activity, why '>' / where '@', "
		"the shadow '^' (the queued thread node, reached again), bars, "
		"numbers, times");
	tap_str_eq(line(15), "topLevelHypothesis</Code,/Process,"
		   "/SyncObject,/Files>", "the cursor's node in full, last");
	u.utf8 = false;  /* as under LANG=C */
	tap_str_eq(line(6), "   >T* ExcessiveSyncWaitingTime  whole program  "
		   "     ########   0.6/0.2     3.5s", "ASCII: the bar in #");
	tap_str_eq(line(7), "     @?* ExcessiveSyncWaitingTime  main        "
		   "      ##..|...   0.1/0.2     4.0s",
		   "ASCII: . for the empty cells, | for the threshold");
	u.utf8 = true;
}

static void test_filters(void)
{
	key('f');
	tap_ok(strstr(line(3), "-false") != NULL &&
	       strstr(rows(8), "CPUbound") == NULL,
	       "f hides the false node (the header says -false)");
	key('f');
	key('i');
	tap_str_eq(rows(5),
		"  T  topLevelHypothesis  whole program                     "
		"                 2.5s\n"
		"   >T* ExcessiveSyncWaitingTime  whole program       "
		"\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88"
		"\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88   0.6/0.2     3.5s\n"
		"     @?* ExcessiveSyncWaitingTime  main              "
		"\xe2\x96\x88\xe2\x96\x88\xc2\xb7\xc2\xb7|\xc2\xb7\xc2\xb7\xc2\xb7"
		"   0.1/0.2     4.0s\n"
		"\n",
		"i hides what is not being tested (true nodes stay)");
	key('i');
}

/* The pane's state is its dashboard's (u.search_view), not the file's:
 * another dashboard's Search pane on the same search, with a view of its
 * own, is not filtered by this one's `f`, and its cursor moves alone. */
static void test_two_views(void)
{
	struct ui_search_view *mine;

	key('f');
	mine = u.search_view;
	u.search_view = NULL;   /* another dashboard's: a view of its own */
	tap_ok(strstr(line(3), "-false") == NULL &&
	       strstr(rows(8), "CPUbound") != NULL,
	       "another dashboard's Search pane is not filtered by this "
	       "one's f");
	key(KEY_DOWN);
	key(KEY_DOWN);
	tap_str_eq(line(15), "ExcessiveSyncWaitingTime</Code,/Process,"
		   "/SyncObject,/Files>", "its cursor moves (j j)");
	ui_search_free(&u);
	u.search_view = mine;
	tap_ok(strstr(line(3), "-false") != NULL &&
	       strstr(rows(8), "CPUbound") == NULL &&
	       strcmp(line(15), "topLevelHypothesis</Code,/Process,"
		      "/SyncObject,/Files>") == 0,
	       "this one keeps its filter and its cursor on the root");
	key('f');
}

static void test_follow_fold(void)
{
	key(KEY_DOWN);
	key(KEY_DOWN);
	tap_str_eq(line(15), "ExcessiveSyncWaitingTime</Code,/Process,"
		   "/SyncObject,/Files>", "j j: the cursor's node in full");
	key('\r');
	tap_ok(strstr(line(3), "(followed; Bksp back)") != NULL &&
	       strncmp(line(4), "  T* ExcessiveSyncWaitingTime  whole",
		       36) == 0 &&
	       strncmp(line(5), "   @?* ExcessiveSyncWaitingTime  main",
		       37) == 0,
	       "Enter follows: the node is the top, its refinements under it");
	key(KEY_BACKSPACE);
	tap_ok(strncmp(line(4), "  T  topLevelHypothesis", 23) == 0 &&
	       strcmp(line(15), "ExcessiveSyncWaitingTime</Code,/Process,"
		      "/SyncObject,/Files>") == 0,
	       "Backspace goes back, the cursor on the node it followed");
	key(KEY_LEFT);
	tap_ok(strncmp(line(7), "   >x  ExcessiveIOBlockingTime", 30) == 0,
	       "Left folds the node's refinements away");
	key(KEY_RIGHT);
	tap_ok(strncmp(line(7), "     @?* ExcessiveSyncWaitingTime  main",
		       39) == 0, "Right opens them again");
}

static void test_detail(void)
{
	key('d');
	tap_str_eq(line(3), " T* ExcessiveSyncWaitingTime: true, active   "
		   "(d or Bksp: back)", "d: the node's state in words");
	tap_str_eq(line(4), " focus       </Code,/Process,/SyncObject,"
		   "/Files>", "d: the full focus");
	tap_str_eq(line(5), " value       0.6   threshold 0.2 "
		   "(PC_SyncThreshold)", "d: value and threshold");
	tap_str_eq(line(6), " hysteresis  0.15   guess true, held 1.2 s "
		   "(statistics)", "d: hysteresis, guess, how long it held");
	tap_str_eq(line(7), " time true   since 3.5 s (for 2.5 s)",
		   "d: time true");
	tap_str_eq(line(8), " times       created 1.0 s, last started "
		   "2.5 s, concluded 3.5 s", "d: created, started, concluded");
	tap_str_eq(line(11), " graph       why of topLevelHypothesis whole "
		   "program; 2 children", "d: its place in the graph");
	tap_str_eq(line(12), " instances   none now (not being tested); it "
		   "measures:", "d: no instance (none enabled here)");
	tap_str_eq(line(13), "             sync_wait, active_processes",
		   "d: the metrics it measures");
	tap_str_eq(line(14), " trace       queued pending active true",
		   "d: the trace of its states, last");
	key(KEY_DOWN);
	key(KEY_DOWN);
	tap_str_eq(line(3), " T* ExcessiveSyncWaitingTime: true, active   "
		   "(d or Bksp: back)", "d: j does not scroll what fits");
	resize_term(16, 80);
	u.rows = 16;
	ui_layout(&u);
	key(KEY_DOWN);
	key(KEY_DOWN);
	tap_str_eq(line(3), " value       0.6   threshold 0.2 "
		   "(PC_SyncThreshold)", "d: at 80x16, j j scroll it by two "
		   "lines");
	for (int i = 0; i < 6; i++)
		key(KEY_DOWN);
	tap_str_eq(line(10), " trace       queued pending active true",
		   "d: ... and no further than its last line (the trace)");
	resize_term(24, 80);
	u.rows = 24;
	ui_layout(&u);
	key(KEY_BACKSPACE);
	tap_ok(strncmp(line(3), " Global search:", 15) == 0,
	       "Backspace closes the evidence");
}

static void test_steer(void)
{
	bool changed;

	changed = ui_search_changed(&u);
	tap_ok(!ui_search_changed(&u), "nothing changed: the pane is not "
	       "marked for drawing (first call: %d)", changed);
	u.pc->global->nodes[n_main]->value = 0.3;
	tap_ok(ui_search_changed(&u), "a value changed: it is");
	key('p');
	tap_ok(u.pc->global->state == PC_SEARCH_PAUSED &&
	       strstr(line(3), ", paused") != NULL,
	       "p pauses the search (pc_consult_pause)");
	key('p');
	tap_ok(u.pc->global->state == PC_SEARCH_RUNNING,
	       "p again resumes it");
	key('c');
	tap_str_eq(u.message, "no current phase yet: P starts one",
		   "c without a phase says so");
	key('P');
	tap_ok(u.pc->current != NULL &&
	       strncmp(line(3), " Phase 1 search: ", 17) == 0,
	       "P starts a phase and shows its search");
	key('c');
	tap_ok(strncmp(line(3), " Global search: ", 16) == 0,
	       "c shows the global search again");
	(void)n_thread;
}

/* A focus longer than the screen is wide: the cursor node's name wraps
 * over the pane's last rows, whole, and the tree gives up a row. */
static void test_long_focus(void)
{
	static const char fn[] = "parse_the_configuration_file_and_every_"
		"included_fragment_of_it_recursively";
	char fpath[160];
	struct pc_node *n;

	add_fn(fn);
	snprintf(fpath, sizeof(fpath), "/Code/prog/main.c/%s", fn);
	n = node(u.pc->global->root, "CPUbound", fpath, false);
	tap_ok(ui_search_changed(&u), "long focus: a new node changes the "
	       "pane");
	for (int i = 0; i < 12; i++)
		key(KEY_DOWN);
	tap_str_eq(n->name, "CPUbound</Code/prog/main.c/parse_the_"
		   "configuration_file_and_every_included_fragment_of_it_"
		   "recursively,/Process,/SyncObject,/Files>",
		   "long focus: the node's name is 130 columns");
	tap_str_eq(line(14), "CPUbound</Code/prog/main.c/parse_the_"
		   "configuration_file_and_every_included_fragm",
		   "long focus: its first 79 columns (the pane's width) on the pane's next to "
		   "last row");
	tap_str_eq(line(15), "ent_of_it_recursively,/Process,/SyncObject,"
		   "/Files>", "long focus: the rest on the last row, nothing "
		   "cut");
	tap_str_eq(line(11), "   @.  CPUbound  parse_the_configuration_file_"
		   "and_ev                        1.0s", "long focus: its tree "
		   "row (the cursor), last of the tree");
	key(KEY_UP);
	tap_str_eq(line(15), "ExcessiveIOBlockingTime</Code,/Process,"
		   "/SyncObject,/Files>", "a short name again: one row");
	tap_str_eq(line(14), "", "and the second row of the long name is "
		   "gone");
}

/* A node stopped (to make room, shed, or at the program's end): the
 * detail shows the instance it had, released, and its history, not
 * "none now". */
static void test_detail_stopped(void)
{
	struct pc_node *n = u.pc->global->nodes[n_eswt];
	int id = pc_datamgr_acquire(&u.pc->dm, "sync_wait", &n->focus, 6.0);

	struct pc_minst *m;

	tap_ok(id > 0, "an instance of sync_wait for the node (%d)", id);
	m = pc_datamgr_get(&u.pc->dm, id);
	m->state = PC_MI_ENABLED;
	/* what it measured before the stop: rising, then none */
	for (int k = 0; k < 8; k++)
		pc_hist_add(&m->global, 0.5 * k, 0.5 * (k + 1), 0.1 * (k + 1));
	n->inst[0] = id;
	n->nin = 1;
	pc_cost_node_stop(u.pc, n, "stopped");
	key('d');
	tap_str_eq(line(12), " instances   #1 sync_wait released, last nan, "
		   "predicted 0.00% </Code,/Process,",
		   "d on a stopped node: the instance it had, released");
	tap_str_eq(line(13), "             /SyncObject,/Files>",
		   "d: its focus wrapped to the pane");
	tap_str_eq(line(14), "             ▁▁▂▂▂▃▃▄▄▄▅▅▆▆▆▇▇███",
		   "d: and its history as a sparkline (4 s rising, 0.2 s a "
		   "bucket)");
	key(KEY_BACKSPACE);
	/* as it was for the tests after */
	n->active = true;
	u.pc->nactive++;
	snprintf(n->trace, sizeof(n->trace), "queued pending active true");
}

int main(int argc, char **argv)
{
	int fd = mkstemp(shot_path);

	if (fd >= 0)
		close(fd);
	if (argc != 2) {
		printf("Bail out! usage: test_search_pane HYPOTHESES.json\n");
		return 1;
	}
	setup(argv[1]);
	test_rows();
	test_filters();
	test_two_views();
	test_follow_fold();
	test_detail();
	test_detail_stopped();
	test_steer();
	test_long_focus();
	ui_screen_end(&u);
	unlink(shot_path);
	return tap_done();
}

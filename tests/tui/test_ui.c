/*
 * test_ui.c - the dashboard's pieces without a program or tmux: a
 * newterm() on /dev/null at a chosen size, a where axis filled through
 * pc_where_apply, and the screen read back from curscr (ui_shot).
 *
 * Checks: the status line fits 80 columns in every state, with long names
 * too; the where pane's default folds, `/` with n/N over closed subtrees,
 * focus text; the log's sanitising, line splitting and ring; where the
 * findings strip goes at each size (its rows out of the log strip's,
 * then the pane's), and its title and summary rows.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pc_where.h"
#include "tap.h"
#include "ui.h"
#include "ui_findings.h"

static struct ui u;
static char shot_path[] = "/tmp/hunch-test-ui-XXXXXX";

static void add_fn(const char *mod, const char *file, const char *fn)
{
	struct pc_discovery d = {
		.kind = PC_DISC_FUNCTION, .module = mod, .srcfile = file,
		.function = fn, .addr = 0x1000,
	};

	pc_where_apply(u.tree, &d);
}

static void setup(void)
{
	FILE *out = fopen("/dev/null", "w"), *in = fopen("/dev/null", "r");

	memset(&u, 0, sizeof(u));
	u.label = "prog";
	u.pid = 1234567;
	u.t0 = ui_screen_now();
	u.active = u.main_pane = UI_PANE_WHERE;
	u.launched = true;
	ui_where_init(&u.where);
	ui_log_init(&u.log, 8);
	u.tree = pc_res_tree_new();
	add_fn("prog", "main.c", "main");
	add_fn("prog", "main.c", "compute");
	add_fn("prog", "<unknown>", "_start");
	add_fn("libc.so.6", "malloc.c", "malloc");
	add_fn("libc.so.6", "malloc.c", "calloc");
	add_fn("libc.so.6", "string.c", "strlen");
	{
		struct pc_discovery t = {
			.kind = PC_DISC_THREAD, .pid = 42, .tid = 42,
			.function = "main",
		};

		pc_where_apply(u.tree, &t);
	}
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

/* Line y of what is on the (virtual) terminal. */
static const char *screen_line(int y)
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

static bool screen_has(const char *s)
{
	for (int y = 0; y < u.rows; y++)
		if (strstr(screen_line(y), s) != NULL)
			return true;
	return false;
}

static void test_status(void)
{
	double t0;
	static const char *const labels[] = {
		"prog", "a-program-with-a-very-long-name-indeed",
	};

	for (size_t i = 0; i < 2; i++) {
		u.label = labels[i];
		u.st = (struct src_live_status){ .nthreads = 1234 };
		tap_ok(ui_screen_width(&u, screen_line(0)) <= 80 &&
		       strstr(screen_line(0), "| no search yet") != NULL &&
		       strstr(screen_line(0), "running") != NULL,
		       "status line, running, label of %zu chars: fits 80 "
		       "columns with the search fields", strlen(labels[i]));
		u.st = (struct src_live_status){
			.ended = true, .killed = true, .signo = 11, .core = true,
		};
		tap_ok(strstr(screen_line(0), "killed SIGSEGV (core)") != NULL
		       && ui_screen_width(&u, screen_line(0)) <= 80,
		       "status line, killed: 'killed SIGSEGV (core)' fits");
		u.st = (struct src_live_status){ .ended = true, .exit_code = 3 };
		tap_ok(strstr(screen_line(0), "exited 3") != NULL,
		       "status line, exited: 'exited 3'");
	}
	u.label = "prog";
	u.st = (struct src_live_status){ .nthreads = 1 };
	u.search = (struct ui_search_status){
		.have = true, .sample_hz = 5, .cost = 0.012, .cost_limit = 0.05,
		.active = 3, .pending = 1, .state = "searching",
	};
	tap_ok(strstr(screen_line(0), "| 5Hz 1.2%/5% exp 3+1 searching") != NULL
	       && ui_screen_width(&u, screen_line(0)) <= 80,
	       "status line: the search's fields once it supplies them, "
	       "within 80 columns (%s)", screen_line(0));
	/* the longest left part: the thread count gives way, never the
	 * search's state word at the end */
	u.pid = 4194304;
	u.label = "a-program-with-a-very-long-name-indeed";
	u.st = (struct src_live_status){
		.ended = true, .killed = true, .signo = 11, .core = true,
	};
	/* a start where t0 + 36000 - t0 is 35999.99999999999 in doubles:
	 * still 10:00:00 (it read 9:59:59 at such a start) */
	t0 = u.t0;
	u.t0 = 36788.12;
	u.t_end = u.t0 + 36000;
	u.search.active = 1000;
	u.search.pending = 1000;
	tap_ok(strcmp(screen_line(0), " a pid 4194304 killed SIGSEGV (core) "
		      "10:00:00  | 5Hz 1.2%/5% 1000+1000 searching")
	       == 0, "status line: killed, 10 hours, 2000 experiments: the "
	       "thread count goes, then the name, the state word stays "
	       "at the end (%s)",
	       screen_line(0));
	u.pid = 1234567;
	u.label = "prog";
	u.t0 = t0;
	u.t_end = 0;
	u.search.active = 3;
	u.search.pending = 1;
	u.st = (struct src_live_status){ .nthreads = 1 };
	resize_term(24, 160);
	u.cols = 160;
	ui_layout(&u);
	tap_ok(strstr(screen_line(0), "| rate 5 Hz  cost 1.2%/5.0%  act 3 pend "
		      "1  searching") != NULL,
	       "status line: all of them on a wider terminal");
	resize_term(24, 80);
	u.cols = 80;
	ui_layout(&u);
	u.search.have = false;
}

static void test_where(void)
{
	char focus[256];

	tap_ok(screen_has("\xe2\x96\xb8 <unknown> (1)"),
	       "where: the executable's <unknown> file starts closed");
	tap_ok(screen_has("    compute"), "where: its own files start open");
	tap_ok(screen_has("\xe2\x96\xb8 libc.so.6 (3 functions)"),
	       "where: a library starts closed, with its function count");
	tap_ok(!screen_has("strlen"), "where: so its functions are hidden");
	strcpy(u.where.query, "alloc");
	u.where.qlen = 5;
	u.where.search_from = u.where.cur_id;
	ui_where_search(&u, +1, false);
	tap_ok(strcmp(pc_res_get(u.tree, u.where.cur_id)->path,
		      "/Code/libc.so.6/malloc.c") == 0,
	       "where: / alloc finds malloc.c first, inside closed libc");
	tap_ok(screen_has("string.c (1)"), "where: and opens libc (its files)");
	ui_where_search(&u, +1, true);
	tap_ok(strcmp(pc_res_get(u.tree, u.where.cur_id)->name, "calloc") == 0,
	       "where: n goes to calloc (children by name)");
	ui_where_search(&u, +1, true);
	tap_ok(strcmp(pc_res_get(u.tree, u.where.cur_id)->name, "malloc") == 0,
	       "where: n again to malloc");
	ui_where_search(&u, +1, true);
	tap_ok(strcmp(pc_res_get(u.tree, u.where.cur_id)->name, "malloc.c") == 0,
	       "where: n again wraps around to malloc.c");
	ui_where_search(&u, -1, true);
	tap_ok(strcmp(pc_res_get(u.tree, u.where.cur_id)->name, "malloc") == 0,
	       "where: N goes back to malloc");
	ui_where_key(&u, 'f');
	ui_status_focus_text(&u, focus, sizeof(focus));
	tap_ok(strcmp(focus, "</Code/libc.so.6/malloc.c/malloc,/Process,"
		      "/SyncObject,/Files>") == 0, "where: f sets the focus: %s",
	       focus);
	strcpy(u.where.query, "nothing-like-this");
	u.where.qlen = strlen(u.where.query);
	ui_where_search(&u, +1, true);
	tap_ok(u.where.query_failed && strcmp(pc_res_get(u.tree,
	       u.where.cur_id)->name, "malloc") == 0,
	       "where: no match: says so and stays");
}

static void test_log(void)
{
	int p[2];
	const char data[] = "a\033[2Jb\n\tc\rpart";

	if (pipe(p) != 0)
		return;
	u.log.fd[0] = p[0];
	tap_ok(write(p[1], data, sizeof(data) - 1) ==
	       (ssize_t)sizeof(data) - 1, "log: wrote to the pipe");
	close(p[1]);
	ui_log_read(&u, 0);
	ui_log_read(&u, 0);
	tap_eq(u.log.n, 3, "log: three lines (newline, carriage return, "
	       "and the unfinished one at end of file)");
	tap_ok(strcmp(u.log.lines[0].text, "a?[2Jb") == 0,
	       "log: ESC shows as '?' (%s)", u.log.lines[0].text);
	tap_ok(strcmp(u.log.lines[2].text, "part") == 0,
	       "log: the last piece is kept at end of file");
	tap_eq(u.log.fd[0], -1, "log: the pipe is closed at end of file");
	for (int i = 0; i < 20; i++)
		ui_log_add(&u, UI_LOG_HUNCH, "message %d", i);
	tap_eq(u.log.n, 8, "log: the ring keeps its capacity");
	tap_ok(strcmp(u.log.lines[(u.log.first + 7) % u.log.cap].text,
		      "message 19") == 0, "log: and the newest line");
}

static void size_to(int cols, int rows)
{
	resize_term(rows, cols);
	u.rows = rows;
	u.cols = cols;
	ui_layout(&u);
}

static bool rect_is(const struct ui_rect *r, int y, int x, int h, int w)
{
	if (r->y == y && r->x == x && r->h == h && r->w == w)
		return true;
	tap_diag("  got y %d x %d h %d w %d, want %d %d %d %d", r->y, r->x,
		 r->h, r->w, y, x, h, w);
	return false;
}

static bool line_is(int y, const char *want)
{
	const char *got = screen_line(y);

	if (strcmp(got, want) == 0)
		return true;
	tap_diag("  row %d: got '%s', want '%s'", y, got, want);
	return false;
}

static char *rule(char *buf, const char *head, int cols)
{
	int n = cols - (int)strlen(head);

	strcpy(buf, head);
	for (int i = 0; i < n; i++)
		strcat(buf, "\xe2\x94\x80");   /* ─ */
	return buf;
}

static void test_findings_layout(void)
{
	char buf[1024];

	u.find_on = true;
	u.active = u.main_pane = UI_PANE_WHERE;
	size_to(80, 24);
	tap_ok(rect_is(&u.r_pane[UI_PANE_WHERE], 2, 0, 14, 80),
	       "80x24: the where pane keeps its 14 rows beside the strip");
	tap_ok(rect_is(&u.r_find, 16, 0, 2, 80),
	       "80x24: the strip under it, its title and one row");
	tap_ok(rect_is(&u.r_pane[UI_PANE_LOG], 18, 0, 5, 80),
	       "80x24: the log strip gives it its two rows");
	tap_ok(line_is(16, rule(buf, " Findings ", 80)),
	       "80x24: the strip's title, ruled to the edge");
	tap_ok(line_is(17, "  no search"), "80x24: no search, and it says so");
	size_to(160, 44);
	tap_ok(rect_is(&u.r_find, 30, 0, 2, 160),
	       "160x44: the strip across the screen over the log");
	tap_ok(rect_is(&u.r_pane[UI_PANE_LOG], 32, 0, 11, 160),
	       "160x44: the log strip gives it two rows");
	tap_ok(rect_is(&u.r_pane[UI_PANE_WHERE], 2, 0, 28, 64),
	       "160x44: the where axis keeps its rows");
	size_to(80, 14);
	tap_ok(rect_is(&u.r_find, 9, 0, 1, 80) &&
	       rect_is(&u.r_pane[UI_PANE_LOG], 10, 0, 3, 80) &&
	       rect_is(&u.r_pane[u.main_pane], 2, 0, 7, 80),
	       "80x14: the title alone: the log keeps a title and two lines, "
	       "the pane its rows");
	size_to(80, 12);
	tap_eq(u.r_find.h, 0, "80x12: no log strip, no findings strip");
	size_to(80, 24);
	ui_layout_select_pane(&u, UI_PANE_LOG);
	ui_layout_select_pane(&u, UI_PANE_LOG);
	tap_eq(u.r_find.h, 0, "6 6: the log's whole body hides the strip");
	ui_layout_select_pane(&u, UI_PANE_WHERE);
	u.st.ended = true;
	u.t_end = u.t0 + 75.4;
	ui_findings_tick(&u);
	tap_ok(rect_is(&u.r_find, 16, 0, 2, 80),
	       "program ended: the summary takes the row (no new layout)");
	tap_ok(line_is(16, rule(buf, " Findings at the end ", 80)),
	       "program ended: the title says so");
	tap_ok(line_is(17, " exited 0 at 1:15: the search never ran"),
	       "program ended: the summary: how, when, and the search's "
	       "result");
	tap_eq(ui_findings_line(&u, 0) == NULL, 1, "and no finding row");
	u.st.ended = false;
	u.find_on = false;
	ui_layout(&u);
}

int main(void)
{
	int fd = mkstemp(shot_path);

	if (fd >= 0)
		close(fd);
	setup();
	test_status();
	test_where();
	test_log();
	test_findings_layout();
	ui_screen_end(&u);
	unlink(shot_path);
	return tap_done();
}

/*
 * ui_screen.c - the terminal: start and end ncurses, colours or
 * monochrome, UTF-8 or ASCII, resize and suspend.
 *
 * The terminal is opened with newterm() on stdin/stdout so that hunch's
 * stderr stays free for the messages printed after the dashboard closes.
 * raw() rather than cbreak(): Ctrl-C and Ctrl-Z then arrive as keys and
 * reach hunch alone; with cbreak() the terminal would send SIGINT and
 * SIGTSTP to the whole foreground process group, the traced program
 * included, which is not what a user asking the dashboard to quit or to
 * step aside means.
 */
#include "ui.h"
#include "clock_mono.h"

#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>
#include <wctype.h>

static const struct ui_glyphs glyphs_utf8 = {
	.open = "\xe2\x96\xbe",      /* ▾ */
	.closed = "\xe2\x96\xb8",    /* ▸ */
	.leaf = " ",
	.none = "\xe2\x80\x94",      /* — */
	.ellipsis = "\xe2\x80\xa6",  /* … */
	.focus = "\xe2\x97\x8f",     /* ● */
	.hline = "\xe2\x94\x80",     /* ─ */
	.up = "\xe2\x86\x91",        /* ↑ */
	.down = "\xe2\x86\x93",      /* ↓ */
};

static const struct ui_glyphs glyphs_ascii = {
	.open = "-", .closed = "+", .leaf = " ", .none = "-",
	.ellipsis = "~", .focus = "*", .hline = "-", .up = "^", .down = "v",
};

double ui_screen_now(void)
{
	return clock_mono_s();
}

/* NO_COLOR (https://no-color.org): present and not empty. */
static bool want_color(void)
{
	const char *nc = getenv("NO_COLOR");

	return (nc == NULL || nc[0] == '\0') && has_colors();
}

static void init_colors(struct ui *u)
{
	short bg = -1;

	u->color = want_color();
	if (!u->color)
		return;
	start_color();
	if (use_default_colors() == ERR)
		bg = COLOR_BLACK;
	init_pair(UI_C_STATUS, COLOR_BLACK, COLOR_CYAN);
	init_pair(UI_C_TITLE, COLOR_BLACK, COLOR_WHITE);
	init_pair(UI_C_HUNCH, COLOR_CYAN, bg);
	init_pair(UI_C_STDERR, COLOR_RED, bg);
	init_pair(UI_C_MATCH, COLOR_YELLOW, bg);
	init_pair(UI_C_DIM, COLOR_BLUE, bg);
	init_pair(UI_C_WARN, COLOR_YELLOW, bg);
	init_pair(UI_C_FOCUS, COLOR_GREEN, bg);
}

/* The same meaning in colour and in monochrome: status and titles are
 * reverse video in both; the rest adds colour when there is some. */
attr_t ui_screen_attr(const struct ui *u, enum ui_color c)
{
	attr_t mono;

	switch (c) {
	case UI_C_STATUS: case UI_C_TITLE: mono = A_REVERSE; break;
	case UI_C_STDERR: case UI_C_WARN: case UI_C_MATCH: mono = A_BOLD; break;
	case UI_C_DIM: mono = A_DIM; break;
	default: mono = A_NORMAL; break;
	}
	if (!u->color)
		return mono;
	if (c == UI_C_STATUS || c == UI_C_TITLE)
		return COLOR_PAIR(c);
	return COLOR_PAIR(c) | (c == UI_C_STDERR ? A_BOLD : 0);
}

int ui_screen_init(struct ui *u)
{
	return ui_screen_init_on(u, NULL, stdout, stdin);
}

int ui_screen_init_on(struct ui *u, const char *term, FILE *out, FILE *in)
{
	const char *cs;

	setlocale(LC_ALL, "");
	cs = nl_langinfo(CODESET);
	u->utf8 = cs != NULL && strcmp(cs, "UTF-8") == 0;
	u->g = u->utf8 ? &glyphs_utf8 : &glyphs_ascii;
	u->tty_out = out;
	u->tty_in = in;
	u->scr = newterm(term, u->tty_out, u->tty_in);
	if (u->scr == NULL)
		return -1;
	set_term(u->scr);
	init_colors(u);
	raw();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(25);
	curs_set(0);
	leaveok(stdscr, TRUE);
	u->rows = LINES;
	u->cols = COLS;
	u->dirty = UI_D_ALL;
	return 0;
}

void ui_screen_end(struct ui *u)
{
	if (u->scr == NULL)
		return;
	curs_set(1);
	endwin();
	delscreen(u->scr);
	u->scr = NULL;
}

/* The terminal's size now (the environment's LINES/COLUMNS would be the
 * size at start, so ask the terminal). */
void ui_screen_resize(struct ui *u)
{
	struct winsize ws;

	if (ioctl(fileno(u->tty_out), TIOCGWINSZ, &ws) == 0 &&
	    ws.ws_row > 0 && ws.ws_col > 0)
		resize_term(ws.ws_row, ws.ws_col);
	u->rows = LINES;
	u->cols = COLS;
	u->dirty = UI_D_ALL;
	u->force_full = true;
	ui_layout(u);
}

/* Give the terminal back, stop hunch alone (the program is not in the
 * picture: it keeps running, see the top of this file), and take the
 * terminal again after `fg`.  SIGTSTP is blocked for the signalfd, so
 * it is raised while blocked and then unblocked to take effect. */
void ui_screen_suspend(struct ui *u)
{
	sigset_t tstp;
	struct sigaction dfl = { .sa_handler = SIG_DFL }, old;

	endwin();
	sigemptyset(&tstp);
	sigaddset(&tstp, SIGTSTP);
	sigaction(SIGTSTP, &dfl, &old);
	raise(SIGTSTP);
	sigprocmask(SIG_UNBLOCK, &tstp, NULL);
	/* ... stopped here until SIGCONT ... */
	sigprocmask(SIG_BLOCK, &tstp, NULL);
	sigaction(SIGTSTP, &old, NULL);
	reset_prog_mode();
	ui_screen_resize(u);
}

/* Next printable character of s (UTF-8 or a single byte), its width in
 * columns and the number of bytes it took; '?' stands for what cannot
 * be shown. */
static size_t next_char(const struct ui *u, const char *s, wchar_t *wc,
			int *width)
{
	mbstate_t st;
	size_t n;

	if ((unsigned char)*s == '\t') {
		*wc = L' ';
		*width = 1;
		return 1;
	}
	if (!u->utf8 || (unsigned char)*s < 0x80) {
		unsigned char c = (unsigned char)*s;

		*wc = (c >= 0x20 && c < 0x7f) ? (wchar_t)c : L'?';
		*width = 1;
		return 1;
	}
	memset(&st, 0, sizeof(st));
	n = mbrtowc(wc, s, MB_CUR_MAX, &st);
	if (n == (size_t)-1 || n == (size_t)-2 || n == 0 ||
	    !iswprint((wint_t)*wc) || (*width = wcwidth(*wc)) < 1) {
		*wc = L'?';
		*width = 1;
		return 1;
	}
	return n;
}

int ui_screen_width(const struct ui *u, const char *s)
{
	int cols = 0, w;
	wchar_t wc;

	while (*s != '\0') {
		s += next_char(u, s, &wc, &w);
		cols += w;
	}
	return cols;
}

int ui_screen_put(struct ui *u, int y, int x, int w, const char *s, attr_t a)
{
	wchar_t buf[512];
	int cols = 0, n = 0, cw;
	wchar_t wc;

	if (w <= 0 || y < 0 || y >= u->rows || x >= u->cols)
		return 0;
	if (x + w > u->cols)
		w = u->cols - x;
	while (*s != '\0' && n < (int)(sizeof(buf) / sizeof(buf[0])) - 1) {
		size_t len = next_char(u, s, &wc, &cw);

		if (cols + cw > w)
			break;
		buf[n++] = wc;
		cols += cw;
		s += len;
	}
	buf[n] = L'\0';
	wattrset(stdscr, a);
	mvwaddnwstr(stdscr, y, x, buf, n);
	wattrset(stdscr, A_NORMAL);
	return cols;
}

/* Bytes of s's longest prefix that fits w columns (never half a
 * character): where a wrapped line is cut. */
size_t ui_screen_fit(const struct ui *u, const char *s, int w)
{
	const char *p = s;
	int cols = 0, cw;
	wchar_t wc;

	while (*p != '\0') {
		size_t len = next_char(u, p, &wc, &cw);

		if (cols + cw > w)
			break;
		cols += cw;
		p += len;
	}
	return (size_t)(p - s);
}

void ui_screen_clear_rect(struct ui *u, const struct ui_rect *r)
{
	(void)u;
	wattrset(stdscr, A_NORMAL);
	for (int y = r->y; y < r->y + r->h; y++)
		mvwhline(stdscr, y, r->x, ' ', r->w);
}

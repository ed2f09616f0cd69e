/*
 * ui_log.c - the log and output pane: hunch's own messages and the
 * program's stdout and stderr, read from pipes, in one scrollback.
 *
 * The program never writes onto the screen: its output arrives here
 * through the pipes given to src_live_launch, is cut into lines, and
 * made printable (control bytes and escape sequences become '?') before
 * it is stored, so nothing it prints can move the cursor or change the
 * terminal's modes.  stderr is drawn in another colour and, so that
 * monochrome terminals show the difference too, marked with '!';
 * hunch's messages are marked with '#'.
 *
 * The ring keeps the last `cap` lines.  Scrolling is counted from the
 * end; at 0 the pane follows new output, otherwise it stays put.
 */
#include "ui.h"
#include "ui_search.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LONG_LINE 4096   /* an unfinished line this long is shown anyway */

void ui_log_init(struct ui_log *l, size_t cap)
{
	memset(l, 0, sizeof(*l));
	l->cap = cap;
	l->lines = calloc(cap, sizeof(*l->lines));
	if (l->lines == NULL)
		abort();
	l->fd[0] = l->fd[1] = -1;
}

void ui_log_free(struct ui_log *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->lines[(l->first + i) % l->cap].text);
	free(l->lines);
	free(l->part[0]);
	free(l->part[1]);
	for (int i = 0; i < 2; i++)
		if (l->fd[i] >= 0)
			close(l->fd[i]);
	memset(l, 0, sizeof(*l));
}

static struct ui_log_line *line_at(struct ui_log *l, size_t i)
{
	return &l->lines[(l->first + i) % l->cap];
}

/* Store one line (len bytes of s), replacing control bytes; the ESC of
 * an escape sequence becomes '?' and the rest stays visible text. */
static void push(struct ui *u, enum ui_log_kind k, const char *s,
		 size_t len)
{
	struct ui_log *l = &u->log;
	struct ui_log_line *ln;
	char *t = malloc(len + 1);

	if (t == NULL)
		abort();
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		t[i] = (c < 0x20 && c != '\t') || c == 0x7f ? '?' : (char)c;
	}
	t[len] = '\0';
	if (l->n == l->cap) {
		free(line_at(l, 0)->text);
		l->first = (l->first + 1) % l->cap;
		l->n--;
	}
	ln = line_at(l, l->n++);
	ln->t = ui_screen_now() - u->t0;
	ln->kind = k;
	ln->text = t;
	if (l->scroll > 0 && l->scroll < l->n)
		l->scroll++;  /* keep the same lines in view */
	u->dirty |= UI_D_PANE(UI_PANE_LOG);
}

void ui_log_add(struct ui *u, enum ui_log_kind k, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	push(u, k, buf, strlen(buf));
}

/* Lines of `data`; the last piece, without its newline, waits for more
 * (a `\r` alone counts as the end of a line for progress meters). */
static void take(struct ui *u, int stream, const char *data, size_t len)
{
	struct ui_log *l = &u->log;
	enum ui_log_kind k = stream ? UI_LOG_STDERR : UI_LOG_STDOUT;

	for (size_t i = 0; i < len; i++) {
		char c = data[i];

		if (c == '\n' || c == '\r' || l->npart[stream] >= LONG_LINE) {
			/* the journal keeps the bytes; a line cut at '\r' or
			 * at LONG_LINE goes on in the next record */
			ui_consult_journal_output(u, stream, l->part[stream],
					  l->npart[stream], c == '\n');
			if (c != '\r' || l->npart[stream] > 0)
				push(u, k, l->part[stream], l->npart[stream]);
			l->npart[stream] = 0;
			if (c == '\n' || c == '\r')
				continue;
		}
		if (l->part[stream] == NULL) {
			l->part[stream] = malloc(LONG_LINE);
			if (l->part[stream] == NULL)
				abort();
		}
		l->part[stream][l->npart[stream]++] = c;
	}
}

bool ui_log_read(struct ui *u, int stream)
{
	struct ui_log *l = &u->log;
	char buf[16384];
	ssize_t n;

	for (int rounds = 0; rounds < 16; rounds++) {
		n = read(l->fd[stream], buf, sizeof(buf));
		if (n > 0) {
			l->bytes[stream] += (uint64_t)n;
			take(u, stream, buf, (size_t)n);
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return true;
		/* end of file: show what is left of the last line */
		if (l->npart[stream] > 0) {
			ui_consult_journal_output(u, stream, l->part[stream],
					  l->npart[stream], false);
			push(u, stream ? UI_LOG_STDERR : UI_LOG_STDOUT,
			     l->part[stream], l->npart[stream]);
		}
		l->npart[stream] = 0;
		close(l->fd[stream]);
		l->fd[stream] = -1;
		return false;
	}
	return true;  /* more to read: the loop comes back */
}

static attr_t line_attr(const struct ui *u, const struct ui_log_line *ln)
{
	return ln->kind == UI_LOG_HUNCH ? ui_screen_attr(u, UI_C_HUNCH) :
	       ln->kind == UI_LOG_STDERR ? ui_screen_attr(u, UI_C_STDERR) :
	       A_NORMAL;
}

/* The log strip: one row a line, a cut line ending in the ellipsis. */
static void draw_line(struct ui *u, int y, const struct ui_rect *r,
		      const struct ui_log_line *ln)
{
	static const char marks[] = { '#', ' ', '!' };
	char mark[3] = { marks[ln->kind], ' ', '\0' };
	attr_t a = line_attr(u, ln);
	int x = r->x, w;

	x += ui_screen_put(u, y, x, r->w, mark, a);
	w = r->x + r->w - x;
	if (ui_screen_width(u, ln->text) <= w) {
		ui_screen_put(u, y, x, w, ln->text, a);
		return;
	}
	x += ui_screen_put(u, y, x, w - 1, ln->text, a);
	ui_screen_put(u, y, x, 1, u->g->ellipsis, ui_screen_attr(u, UI_C_DIM));
}

/* Where the next row of a wrapped line starts: after the last space or
 * comma of the row's second half, else where the row is full. */
static size_t wrap_cut(const struct ui *u, const char *s, int w)
{
	size_t n = ui_screen_fit(u, s, w);

	if (s[n] == '\0' || n == 0)
		return n ? n : strlen(s);
	for (size_t k = n; k > n / 2; k--)
		if (s[k - 1] == ' ' || s[k - 1] == ',')
			return k;
	return n;
}

/* Rows a line takes wrapped to the pane (text `w` columns wide after
 * the 2-column mark); with y >= 0, draws them, leaving out the first
 * `skip` and stopping at `ymax`. */
static int wrapped(struct ui *u, const struct ui_rect *r,
		   const struct ui_log_line *ln, int y, int skip, int ymax)
{
	static const char marks[] = { '#', ' ', '!' };
	char mark[3] = { marks[ln->kind], ' ', '\0' };
	const char *s = ln->text;
	int w = r->w - 2, rows = 0;
	attr_t a = line_attr(u, ln);

	if (w < 8)
		w = 8;
	do {
		size_t n = wrap_cut(u, s, w);
		char buf[LONG_LINE + 8];

		if (y >= 0 && rows >= skip && y < ymax) {
			if (n >= sizeof(buf))
				n = sizeof(buf) - 1;
			memcpy(buf, s, n);
			buf[n] = '\0';
			if (rows == 0)
				ui_screen_put(u, y, r->x, 2, mark, a);
			ui_screen_put(u, y++, r->x + 2, w, buf, a);
		}
		rows++;
		s += n;
	} while (*s != '\0');
	return rows;
}

/* The Log pane (6): long lines wrap.  `scroll` still counts lines up
 * from the end; the last line shown sits on the bottom row, and the
 * ones above fill the pane (the top one cut when it does not fit). */
static void draw_wrapped(struct ui *u, const struct ui_rect *r)
{
	struct ui_log *l = &u->log;
	struct ui_log_view *v = &u->log_view;
	size_t last = l->n - l->scroll, i;
	int used = 0, k;

	if (v->top) {   /* from the first line down */
		v->shown = 0;
		for (i = 0; i < l->n && used < r->h; i++, v->shown++)
			used += wrapped(u, r, line_at(l, i), r->y + used, 0,
					r->y + r->h);
		l->scroll = l->n - i;
		return;
	}
	/* scrolled near the top: show lines from the first downwards */
	for (;;) {
		used = 0;
		for (i = last; i > 0 && used < r->h; i--)
			used += wrapped(u, r, line_at(l, i - 1), -1, 0, 0);
		if (used >= r->h || last >= l->n)
			break;
		last++;
		l->scroll--;
	}
	used = 0;
	v->shown = 0;
	for (i = last; i > 0 && used < r->h; i--) {
		k = wrapped(u, r, line_at(l, i - 1), -1, 0, 0);
		if (used + k <= r->h)
			wrapped(u, r, line_at(l, i - 1),
				r->y + r->h - used - k, 0, r->y + r->h);
		else
			wrapped(u, r, line_at(l, i - 1), r->y, used + k - r->h,
				r->y + r->h);
		used += k;
		v->shown++;
	}
}

static void ui_log_draw(struct ui *u, const struct ui_rect *r)
{
	struct ui_log *l = &u->log;
	size_t rows = (size_t)r->h, last, first;
	char buf[96];

	if (u->active == UI_PANE_LOG) {
		if (l->scroll >= l->n)
			l->scroll = l->n ? l->n - 1 : 0;
		draw_wrapped(u, r);
	} else {
		if (l->scroll + rows > l->n)
			l->scroll = l->n > rows ? l->n - rows : 0;
		last = l->n - l->scroll;   /* one past the last shown */
		first = last > rows ? last - rows : 0;
		for (size_t i = first; i < last; i++)
			draw_line(u, r->y + (int)(i - first), r, line_at(l, i));
	}
	if (l->n == 0)
		ui_screen_put(u, r->y, r->x, r->w, u->launched ?
		       "  (nothing yet: hunch's messages and the program's "
		       "output appear here)" : "  (nothing yet: hunch's "
		       "messages appear here)", ui_screen_attr(u, UI_C_DIM));
	snprintf(buf, sizeof(buf), l->scroll ? " %zu more below (End) " :
		 " %zu lines ", l->scroll ? l->scroll : l->n);
	ui_screen_put(u, r->y - 1, r->x + r->w - ui_screen_width(u, buf), r->w,
		      buf,
		      u->active == UI_PANE_LOG ? ui_screen_attr(u, UI_C_TITLE)
					       : A_NORMAL);
}

static void draw_pane(struct ui *u, enum ui_pane p, const struct ui_rect *r)
{
	(void)p;
	ui_log_draw(u, r);
}

const struct ui_pane_ops ui_log_pane = {
	.title = "Log",
	.draw = draw_pane,
	.key = ui_log_key,
	.hint = "%s%s scroll  PgUp/PgDn page  Home/End  Tab pane  S shot  "
		"? help  q quit",
};

bool ui_log_key(struct ui *u, int key)
{
	struct ui_log *l = &u->log;
	struct ui_log_view *v = &u->log_view;
	size_t page = (size_t)(u->r_pane[UI_PANE_LOG].h > 2 ?
			       u->r_pane[UI_PANE_LOG].h - 2 : 1);

	/* wrapped: a page is the lines shown, less one kept in sight */
	if (u->active == UI_PANE_LOG && v->shown > 0)
		page = v->shown > 1 ? v->shown - 1 : 1;
	size_t max = l->n;

	switch (ui_keys_motion(key)) {
	case UI_K_UP: l->scroll += !v->top; break;
	case UI_K_DOWN: l->scroll = l->scroll ? l->scroll - 1 : 0; break;
	case UI_K_PGUP: l->scroll += v->top ? 0 : page; break;
	case UI_K_PGDN: l->scroll = l->scroll > page ? l->scroll - page : 0;
		break;
	case UI_K_HOME: l->scroll = max; break;
	case UI_K_END: l->scroll = 0; break;
	default: return false;
	}
	v->top = ui_keys_motion(key) == UI_K_HOME ||
		 (v->top && (ui_keys_motion(key) == UI_K_UP ||
			     ui_keys_motion(key) == UI_K_PGUP));
	v->top &= u->active == UI_PANE_LOG;
	if (l->scroll > max)
		l->scroll = max;
	u->dirty |= UI_D_PANE(UI_PANE_LOG);
	return true;
}

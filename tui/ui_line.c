/*
 * ui_line.c - small pieces the consultant's panes share: a one-line
 * prompt inside a pane (a tunable's new value, a choice), word
 * wrapping into a rectangle, where a long name breaks between rows, and
 * a focus as short as it can be said.
 */
#include "ui.h"
#include "ui_panes.h"

#include <stdio.h>
#include <string.h>

int ui_line_key(struct ui_line *l, int key)
{
	if (key == 27 || key == UI_CTRL('c') || key == UI_CTRL('g'))
		return -1;
	if (key == '\r' || key == '\n' || key == KEY_ENTER)
		return 1;
	if (key == KEY_BACKSPACE || key == 127 || key == 8) {
		if (l->len > 0)
			l->text[--l->len] = '\0';
	} else if (key == UI_CTRL('u')) {
		l->len = 0;
		l->text[0] = '\0';
	} else if (key >= 0x20 && key < 0x7f && l->len + 1 < sizeof(l->text)) {
		l->text[l->len++] = (char)key;
		l->text[l->len] = '\0';
	}
	return 0;
}

bool ui_line_wrap(struct ui *u, const struct ui_rect *r, int *y, int indent,
	     const char *s, attr_t a)
{
	int w = r->w - indent - 1;

	if (w < 8)
		return false;
	while (*s != '\0') {
		char line[512];
		int take = 0, last_space = -1;

		if (*y >= r->y + r->h)
			return false;
		while (s[take] != '\0' && take < w && take < 511) {
			if (s[take] == ' ')
				last_space = take;
			take++;
		}
		if (s[take] != '\0' && last_space > 0)
			take = last_space;
		memcpy(line, s, (size_t)take);
		line[take] = '\0';
		ui_screen_put(u, (*y)++, r->x + indent, w, line, a);
		s += take;
		while (*s == ' ')
			s++;
	}
	return true;
}

/* Bytes of `s` for one row `w` columns wide when it wraps: after the
 * last ',', '/' or ' ' of the row's second half, else where the row is
 * full (a focus breaks between its resources and path parts). */
static size_t ui_line_cut(const struct ui *u, const char *s, int w)
{
	size_t n = ui_screen_fit(u, s, w);

	if (s[n] == '\0' || n == 0)
		return n ? n : strlen(s);
	for (size_t k = n; k > n / 2; k--)
		if (s[k - 1] == ',' || s[k - 1] == '/' || s[k - 1] == ' ')
			return k;
	return n;
}

int ui_line_rows(const struct ui *u, const char *s, int w)
{
	int rows = 0;

	do {
		s += ui_line_cut(u, s, w);
		rows++;
	} while (*s != '\0');
	return rows;
}

void ui_line_draw_wrapped(struct ui *u, const struct ui_rect *r, int y,
			  const char *s, int rows, attr_t a)
{
	for (int i = 0; i < rows && *s != '\0'; i++, y++) {
		size_t n = ui_line_cut(u, s, r->w);
		char line[1024];

		if (n >= sizeof(line))
			n = sizeof(line) - 1;
		if (i == rows - 1 && s[n] != '\0') {
			n = ui_screen_fit(u, s, r->w - 1);
			ui_screen_put(u, y, r->x + r->w - 1, 1, u->g->ellipsis,
				      a);
		}
		memcpy(line, s, n);
		line[n] = '\0';
		ui_screen_put(u, y, r->x, r->w, line, a);
		s += n;
	}
}

/* The focus as the user chose it: the constrained hierarchies only. */
void ui_line_focus_short(const struct ui *u, const struct pc_focus *f,
			 char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int k = 0; k < PC_NHIER; k++) {
		const struct pc_res *r = pc_res_get(u->tree, f->r[k]);

		if (r == NULL || r->kind == PC_RES_HIERARCHY ||
		    r->kind == PC_RES_ROOT)
			continue;
		off += (size_t)snprintf(buf + off, off < len ? len - off : 0,
					"%s%s", off ? "," : "", r->path);
	}
	if (buf[0] == '\0')
		snprintf(buf, len, "whole program");
}

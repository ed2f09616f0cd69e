/*
 * ui_shot.c - the screen as text: `S`, and `--screenshot FILE` (written
 * when the dashboard closes, with the last screen shown).
 *
 * It reads curscr, ncurses' copy of what the terminal shows, so the file
 * has exactly the characters on screen (UTF-8 or ASCII, as drawn), one
 * line per row, without attributes and without trailing blanks.
 */
#include "ui.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

/* Row y of curscr as multibyte text, trailing blanks cut. */
static void row_text(int y, int cols, char *out, size_t len)
{
	size_t off = 0, keep = 0;
	mbstate_t st;

	memset(&st, 0, sizeof(st));
	for (int x = 0; x < cols; x++) {
		cchar_t cc;
		wchar_t wch[CCHARW_MAX + 1];
		attr_t a;
		short pair;
		char mb[16];
		size_t n;

		if (mvwin_wch(curscr, y, x, &cc) == ERR)
			break;
		if (getcchar(&cc, wch, &a, &pair, NULL) == ERR || wch[0] == 0)
			continue;  /* second cell of a wide character */
		n = wcrtomb(mb, wch[0], &st);
		if (n == (size_t)-1) {
			mb[0] = '?';
			n = 1;
		}
		if (off + n + 1 >= len)
			break;
		memcpy(out + off, mb, n);
		off += n;
		if (wch[0] != L' ')
			keep = off;
		if (wcwidth(wch[0]) > 1)
			x += wcwidth(wch[0]) - 1;
	}
	out[keep] = '\0';
}

int ui_shot_write(struct ui *u, const char *path)
{
	FILE *f = fopen(path, "w");
	char line[4096];

	if (f == NULL)
		return -errno;
	for (int y = 0; y < u->rows; y++) {
		row_text(y, u->cols, line, sizeof(line));
		fprintf(f, "%s\n", line);
	}
	if (fclose(f) != 0)
		return -errno;
	return 0;
}

/* `S`: to the --screenshot file if there is one, else to
 * hunch-screen-N.txt in the working directory. */
void ui_shot_key(struct ui *u)
{
	char name[64];
	const char *path = u->shot_path;
	int rc;

	if (path == NULL) {
		snprintf(name, sizeof(name), "hunch-screen-%u.txt",
			 ++u->shots);
		path = name;
	}
	ui_layout_draw(u);  /* the file shows what is on screen now */
	rc = ui_shot_write(u, path);
	if (rc < 0)
		ui_status_note(u, "screenshot: cannot write %s: %s", path,
			strerror(-rc));
	else
		ui_status_note(u, "screen saved to %s", path);
}

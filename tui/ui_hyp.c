/*
 * ui_hyp.c - the Hypotheses pane: the why axis as loaded (a tree by
 * parent), each hypothesis with its metric expression, comparison and
 * threshold (the tunable's current value); `e` edits the hypotheses.
 *
 * Editing: the file is the user's (pc_steer_user_file: the last file
 * loaded after the defaults, or a copy of the defaults made in the XDG
 * config dir), opened in $VISUAL or $EDITOR (ui_editor.c).  On return it
 * is loaded again with every other file and validated by the loader; a
 * valid document is applied to the running search (pc_steer_reload: new
 * hypotheses join it, changed thresholds re-test), an invalid one leaves
 * the search as it was and its errors are listed (FILE:LINE:COL: $.path:
 * what) until `e` edits again or `x` puts the file back as it was (or
 * removes it, when the edit made it).
 */
#include "ui.h"
#include "ui_panes.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pc_search.h"
#include "pc_steer.h"

static void clear_errors(struct ui_hyp *hy)
{
	for (size_t i = 0; i < hy->nerr; i++)
		free(hy->err[i]);
	free(hy->err);
	hy->err = NULL;
	hy->nerr = 0;
}

static void sync_pc(struct ui *u)
{
	if (u->hyp.pc != u->pc) {
		clear_errors(&u->hyp);
		free(u->hyp.backup);
		memset(&u->hyp, 0, sizeof(u->hyp));
		u->hyp.pc = u->pc;
	}
}

void ui_hyp_free(struct ui *u)
{
	clear_errors(&u->hyp);
	free(u->hyp.backup);
	memset(&u->hyp, 0, sizeof(u->hyp));
}

static const char *const op_text[] = {
	[PC_PM_ADD] = " + ", [PC_PM_SUB] = " - ", [PC_PM_MUL] = " * ",
	[PC_PM_DIV] = " / ", [PC_PM_MAX] = ", ",
};

/* "cpu_inclusive / active_threads@top", "max(a, b)". */
static void expr_text(const struct pc_hypothesis *h, char *buf, size_t len)
{
	size_t off = 0;

	if (h->op == PC_PM_MAX)
		off += (size_t)snprintf(buf, len, "max(");
	for (int i = 0; i < h->nin && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s%s",
					i ? op_text[h->op] : "",
					h->in[i].metric,
					h->in[i].top_focus ? "@top" : "");
	if (h->op == PC_PM_MAX && off < len)
		snprintf(buf + off, len - off, ")");
}

static int depth_of(const struct pc_config *c, int i)
{
	int d = 0;

	while (c->hyp[i].parent_idx >= 0 && d < 32) {
		i = c->hyp[i].parent_idx;
		d++;
	}
	return d;
}

/* The hypotheses in tree order: each followed by its children. */
static size_t tree_order(const struct pc_config *c, int parent, int *out,
			 size_t n)
{
	for (size_t i = 0; i < c->nhyp; i++)
		if (c->hyp[i].parent_idx == parent) {
			out[n++] = (int)i;
			n = tree_order(c, (int)i, out, n);
		}
	return n;
}

static void hyp_row(struct ui *u, const struct ui_rect *r, int y, int i)
{
	const struct pc_config *c = u->pc->cfg;
	const struct pc_hypothesis *h = &c->hyp[i];
	char expr[256], line[512];
	int d = depth_of(c, i);

	if (h->is_virtual) {
		snprintf(line, sizeof(line), "%*s%s  (true when a child is)",
			 2 * d + 1, "", h->name);
	} else {
		expr_text(h, expr, sizeof(expr));
		snprintf(line, sizeof(line), "%*s%s  %s %s %s = %g", 2 * d + 1,
			 "", h->name, expr, h->cmp == PC_CMP_GT ? ">" : "<",
			 h->threshold, pc_tunables_get(c, h->threshold));
	}
	ui_screen_put(u, y, r->x, r->w, line,
		      h->is_virtual ? A_BOLD : A_NORMAL);
}

static void draw_errors(struct ui *u, const struct ui_rect *r, int y)
{
	struct ui_hyp *hy = &u->hyp;
	char head[160];

	snprintf(head, sizeof(head), "%zu error%s: the search is unchanged. "
		 "e edits again, x drops the change.", hy->nerr,
		 hy->nerr == 1 ? "" : "s");
	ui_screen_put(u, y++, r->x + 1, r->w - 1, head,
		      ui_screen_attr(u, UI_C_WARN) | A_BOLD);
	for (size_t i = 0; i < hy->nerr; i++)
		if (!ui_line_wrap(u, r, &y, 1, hy->err[i],
				  ui_screen_attr(u, UI_C_WARN)))
			return;
}

static void draw_saved(struct ui *u, const struct ui_rect *r, int *y);

static void draw(struct ui *u, enum ui_pane pane, const struct ui_rect *r)
{
	struct ui_hyp *hy = &u->hyp;
	int *order, y = r->y;
	size_t n;

	(void)pane;
	sync_pc(u);
	if (u->pc == NULL) {
		y++;
		ui_line_wrap(u, r, &y, 2,
			     "Empty: no search yet. The why axis is "
			     "that of the running search.",
			     ui_screen_attr(u, UI_C_DIM));
		return;
	}
	if (hy->msg[0])   /* wrapped: a path under $HOME is long */
		ui_line_wrap(u, r, &y, 1, hy->msg, hy->msg_err ?
			ui_screen_attr(u, UI_C_WARN) | A_BOLD : A_BOLD);
	if (hy->msg[0] && hy->saved)
		draw_saved(u, r, &y);
	if (hy->nerr) {
		draw_errors(u, r, y);
		return;
	}
	order = calloc(u->pc->cfg->nhyp + 1, sizeof(*order));
	if (order == NULL)
		abort();
	n = tree_order(u->pc->cfg, -1, order, 0);
	if (hy->top >= n)
		hy->top = n ? n - 1 : 0;
	for (size_t i = hy->top; i < n && y < r->y + r->h; i++)
		hyp_row(u, r, y++, order[i]);
	free(order);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;

	if (f == NULL)
		return NULL;
	if (getdelim(&buf, &len, '\0', f) < 0) {
		free(buf);
		buf = strdup("");
	}
	fclose(f);
	return buf;
}

static void note(struct ui_hyp *hy, bool err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void note(struct ui_hyp *hy, bool err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(hy->msg, sizeof(hy->msg), fmt, ap);
	va_end(ap);
	hy->msg_err = err;
	hy->saved = false;
}

/* Under the message of an edit kept: where the file is (~ for $HOME)
 * and that it is not this session's only: every later hunch loads it. */
static void draw_saved(struct ui *u, const struct ui_rect *r, int *y)
{
	struct ui_hyp *hy = &u->hyp;
	const char *home = getenv("HOME"), *f = hy->file;
	size_t hl = home ? strlen(home) : 0;
	char buf[4400];

	if (hl > 1 && strncmp(f, home, hl) == 0 && f[hl] == '/')
		snprintf(buf, sizeof(buf), "Saved in ~%s: every later hunch "
			 "run loads it too (remove it to go back to the "
			 "defaults).", f + hl);
	else
		snprintf(buf, sizeof(buf), "Saved in %s: every later hunch "
			 "run loads it too (remove it to go back to the "
			 "defaults).", f);
	ui_line_wrap(u, r, y, 1, buf, A_NORMAL);
}

/* Load and apply the edited file; keep the errors if it is not valid. */
static void apply(struct ui *u)
{
	struct ui_hyp *hy = &u->hyp;
	struct pc_diags ds = { 0 };
	struct hunch_err e = { 0 };
	int added, r;

	clear_errors(hy);
	r = pc_steer_reload(u->pc, hy->file, &ds, &added, &e);
	if (r < 0) {
		hy->err = calloc(ds.n + 1, sizeof(*hy->err));
		for (size_t i = 0; i < ds.n; i++)
			hy->err[hy->nerr++] = strdup(ds.d[i].msg);
		if (hy->nerr == 0)
			hy->err[hy->nerr++] = strdup(e.msg);
		note(hy, true, "%s is not applied", hy->file);
	} else {
		note(hy, false, "applied %s: %d new hypothes%s", hy->file,
		     added, added == 1 ? "is" : "es");
		hy->saved = true;
		free(hy->backup);
		hy->backup = NULL;
		hy->made = false;
	}
	pc_jx_diags_free(&ds);
	u->dirty |= UI_D_ALL;
}

static void edit(struct ui *u)
{
	struct ui_hyp *hy = &u->hyp;
	struct hunch_err e = { 0 };
	char err[256] = "";
	char *after;
	int st;

	bool made = false;

	if (hy->nerr == 0 &&
	    pc_steer_user_file(u->pc->cfg, hy->file, sizeof(hy->file), &made,
			       &e) < 0) {
		note(hy, true, "cannot edit the hypotheses: %s", e.msg);
		return;
	}
	hy->made |= made;
	if (hy->backup == NULL)
		hy->backup = slurp(hy->file);
	st = ui_editor_run(u, hy->file, err, sizeof(err));
	if (st != 0) {
		note(hy, true, "%s; nothing applied", err[0] ? err :
		     "the editor exited with an error");
		return;
	}
	after = slurp(hy->file);
	if (hy->nerr == 0 && after && hy->backup &&
	    strcmp(after, hy->backup) == 0) {
		note(hy, false, "%s is unchanged", hy->file);
		hy->saved = true;
	} else
		apply(u);
	free(after);
}

/* x: the file as it was before the first edit (none, if the edit made
 * it). */
static void drop(struct ui_hyp *hy)
{
	FILE *f;

	if (hy->nerr == 0 || hy->backup == NULL)
		return;
	if (hy->made) {
		if (unlink(hy->file) < 0) {
			note(hy, true, "cannot remove %s", hy->file);
			return;
		}
		clear_errors(hy);
		free(hy->backup);
		hy->backup = NULL;
		hy->made = false;
		note(hy, false, "change dropped: %s removed", hy->file);
		return;
	}
	f = fopen(hy->file, "w");
	if (f == NULL || fputs(hy->backup, f) < 0 || fclose(f) != 0) {
		note(hy, true, "cannot restore %s", hy->file);
		return;
	}
	clear_errors(hy);
	free(hy->backup);
	hy->backup = NULL;
	note(hy, false, "change dropped: %s is as it was", hy->file);
}

static bool key(struct ui *u, int k)
{
	struct ui_hyp *hy = &u->hyp;

	sync_pc(u);
	if (u->pc == NULL)
		return false;
	switch (ui_keys_motion(k)) {
	case UI_K_UP: if (hy->top > 0) hy->top--; break;
	case UI_K_DOWN: hy->top++; break;
	case UI_K_HOME: hy->top = 0; break;
	default:
		if (k == 'e')
			edit(u);
		else if (k == 'x')
			drop(&u->hyp);
		else
			return false;
	}
	u->dirty |= UI_D_PANE(UI_PANE_HYP);
	return true;
}

const struct ui_pane_ops ui_hyp_pane = {
	.title = "Hypotheses",
	.draw = draw,
	.key = key,
	.hint = "%s%s scroll  e edit ($VISUAL/$EDITOR)  x drop a bad edit  "
		"? help",
};

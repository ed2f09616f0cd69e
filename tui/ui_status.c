/*
 * ui_status.c - the status line (top), the focus line under it, and the
 * key hint or prompt (bottom).
 *
 * The status line always says what the target is doing.  The fields
 * that belong to the search (sample rate, observed cost against the
 * limit, active and pending experiments, search state) show the "none"
 * glyph and "no search yet" until the consultant supplies them through
 * ui.search: never a made-up number.
 */
#include "ui.h"
#include "ui_replay.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void ui_status_state_text(const struct ui *u, char *buf, size_t len)
{
	const struct src_live_status *st = &u->st;
	const char *abbrev;

	if (u->replay != NULL)   /* a replay: its clock's state */
		ui_replay_state_text(u, buf, len);
	else if (u->starting)
		snprintf(buf, len, "starting");
	else if (u->detached)
		snprintf(buf, len, "detached");
	else if (st->ended && st->killed) {
		abbrev = sigabbrev_np(st->signo);
		snprintf(buf, len, "killed SIG%s%s", abbrev ? abbrev : "?",
			 st->core ? " (core)" : "");
	} else if (st->ended)
		snprintf(buf, len, "exited %d", st->exit_code);
	else if (st->stopped)
		snprintf(buf, len, "stopped");
	else
		snprintf(buf, len, "running");
}

/* Whole seconds since the start.  The times are doubles of a monotonic
 * clock: t0 + 36000 - t0 can be 35999.99999999, which truncated read
 * 9:59:59 for ten hours (the µs added never shows otherwise). */
long ui_status_elapsed_s(const struct ui *u)
{
	double end = u->t_end > 0 ? u->t_end : ui_screen_now();

	return (long)(end - u->t0 + 1e-6);
}

static void elapsed_text(const struct ui *u, char *buf, size_t len)
{
	long s = ui_status_elapsed_s(u);

	if (u->replay != NULL) {   /* a replay: the replay time */
		ui_replay_clock_text(u, buf, len);
		return;
	}
	if (s >= 3600)
		snprintf(buf, len, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60,
			 s % 60);
	else
		snprintf(buf, len, "%ld:%02ld", s / 60, s % 60);
}

/* "rate - cost - | no search yet", or the search's own numbers: in full
 * (tier 0), shorter (1, 2), or shortest (3), so that 80 columns show the
 * target, rate, cost, experiments and the search's state together. */
static void search_text(const struct ui *u, int tier, char *buf,
			size_t len)
{
	const struct ui_search_status *s = &u->search;
	const char *no = u->g->none, *st = s->state ? s->state : "";

	if (!s->have)
		snprintf(buf, len, "rate %s cost %s | no search yet", no, no);
	else if (tier == 0)
		snprintf(buf, len, "| rate %.0f Hz  cost %.1f%%/%.1f%%  act %d "
			 "pend %d  %s", s->sample_hz, 100 * s->cost,
			 100 * s->cost_limit, s->active, s->pending, st);
	else if (tier == 1)
		snprintf(buf, len, "| rate %.0f Hz  cost %.1f%%/%.1f%%  exp "
			 "%d+%d  %s", s->sample_hz, 100 * s->cost,
			 100 * s->cost_limit, s->active, s->pending, st);
	else
		snprintf(buf, len, "| %.0fHz %.1f%%/%.0f%%%s %d+%d %s",
			 s->sample_hz, 100 * s->cost, 100 * s->cost_limit,
			 tier == 2 ? " exp" : "", s->active, s->pending, st);
}

/* The target's part on the left, the search's part on the right.  When
 * both do not fit, the gaps narrow and the search's fields shorten; then
 * the target's name gives way down to 8 columns, then the thread
 * count goes, then the name shrinks further; the search's part is drawn
 * whole, right-aligned, so its state word is never cut at 80. */
void ui_status_draw(struct ui *u)
{
	char state[64], el[32], srch[160], left[256], line[512];
	attr_t a = ui_screen_attr(u, UI_C_STATUS);
	int nthr = u->st.ended || u->detached ? 0 : u->st.nthreads;
	int rest, lw, sw, name = (int)strlen(u->label);
	const char *gap = "  ";

	ui_status_state_text(u, state, sizeof(state));
	elapsed_text(u, el, sizeof(el));
	for (int pass = 0; pass < 9; pass++) {
		gap = pass % 2 || pass == 8 ? " " : "  ";
		search_text(u, pass < 8 ? pass / 2 : 3, srch, sizeof(srch));
		sw = ui_screen_width(u, srch);
		snprintf(left, sizeof(left), "%spid %d%s%s%s%s", gap,
			 (int)u->pid, gap, state, gap, el);
		if (pass < 8)   /* last, the thread count goes (pane 2 has it) */
			snprintf(left + strlen(left), sizeof(left) -
				 strlen(left), "%s%d thread%s", gap, nthr,
				 nthr == 1 ? "" : "s");
		rest = u->cols - 1 - ui_screen_width(u, left) - 2 - sw;
		if (name <= rest || (pass == 7 && rest >= 8))
			break;
	}
	if (name > rest)
		name = rest > 1 ? rest : 1;
	snprintf(line, sizeof(line), " %.*s%s", name, u->label, left);
	wattrset(stdscr, a);
	mvwhline(stdscr, u->r_status.y, 0, ' ', u->cols);
	if (sw + 2 + 16 <= u->cols) {
		/* the search's part right-aligned, whole; the target's part
		 * cut where they would meet (its elapsed time, when even
		 * that does not fit) */
		ui_screen_put(u, u->r_status.y, 0, u->cols - sw - 2, line, a);
		ui_screen_put(u, u->r_status.y, u->cols - sw, sw, srch, a);
	} else {   /* a tiny terminal: what fits, rate and cost first */
		lw = ui_screen_put(u, u->r_status.y, 0, u->cols, line, a);
		ui_screen_put(u, u->r_status.y, lw + 2, u->cols - lw - 2, srch,
			      a);
	}
	u->shown_second = (int)ui_status_elapsed_s(u);
}

/* <Code part,Process part,SyncObject part,Files part>, each the root
 * of its hierarchy ("not constrained") until the user picks a node. */
void ui_status_focus_text(const struct ui *u, char *buf, size_t len)
{
	static const char *const roots[4] = {
		"/Code", "/Process", "/SyncObject", "/Files",
	};
	size_t off = 0;

	buf[0] = '\0';
	for (int i = 0; i < 4 && off < len; i++) {
		const struct pc_res *r = u->focus[i] && u->tree ?
			pc_res_get(u->tree, u->focus[i]) : NULL;

		off += (size_t)snprintf(buf + off, len - off, "%s%s",
					i ? "," : "<", r ? r->path : roots[i]);
	}
	if (off < len)
		snprintf(buf + off, len - off, ">");
}

void ui_status_draw_focus(struct ui *u)
{
	char f[2048];
	int y = u->r_focus.y, w;
	const char *s = f;

	ui_status_focus_text(u, f, sizeof(f));
	wattrset(stdscr, A_NORMAL);
	mvwhline(stdscr, y, 0, ' ', u->cols);
	ui_screen_put(u, y, 0, 7, " focus ", A_BOLD);
	w = u->cols - 7;
	/* Too long: keep the end, where the interesting parts are. */
	while (ui_screen_width(u, s) > w - 1 && s[1] != '\0')
		s++;
	if (s != f) {
		ui_screen_put(u, y, 7, 1, u->g->ellipsis, A_NORMAL);
		ui_screen_put(u, y, 8, w - 1, s, ui_screen_attr(u, UI_C_FOCUS));
	} else {
		ui_screen_put(u, y, 7, w, s, ui_screen_attr(u, UI_C_FOCUS));
	}
}

void ui_status_draw_hint(struct ui *u)
{
	char buf[256];
	int y = u->r_hint.y, w = u->cols - 1;  /* not the last cell */

	wattrset(stdscr, A_NORMAL);
	mvwhline(stdscr, y, 0, ' ', u->cols);
	if (u->prompt == UI_PROMPT_QUIT) {
		snprintf(buf, sizeof(buf), "Detach from %s (pid %d) and leave "
			 "it running? y/n", u->label, (int)u->pid);
		ui_screen_put(u, y, 0, w, buf,
			      ui_screen_attr(u, UI_C_WARN) | A_BOLD);
	} else if (u->prompt == UI_PROMPT_SEARCH) {
		snprintf(buf, sizeof(buf), "/%s%s", u->where.query,
			 u->where.query_failed ? "   (no match)" : "");
		ui_screen_put(u, y, 0, w, buf, A_BOLD);
	} else if (u->message[0] != '\0') {
		ui_screen_put(u, y, 0, w, u->message,
			      ui_screen_attr(u, UI_C_HUNCH));
	} else {
		const char *fmt = ui_layout_pane_ops(u->active)->hint;

		if (strstr(fmt, "%s") != NULL)
			snprintf(buf, sizeof(buf), fmt, u->g->up, u->g->down);
		else
			snprintf(buf, sizeof(buf), "%s", fmt);
		ui_screen_put(u, y, 0, w, buf, A_NORMAL);
	}
}

/* A one-off note in the hint line, until the next key. */
void ui_status_note(struct ui *u, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(u->message, sizeof(u->message), fmt, ap);
	va_end(ap);
	u->dirty |= UI_D_HINT;
}

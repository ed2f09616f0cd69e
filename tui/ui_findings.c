/*
 * ui_findings.c - the findings strip: what the search has concluded so
 * far, as findings (consultant/pc_findings.h: the true nodes of one cause
 * grouped into one finding, ranked by impact, each in plain words with
 * units), one line each, best first; once the program has ended, a
 * summary line above them (how it ended, when, and the search's result,
 * "incomplete: ..." included); after the dashboard closes, the batch
 * report's head printed to the terminal: pc_report_text's lines up to
 * the end of its findings (the whole report when there is none).
 *
 * The strip sits over the log strip (ui_layout.c) and is as high as
 * what it lists, up to the rows the layout gives it; a line too long
 * for the screen ends in an ellipsis (the printed head after `q` has
 * them whole).  Over a slow link it must cost little: the findings are
 * gathered at most every GATHER_S, the strip is drawn again only when
 * its text changed, and the layout changes only when its height does.
 */
#include "ui_findings.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pc_findings.h"
#include "pc_report.h"
#include "pc_search.h"

#define FIND_MAX 16      /* findings kept for the strip (it shows <= 8) */
#define LINE_LEN 400
#define GATHER_S 0.5
#define IMPACT_X 4       /* columns: rank, impact, words */
#define IMPACT_W 11

struct strip {
	char line[FIND_MAX][LINE_LEN];  /* the findings in words, ranked */
	char impact[FIND_MAX][24];      /* their impact; "" not measured */
	int n;
	int total;                      /* findings, shown or not */
	char summary[LINE_LEN];         /* "" until the program ended */
	double gathered; /* ui_screen_now() of the last gathering */
	const struct pc_consult *pc;    /* the search gathered from */
};

/* The strip's own state, one per dashboard (u->findings). */
struct ui_findings {
	struct strip shown;             /* what the strip draws */
	struct strip next;              /* gathered, compared with it */
	struct pc_findings f;           /* rebuilt in place each time */
	/* The lines the layout last allowed: the strip asks for a new
	 * layout only when what it would take within them changes. */
	int layout_max;
};

static struct ui_findings *strip_of(struct ui *u)
{
	if (u->findings == NULL) {
		u->findings = calloc(1, sizeof(*u->findings));
		if (u->findings == NULL)
			abort();
		u->findings->layout_max = 3;
	}
	return u->findings;
}

void ui_findings_free(struct ui *u)
{
	if (u->findings == NULL)
		return;
	pc_findings_free(&u->findings->f);
	free(u->findings);
	u->findings = NULL;
}

static int content_lines(const struct strip *fs, int maxlines)
{
	int n = (fs->summary[0] != '\0') + (fs->n > 0 ? fs->n : 1);

	if (fs->summary[0] != '\0' && fs->n == 0)
		n = 1;   /* the summary says there is none */
	if (fs->summary[0] != '\0')
		maxlines++;   /* at the end the log matters less */
	return n < maxlines ? n : maxlines;
}

int ui_findings_rows(struct ui *u, int maxlines)
{
	struct ui_findings *fd = strip_of(u);

	fd->layout_max = maxlines;
	return 1 + content_lines(&fd->shown, maxlines);
}

/* The program's end in a few words: "exited 0 at 0:10: bottleneck: 4
 * threads spend ..." (the result as the reports say it: the lead
 * finding's line, up to 300 bytes, for the strip to cut at its
 * width). */
static void summarise(const struct ui *u, char *buf, size_t len)
{
	char state[64], result[LINE_LEN - 100];
	long s = (long)((u->t_end > 0 ? u->t_end : ui_screen_now()) - u->t0);

	ui_status_state_text(u, state, sizeof(state));
	if (u->pc == NULL || !u->pc->started || u->pc->global == NULL)
		snprintf(result, sizeof(result), "the search never ran");
	else
		pc_report_result(u->pc, u->pc->global, NULL, result,
				 sizeof(result));
	snprintf(buf, len, "%s at %ld:%02ld: %s", state, s / 60, s % 60,
		 result);
}

/* The findings of the global search now, ranked, one line each:
 * the rank, the impact (seconds per second, or CPUs) and the plain
 * words. */
static void gather(struct ui *u, struct pc_findings *f, struct strip *g)
{
	g->n = g->total = 0;
	if (u->pc == NULL || !u->pc->started || u->pc->global == NULL)
		return;
	pc_findings_build(u->pc, u->pc->global, f);
	g->total = (int)f->n;
	for (size_t i = 0; i < f->n && g->n < FIND_MAX; i++) {
		const struct pc_finding *x = &f->f[i];

		g->impact[g->n][0] = '\0';
		if (isfinite(x->impact))
			pc_findings_text_impact(x, g->impact[g->n],
					  sizeof(g->impact[g->n]));
		pc_findings_text_line(u->pc, x, g->line[g->n], LINE_LEN);
		g->n++;
	}
}

static bool same(const struct strip *a, const struct strip *b)
{
	if (a->n != b->n || a->total != b->total ||
	    strcmp(a->summary, b->summary) != 0)
		return false;
	for (int i = 0; i < a->n; i++)
		if (strcmp(a->line[i], b->line[i]) != 0 ||
		    strcmp(a->impact[i], b->impact[i]) != 0)
			return false;
	return true;
}

void ui_findings_tick(struct ui *u)
{
	struct ui_findings *fd;
	struct strip *fs, *g;
	bool ended = u->st.ended || u->detached;
	double now = ui_screen_now();
	int rows;

	if (!u->find_on)
		return;
	fd = strip_of(u);
	fs = &fd->shown;
	g = &fd->next;
	if (fs->pc != u->pc) {  /* a new search: nothing from the last */
		memset(fs, 0, sizeof(*fs));
		fs->pc = u->pc;
	}
	if (!ended && fs->summary[0] == '\0' && now - fs->gathered < GATHER_S)
		return;
	if (ended && fs->summary[0] != '\0')
		return;   /* the end is said once: nothing changes after it */
	gather(u, &fd->f, g);
	g->summary[0] = '\0';
	if (ended)
		summarise(u, g->summary, sizeof(g->summary));
	fs->gathered = now;
	if (same(g, fs))
		return;
	rows = content_lines(fs, fd->layout_max);
	memcpy(fs->line, g->line, sizeof(fs->line));
	memcpy(fs->impact, g->impact, sizeof(fs->impact));
	fs->n = g->n;
	fs->total = g->total;
	memcpy(fs->summary, g->summary, sizeof(fs->summary));
	u->dirty |= UI_D_FIND;
	if (content_lines(fs, fd->layout_max) != rows)
		ui_layout(u);
}

/* s at (y, x) in w columns; cut with an ellipsis when longer. */
static void put_cut(struct ui *u, int y, int x, int w, const char *s,
		    attr_t a)
{
	int used;

	if (ui_screen_width(u, s) <= w) {
		ui_screen_put(u, y, x, w, s, a);
		return;
	}
	used = ui_screen_put(u, y, x, w - 1, s, a);
	ui_screen_put(u, y, x + used, 1, u->g->ellipsis, a);
}

static void draw_title(struct ui *u, const struct strip *fs,
		       const struct ui_rect *r)
{
	char right[64];

	for (int i = 0; i < r->w; i++)
		ui_screen_put(u, r->y, r->x + i, 1, u->g->hline, A_NORMAL);
	ui_screen_put(u, r->y, r->x, r->w,
		      fs->summary[0] ? " Findings at the end " : " Findings ",
		      A_BOLD);
	if (fs->total == 0)
		return;
	snprintf(right, sizeof(right), " %d finding%s, by impact", fs->total,
		 fs->total == 1 ? "" : "s");
	ui_screen_put(u, r->y, r->x + r->w - ui_screen_width(u, right), r->w,
		      right, A_NORMAL);
}

/* " 1  2.55 s/s  4 threads spend ...": the rank, the impact (the
 * "none" glyph when nothing measures it in seconds), the words. */
static void draw_finding(struct ui *u, const struct strip *fs, int y,
			 const struct ui_rect *r, int i)
{
	char rank[8];
	attr_t a = ui_screen_attr(u, UI_C_HUNCH);
	int x = r->x + IMPACT_X + IMPACT_W;

	snprintf(rank, sizeof(rank), "%2d", i + 1);
	ui_screen_put(u, y, r->x, IMPACT_X, rank, a | A_BOLD);
	ui_screen_put(u, y, r->x + IMPACT_X, IMPACT_W, fs->impact[i][0] ?
	       fs->impact[i] : u->g->none, a);
	put_cut(u, y, x, r->x + r->w - x, fs->line[i], a);
}

void ui_findings_draw(struct ui *u, const struct ui_rect *r)
{
	const struct strip *fs = &strip_of(u)->shown;
	int y = r->y + 1, end = r->y + r->h;

	ui_screen_clear_rect(u, r);
	draw_title(u, fs, r);
	if (fs->summary[0] != '\0' && y < end)
		put_cut(u, y++, r->x + 1, r->w - 1, fs->summary, A_BOLD);
	if (fs->n == 0 && fs->summary[0] == '\0' && y < end)
		ui_screen_put(u, y++, r->x, r->w,
			      u->pc == NULL ? "  no search" : "  none yet",
			      ui_screen_attr(u, UI_C_DIM));
	for (int i = 0; i < fs->n && y < end; i++, y++)
		draw_finding(u, fs, y, r, i);
}

const char *ui_findings_line(const struct ui *u, int i)
{
	const struct strip *fs = u->findings ? &u->findings->shown : NULL;

	return fs && i >= 0 && i < fs->n ? fs->line[i] : NULL;
}

/* The batch report's text, up to the end of its findings: the lines
 * before the first blank line that follows the findings' own heading
 * ("findings, ..."); all of it when there is none (no finding: the
 * report is short, and says what was not tested and why). */
static void print_head(const char *text, FILE *f)
{
	const char *p = text, *nl;
	bool in_findings = false;

	for (; *p != '\0'; p = nl + 1) {
		nl = strchr(p, '\n');
		if (nl == NULL)
			nl = p + strlen(p) - 1;
		if (in_findings && nl == p)
			return;
		if (strncmp(p, "findings", 8) == 0)
			in_findings = true;
		fwrite(p, 1, (size_t)(nl - p) + 1, f);
	}
}

void ui_findings_print(const struct ui *u, const struct pc_report_meta *m,
		       FILE *f)
{
	char *text = NULL;
	size_t len = 0;
	FILE *mem;

	if (u->pc == NULL || !u->pc->started || u->pc->global == NULL)
		return;
	mem = open_memstream(&text, &len);
	if (mem == NULL)
		return;
	pc_report_text(u->pc, m, mem);
	if (fclose(mem) == 0 && text != NULL)
		print_head(text, f);
	free(text);
	fflush(f);
}

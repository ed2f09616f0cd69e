/*
 * ui_search_detail.c - `d` in the Search pane: one node's evidence over
 * the pane's body: its state, the full focus, value against threshold,
 * hysteresis and how long the guess held, when it was true, started and
 * concluded, its estimated and charged cost beside the search's observed
 * cost, where it sits in the graph, the metric instances behind it with
 * their histograms as sparklines (those it had when last stopped,
 * released, for a node stopped to make room or at the program's end:
 * its evidence stays to be read), and the trace of states it went
 * through; for a node the search could not test, why (pc_untested.h:
 * the kind's message and the source's own text, wrapped to the pane).
 * Numbers are the consultant's own (struct pc_node): nothing here
 * computes a conclusion.
 */
#include "ui_search.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pc_search.h"
#include "pc_untested.h"

#define LABEL_W 12

struct dl {
	struct ui *u;
	const struct ui_rect *r;
	int y;
	int skip;            /* lines still to leave out at the top */
	int lines;           /* lines of evidence in all */
};

static bool full(const struct dl *d)
{
	return d->y >= d->r->y + d->r->h;
}

/* One line of the evidence: drawn unless scrolled off or below. */
static void put(struct dl *d, int x, int w, const char *s, attr_t a)
{
	d->lines++;
	if (d->skip > 0) {
		d->skip--;
		return;
	}
	if (!full(d))
		ui_screen_put(d->u, d->y++, x, w, s, a);
}

/* "label      text", the text wrapped under itself when long. */
static void line(struct dl *d, const char *label, const char *text,
		 attr_t a)
{
	int x = d->r->x + 1 + LABEL_W, w = d->r->w - 1 - LABEL_W;
	const char *s = text;

	if (d->skip == 0 && !full(d))
		ui_screen_put(d->u, d->y, d->r->x + 1, LABEL_W, label, A_BOLD);
	if (w < 8) {
		put(d, x, 0, "", a);
		return;
	}
	do {
		int n = (int)strlen(s) > w ? w : (int)strlen(s);

		while (n > 1 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;  /* not inside a UTF-8 character */
		for (int k = n; s[n] != '\0' && k > w / 2; k--)
			if (s[k - 1] == ' ' || s[k - 1] == ',') {
				n = k;  /* break after a space or comma */
				break;
			}

		put(d, x, n < w ? n : w, s, a);
		s += n;
		while (*s == ' ')
			s++;
	} while (*s != '\0');
}

static void fmt_time(double t, char *buf, size_t len)
{
	if (t >= 0)
		snprintf(buf, len, "%.1f s", t);
	else
		snprintf(buf, len, "-");
}

static const char *truth_words(const struct pc_node *n)
{
	switch (ui_search_letter(n)) {
	case 'T': return "true";
	case 'F': return "false";
	case '?': return "unknown (tested, not concluded)";
	case 'x': return "not tested";
	default: return "never evaluated";
	}
}

static void head(struct dl *d, const struct pc_consult *pc,
		 const struct pc_node *n)
{
	const struct pc_hypothesis *h = pc_truth_node_hyp(pc, n);
	char buf[256];

	snprintf(buf, sizeof(buf), "%c%c %s: %s, %s   (d or Bksp: back)",
		 ui_search_letter(n), ui_search_activity(n), h ? h->name : "?",
		 truth_words(n), n->active ? "active" : n->pending ?
		 "being enabled" : n->queued ? "queued" : "inactive");
	put(d, d->r->x + 1, d->r->w - 1, buf, ui_search_attr(d->u, n));
	line(d, "focus", n->name + (h ? strlen(h->name) : 0), A_NORMAL);
}

/* Why the search could not test it, when it could not: the kind's
 * message, then what the source (or the search) said. */
static void not_tested(struct dl *d, const struct pc_consult *pc,
		       const struct pc_search *s, const struct pc_node *n)
{
	char detail[512], buf[640];
	enum pc_untested k = pc_untested_why(pc, s, n, NULL, detail,
					     sizeof(detail));

	if (k == PC_UNTESTED_NONE)
		return;
	snprintf(buf, sizeof(buf), "%s%s%s%s", pc_untested_message(k),
		 detail[0] ? " (" : "", detail, detail[0] ? ")" : "");
	line(d, "not tested", buf, A_NORMAL);
}

static void numbers(struct dl *d, const struct pc_consult *pc,
		    const struct pc_node *n)
{
	const struct pc_hypothesis *h = pc_truth_node_hyp(pc, n);
	char buf[256], a[32], b[32], c[32];

	if (n->is_virtual) {
		line(d, "value", "none: true when any child is", A_NORMAL);
	} else if (strchr(".x", ui_search_letter(n)) != NULL) {
		snprintf(buf, sizeof(buf), "not measured%s   threshold %s",
			 ui_search_letter(n) == 'x' ? "" : " yet",
			 h && h->threshold ? h->threshold : "-");
		line(d, "value", buf, A_NORMAL);
	} else {
		snprintf(buf, sizeof(buf), "%.4g   threshold %.4g (%s)",
			 n->value, n->threshold, h && h->threshold ?
			 h->threshold : "-");
		line(d, "value", buf, A_NORMAL);
	}
	snprintf(buf, sizeof(buf), "%.3g   guess %s, held %.1f s%s%s%s",
		 n->hys, n->guess < 0 ? "none yet" : n->guess ? "true" :
		 "false", n->truth == PC_UNKNOWN ? n->accum : n->held_s,
		 n->how[0] ? " (" : "", n->how, n->how[0] ? ")" : "");
	line(d, "hysteresis", buf, A_NORMAL);
	fmt_time(n->t_true_since, a, sizeof(a));
	if (n->truth == PC_TRUE)
		snprintf(buf, sizeof(buf), "since %s (for %.1f s)", a,
			 pc->now - n->t_true_since);
	else
		snprintf(buf, sizeof(buf), "no");
	line(d, "time true", buf, A_NORMAL);
	fmt_time(n->t_created, a, sizeof(a));
	fmt_time(n->t_start, b, sizeof(b));
	fmt_time(n->t_concluded, c, sizeof(c));
	snprintf(buf, sizeof(buf), "created %s, last started %s, concluded "
		 "%s", a, b, c);
	line(d, "times", buf, A_NORMAL);
	snprintf(buf, sizeof(buf), "estimated %.2f%%, charged %.2f%%; the "
		 "search observes %.2f%% (x%.2f of predicted), limit %.1f%%",
		 100 * n->pred_cost, 100 * n->charged_cost, 100 * pc->observed,
		 pc->cost_factor, 100 * pc_tunables_get(pc->cfg, "costLimit"));
	line(d, "cost", buf, A_NORMAL);
}

static void graph(struct dl *d, const struct pc_consult *pc,
		  const struct pc_search *s, const struct pc_node *n)
{
	const struct pc_node *p = pc_shg_node(s, n->orig_parent);
	char buf[512], f[256];
	bool why = false;

	if (p == NULL) {
		snprintf(buf, sizeof(buf), "the root; %zu children",
			 n->nkids);
	} else {
		for (size_t i = 0; i < p->nkids; i++)
			if (p->kids[i].child == n->id)
				why = p->kids[i].why;
		ui_search_focus_short(d->u, p, f, sizeof(f));
		snprintf(buf, sizeof(buf), "%s of %s %s; %zu children%s",
			 why ? "why" : "where", pc_truth_node_hyp(pc, p)->name,
			 f, n->nkids,
			 n->nparents > 1 ? ", also reached by a "
					   "second path (shadow)"
					 : "");
	}
	line(d, "graph", buf, A_NORMAL);
}

/* The histogram's last buckets, scaled to their maximum. */
static void sparkline(const struct ui *u, const struct pc_hist *h,
		      double now, int w, char *buf, size_t len)
{
	static const char *const blocks[] = {
		"\xe2\x96\x81", "\xe2\x96\x82", "\xe2\x96\x83", "\xe2\x96\x84",
		"\xe2\x96\x85", "\xe2\x96\x86", "\xe2\x96\x87", "\xe2\x96\x88",
	};
	static const char ascii[] = "_.-=+*#@";
	int used = pc_hist_used(h, now), from = used > w ? used - w : 0;
	double max = 0;
	size_t off = 0;

	for (int i = from; i < used; i++)
		if (isfinite(pc_hist_rate(h, i)) && pc_hist_rate(h, i) > max)
			max = pc_hist_rate(h, i);
	buf[0] = '\0';
	for (int i = from; i < used && off + 4 < len; i++) {
		double v = pc_hist_rate(h, i);
		int k = !isfinite(v) ? -1 : max > 0 ? (int)(v / max * 7.999)
						    : 0;

		if (k < 0)
			buf[off++] = ' ';
		else if (u->utf8)
			off += (size_t)snprintf(buf + off, len - off, "%s",
						blocks[k]);
		else
			buf[off++] = ascii[k];
		buf[off] = '\0';
	}
}

/* No instance now (not being tested): what it measures when it is. */
static void measures(struct dl *d, const struct pc_consult *pc,
		     const struct pc_node *n)
{
	const struct pc_hypothesis *h = pc_truth_node_hyp(pc, n);
	char buf[256];
	size_t off = 0;

	buf[0] = '\0';
	for (int i = 0; h != NULL && i < h->nin && off < sizeof(buf); i++)
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%s",
					i ? ", " : "", h->in[i].metric);
	line(d, "instances", off ? "none now (not being tested); it "
	     "measures:" : "none (a hypothesis without metrics)", A_NORMAL);
	if (off)
		line(d, "", buf, A_NORMAL);
}

static void instances(struct dl *d, const struct pc_consult *pc,
		      const struct pc_search *s, const struct pc_node *n)
{
	static const char *const st[] = { "enabling", "enabled", "failed",
					  "released" };
	char buf[1024], f[512], spark[1024];
	/* stopped: the instances it had, released, with their history */
	const int *ids = n->nin > 0 ? n->inst : n->was_inst;
	int nids = n->nin > 0 ? n->nin : n->nwas;

	if (nids == 0)
		measures(d, pc, n);
	for (int i = 0; i < nids; i++) {
		const struct pc_minst *m = pc_datamgr_get(&pc->dm, ids[i]);

		if (m == NULL)
			continue;
		pc_focus_name(pc->res, &m->focus, f, sizeof(f));
		snprintf(buf, sizeof(buf), "#%d %s %s, last %.4g, predicted "
			 "%.2f%% %s", m->id, m->metric, st[m->state], m->last,
			 100 * m->predicted_cost, f);
		line(d, i ? "" : "instances", buf, A_NORMAL);
		sparkline(d->u, s->id ? &m->current : &m->global, pc->now,
			  d->r->w - 2 - LABEL_W, spark, sizeof(spark));
		put(d, d->r->x + 1 + LABEL_W, d->r->w - 1 - LABEL_W,
		    spark[0] ? spark : "(no samples yet)",
		    ui_screen_attr(d->u, UI_C_FOCUS)); /* one row: cut to fit */
	}
}

static void draw_all(struct dl *d, const struct pc_search *s,
		     const struct pc_node *n)
{
	head(d, d->u->pc, n);
	not_tested(d, d->u->pc, s, n);
	numbers(d, d->u->pc, n);
	graph(d, d->u->pc, s, n);
	instances(d, d->u->pc, s, n);
	line(d, "trace", n->trace, A_NORMAL);
}

void ui_search_detail_draw(struct ui *u, const struct pc_search *s, int id,
			   const struct ui_rect *r, int *skip)
{
	const struct pc_node *n = pc_shg_node(s, id);
	struct dl d = { u, r, r->y, *skip, 0 };

	if (n == NULL)
		return;
	draw_all(&d, s, n);
	if (*skip > 0 && d.lines - *skip < r->h) {
		/* scrolled past the end: draw again, ending at the bottom */
		*skip = d.lines > r->h ? d.lines - r->h : 0;
		ui_screen_clear_rect(u, r);
		d = (struct dl){ u, r, r->y, *skip, 0 };
		draw_all(&d, s, n);
	}
}

/*
 * ui_where.c - the where-axis pane: the resource hierarchies as
 * collapsible trees, kept current as the program runs.
 *
 * The tree itself is the consultant's (pc_restree); this pane keeps only
 * what it needs to show it: an open/closed bit per resource, the visible
 * rows flattened (rebuilt when the tree or a bit changes, not per frame,
 * so a frame costs the rows on screen, not the 100,000 resources behind
 * them), and for `/` the whole tree in display order.
 *
 * Modules and source files list their children by name; hierarchies,
 * processes and threads keep the order of discovery (executable first,
 * threads as they were created).  Retired resources (exited threads,
 * unloaded libraries) are hidden unless `r` asks for them.
 *
 * From the focus (`f`), `m` enables a metric to watch in the Histograms
 * pane and `x` starts an experiment by hand: both through the picker of
 * ui_pick.c, which takes the pane's place while it is open.
 */
#include "ui.h"
#include "ui_panes.h"
#include "xmalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { UI_W_KNOWN = 1, UI_W_OPEN = 2 };

void ui_where_init(struct ui_where *w)
{
	memset(w, 0, sizeof(*w));
	w->stale = w->order_stale = true;
}

void ui_where_free(struct ui_where *w)
{
	for (size_t i = 0; i < w->nflags; i++)
		free(w->kids[i].ids);
	free(w->kids);
	free(w->flags);
	free(w->rows);
	free(w->order);
	free(w->opos);
	memset(w, 0, sizeof(*w));
}

static const struct pc_res *res(const struct ui *u, pc_res_id id)
{
	return pc_res_get(u->tree, id);
}

static bool is_exe_module(const struct ui *u, const struct pc_res *m)
{
	const struct pc_res *code = res(u, m->parent);

	return code != NULL && code->nchildren > 0 &&
	       code->children[0] == m->id;
}

/* What a resource looks like the first time it is seen: the hierarchies,
 * processes, the executable and its own source files open; libraries and
 * the toolchain's "<unknown>" file closed (libc alone has thousands of
 * functions). */
static bool opens_by_default(const struct ui *u, const struct pc_res *r)
{
	switch (r->kind) {
	case PC_RES_ROOT: case PC_RES_HIERARCHY: case PC_RES_PROCESS:
	case PC_RES_SYNCCLASS:
		return true;
	case PC_RES_MODULE:
		return is_exe_module(u, r);
	case PC_RES_SRCFILE:
		return strcmp(r->name, "<unknown>") != 0 &&
		       is_exe_module(u, res(u, r->parent));
	default:
		return false;
	}
}

static void grow_flags(struct ui *u)
{
	struct ui_where *w = &u->where;
	size_t n = pc_res_tree_count(u->tree) + 2;

	if (n <= w->nflags)
		return;
	w->flags = xrealloc(w->flags, n);
	w->kids = xrealloc(w->kids, n * sizeof(*w->kids));
	memset(w->flags + w->nflags, 0, n - w->nflags);
	memset(w->kids + w->nflags, 0, (n - w->nflags) * sizeof(*w->kids));
	w->nflags = n;
}

static void mark_new(struct ui *u)
{
	struct ui_where *w = &u->where;

	for (size_t id = 1; id < w->nflags; id++) {
		const struct pc_res *r = res(u, (pc_res_id)id);

		if (r == NULL || (w->flags[id] & UI_W_KNOWN))
			continue;
		w->flags[id] = UI_W_KNOWN |
			(opens_by_default(u, r) ? UI_W_OPEN : 0);
	}
}

/* Called after every poll of the source that changed the tree. */
void ui_where_changed(struct ui *u)
{
	grow_flags(u);
	if (pc_res_tree_count(u->tree) != u->where.seen) {
		mark_new(u);
		u->where.seen = pc_res_tree_count(u->tree);
	}
	u->where.stale = u->where.order_stale = true;
	u->dirty |= UI_D_PANE(UI_PANE_WHERE);
}

static int by_name(const void *a, const void *b, void *tree)
{
	const struct pc_res *ra = pc_res_get(tree, *(const pc_res_id *)a);
	const struct pc_res *rb = pc_res_get(tree, *(const pc_res_id *)b);

	return strcmp(ra->name, rb->name);
}

/* Children in display order. */
static const pc_res_id *kids(struct ui *u, const struct pc_res *r,
			     size_t *n)
{
	struct ui_kids *k;

	*n = r->nchildren;
	if (r->kind != PC_RES_MODULE && r->kind != PC_RES_SRCFILE)
		return r->children;
	k = &u->where.kids[r->id];
	if (k->n != r->nchildren || k->ids == NULL) {
		k->ids = xrealloc(k->ids, r->nchildren * sizeof(*k->ids));
		memcpy(k->ids, r->children, r->nchildren * sizeof(*k->ids));
		k->n = r->nchildren;
		qsort_r(k->ids, k->n, sizeof(*k->ids), by_name, u->tree);
	}
	return k->ids;
}

static void push_row(struct ui_where *w, pc_res_id id, int depth)
{
	if (w->nrows == w->caprows) {
		w->caprows = w->caprows ? w->caprows * 2 : 256;
		w->rows = xrealloc(w->rows, w->caprows * sizeof(*w->rows));
	}
	w->rows[w->nrows].id = id;
	w->rows[w->nrows++].depth = depth;
}

static void visit(struct ui *u, pc_res_id id, int depth)
{
	const struct pc_res *r = res(u, id);
	const pc_res_id *c;
	size_t n;

	if (r == NULL || (r->retired && !u->where.show_retired))
		return;
	push_row(&u->where, id, depth);
	if (!(u->where.flags[id] & UI_W_OPEN))
		return;
	c = kids(u, r, &n);
	for (size_t i = 0; i < n; i++)
		visit(u, c[i], depth + 1);
}

static size_t row_of(const struct ui_where *w, pc_res_id id)
{
	for (size_t i = 0; i < w->nrows; i++)
		if (w->rows[i].id == id)
			return i;
	return (size_t)-1;
}

/* Flatten the open part of the tree; the cursor stays on its resource
 * and, when rows appear above it, the view moves with it. */
void ui_where_rebuild(struct ui *u)
{
	struct ui_where *w = &u->where;
	const struct pc_res *root = res(u, 1);
	size_t old = w->cur, now;

	grow_flags(u);
	w->nrows = 0;
	for (size_t i = 0; root != NULL && i < root->nchildren; i++)
		visit(u, root->children[i], 0);
	w->stale = false;
	now = w->cur_id ? row_of(w, w->cur_id) : (size_t)-1;
	if (now == (size_t)-1)
		now = old < w->nrows ? old : (w->nrows ? w->nrows - 1 : 0);
	if (now > old)
		w->top += now - old;
	else if (old - now <= w->top)
		w->top -= old - now;
	w->cur = now;
	w->cur_id = w->nrows ? w->rows[now].id : PC_RES_NONE;
}

void ui_where_expand_all(struct ui *u)
{
	grow_flags(u);
	for (size_t id = 1; id < u->where.nflags; id++)
		u->where.flags[id] |= UI_W_KNOWN | UI_W_OPEN;
	u->where.stale = true;
}

/* The whole tree in display order, for `/` (built when first needed
 * after a change). */
static void order_visit(struct ui *u, pc_res_id id)
{
	struct ui_where *w = &u->where;
	const struct pc_res *r = res(u, id);
	const pc_res_id *c;
	size_t n;

	if (r == NULL || (r->retired && !w->show_retired))
		return;
	w->opos[id] = (uint32_t)w->norder;
	w->order[w->norder++] = id;
	c = kids(u, r, &n);
	for (size_t i = 0; i < n; i++)
		order_visit(u, c[i]);
}

static void build_order(struct ui *u)
{
	struct ui_where *w = &u->where;
	const struct pc_res *root = res(u, 1);

	grow_flags(u);
	w->order = xrealloc(w->order, w->nflags * sizeof(*w->order));
	w->opos = xrealloc(w->opos, w->nflags * sizeof(*w->opos));
	memset(w->opos, 0xff, w->nflags * sizeof(*w->opos));
	w->norder = 0;
	for (size_t i = 0; root != NULL && i < root->nchildren; i++)
		order_visit(u, root->children[i]);
	w->order_stale = false;
}

/* Move the cursor to a resource, opening its ancestors. */
static void go_to(struct ui *u, pc_res_id id)
{
	struct ui_where *w = &u->where;

	for (const struct pc_res *p = res(u, res(u, id)->parent);
	     p != NULL && p->id != 1; p = res(u, p->parent))
		w->flags[p->id] |= UI_W_OPEN;
	w->cur_id = id;
	ui_where_rebuild(u);
	w->cur = row_of(w, id);
	if (w->cur == (size_t)-1)
		w->cur = 0;
	if (w->page > 0 && (w->cur < w->top || w->cur >= w->top +
			    (size_t)w->page))
		w->top = w->cur > (size_t)w->page / 2 ?
			 w->cur - (size_t)w->page / 2 : 0;
	u->dirty |= UI_D_PANE(UI_PANE_WHERE);
}

/* Find the query from the cursor (or the next one, `from_next`) in
 * direction dir (+1 / -1), over the whole tree, wrapping around. */
void ui_where_search(struct ui *u, int dir, bool from_next)
{
	struct ui_where *w = &u->where;
	pc_res_id start = from_next ? w->cur_id : w->search_from;
	size_t pos;

	if (w->qlen == 0)
		return;
	if (w->order_stale)
		build_order(u);
	if (w->norder == 0)
		return;
	pos = start && w->opos[start] != UINT32_MAX ? w->opos[start] : 0;
	for (size_t i = from_next ? 1 : 0; i <= w->norder; i++) {
		size_t k = (pos + w->norder + (size_t)dir * i) % w->norder;

		if (strstr(res(u, w->order[k])->name, w->query) != NULL) {
			w->query_failed = false;
			go_to(u, w->order[k]);
			return;
		}
	}
	w->query_failed = true;
	u->dirty |= UI_D_HINT;
}

static const char *kind_name(enum pc_res_kind k)
{
	static const char *const names[] = {
		"root", "hierarchy", "module", "source file", "function",
		"process", "thread", "sync class", "sync object", "file",
	};

	return (size_t)k < sizeof(names) / sizeof(names[0]) ? names[k] : "?";
}

static bool in_focus(const struct ui *u, pc_res_id id)
{
	for (int i = 0; i < 4; i++)
		if (u->focus[i] == id)
			return true;
	return false;
}

/* "(3687 functions)" after a closed module; "(exited)" after a retired
 * thread. */
static void suffix(struct ui *u, const struct pc_res *r, bool open,
		   char *buf, size_t len)
{
	buf[0] = '\0';
	if (r->retired)
		snprintf(buf, len, r->kind == PC_RES_THREAD ? " (exited)" :
			 r->kind == PC_RES_MODULE ? " (unloaded)" :
			 " (gone)");
	else if (!open && r->kind == PC_RES_MODULE)
		snprintf(buf, len, " (%zu functions)", pc_res_count_kind(
			 u->tree, r->id, PC_RES_FUNCTION));
	else if (!open && r->nchildren > 0)
		snprintf(buf, len, " (%zu)", r->nchildren);
	else if (r->kind == PC_RES_HIERARCHY && r->nchildren == 0)
		snprintf(buf, len, " (none found yet)");
}

static void draw_row(struct ui *u, const struct ui_rect *rc, int y,
		     const struct ui_row *row, bool cursor)
{
	const struct pc_res *r = res(u, row->id);
	bool open = u->where.flags[row->id] & UI_W_OPEN;
	attr_t a = r->retired ? ui_screen_attr(u, UI_C_DIM) : A_NORMAL;
	const char *mark = r->nchildren == 0 ? u->g->leaf :
			   open ? u->g->open : u->g->closed;
	char suf[64];
	int x = rc->x + 1 + 2 * row->depth, end = rc->x + rc->w;

	if (in_focus(u, row->id)) {
		a |= ui_screen_attr(u, UI_C_FOCUS) | A_BOLD;
		ui_screen_put(u, y, rc->x, 1, u->g->focus, a);
	}
	if (cursor) {
		a |= u->active == UI_PANE_WHERE ? A_REVERSE : A_UNDERLINE;
		wattrset(stdscr, a);
		mvwhline(stdscr, y, rc->x + 1, ' ', rc->w - 1);
	}
	if (x >= end)
		return;
	x += ui_screen_put(u, y, x, end - x, mark, a);
	x += ui_screen_put(u, y, x, end - x, " ", a);
	x += ui_screen_put(u, y, x, end - x, pc_res_shown(r), a);
	suffix(u, r, open, suf, sizeof(suf));
	ui_screen_put(u, y, x, end - x, suf, a | (r->retired ? 0 :
	       ui_screen_attr(u, UI_C_DIM)));
}

/* The cursor's full path and what it is, for the pane's last rows. */
static bool detail_text(struct ui *u, char *buf, size_t len)
{
	const struct pc_res *r = res(u, u->where.cur_id);

	if (r == NULL)
		return false;
	if (r->addr != 0)
		snprintf(buf, len, "%s  [%s at 0x%llx]", r->path,
			 kind_name(r->kind), (unsigned long long)r->addr);
	else
		snprintf(buf, len, "%s  [%s]", r->path, kind_name(r->kind));
	return true;
}

/* ui_where.c */
void ui_where_init(struct ui_where *w);
void ui_where_free(struct ui_where *w);
void ui_where_changed(struct ui *u);         /* the tree grew or changed */
static void ui_where_draw(struct ui *u, const struct ui_rect *rc)
{
	struct ui_where *w = &u->where;
	char buf[64], detail[1024];
	int drows = 0, page;

	if (u->tree == NULL)
		return;
	if (ui_pick_active(u) && u->pc != NULL)
		return ui_pick_draw(u, rc);
	if (w->stale)
		ui_where_rebuild(u);
	if (rc->h > 1 && detail_text(u, detail, sizeof(detail))) {
		int most = rc->h / 2 > 1 ? rc->h / 2 : 1;

		drows = ui_line_rows(u, detail, rc->w);
		drows = drows < most ? drows : most;
	}
	page = rc->h - (rc->h > 1 ? (drows ? drows : 1) : 0);
	if (page < 1)
		page = rc->h;
	w->page = page;
	if (w->cur < w->top)
		w->top = w->cur;
	if (w->cur >= w->top + (size_t)page)
		w->top = w->cur - (size_t)page + 1;
	if (w->top + (size_t)page > w->nrows)
		w->top = w->nrows > (size_t)page ? w->nrows - (size_t)page : 0;
	for (int i = 0; i < page && w->top + (size_t)i < w->nrows; i++)
		draw_row(u, rc, rc->y + i, &w->rows[w->top + (size_t)i],
			 w->top + (size_t)i == w->cur);
	if (drows > 0)
		ui_line_draw_wrapped(u, rc, rc->y + rc->h - drows, detail,
				     drows, A_BOLD);
	snprintf(buf, sizeof(buf), " %zu resources ",
		 pc_res_tree_count(u->tree) - 1);
	ui_screen_put(u, rc->y - 1, rc->x + rc->w - ui_screen_width(u, buf),
		      rc->w, buf,
		      u->active == UI_PANE_WHERE ? ui_screen_attr(u, UI_C_TITLE)
						 : A_NORMAL);
}

static void move_to(struct ui *u, size_t row)
{
	struct ui_where *w = &u->where;

	if (w->nrows == 0)
		return;
	w->cur = row >= w->nrows ? w->nrows - 1 : row;
	w->cur_id = w->rows[w->cur].id;
	u->dirty |= UI_D_PANE(UI_PANE_WHERE);
}

static void toggle(struct ui *u, bool open, bool close)
{
	struct ui_where *w = &u->where;
	const struct pc_res *r = res(u, w->cur_id);
	uint8_t *f;

	if (r == NULL)
		return;
	f = &w->flags[r->id];
	if (open && !(*f & UI_W_OPEN))
		*f |= UI_W_OPEN;
	else if (close && (*f & UI_W_OPEN))
		*f &= (uint8_t)~UI_W_OPEN;
	else if (open && r->nchildren > 0)  /* l on an open node: step in */
		return move_to(u, w->cur + 1);
	else if (close && r->parent > 1)    /* h on a closed node: go up */
		return go_to(u, r->parent);
	w->stale = true;
	u->dirty |= UI_D_PANE(UI_PANE_WHERE);
}

/* `f`: the cursor's resource becomes its hierarchy's part of the focus;
 * on a hierarchy itself, that part goes back to "not constrained". */
static void set_focus(struct ui *u)
{
	const struct pc_res *r = res(u, u->where.cur_id), *h = r;
	const struct pc_res *root = res(u, 1);

	while (h != NULL && h->kind != PC_RES_HIERARCHY)
		h = res(u, h->parent);
	if (h == NULL)
		return;
	for (size_t i = 0; i < root->nchildren && i < 4; i++)
		if (root->children[i] == h->id)
			u->focus[i] = r == h ? PC_RES_NONE : r->id;
	u->dirty |= UI_D_FOCUS | UI_D_PANE(UI_PANE_WHERE);
}

static void draw_pane(struct ui *u, enum ui_pane p, const struct ui_rect *r)
{
	(void)p;
	ui_where_draw(u, r);
}

const struct ui_pane_ops ui_where_pane = {
	.title = "Where",
	.draw = draw_pane,
	.key = ui_where_key,
	.hint = "%s%s move  Enter fold  / find  n/N next  f focus  "
		"m metric  x experiment  ? help",
};

bool ui_where_key(struct ui *u, int key)
{
	struct ui_where *w = &u->where;
	size_t page = w->page > 1 ? (size_t)w->page - 1 : 1;

	if (ui_pick_active(u) && u->pc != NULL)
		return ui_pick_key(u, key);
	if (w->stale)
		ui_where_rebuild(u);
	switch (ui_keys_motion(key)) {
	case UI_K_UP: move_to(u, w->cur ? w->cur - 1 : 0); return true;
	case UI_K_DOWN: move_to(u, w->cur + 1); return true;
	case UI_K_PGUP: move_to(u, w->cur > page ? w->cur - page : 0);
		return true;
	case UI_K_PGDN: move_to(u, w->cur + page); return true;
	case UI_K_HOME: move_to(u, 0); return true;
	case UI_K_END: move_to(u, w->nrows ? w->nrows - 1 : 0); return true;
	case UI_K_TOGGLE: toggle(u, !(w->flags[w->cur_id] & UI_W_OPEN),
				 true); return true;
	case UI_K_RIGHT: toggle(u, true, false); return true;
	case UI_K_LEFT: toggle(u, false, true); return true;
	default: break;
	}
	switch (key) {
	case '/':
		u->prompt = UI_PROMPT_SEARCH;
		w->qlen = 0;
		w->query[0] = '\0';
		w->query_failed = false;
		w->search_from = w->cur_id;
		u->dirty |= UI_D_HINT;
		return true;
	case 'n': ui_where_search(u, +1, true); return true;
	case 'N': ui_where_search(u, -1, true); return true;
	case 'f': set_focus(u); return true;
	case 'm': case 'x': ui_pick_start(u, key); return true;
	case 'F':
		memset(u->focus, 0, sizeof(u->focus));
		u->dirty |= UI_D_FOCUS | UI_D_PANE(UI_PANE_WHERE);
		return true;
	case 'r':
		w->show_retired = !w->show_retired;
		w->stale = w->order_stale = true;
		ui_status_note(u,
			       "%s retired resources (exited threads, unloaded "
			       "libraries)",
			       w->show_retired ? "showing" : "hiding");
		u->dirty |= UI_D_PANE(UI_PANE_WHERE);
		return true;
	default:
		return false;
	}
}

/*
 * search_fill.c - a search history graph of a given size for ui_bench:
 * the real consultant (pc_consult over a sim source, the shipped
 * hypotheses) whose global search is filled through pc_shg_add, as the
 * search itself adds nodes: each top-level hypothesis refined where
 * down the Code hierarchy (modules, then source files), with every state
 * (true, false, unknown, never evaluated, active) and values around the
 * threshold, so rows draw bars, numbers and colours.
 */
#include "search_fill.h"

#include <stdio.h>
#include <stdlib.h>

#include "pc_search.h"
#include "src_sim.h"

static void set_state(struct pc_node *n, int i)
{
	n->truth = (enum pc_truth)(i % 3);
	n->active = i % 5 == 0;
	n->guess = i % 4 == 0 ? -1 : i % 2;
	n->value = 0.05 * (i % 9);
	n->threshold = 0.2;
	n->t_start = n->t_concluded = n->t_true_since = 1.0 + i % 50;
}

static int add(struct pc_consult *pc, int parent, int hyp,
	       const struct pc_focus *f, bool why)
{
	char name[512], fname[400];
	bool created;
	int id;

	pc_focus_name(pc->res, f, fname, sizeof(fname));
	snprintf(name, sizeof(name), "%s%s", pc->cfg->hyp[hyp].name, fname);
	id = pc_shg_add(pc->global, parent, hyp, f, why, name, 1.0,
			&created);
	set_state(pc->global->nodes[id], id);
	return id;
}

/* Where-refine hypothesis h under node `top`: modules, then files,
 * until `*left` nodes are spent. */
static void refine(struct pc_consult *pc, int top, int h, int *left)
{
	const struct pc_res *code = pc_res_get(pc->res,
		pc_res_tree_hierarchy(pc->res, "Code"));
	struct pc_focus f;

	pc_focus_top(pc->res, &f);
	for (size_t m = 0; m < code->nchildren && *left > 0; m++) {
		const struct pc_res *mod = pc_res_get(pc->res,
						      code->children[m]);
		int mid;

		f.r[0] = mod->id;
		mid = add(pc, top, h, &f, false);
		--*left;
		for (size_t k = 0; k < mod->nchildren && *left > 0; k++) {
			f.r[0] = mod->children[k];
			add(pc, mid, h, &f, false);
			--*left;
		}
	}
}

struct pc_consult *search_fill(struct pc_config *cfg, struct pc_restree *t,
			       int nodes)
{
	struct src_sim *sim = src_sim_new();
	struct pc_consult *pc = pc_consult_new(cfg, src_sim_source(sim), t);
	struct pc_focus top;
	int root = -1, nhyp = 0, left = nodes - 1;

	pc->global = pc_shg_new(0, "global", 0);
	pc_focus_top(t, &top);
	for (size_t i = 0; i < cfg->nhyp; i++)
		if (cfg->hyp[i].parent == NULL)
			root = add(pc, -1, (int)i, &top, true);
	pc->global->root = root;
	for (size_t i = 0; i < cfg->nhyp; i++)
		nhyp += cfg->hyp[i].parent_idx == pc->global->nodes[root]->hyp &&
			!cfg->hyp[i].is_virtual;
	for (size_t i = 0; i < cfg->nhyp && left > 0; i++) {
		int share = left / (nhyp > 0 ? nhyp : 1) + 1, id;

		if (cfg->hyp[i].parent_idx != pc->global->nodes[root]->hyp ||
		    cfg->hyp[i].is_virtual)
			continue;
		id = add(pc, root, (int)i, &top, true);
		left--;
		share = share < left ? share : left;
		left -= share;
		refine(pc, id, (int)i, &share);
		left += share;  /* what refinement did not use */
		nhyp--;
	}
	pc->started = true;
	pc->now = 60;
	return pc;
}

/*
 * pc_procend.c - experiments of ended processes end (see pc_procend.h).
 */
#include "pc_procend.h"

#include "pc_res.h"
#include "pc_shg.h"

#define PROC_H 1   /* the /Process component of a focus */

/* Is resource id inside a retired process (below the /Process root)? */
static bool in_ended_process(const struct pc_restree *t, pc_res_id id,
			     pc_res_id root)
{
	const struct pc_res *r = pc_res_get(t, id);

	if (r == NULL || id == root)
		return false;
	while (r->parent != root) {
		r = pc_res_get(t, r->parent);
		if (r == NULL)
			return false;
	}
	return r->retired;
}

static void stop_search(struct pc_consult *pc, struct pc_search *s,
			pc_res_id root)
{
	for (size_t i = 0; s != NULL && i < s->nn; i++) {
		struct pc_node *n = s->nodes[i];

		if (!(n->active || n->pending || n->queued) ||
		    !in_ended_process(pc->res, n->focus.r[PROC_H], root))
			continue;
		n->cut_short = true;
		if (n->active || n->pending)
			pc_cost_node_stop(pc, n, "process ended");
		if (n->queued) {
			n->queued = false;
			pc_shg_node_trace(n, "process ended");
		}
	}
}

/* Does any process of the job live? */
static bool any_live(const struct pc_restree *t, pc_res_id root)
{
	const struct pc_res *r = pc_res_get(t, root);

	for (size_t i = 0; r != NULL && i < r->nchildren; i++)
		if (!pc_res_get(t, r->children[i])->retired)
			return true;
	return false;
}

void pc_procend_stop(struct pc_consult *pc)
{
	pc_res_id root = pc_res_tree_hierarchy(pc->res, "Process");

	/* The last process's end is the target's: the search ends as a
	 * whole (its nodes "ended"), not here. */
	if (pc->target_ended || !any_live(pc->res, root))
		return;
	stop_search(pc, pc->global, root);
	stop_search(pc, pc->current, root);
}

bool pc_procend_job_lives(const struct pc_consult *pc)
{
	pc_res_id root = pc_res_tree_hierarchy(pc->res, "Process");
	const struct pc_res *r = pc_res_get(pc->res, root);

	if (pc->target_ended || r == NULL || r->nchildren < 1)
		return false;
	return any_live(pc->res, root);
}

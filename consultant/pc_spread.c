/*
 * pc_spread.c - the spread of a hypothesis across processes (see
 * pc_spread.h).
 */
#include "pc_spread.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pc_res.h"
#include "pc_shg.h"

#define PROC_H 1   /* the /Process component of a focus */

/* Does child c refine n along /Process alone, to one process? */
static bool to_process(const struct pc_consult *pc, const struct pc_node *n,
		       const struct pc_node *c, pc_res_id proc_root)
{
	const struct pc_res *r = pc_res_get(pc->res, c->focus.r[PROC_H]);

	for (int i = 0; i < PC_NHIER; i++)
		if (i != PROC_H && c->focus.r[i] != n->focus.r[i])
			return false;
	return c->hyp == n->hyp && r != NULL && r->parent == proc_root;
}

/* The value of n over its run (NAN when it never ran long enough). */
static bool run_mean(const struct pc_node *n, double *v)
{
	if (n->t_start < 0 || n->run_len <= 0)
		return false;
	*v = n->run_sum / n->run_len;
	return true;
}

static bool spread_of(const struct pc_consult *pc, const struct pc_search *s,
		      const struct pc_node *n, pc_res_id proc_root,
		      struct pc_spread *sp)
{
	double sum = 0, v;

	if (n->is_virtual || n->focus.r[PROC_H] != proc_root)
		return false;
	*sp = (struct pc_spread){ .node = n };
	for (size_t i = 0; i < n->nkids; i++) {
		const struct pc_node *c = pc_shg_node(s, n->kids[i].child);
		int pid;

		if (n->kids[i].why || !to_process(pc, n, c, proc_root) ||
		    !run_mean(c, &v))
			continue;
		pid = (int)pc_res_get(pc->res, c->focus.r[PROC_H])->tag;
		if (sp->nproc == 0 || v < sp->min) {
			sp->min = v;
			sp->min_pid = pid;
		}
		if (sp->nproc == 0 || v > sp->max) {
			sp->max = v;
			sp->max_pid = pid;
		}
		sum += v;
		sp->nproc++;
	}
	if (sp->nproc < 2)
		return false;
	sp->mean = sum / (double)sp->nproc;
	sp->imbalanced = sp->max >= PC_SPREAD_IMBALANCE * sp->mean &&
			 sp->max - sp->min >= n->threshold && sp->max > 0;
	return true;
}

size_t pc_spread_list(const struct pc_consult *pc, const struct pc_search *s,
		      struct pc_spread *out, size_t max)
{
	pc_res_id proc_root = pc_res_tree_hierarchy(pc->res, "Process");
	size_t k = 0;

	for (size_t i = 0; s != NULL && i < s->nn && k < max; i++)
		k += spread_of(pc, s, s->nodes[i], proc_root, &out[k]);
	return k;
}

json_t *pc_spread_json(const struct pc_consult *pc,
		       const struct pc_search *s)
{
	struct pc_spread sp[64];
	size_t n = pc_spread_list(pc, s, sp, 64);
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_pack(
			"{s:s, s:s, s:i, s:{s:f, s:i}, s:f, s:{s:f, s:i}, "
			"s:b}",
			"node", sp[i].node->name,
			"hypothesis", pc_truth_node_hyp(pc, sp[i].node)->name,
			"processes", (int)sp[i].nproc,
			"min", "value", sp[i].min, "pid", sp[i].min_pid,
			"mean", sp[i].mean,
			"max", "value", sp[i].max, "pid", sp[i].max_pid,
			"imbalanced", sp[i].imbalanced));
	return a;
}

/* ", rank N" when the where axis shows process pid by an MPI rank. */
static const char *rank_of(const struct pc_consult *pc, int pid, char *buf,
			   size_t len)
{
	char path[64];
	pc_res_id id;
	const char *shown;

	snprintf(path, sizeof(path), "/Process/%d", pid);
	id = pc_res_find(pc->res, path);
	shown = id != PC_RES_NONE ? pc_res_shown(pc_res_get(pc->res, id)) :
		NULL;
	if (shown == NULL || strncmp(shown, "rank ", 5) != 0)
		return "";
	snprintf(buf, len, ", %s", shown);
	return buf;
}

void pc_spread_text(const struct pc_consult *pc, const struct pc_search *s,
		    FILE *f)
{
	char r1[64], r2[64];

	struct pc_spread sp[64];
	size_t n = pc_spread_list(pc, s, sp, 64);

	if (n > 0)
		fprintf(f, "\nspread across processes (each process's value "
			"over its experiment):\n");
	for (size_t i = 0; i < n; i++) {
		fprintf(f, " %zu. %s: %zu processes, min %.4g (pid %d%s), "
			"mean %.4g, max %.4g (pid %d%s)\n", i + 1,
			sp[i].node->name, sp[i].nproc, sp[i].min,
			sp[i].min_pid, rank_of(pc, sp[i].min_pid, r1,
			sizeof(r1)), sp[i].mean, sp[i].max, sp[i].max_pid,
			rank_of(pc, sp[i].max_pid, r2, sizeof(r2)));
		if (sp[i].imbalanced)
			fprintf(f, "    load imbalance: process %d%s has %.1fx "
				"the mean of the %zu\n", sp[i].max_pid,
				rank_of(pc, sp[i].max_pid, r2, sizeof(r2)),
				sp[i].mean > 0 ? sp[i].max / sp[i].mean : 0,
				sp[i].nproc);
	}
}

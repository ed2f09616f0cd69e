/*
 * pc_kids.h - a node's children along one hierarchy, ranked, and the
 * dominant descendants below them (pc_kids.c), for the expansion of a
 * true node (pc_truth.c).
 */
#ifndef PC_KIDS_H
#define PC_KIDS_H

#include "pc_search.h"

#define PC_KIDS_MAX 4096
#define PC_KIDS_DOMINANT 3   /* kids whose dominant chains are followed */

struct pc_kids {
	pc_res_id r[PC_KIDS_MAX];
	double score[PC_KIDS_MAX];   /* the source's hint, after pc_kids_rank */
	size_t n;
	const struct pc_restree *res;
	/* Appended to each hint question (pc_kids_ask): "" (any
	 * observation), PC_SRC_HINT_CPU (CPU samples alone, for a CPU
	 * hypothesis: a thread blocked in read() is all of the window's
	 * I/O observations, and led a pool's CPU search into the parent's
	 * read) or PC_SRC_HINT_WAIT and a wait metric (that wait's own
	 * evidence: the demo's lock workers, all of its sync observations,
	 * led its I/O refinements before the writer). */
	char ask[96];
};

/* The hint question's suffix for refinements of hypothesis hy, into
 * ask (len bytes; a pc_kids' ask): PC_SRC_HINT_CPU for a CPU
 * hypothesis; PC_SRC_HINT_WAIT and the metric for a wall timer of a
 * sync or I/O wait (its own first input's, or its nearest why-parent's:
 * TooManySmallIOOps asks as ExcessiveIOBlockingTime); "" otherwise. */
void pc_kids_ask(const struct pc_consult *pc, int hy, char *ask,
		 size_t len);
/* The source's hint of resource r asked with the suffix ask ("": the
 * bare path). */
double pc_kids_hint(struct pc_consult *pc, const char *ask, pc_res_id r);
/* The children of the focus's component h: the where axis's live
 * children, or in call-graph search a function's callees (a thread's
 * /Code starts at its start function). */
void pc_kids_where(struct pc_consult *pc, const struct pc_focus *f, int h,
		   struct pc_kids *k);
/* Order them by the source's hint, likeliest first (stable). */
void pc_kids_rank(struct pc_consult *pc, struct pc_kids *k);
/* skipDominantLevels: the deepest descendant along h that holds nearly
 * all of its parent's evidence, at least min_depth levels below the
 * focus, or PC_RES_NONE; `edge` (may be NULL) the chain's last function
 * in the module of its first when the chain leaves that module. */
pc_res_id pc_kids_dominant_descendant(struct pc_consult *pc,
				      const struct pc_focus *f, int h,
				      const struct pc_kids *k, int min_depth,
				      pc_res_id *edge);
/* The dominant descendants below each of the focus's likeliest kids
 * (at most PC_KIDS_DOMINANT), `via` the kid each lies below; returns
 * how many. */
int pc_kids_dominant_descendants(struct pc_consult *pc,
				 const struct pc_focus *f, int h,
				 const struct pc_kids *k, pc_res_id *out,
				 pc_res_id *via);

#endif

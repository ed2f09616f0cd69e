/*
 * pc_findings_int.h - what pc_findings.c shares with
 * pc_findings_group.c and pc_findings_rank.c: the state of one build
 * (the leaves, the groups they form and join), the relations between
 * foci the grouping uses, and the helpers the ranking needs.
 */
#ifndef PC_FINDINGS_INT_H
#define PC_FINDINGS_INT_H

#include "pc_findings.h"

#define MAXL 256   /* leaves considered, as the reports list at most */

struct pc_findings_ctx {  /* one pc_findings_build */
	const struct pc_consult *pc;
	const struct pc_search *s;
	const struct pc_node *leaf[MAXL];
	size_t nl;
	int ng;
	int ghyp[MAXL];
	pc_res_id gwhere[MAXL][PC_NHIER];
	const struct pc_node *gcode[MAXL];   /* leaf giving the /Code where */
	unsigned char mem[MAXL][MAXL];       /* [group][leaf]: 1 own,
						2 compatible with others too */
	int uf[MAXL];
};

const struct pc_res *pc_findings_res(const struct pc_findings_ctx *c,
				     pc_res_id id);
/* id is a hierarchy's root (/Code, /Process, ...). */
bool pc_findings_is_root(const struct pc_findings_ctx *c, pc_res_id id);
/* Measured with the kernel's CPU clock (CPUbound): a wait or I/O
 * cause seen in the same code is the more specific explanation. */
bool pc_findings_is_generic(const struct pc_consult *pc, int hyp);
/* A node's measure in a finding: the mean its truth rests on
 * (pc_shg_node_judged); for a true node whose latest values went to the
 * other side of its threshold without concluding it false (the
 * program's last, partial interval: CPU in the hot loop read 0.00 as
 * the demo exited), the value it was concluded true with. */
double pc_findings_value(const struct pc_consult *pc,
			 const struct pc_node *n);

/* How many levels below its hierarchy's root resource id is. */
int pc_findings_depth(const struct pc_findings_ctx *c, pc_res_id id);
/* a is b or one of its ancestors in the resource tree. */
bool pc_findings_res_anc(const struct pc_findings_ctx *c, pc_res_id a,
			 pc_res_id b);
/* A /Code resource refined on n's chain (the call graph search refines
 * a caller to its callees: they are not ancestors in the tree). */
bool pc_findings_on_chain(const struct pc_findings_ctx *c,
			  const struct pc_node *n, pc_res_id code);
/* Two threads of one process, or two processes of a job of several:
 * one cause may hold several (the finding's threads or processes are a
 * set; its where is then the process, or the whole job). */
bool pc_findings_sibling_parts(const struct pc_findings_ctx *c,
			       pc_res_id a, pc_res_id b);
/* The process a /Process resource lies in (itself for a process, its
 * parent for a thread), or PC_RES_NONE for the hierarchy's root. */
pc_res_id pc_findings_process_of(const struct pc_findings_ctx *c,
				 pc_res_id r);
/* A thread, or one process of a job of several: a part of the program
 * whose measures add up with its siblings'. */
bool pc_findings_is_part(const struct pc_findings_ctx *c, pc_res_id r);

/* Steps 1 and 2 (pc_findings_group.c): c's leaves, in groups per
 * hypothesis, the groups joined; pc_findings_group_root gives the group
 * a group was joined into (itself for a finding's own). */
void pc_findings_group(struct pc_findings_ctx *c);
int pc_findings_group_root(struct pc_findings_ctx *c, int g);

/* symptom_of, then the ranking (pc_findings.h), in place. */
void pc_findings_rank(struct pc_findings_ctx *c, struct pc_findings *fs);

/* The leaves of one finding (a union-find root of the groups): its own
 * first, then those compatible with other findings too. */
struct pc_findings_members {
	int root;                   /* union-find root */
	size_t leaves[MAXL];        /* leaf indices, own first */
	unsigned char own[MAXL];
	size_t n;
};

/* The build's node pool: add n; is n listed from index `from` on? */
void pc_findings_pool_add(struct pc_findings *fs, const struct pc_node *n);
bool pc_findings_pool_has(struct pc_findings *fs, size_t from,
			  const struct pc_node *n);
/* f->impact, for the finding of members b (pc_findings_impact.c); the
 * nodes it rests on are added to f's evidence. */
void pc_findings_impact(struct pc_findings_ctx *c,
			const struct pc_findings_members *b,
			struct pc_findings *fs, struct pc_finding *f);
/* f->also: the other hypotheses' measures among b's leaves. */
void pc_findings_impact_also(struct pc_findings_ctx *c,
			     const struct pc_findings_members *b,
			     struct pc_finding *f);

#endif

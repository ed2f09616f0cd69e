/*
 * eng_metric_follow.c - clauses over the start functions follow the
 * threads: a metric enabled on the whole program before a thread with a
 * new start routine exists (at main, typically) gets that routine
 * instrumented when the sampler first reports the thread, and catchup
 * starts its timer where the routine began (the rtlib records it), so
 * cpu_inclusive at the top counts every thread's CPU time however early
 * it was enabled.
 *
 * Only nodes with a plain focus follow (the whole program, or a thread
 * view of it): under a code focus the start-function clauses are moved
 * to the focus' functions (eng_metric_gen.c), which do not change.
 */
#include "eng_metric_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "eng_proc.h"
#include "eng_sampler.h"

static bool plain_focus(const struct eng_mfocus *f)
{
	return f->code == ENG_CODE_ALL && f->ncons == 0 && !f->has_key &&
	       !f->has_class && f->nreplace == 0;
}

void eng_metric_follow_free(struct mfollow *fo)
{
	if (fo == NULL)
		return;
	for (size_t i = 0; i < fo->ncl; i++)
		free((void *)fo->cl[i].prims);
	free(fo->cl);
	free(fo->done);
	free(fo->name);
	free(fo);
}

/* Copies of the clauses: only constant-operand primitives without
 * predicates can be kept (what start-function timers and counters use);
 * anything else does not follow. */
static int copy_clause(struct eng_mclause *dst, const struct eng_mclause *src)
{
	struct eng_mprim *p = calloc(src->nprims ? src->nprims : 1,
				     sizeof *p);

	if (p == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < src->nprims; i++) {
		if (src->prims[i].npreds > 0 ||
		    src->prims[i].value.kind != ENG_MO_CONST) {
			free(p);
			return -ENOTSUP;
		}
		p[i] = src->prims[i];
	}
	*dst = *src;
	dst->names = NULL;
	dst->nnames = 0;
	dst->callee = NULL;
	dst->prims = p;
	return 0;
}

static bool done_has(const struct mfollow *fo, uint64_t a)
{
	for (size_t i = 0; i < fo->ndone; i++)
		if (fo->done[i] == a)
			return true;
	return false;
}

static int done_add(struct mfollow *fo, uint64_t a)
{
	if (done_has(fo, a))
		return 0;
	if (fo->ndone == fo->capdone) {
		size_t cap = fo->capdone ? fo->capdone * 2 : 8;
		uint64_t *v = realloc(fo->done, cap * sizeof *v);

		if (v == NULL)
			return -ENOMEM;
		fo->done = v;
		fo->capdone = cap;
	}
	fo->done[fo->ndone++] = a;
	return 0;
}

/* The start functions now; with `fo`, only those it has not done.
 * Returns how many, their addresses added to `fo` when `add`. */
static size_t start_fns(struct eng_metric *m, struct mfollow *fo, bool add)
{
	struct eng_mfocus all = { .code = ENG_CODE_ALL };
	struct mfunc *fns = NULL;
	size_t nf = 0, n = 0;

	if (eng_metric_funcs_of(m, &fo->cl[0], &all, &fns, &nf, NULL) < 0)
		return 0;
	for (size_t i = 0; i < nf; i++) {
		uint64_t a = fns[i].mod->base + fns[i].f->addr;

		if (done_has(fo, a))
			continue;
		n++;
		if (add)
			done_add(fo, a);
	}
	free(fns);
	return n;
}

int eng_metric_follow_init(struct eng_metric *m, struct mnode *n,
		 const struct eng_mdef *def, const struct eng_mfocus *f)
{
	struct mfollow *fo;

	if (!plain_focus(f))
		return 0;
	fo = calloc(1, sizeof *fo);
	if (fo == NULL)
		return -ENOMEM;
	fo->cl = calloc(def->nclauses ? def->nclauses : 1, sizeof *fo->cl);
	fo->name = strdup(def->name);
	fo->type = def->type;
	if (fo->cl == NULL || fo->name == NULL) {
		eng_metric_follow_free(fo);
		return -ENOMEM;
	}
	for (size_t i = 0; i < def->nclauses; i++) {
		if (def->clauses[i].funcs != ENG_MF_START)
			continue;
		if (copy_clause(&fo->cl[fo->ncl], &def->clauses[i]) < 0) {
			eng_metric_follow_free(fo);
			return 0;   /* does not follow */
		}
		fo->ncl++;
	}
	if (fo->ncl == 0) {
		eng_metric_follow_free(fo);
		return 0;
	}
	start_fns(m, fo, true);
	n->follow = fo;
	return 0;
}

/* Instrument the new start functions of one node (queued; the caller
 * commits).  Returns the index of its first new catchup entry. */
static size_t follow_gen(struct eng_metric *m, struct mnode *n)
{
	struct mfollow *fo = n->follow;
	struct eng_mfocus all = { .code = ENG_CODE_ALL };
	struct eng_mdef def = { .name = fo->name, .type = fo->type,
				.clauses = fo->cl, .nclauses = fo->ncl };
	struct minsert_arg ia = { m, n };
	struct mgen g = { .m = m, .def = &def, .f = &all, .node = n,
			  .type = fo->type, .skip = fo->done,
			  .nskip = fo->ndone };
	size_t first = n->ncatch;

	g.sink = (struct mgen_sink){ .emit = eng_metric_sink_insert,
				     .arg = &ia };
	if (eng_metric_gen_clauses(&g, fo->cl, fo->ncl, NULL) == 0)
		n->functions += g.nfuncs;
	start_fns(m, fo, true);
	return first;
}

static void follow_catchup(struct eng_metric *m, struct mnode *n,
			   size_t first)
{
	for (size_t i = first; i < n->ncatch; i++) {
		struct eng_catchup_info ci;

		if (eng_inst_catchup_info(m->in, n->catch[i].lo,
					  n->catch[i].hi, &n->catch[i].s, 1,
					  &ci, NULL) < 0)
			continue;
		n->from_begin += ci.from_begin;
		n->from_samples += ci.from_samples;
		n->from_enable += ci.from_enable;
	}
	if (n->ncatch > first)
		eng_sampler_var_refresh(m->smp, n->var_id);
}

int eng_metric_follow_poll(struct eng_metric *m)
{
	struct mnode *todo[64];
	size_t first[64], nt = 0;
	bool was_stopped;

	if (eng_proc_ended(m->p))
		return 0;
	for (struct mnode *n = m->nodes; n != NULL && nt < 64; n = n->next)
		if (n->follow != NULL && start_fns(m, n->follow, false) > 0)
			todo[nt++] = n;
	if (nt == 0)
		return 0;
	was_stopped = eng_proc_stopped(m->p);
	if (!was_stopped && eng_ptrace_stop_all(m->p, NULL) < 0)
		return -ESRCH;
	for (size_t i = 0; i < nt; i++)
		first[i] = follow_gen(m, todo[i]);
	if (eng_inst_commit(m->in, NULL) >= 0)
		for (size_t i = 0; i < nt; i++)
			follow_catchup(m, todo[i], first[i]);
	if (!was_stopped && eng_proc_stopped(m->p))
		eng_ptrace_resume_all(m->p, NULL);
	return (int)nt;
}

/*
 * eng_metric_batch.c - enables and disables committed together (see
 * eng_metric.h): a step of the search that launches eight experiments
 * and ends three stopped every thread eleven times, committed eleven
 * times and caught up eight times; a batch does it once each.
 *
 * An instance enabled in a batch is compiled at once (its requests
 * queued, its variables allocated: it reads 0 until the end) and linked,
 * so that an identical enable in the same batch shares it.  At the end:
 * one stop, one commit, each new instance checked (a node none of whose
 * points was built measures nothing: freed, and told to the caller),
 * the failed ones' code removed by a second commit, catchup for every
 * fresh node, one resume; then the nodes dropped by the batch's
 * disables are reaped (their slots reused only after the commit that
 * removed what writes them).
 */
#include "eng_metric_int.h"

#include <stdio.h>
#include <stdlib.h>

#include "eng_proc.h"
#include "vec.h"

void eng_metric_batch_begin(struct eng_metric *m)
{
	m->batch = true;
}

void eng_metric_batch_defer(struct eng_metric *m, const struct eng_mdef *def,
			    const struct eng_mfocus *f, struct eng_minst *mi)
{
	struct mbatch_new *b;

	VEC_RESERVE(m->batch_new, m->capbatch_new, m->nbatch_new + 1);
	b = &m->batch_new[m->nbatch_new++];
	b->mi = mi;
	eng_metric_check_of(def, f, &b->c);
}

void eng_metric_batch_forget(struct eng_metric *m, struct eng_minst *mi)
{
	size_t k = 0;

	for (size_t i = 0; i < m->nbatch_new; i++)
		if (m->batch_new[i].mi != mi)
			m->batch_new[k++] = m->batch_new[i];
	m->nbatch_new = k;
}

/* The new instances that measure nothing (all of them when the commit
 * failed): unlinked, their code dropped into *dead, kept in the
 * array's first entries with their reason.  Returns how many. */
static size_t check_new(struct eng_metric *m, int commit_rc,
			const char *commit_why, int *rcs, char (*why)[1024],
			struct mnode **dead)
{
	size_t nf = 0;

	for (size_t i = 0; i < m->nbatch_new; i++) {
		struct mbatch_new *b = &m->batch_new[i];
		struct hunch_err e = { 0 };
		int rc = commit_rc < 0 ? commit_rc :
			 eng_metric_check(m, &b->c, b->mi->code, &e);

		if (rc >= 0)
			continue;
		rcs[nf] = rc;
		snprintf(why[nf], sizeof(why[nf]), "%s",
			 commit_rc < 0 ? commit_why : e.msg);
		eng_metric_inst_unlink(m, b->mi);
		eng_metric_node_put(m, b->mi->code, dead);
		m->batch_new[nf++].mi = b->mi;
	}
	return nf;
}

void eng_metric_batch_end(struct eng_metric *m, eng_metric_failed_fn failed,
			  void *arg)
{
	struct mnode *dead = m->batch_dead;
	struct hunch_err err = { 0 };
	bool was_stopped = eng_proc_stopped(m->p);
	size_t n = m->nbatch_new, nf = 0;
	int rc = 0, *rcs = NULL;
	char (*why)[1024] = NULL;

	/* most steps enable nothing: no reasons to hold then */
	if (n > 0 && ((rcs = calloc(n, sizeof(*rcs))) == NULL ||
		      (why = calloc(n, sizeof(*why))) == NULL))
		abort();
	m->batch = false;
	m->batch_dead = NULL;
	if (n > 0 || eng_inst_commit_due(m->in)) {
		if (!was_stopped && !eng_proc_ended(m->p))
			rc = eng_ptrace_stop_all(m->p, &err);
		if (rc == 0)
			rc = eng_inst_commit(m->in, &err);
		nf = check_new(m, rc, err.msg, rcs, why, &dead);
		if (nf > 0)
			eng_inst_commit(m->in, NULL);
		if (rc >= 0)
			eng_metric_catchup_fresh(m);
		if (!was_stopped && eng_proc_stopped(m->p))
			eng_ptrace_resume_all(m->p, NULL);
	}
	eng_metric_nodes_reap(m, dead);
	m->nbatch_new = 0;
	for (size_t i = 0; i < nf; i++) {
		struct eng_minst *mi = m->batch_new[i].mi;

		if (failed != NULL)
			failed(arg, mi, rcs[i], why[i]);
		free(mi->key);
		free(mi);
	}
	free(rcs);
	free(why);
}

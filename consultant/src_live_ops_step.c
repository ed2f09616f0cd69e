/*
 * src_live_ops_step.c - a step of the search (pc_source_ops.step) on the
 * live source: the engine batches its enables and disables
 * (engine/eng_metric_batch.c), an enable that measures nothing is
 * refused at the step's end with its reason (its reply is read at the
 * next step, as every reply), and the values of its instances start
 * once the step's commit and catchup are done.
 */
#include "src_live_ops_int.h"

#include <stdlib.h>
#include <string.h>

#include "eng_metric.h"
#include "src_live_kidseg.h"

/* Start from its value now, not at the last tick: a shared instance
 * already counts (a thread's slot of the program's timer), and catchup
 * may have started a timer at the stop for inserting; either put up to
 * a tick of time from before enabling into a first interval that may
 * be 1 ms long.  In a step, once the step's commit and catchup are
 * done. */
void src_live_ops_step_start(struct src_live_ops *o,
			     struct src_live_ops_inst *in)
{
	eng_metric_refresh(o->m, in->mi);
	in->rebase = eng_metric_stale(o->m, in->mi);
	/* no consistent value now: the first tick that reads one starts
	 * the intervals (rebase) */
	if (src_live_kidseg_value(o, in, &in->prev) < 0)
		in->rebase = true;
	in->prev_t = src_live_ops_now(o);
}

/* An instance of the step that measures nothing: refused, as its
 * enable would have been outside a step. */
static void step_failed(void *arg, struct eng_minst *mi, int rc,
			const char *why)
{
	struct src_live_ops *o = arg;

	for (size_t i = 0; i < o->ninst; i++) {
		struct src_live_ops_inst *in = &o->inst[i];

		if (in->mi != mi)
			continue;
		in->mi = NULL;
		in->live = false;
		in->stepped = false;
		in->status = rc;
		free(in->reason);
		in->reason = strdup(why[0] ? why : "refused");
	}
}

void src_live_ops_step(struct src_live_ops *o, bool begins)
{
	if (o->m == NULL)
		return;
	o->stepping = begins;
	if (begins) {
		eng_metric_batch_begin(o->m);
		return;
	}
	eng_metric_batch_end(o->m, step_failed, o);
	/* most steps enable nothing: no walk over every instance then */
	for (size_t i = 0; o->nstepped > 0 && i < o->ninst; i++) {
		struct src_live_ops_inst *in = &o->inst[i];

		if (in->stepped && in->live && in->mi != NULL)
			src_live_ops_step_start(o, in);
		in->stepped = false;
	}
	o->nstepped = 0;
}

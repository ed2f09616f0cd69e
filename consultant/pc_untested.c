/*
 * pc_untested.c - the experiments a search could not test, and why (see
 * pc_untested.h).  Everything is read from the nodes as the search left
 * them, so a replay (which runs the same search again) says the same.
 */
#include "pc_untested.h"

#include <stdio.h>
#include <string.h>

static const struct {
	const char *key, *message;
} kinds[PC_UNTESTED_NKINDS] = {
	[PC_UNTESTED_NONE] = { "none", "tested" },
	[PC_UNTESTED_REFUSED] = { "refused",
				  "the source could not enable it" },
	[PC_UNTESTED_COST] = { "cost_limit",
			       "the cost limit did not allow it" },
	[PC_UNTESTED_NO_DATA] = { "no_data",
				  "enabled, but its metric never had a "
				  "value" },
	[PC_UNTESTED_TARGET_ENDED] = { "target_ended",
				       "the target ended before it "
				       "concluded" },
	[PC_UNTESTED_STOPPED] = { "stopped",
				  "the search was stopped before it "
				  "concluded" },
	[PC_UNTESTED_PHASE_ENDED] = { "phase_ended",
				      "its phase ended before it "
				      "concluded" },
};

const char *pc_untested_key(enum pc_untested k)
{
	return k < PC_UNTESTED_NKINDS ? kinds[k].key : "?";
}

const char *pc_untested_message(enum pc_untested k)
{
	return k < PC_UNTESTED_NKINDS ? kinds[k].message : "?";
}

bool pc_untested_top_level(const struct pc_search *s,
			   const struct pc_node *n)
{
	return n->orig_parent == s->root && n->id != s->root &&
	       !n->is_virtual;
}

static bool in_progress(const struct pc_node *n)
{
	return n->active || n->pending || n->queued;
}

/* Concluded false for having no data where an input (not a ratio over
 * nothing) never had a value: the source delivered nothing. */
static bool no_data(const struct pc_consult *pc, const struct pc_node *n,
		    char *detail, size_t len)
{
	const struct pc_hypothesis *h = pc_truth_node_hyp(pc, n);

	if (n->truth != PC_FALSE || strcmp(n->how, "no data") != 0 ||
	    n->no_input < 0 || h == NULL || n->no_input >= h->nin)
		return false;
	snprintf(detail, len, "no value of %s in %.1f s of measurement",
		 h->in[n->no_input].metric, n->t_concluded - n->t_start);
	return true;
}

/* Dropped or stopped for cost and not run again. */
static enum pc_untested cost(const struct pc_consult *pc,
			     const struct pc_node *n, char *detail,
			     size_t len)
{
	double limit = pc_tunables_get(pc->cfg, "costLimit");

	if (n->skipped)
		snprintf(detail, len, "predicted cost %.2f%%, over the limit "
			 "%.1f%%", 100 * n->pred_cost, 100 * limit);
	else
		snprintf(detail, len, "shed for cost %d time%s (limit %.1f%%) "
			 "and not run again", n->times_shed,
			 n->times_shed == 1 ? "" : "s", 100 * limit);
	return PC_UNTESTED_COST;
}

/* Still to conclude when the search ended, or was stopped: what ended
 * it. */
static enum pc_untested ended(const struct pc_consult *pc,
			      const struct pc_search *s,
			      const struct pc_node *n, const char *stop,
			      char *detail, size_t len)
{
	/* A phase the next one ended (the target may have ended since). */
	if (s->state == PC_SEARCH_ENDED && s != pc->global &&
	    s != pc->current) {
		snprintf(detail, len, "%s", s->end_reason);
		return PC_UNTESTED_PHASE_ENDED;
	}
	/* Never run for want of room: the cost limit kept it out, whatever
	 * ended the search (sqlite3's allocation timers, behind sync timers
	 * that held most of a 50% limit for the whole run, read "the
	 * target ended before it concluded"). */
	if (n->cut_waiting || (n->queued && !n->active && !n->pending &&
				pc->throttle == PC_THR_COST)) {
		snprintf(detail, len, "queued, waiting for room under the "
			 "limit %.1f%%, when %s (%s)",
			 100 * pc_tunables_get(pc->cfg, "costLimit"),
			 pc->target_ended ? "the target ended" :
			 "the search was stopped",
			 pc->target_ended ? pc->target_end : stop);
		return PC_UNTESTED_COST;
	}
	if (pc->target_ended) {
		snprintf(detail, len, "%s", pc->target_end);
		return PC_UNTESTED_TARGET_ENDED;
	}
	if (s->state == PC_SEARCH_ENDED) {
		snprintf(detail, len, "%s", s->end_reason);
		return PC_UNTESTED_STOPPED;
	}
	snprintf(detail, len, "%s%s", stop, n->active ? "" : n->pending ?
		 "; it was being enabled" : "; it was queued");
	return PC_UNTESTED_STOPPED;
}

enum pc_untested pc_untested_why(const struct pc_consult *pc,
				 const struct pc_search *s,
				 const struct pc_node *n, const char *stop,
				 char *detail, size_t len)
{
	detail[0] = '\0';
	/* Only what is still wanted: a refinement whose parents all
	 * turned false has nothing left to answer. */
	if (n->is_virtual || n->id == s->root ||
	    !pc_truth_has_true_parent(s, n))
		return PC_UNTESTED_NONE;
	if (no_data(pc, n, detail, len))
		return PC_UNTESTED_NO_DATA;
	if (n->truth != PC_UNKNOWN)
		return PC_UNTESTED_NONE;
	if (n->cut_short || (in_progress(n) && stop != NULL))
		return ended(pc, s, n, stop ? stop : "search ended", detail,
			     len);
	if (in_progress(n))
		return PC_UNTESTED_NONE;  /* still being tested */
	if (n->failed) {
		snprintf(detail, len, "%s", n->refused);
		return PC_UNTESTED_REFUSED;
	}
	if (n->skipped || n->times_shed > 0)
		return cost(pc, n, detail, len);
	if (n->t_start < 0)
		return PC_UNTESTED_NONE;  /* never due */
	snprintf(detail, len, "stopped before it concluded");
	return PC_UNTESTED_STOPPED;
}

size_t pc_untested_list(const struct pc_consult *pc,
			const struct pc_search *s, const char *stop,
			const struct pc_node **out, size_t max)
{
	char detail[8];
	size_t k = 0;

	/* Two passes: the top-level nodes (what decides the result), then
	 * the refinements, each in id order. */
	for (int top = 1; top >= 0; top--)
		for (size_t i = 0; s && i < s->nn && k < max; i++) {
			const struct pc_node *n = s->nodes[i];

			if (pc_untested_top_level(s, n) == (top == 1) &&
			    pc_untested_why(pc, s, n, stop, detail,
					    sizeof(detail)) !=
			    PC_UNTESTED_NONE)
				out[k++] = n;
		}
	return k;
}

int pc_untested_top(const struct pc_consult *pc, const struct pc_search *s,
		    const char *stop, int *running)
{
	char detail[8];
	int k = 0;

	*running = 0;
	for (size_t i = 0; s && i < s->nn; i++) {
		const struct pc_node *n = s->nodes[i];

		if (!pc_untested_top_level(s, n))
			continue;
		if (pc_untested_why(pc, s, n, stop, detail, sizeof(detail)) !=
		    PC_UNTESTED_NONE)
			k++;
		else if (n->truth == PC_UNKNOWN && in_progress(n))
			(*running)++;
	}
	return k;
}

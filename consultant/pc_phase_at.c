/*
 * pc_phase_at.c - phases started at set times of a batch search, and
 * again at the same tick of its replay (see pc_phase_at.h).
 *
 * The replay needs nothing from here: the replay source applies every
 * recorded `action` (pause, phase_start, tunable) after the tick it
 * followed (src_replay_actions), which is where this one was written.
 */
#include "pc_phase_at.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hunch_err.h"
#include "jnl_write.h"
#include "pc_search.h"

int pc_phase_at_add(struct pc_phase_at *p, double seconds)
{
	size_t i;

	if (p->n == PC_PHASE_AT_MAX)
		return -1;
	for (i = p->n; i > 0 && p->at[i - 1] > seconds; i--) {
		p->at[i] = p->at[i - 1];
		memcpy(p->label[i], p->label[i - 1], sizeof(p->label[i]));
	}
	p->at[i] = seconds;
	snprintf(p->label[i], sizeof(p->label[i]), "from %g s of search",
		 seconds);
	p->n++;
	return 0;
}

bool pc_phase_at_pending(const struct pc_phase_at *p)
{
	return p->next < p->n;
}

static void journal(struct jnl_writer *jw, const char *label, int id,
		    long ticks)
{
	json_t *o;

	if (jw == NULL)
		return;
	o = json_pack("{s:s, s:s, s:i, s:I}", "action", "phase_start",
		      "name", label, "phase", id, "tick", (json_int_t)ticks);
	jnl_write_json(jw, "action", jnl_write_ts_now(jw), o);
	json_decref(o);
}

void pc_phase_at_live(struct pc_phase_at *p, struct pc_consult *pc,
		      double elapsed, struct jnl_writer *jw)
{
	p->ticks++;
	while (p->next < p->n && elapsed >= p->at[p->next]) {
		const char *label = p->label[p->next++];
		int id = pc_consult_phase_start(pc, label);

		if (id > 0)
			journal(jw, label, id, p->ticks);
	}
}

/*
 * pc_phase_at.c - phases started at set times of a batch search, and
 * again at the same tick of its replay (see pc_phase_at.h).
 *
 * The replay reads the journal's `action` records itself, line by line,
 * rather than through the replay source: they are user actions, which
 * the source does not answer for, and only the tick count matters.
 */
#include "pc_phase_at.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eng_err.h"
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
	jnl_write_json(jw, "action", jnl_ts_now(jw), o);
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

/* One journal line: a phase_start action with its tick is kept. */
static void load_line(struct pc_phase_at *p, const char *line)
{
	json_t *o = json_loads(line, 0, NULL);
	const char *t = json_string_value(json_object_get(o, "t"));
	const char *a = json_string_value(json_object_get(o, "action"));
	const char *name = json_string_value(json_object_get(o, "name"));
	json_t *tick = json_object_get(o, "tick");

	if (t && a && strcmp(t, "action") == 0 &&
	    strcmp(a, "phase_start") == 0 && json_is_integer(tick) &&
	    p->n < PC_PHASE_AT_MAX) {
		p->tick[p->n] = (long)json_integer_value(tick);
		snprintf(p->label[p->n], sizeof(p->label[p->n]), "%s",
			 name ? name : "phase");
		p->n++;
	}
	json_decref(o);
}

int pc_phase_at_load(struct pc_phase_at *p, const char *journal,
		     struct hunch_err *err)
{
	FILE *f = fopen(journal, "r");
	char *line = NULL;
	size_t cap = 0;

	memset(p, 0, sizeof(*p));
	if (f == NULL)
		return hunch_errf(err, -errno, "%s: %s", journal,
				  strerror(errno));
	while (getline(&line, &cap, f) > 0)
		if (strstr(line, "\"phase_start\"") != NULL)
			load_line(p, line);
	free(line);
	fclose(f);
	return 0;
}

void pc_phase_at_replay(struct pc_phase_at *p, struct pc_consult *pc)
{
	p->ticks++;
	while (p->next < p->n && p->tick[p->next] <= p->ticks)
		pc_consult_phase_start(pc, p->label[p->next++]);
}

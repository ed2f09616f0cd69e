/*
 * ui_search.c - the Search pane: the search history graph (issue 7).
 */
#include "ui_search.h"

#include <stdint.h>
#include <string.h>

#include "pc_search.h"

struct sview {
	bool phase;        /* the current phase's search, not the global */
	uint64_t sig;      /* what was drawn, summed (ui_search_changed) */
};

static struct sview sv;

const struct pc_search *ui_search_shown(const struct ui *u)
{
	if (u->pc == NULL)
		return NULL;
	if (sv.phase && u->pc->current != NULL)
		return u->pc->current;
	return u->pc->global;
}

/* A cheap sum of what the rows show: node count, states, values to the
 * thousandth, and the seconds shown.  Equal sums: nothing to redraw. */
static uint64_t signature(const struct ui *u, const struct pc_search *s)
{
	uint64_t h = (uintptr_t)s * 31u + s->nn * 7919u + (uint64_t)s->state;

	for (size_t i = 0; i < s->nn; i++) {
		const struct pc_node *n = s->nodes[i];

		h = h * 1000003u + (uint64_t)n->truth * 7u +
		    (uint64_t)n->active * 3u + (uint64_t)n->pending +
		    (uint64_t)n->queued * 11u + (uint64_t)n->nkids * 13u +
		    (uint64_t)(int64_t)(n->value * 1000);
	}
	(void)u;
	return h;
}

bool ui_search_changed(struct ui *u)
{
	const struct pc_search *s = ui_search_shown(u);
	uint64_t sig = s ? signature(u, s) : 0;

	if (sig == sv.sig)
		return false;
	sv.sig = sig;
	return true;
}

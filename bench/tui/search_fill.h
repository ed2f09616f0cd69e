/* search_fill.h - a filled search history graph for ui_bench. */
#ifndef SEARCH_FILL_H
#define SEARCH_FILL_H

#include "pc_config.h"
#include "pc_res.h"

/* A consultant over a sim source whose global search has `nodes` nodes
 * (the hypotheses in `cfg`, foci from `t`).  Leaked on purpose: the
 * benchmark ends with it. */
struct pc_consult *search_fill(struct pc_config *cfg, struct pc_restree *t,
			       int nodes);

#endif

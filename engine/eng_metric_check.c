/*
 * eng_metric_check.c - after the commit that inserted a node's code:
 * which of its requests were built, and whether the instance measures
 * anything (see eng_metric_int.h).  An enable checks at once; a batch
 * (eng_metric_batch.c) at its end, from what the enable noted.
 */
#include "eng_metric_int.h"

#include <errno.h>
#include <stdio.h>

/* Count the requests the commit refused, keeping one reason. */
static void node_check(struct eng_metric *m, struct mnode *n)
{
	n->refused = 0;
	for (size_t i = 0; i < n->nreqs; i++) {
		enum eng_refusal why = ENG_REFUSAL_NONE;

		if (eng_inst_state(m->in, n->reqs[i], &why) == ENG_REQ_FAILED) {
			n->refused++;
			if (why != ENG_REFUSAL_NONE)
				n->why = why;
		}
	}
}

size_t eng_metric_check_active(const struct mnode *n)
{
	return n->nreqs - n->refused;
}

void eng_metric_check_of(const struct eng_mdef *def,
			 const struct eng_mfocus *f, struct mcheck *c)
{
	snprintf(c->name, sizeof(c->name), "%s", def->name);
	c->absent_ok = def->absent_is_zero && f->code == ENG_CODE_ALL;
	eng_metric_key_focus_name(f, c->fo, sizeof(c->fo));
}

int eng_metric_check(struct eng_metric *m, const struct mcheck *c,
		     struct mnode *n, struct hunch_err *err)
{
	node_check(m, n);
	for (size_t i = 0; i < n->ncons; i++)
		node_check(m, n->cons[i]);
	if (eng_metric_check_active(n) > 0)
		return 0;
	if (n->nreqs == 0 && c->absent_ok && n->why == 0)
		return 0;
	if (n->nreqs == 0)
		return hunch_err_set(
			err, -ENOENT,
			"metric %s on %s: none of its "
			"functions is in the program%s%s; nothing to "
			"measure here",
			c->name, c->fo, n->why ? " or instrumentable: " : "",
			n->why ? eng_refusal_str(n->why) : "");
	return hunch_err_set(err, -ENOENT, "metric %s on %s: every point was "
			  "refused (%s); try another focus", c->name, c->fo,
			  n->why ? eng_refusal_str(n->why) : "no reason given");
}

/*
 * eng_metric_cal.c - the cost of a snippet list for predictions, from
 * the instrumentation manager's measured figures (eng_inst_cost.h: each
 * part of a pass run in hunch between calls of a stand-in library
 * function).  A prediction counts every predicate's body as if it ran
 * (the upper bound: how often it runs is not known before enabling);
 * the observed cost charges a body only where it runs.
 */
#include "eng_metric_int.h"

#include <errno.h>
#include <string.h>

#include "eng_inst_cost.h"

int eng_metric_cal_run(struct eng_metric *m, struct eng_metric_cal *out)
{
	const struct eng_inst_cost *c = eng_inst_costs(m->in);

	memset(out, 0, sizeof *out);
	out->add_ns = c->add_ns;
	out->if_ns = c->test_ns;
	if (eng_inst_env(m->in)->wall_rdtsc)
		out->wall_pair_ns = 2 * c->wall_ns;
	out->base_ns = c->base_ns;
	return c->measured ? 0 : -EIO;
}

double eng_metric_cal_cost(const struct eng_metric *m, const struct x86_snip *s,
		 size_t n)
{
	return eng_inst_cost_snips(eng_inst_costs(m->in), eng_inst_env(m->in),
				   s, n, true);
}

double eng_metric_cal_base(const struct eng_metric *m)
{
	return eng_inst_costs(m->in)->base_ns;
}

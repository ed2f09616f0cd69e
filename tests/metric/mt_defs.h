/*
 * mt_defs.h - metric definitions the tests build in C (the engine-side
 * model of eng_metric.h), as MDL would write them.
 */
#ifndef MT_DEFS_H
#define MT_DEFS_H

#include "eng_metric.h"

static const struct eng_mprim mt_add1[] = { { .op = ENG_MOP_ADD,
	.value = { .kind = ENG_MO_CONST, .c = 1 } } };
static const struct eng_mprim mt_tstart[] = { { .op = ENG_MOP_START } };
static const struct eng_mprim mt_tstop[] = { { .op = ENG_MOP_STOP } };
static const struct eng_mprim mt_inc[] = { { .op = ENG_MOP_INC } };
static const struct eng_mprim mt_dec[] = { { .op = ENG_MOP_DEC } };

/* MDL's procedure constraint: a nesting counter over the focus. */
static const struct eng_mclause mt_proc_clauses[] = {
	{ .funcs = ENG_MF_FOCUS, .point = ENG_MPT_ENTRY, .prims = mt_inc,
	  .nprims = 1 },
	{ .funcs = ENG_MF_FOCUS, .point = ENG_MPT_EXIT, .prepend = true,
	  .prims = mt_dec, .nprims = 1 },
};
static const struct eng_mconstraint mt_procedure = {
	.name = "procedure", .clauses = mt_proc_clauses, .nclauses = 2 };

#endif

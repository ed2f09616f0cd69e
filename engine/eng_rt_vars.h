/*
 * eng_rt_vars.h - hunch's allocator of variables in the per-thread blocks.
 *
 * hunch is the only allocator (the target never allocates): a variable is
 * an offset ("handle") valid in every thread's block, handed out before or
 * while the target runs, without stopping it.  Counters take 8 bytes,
 * timers 64 (one cache line each).  Ids are dense small numbers for
 * hunch's own arrays; handles are what instrumentation uses.
 *
 * Freeing is two-step and belongs to the sampler (eng_sampler_var_free):
 * it zeroes the slot in every block that may hold a value and only then
 * returns the offset here, so a reused slot always starts at zero.
 */
#ifndef ENG_RT_VARS_H
#define ENG_RT_VARS_H

#include <stdint.h>

#include "hunch_err.h"

enum eng_var_kind {
	ENG_VAR_NONE = 0,
	ENG_VAR_COUNTER = 1,     /* also constraint nesting counters */
	ENG_VAR_WALL_TIMER = 2,
	ENG_VAR_CPU_TIMER = 3,
};

struct eng_vars;

int eng_rt_vars_create(uint64_t block_size, struct eng_vars **out,
		    struct hunch_err *err);
void eng_rt_vars_destroy(struct eng_vars *v);

/* -ENOSPC (with a message) when the blocks are full. */
int eng_rt_vars_alloc(struct eng_vars *v, enum eng_var_kind kind, uint32_t *id,
		   struct hunch_err *err);
/* Return a variable whose slots are already zero everywhere. */
void eng_rt_vars_release(struct eng_vars *v, uint32_t id);

enum eng_var_kind eng_rt_vars_kind(const struct eng_vars *v, uint32_t id);
uint64_t eng_rt_vars_handle(const struct eng_vars *v, uint32_t id);
/* Ids are < cap; live ones have a kind. */
uint32_t eng_rt_vars_cap(const struct eng_vars *v);
/* Bytes of every block that have ever held a variable (incl. header). */
uint64_t eng_rt_vars_extent(const struct eng_vars *v);

#endif

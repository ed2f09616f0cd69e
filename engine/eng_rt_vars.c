/*
 * eng_rt_vars.c - slot allocation inside the per-thread blocks.
 *
 * Space is carved in 64-byte chunks from a bump pointer; a timer takes a
 * chunk, a counter takes an 8-byte piece of a chunk kept for counters.
 * Freed slots go on a per-size free list; the bump pointer only grows,
 * so eng_rt_vars_extent says how much of a block can ever be non-zero.
 */
#include "eng_rt_vars.h"
#include "hunch_abi.h"

#include <errno.h>
#include <stdlib.h>

struct u64stack {
	uint64_t *v;
	uint32_t n, cap;
};

struct eng_vars {
	uint64_t block_size;
	uint64_t bump;               /* next free chunk offset */
	struct u64stack free_ctr;    /* counter offsets */
	struct u64stack free_tmr;    /* timer offsets */
	struct u64stack free_ids;
	uint8_t *kind;               /* per id */
	uint64_t *off;               /* per id */
	uint32_t cap, nid, live;
};

static int push(struct u64stack *s, uint64_t x)
{
	if (s->n == s->cap) {
		uint32_t nc = s->cap ? s->cap * 2 : 64;
		uint64_t *nv = realloc(s->v, nc * sizeof(*nv));

		if (nv == NULL)
			return -ENOMEM;
		s->v = nv;
		s->cap = nc;
	}
	s->v[s->n++] = x;
	return 0;
}

int eng_rt_vars_create(uint64_t block_size, struct eng_vars **out,
		    struct hunch_err *err)
{
	struct eng_vars *v = calloc(1, sizeof(*v));

	if (v == NULL)
		return hunch_err_set(err, -ENOMEM, "out of memory");
	v->block_size = block_size;
	v->bump = HUNCH_BLOCK_VARS_START;
	*out = v;
	return 0;
}

void eng_rt_vars_destroy(struct eng_vars *v)
{
	if (v == NULL)
		return;
	free(v->free_ctr.v);
	free(v->free_tmr.v);
	free(v->free_ids.v);
	free(v->kind);
	free(v->off);
	free(v);
}

static int grow_ids(struct eng_vars *v)
{
	uint32_t nc = v->cap ? v->cap * 2 : 1024;
	uint8_t *k = realloc(v->kind, nc);
	uint64_t *o;

	if (k == NULL)
		return -ENOMEM;
	v->kind = k;
	o = realloc(v->off, nc * sizeof(*o));
	if (o == NULL)
		return -ENOMEM;
	v->off = o;
	v->cap = nc;
	return 0;
}

static int take_id(struct eng_vars *v, uint32_t *id)
{
	if (v->free_ids.n > 0) {
		*id = (uint32_t)v->free_ids.v[--v->free_ids.n];
		return 0;
	}
	if (v->nid == v->cap && grow_ids(v) < 0)
		return -ENOMEM;
	*id = v->nid++;
	return 0;
}

static int take_chunk(struct eng_vars *v, uint64_t *off)
{
	if (v->bump + HUNCH_TIMER_SIZE > v->block_size)
		return -ENOSPC;
	*off = v->bump;
	v->bump += HUNCH_TIMER_SIZE;
	return 0;
}

static int take_slot(struct eng_vars *v, enum eng_var_kind kind, uint64_t *off)
{
	uint64_t c;
	unsigned i;

	if (kind != ENG_VAR_COUNTER) {
		if (v->free_tmr.n > 0) {
			*off = v->free_tmr.v[--v->free_tmr.n];
			return 0;
		}
		return take_chunk(v, off);
	}
	if (v->free_ctr.n == 0) {
		if (take_chunk(v, &c) < 0)
			return -ENOSPC;
		/* Highest first so the stack hands out ascending offsets. */
		for (i = HUNCH_TIMER_SIZE / HUNCH_COUNTER_SIZE; i-- > 0;)
			if (push(&v->free_ctr, c + i * HUNCH_COUNTER_SIZE) < 0)
				return -ENOMEM;
	}
	*off = v->free_ctr.v[--v->free_ctr.n];
	return 0;
}

int eng_rt_vars_alloc(struct eng_vars *v, enum eng_var_kind kind, uint32_t *id,
		   struct hunch_err *err)
{
	uint64_t off;
	int rc;

	if (kind < ENG_VAR_COUNTER || kind > ENG_VAR_CPU_TIMER)
		return hunch_err_set(err, -EINVAL, "unknown variable kind %d",
				  (int)kind);
	rc = take_slot(v, kind, &off);
	if (rc == -ENOSPC)
		return hunch_err_set(
			err, rc,
			"the per-thread blocks (%llu bytes) "
			"are full with %u variables: disable some metrics or "
			"create the segment with larger blocks",
			(unsigned long long)v->block_size, v->live);
	if (rc == 0)
		rc = take_id(v, id);
	if (rc < 0)
		return hunch_err_set(err, rc, "out of memory allocating a variable");
	v->kind[*id] = (uint8_t)kind;
	v->off[*id] = off;
	v->live++;
	return 0;
}

void eng_rt_vars_release(struct eng_vars *v, uint32_t id)
{
	if (id >= v->nid || v->kind[id] == ENG_VAR_NONE)
		return;
	/* On ENOMEM the slot and id leak, which is harmless. */
	push(v->kind[id] == ENG_VAR_COUNTER ? &v->free_ctr : &v->free_tmr,
	     v->off[id]);
	push(&v->free_ids, id);
	v->kind[id] = ENG_VAR_NONE;
	v->live--;
}

enum eng_var_kind eng_rt_vars_kind(const struct eng_vars *v, uint32_t id)
{
	return id < v->nid ? (enum eng_var_kind)v->kind[id] : ENG_VAR_NONE;
}

uint64_t eng_rt_vars_handle(const struct eng_vars *v, uint32_t id)
{
	return id < v->nid ? v->off[id] : 0;
}

uint32_t eng_rt_vars_cap(const struct eng_vars *v)
{
	return v->nid;
}

uint64_t eng_rt_vars_extent(const struct eng_vars *v)
{
	return v->bump;
}

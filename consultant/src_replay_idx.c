/*
 * src_replay_idx.c - the replay source's index (see src_replay_int.h):
 * one pass over the journal at open keeps what the replay must know
 * ahead of time (was this experiment ever recorded? when did its reply
 * come?) and nothing else; the records themselves are read again, a
 * tick at a time, while playing.
 */
#include "src_replay_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jnl_record.h"

int src_replay_idx_grow(void *arr, size_t *cap, size_t n, size_t size)
{
	void **p = arr;
	size_t c;
	void *q;

	if (n < *cap)
		return 0;
	c = *cap ? 2 * *cap : 64;
	if ((q = realloc(*p, c * size)) == NULL)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

char *src_replay_idx_record_key(const json_t *j)
{
	struct pc_src_focus f;
	const char *m = json_string_value(json_object_get(j, "metric"));

	if (m == NULL ||
	    jnl_record_focus_decode(json_object_get(j, "focus"), &f, NULL) != 0)
		return NULL;
	return jnl_record_focus_key(m, &f);
}

static double num(const json_t *j, const char *field)
{
	return json_number_value(json_object_get(j, field));
}

/* The chain of `key` in (chains, keys), made when new; RP_NONE without
 * memory. */
static size_t chain_of(struct rp_chain **c, size_t *nc, size_t *capc,
		       struct hmap *keys, const char *key)
{
	size_t *v = hmap_get_s(keys, key);

	if (v != NULL)
		return *v;
	if (src_replay_idx_grow(c, capc, *nc, sizeof(**c)) != 0 ||
	    hmap_put_s(keys, key, *nc) != 0)
		return RP_NONE;
	(*c)[*nc] = (struct rp_chain){ RP_NONE, RP_NONE, RP_NONE };
	return (*nc)++;
}

/* Append item `i` to chain `k`.  A cursor past the end (every enable
 * claimed) moves to the new item: an index built a slice at a time may
 * add one after the replay claimed the others. */
#define CHAIN_ADD(chains, k, items, i) do {			\
	struct rp_chain *ch_ = &(chains)[k];			\
	if (ch_->first == RP_NONE)				\
		ch_->first = ch_->cursor = (i);			\
	else							\
		(items)[ch_->last].next = (i);			\
	if (ch_->cursor == RP_NONE)				\
		ch_->cursor = (i);				\
	ch_->last = (i);					\
} while (0)

static void add_answer(struct rp_answers *as, const char *key, size_t seg,
		       double v, const json_t *arr)
{
	struct rp_answer *a;
	size_t k, i;
	json_t *x;

	if (key == NULL ||
	    (k = chain_of(&as->c, &as->nc, &as->capc, &as->keys, key)) == RP_NONE ||
	    src_replay_idx_grow(&as->a, &as->cap, as->n, sizeof(*as->a)) != 0)
		return;
	a = &as->a[as->n];
	*a = (struct rp_answer){ .seg = seg, .v = v, .next = RP_NONE };
	if (arr != NULL && json_array_size(arr) > 0 &&
	    (a->callees = calloc(json_array_size(arr), sizeof(char *))))
		json_array_foreach(arr, i, x)
			if (json_is_string(x))
				a->callees[a->ncallees++] =
					strdup(json_string_value(x));
	CHAIN_ADD(as->c, k, as->a, as->n);
	as->n++;
}

static bool add_enable(struct src_replay *r, const json_t *j, size_t seg)
{
	char *key = src_replay_idx_record_key(j);
	size_t k = key ? chain_of(&r->enc, &r->nenc, &r->capenc, &r->en_keys,
				  key) : RP_NONE;

	free(key);
	if (k == RP_NONE ||
	    src_replay_idx_grow(&r->en, &r->capen, r->nen, sizeof(*r->en)))
		return false;
	r->en[r->nen] = (struct rp_enable){
		.seg = seg, .next = RP_NONE,
		.req = (uint64_t)json_integer_value(json_object_get(j, "req")),
	};
	CHAIN_ADD(r->enc, k, r->en, r->nen);
	r->nen++;
	return true;
}

/* The latest recorded enable with this request number gets the reply;
 * the reply's byte offset finds that enable again while playing. */
static void add_reply(struct src_replay *r, const struct jnl_record *jr,
		      size_t seg, struct hmap *by_req)
{
	struct pc_src_reply rp;
	size_t *e;

	if (jnl_record_reply_decode(jr->json, &rp, NULL) != 0 ||
	    (e = hmap_get(by_req, rp.req)) == NULL || r->en[*e].has_reply)
		return;
	if (rp.reason && (rp.reason = strdup(rp.reason)) == NULL)
		return;
	r->en[*e].has_reply = true;
	r->en[*e].reply_seg = seg;
	r->en[*e].reply = rp;
	hmap_put(&r->reply_at, jr->offset, *e);
}

static int add_tick(struct src_replay *r, const struct jnl_record *jr)
{
	size_t cap = r->capticks;

	if (src_replay_idx_grow(&r->tick_now, &cap, r->nticks,
				sizeof(*r->tick_now)) ||
	    src_replay_idx_grow(&r->tick_off, &r->capticks, r->nticks,
				sizeof(*r->tick_off)))
		return -ENOMEM;
	r->tick_now[r->nticks] = num(jr->json, "now");
	r->tick_off[r->nticks++] = jr->offset;
	return 0;
}

static void index_record(struct src_replay *r, const struct jnl_record *jr,
			 struct hmap *by_req)
{
	size_t seg = r->nticks ? r->nticks - 1 : 0;
	const char *s;

	switch (jr->kind) {
	case JNL_REC_ENABLE:
		if (add_enable(r, jr->json, seg))
			hmap_put(by_req, r->en[r->nen - 1].req, r->nen - 1);
		break;
	case JNL_REC_REPLY:
		add_reply(r, jr, seg, by_req);
		break;
	case JNL_REC_PREDICT: {
		char *key = src_replay_idx_record_key(jr->json);

		add_answer(&r->pred, key, seg, num(jr->json, "cost"), NULL);
		free(key);
		break;
	}
	case JNL_REC_HINT:
		add_answer(&r->hint, json_string_value(json_object_get(
			   jr->json, "path")), seg, num(jr->json, "share"), NULL);
		break;
	case JNL_REC_CALLEES:
		s = json_string_value(json_object_get(jr->json, "path"));
		add_answer(&r->callees, s ? s : "", seg, 0,
			   json_object_get(jr->json, "callees"));
		break;
	case JNL_REC_STACK_SAMPLES:   /* the report's: the last one told */
		json_decref(r->stack_samples);
		r->stack_samples = json_incref(json_object_get(jr->json,
							       "samples"));
		break;
	case JNL_REC_END:
		s = json_string_value(json_object_get(jr->json, "reason"));
		free(r->end_reason);
		r->end_reason = s ? strdup(s) : NULL;
		break;
	default:
		break;
	}
}

static void keep_bad(struct src_replay *r, const char *msg)
{
	r->nbad_total++;
	if (r->nbad < RP_MAX_BAD &&
	    src_replay_idx_grow(&r->bad, &r->capbad, r->nbad,
				sizeof(*r->bad)) == 0)
		r->bad[r->nbad++] = strdup(msg);
}

int src_replay_idx_begin(struct src_replay *r, struct jnl_reader *ird)
{
	hmap_init(&r->by_req, false);
	r->header = json_incref((json_t *)jnl_read_header(ird));
	r->ird = ird;
	return 0;
}

/* The journal's end: what the reader says of it, and the index reader
 * closed (unless it is the player's, which goes back to the start). */
static int index_end(struct src_replay *r)
{
	const char *msg = NULL;

	hmap_free(&r->by_req);
	jnl_read_end(r->ird, &msg);
	r->end_msg = msg ? strdup(msg) : NULL;
	r->indexed = true;
	if (r->ird == r->rd) {
		r->ird = NULL;
		return jnl_read_rewind(r->rd);
	}
	jnl_read_close(r->ird);
	r->ird = NULL;
	return 0;
}

int src_replay_idx_step(struct src_replay *r, uint64_t bytes)
{
	struct jnl_record jr;
	struct hunch_err e = { 0 };
	uint64_t from = UINT64_MAX;
	int rc;

	if (r->indexed)
		return 1;
	while ((rc = jnl_read_next(r->ird, &jr, &e)) != JNL_NEXT_END) {
		if (rc == JNL_NEXT_BAD) {
			keep_bad(r, e.msg);
			continue;
		}
		if (jr.kind == JNL_REC_TICK && add_tick(r, &jr) != 0)
			return -ENOMEM;
		index_record(r, &jr, &r->by_req);
		if (from == UINT64_MAX)
			from = jr.offset;
		else if (jr.offset - from >= bytes)
			return 0;
	}
	rc = index_end(r);
	return rc < 0 ? rc : 1;
}

int src_replay_idx(struct src_replay *r)
{
	int rc;

	src_replay_idx_begin(r, r->rd);
	rc = src_replay_idx_step(r, UINT64_MAX);
	return rc < 0 ? rc : 0;
}

/* Slices of 1 MiB: a lookup that must wait for the index waits no
 * longer than it needs. */
#define RP_SLICE (1u << 20)

void src_replay_idx_to(struct src_replay *r, size_t k)
{
	while (!r->indexed && r->nticks <= k + 1)
		if (src_replay_idx_step(r, RP_SLICE) < 0)
			return;
}

void src_replay_idx_all(struct src_replay *r)
{
	while (!r->indexed)
		if (src_replay_idx_step(r, UINT64_MAX) < 0)
			return;
}

/* Chains are in journal order, so in tick order, and the current tick
 * only grows between rewinds: each chain's cursor remembers the latest
 * answer reached, so a lookup is amortised O(1) however often a key was
 * answered. */
const struct rp_answer *src_replay_idx_lookup(struct rp_answers *as,
					      const char *key, long cur)
{
	size_t *k = key ? hmap_get_s(&as->keys, key) : NULL;
	struct rp_chain *c;
	size_t i;

	if (k == NULL || (c = &as->c[*k])->first == RP_NONE)
		return NULL;
	i = c->cursor;
	while (as->a[i].next != RP_NONE && (long)as->a[as->a[i].next].seg <= cur)
		i = as->a[i].next;
	c->cursor = i;
	return &as->a[i];   /* or the first, asked before it was recorded */
}

void src_replay_idx_answers_rewind(struct rp_answers *as)
{
	for (size_t i = 0; i < as->nc; i++)
		as->c[i].cursor = as->c[i].first;
}

static void free_answers(struct rp_answers *as)
{
	for (size_t i = 0; i < as->n; i++) {
		for (size_t k = 0; k < as->a[i].ncallees; k++)
			free(as->a[i].callees[k]);
		free(as->a[i].callees);
	}
	free(as->a);
	free(as->c);
	hmap_free(&as->keys);
}

void src_replay_idx_free(struct src_replay *r)
{
	for (size_t i = 0; i < r->nen; i++)
		free((char *)r->en[i].reply.reason);
	for (size_t i = 0; i < r->nbad; i++)
		free(r->bad[i]);
	free_answers(&r->pred);
	free_answers(&r->hint);
	free_answers(&r->callees);
	hmap_free(&r->en_keys);
	hmap_free(&r->reply_at);
	json_decref(r->header);
	if (!r->indexed)
		hmap_free(&r->by_req);
	if (r->ird != NULL && r->ird != r->rd)
		jnl_read_close(r->ird);
	free(r->tick_now);
	free(r->tick_off);
	free(r->en);
	free(r->enc);
	free(r->bad);
	free(r->end_msg);
	free(r->end_reason);
	json_decref(r->stack_samples);
	r->stack_samples = NULL;
}

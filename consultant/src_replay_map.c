/* src_replay_map.c - hash tables for the replay source's index (see
 * src_replay_map.h). */
#include "src_replay_map.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum { EMPTY, FULL, TOMB };

struct rp_slot {
	uint64_t hash;
	uint64_t key;      /* 64-bit keys */
	char *skey;        /* string keys */
	size_t v;
	unsigned char st;
};

/* FNV-1a: short keys, no allocation. */
static uint64_t hash_s(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* splitmix64's finaliser: handles and offsets are far from random. */
static uint64_t hash_u(uint64_t x)
{
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

void rp_map_init(struct rp_map *m, bool strings)
{
	memset(m, 0, sizeof(*m));
	m->strings = strings;
}

void rp_map_clear(struct rp_map *m)
{
	for (size_t i = 0; i < m->cap; i++) {
		free(m->slot[i].skey);
		m->slot[i] = (struct rp_slot){ 0 };
	}
	m->n = m->used = 0;
}

void rp_map_free(struct rp_map *m)
{
	rp_map_clear(m);
	free(m->slot);
	rp_map_init(m, m->strings);
}

static bool same(const struct rp_map *m, const struct rp_slot *s,
		 uint64_t h, uint64_t key, const char *skey)
{
	if (s->st != FULL || s->hash != h)
		return false;
	return m->strings ? strcmp(s->skey, skey) == 0 : s->key == key;
}

/* The slot holding the key, or NULL. */
static struct rp_slot *find(const struct rp_map *m, uint64_t h, uint64_t key,
			    const char *skey)
{
	if (m->cap == 0)
		return NULL;
	for (size_t i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		struct rp_slot *s = &m->slot[i];

		if (s->st == EMPTY)
			return NULL;
		if (same(m, s, h, key, skey))
			return s;
	}
}

/* Rehash into twice the keys (tombstones dropped). */
static int grow(struct rp_map *m)
{
	size_t cap = m->cap ? m->cap : 16;
	struct rp_slot *old = m->slot, *s;
	size_t oldcap = m->cap;

	while (cap < 4 * (m->n + 1))
		cap *= 2;
	if ((s = calloc(cap, sizeof(*s))) == NULL)
		return -ENOMEM;
	m->slot = s;
	m->cap = cap;
	m->used = m->n;
	for (size_t i = 0; i < oldcap; i++) {
		size_t j;

		if (old[i].st != FULL)
			continue;
		for (j = old[i].hash & (cap - 1); s[j].st != EMPTY;
		     j = (j + 1) & (cap - 1))
			;
		s[j] = old[i];
	}
	free(old);
	return 0;
}

static int put(struct rp_map *m, uint64_t h, uint64_t key, const char *skey,
	       size_t v)
{
	struct rp_slot *s = find(m, h, key, skey);
	size_t i;

	if (s != NULL) {
		s->v = v;
		return 0;
	}
	if (2 * (m->used + 1) > m->cap && grow(m) != 0)
		return -ENOMEM;
	for (i = h & (m->cap - 1); m->slot[i].st == FULL;
	     i = (i + 1) & (m->cap - 1))
		;
	s = &m->slot[i];
	if (skey != NULL && (s->skey = strdup(skey)) == NULL)
		return -ENOMEM;
	m->used += s->st == EMPTY;
	s->st = FULL;
	s->hash = h;
	s->key = key;
	s->v = v;
	m->n++;
	return 0;
}

size_t *rp_map_get_s(const struct rp_map *m, const char *key)
{
	struct rp_slot *s = find(m, hash_s(key), 0, key);

	return s ? &s->v : NULL;
}

size_t *rp_map_get(const struct rp_map *m, uint64_t key)
{
	struct rp_slot *s = find(m, hash_u(key), key, NULL);

	return s ? &s->v : NULL;
}

int rp_map_put_s(struct rp_map *m, const char *key, size_t v)
{
	return put(m, hash_s(key), 0, key, v);
}

int rp_map_put(struct rp_map *m, uint64_t key, size_t v)
{
	return put(m, hash_u(key), key, NULL, v);
}

bool rp_map_del(struct rp_map *m, uint64_t key)
{
	struct rp_slot *s = find(m, hash_u(key), key, NULL);

	if (s == NULL)
		return false;
	s->st = TOMB;
	m->n--;
	return true;
}

size_t rp_map_keys(const struct rp_map *m, uint64_t *out)
{
	size_t n = 0;

	for (size_t i = 0; i < m->cap; i++)
		if (m->slot[i].st == FULL)
			out[n++] = m->slot[i].key;
	return n;
}

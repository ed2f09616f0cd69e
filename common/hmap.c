/* hmap.c - the hash map: string or 64-bit keys to a size_t (see hmap.h). */
#include "hmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum { EMPTY, FULL, TOMB };

struct hmap_slot {
	uint64_t hash;
	uint64_t key;      /* 64-bit keys */
	char *skey;        /* string keys */
	size_t v;
	unsigned char st;
};

uint64_t hmap_hash_str(const char *s)
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

void hmap_init(struct hmap *m, bool strings)
{
	memset(m, 0, sizeof(*m));
	m->strings = strings;
}

void hmap_clear(struct hmap *m)
{
	for (size_t i = 0; i < m->cap; i++) {
		free(m->slot[i].skey);
		m->slot[i] = (struct hmap_slot){ 0 };
	}
	m->n = m->used = 0;
}

void hmap_free(struct hmap *m)
{
	hmap_clear(m);
	free(m->slot);
	hmap_init(m, m->strings);
}

static bool same(const struct hmap *m, const struct hmap_slot *s,
		 uint64_t h, uint64_t key, const char *skey)
{
	if (s->st != FULL || s->hash != h)
		return false;
	return m->strings ? strcmp(s->skey, skey) == 0 : s->key == key;
}

/* The slot holding the key, or NULL. */
static struct hmap_slot *find(const struct hmap *m, uint64_t h, uint64_t key,
			    const char *skey)
{
	if (m->cap == 0)
		return NULL;
	for (size_t i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		struct hmap_slot *s = &m->slot[i];

		if (s->st == EMPTY)
			return NULL;
		if (same(m, s, h, key, skey))
			return s;
	}
}

/* Rehash into twice the keys (tombstones dropped). */
static int grow(struct hmap *m)
{
	size_t cap = m->cap ? m->cap : 16;
	struct hmap_slot *old = m->slot, *s;
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

static int put(struct hmap *m, uint64_t h, uint64_t key, const char *skey,
	       size_t v)
{
	struct hmap_slot *s = find(m, h, key, skey);
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

size_t *hmap_get_s(const struct hmap *m, const char *key)
{
	struct hmap_slot *s = find(m, hmap_hash_str(key), 0, key);

	return s ? &s->v : NULL;
}

size_t *hmap_get(const struct hmap *m, uint64_t key)
{
	struct hmap_slot *s = find(m, hash_u(key), key, NULL);

	return s ? &s->v : NULL;
}

int hmap_put_s(struct hmap *m, const char *key, size_t v)
{
	return put(m, hmap_hash_str(key), 0, key, v);
}

int hmap_put(struct hmap *m, uint64_t key, size_t v)
{
	return put(m, hash_u(key), key, NULL, v);
}

bool hmap_del(struct hmap *m, uint64_t key)
{
	struct hmap_slot *s = find(m, hash_u(key), key, NULL);

	if (s == NULL)
		return false;
	s->st = TOMB;
	m->n--;
	return true;
}

size_t hmap_keys(const struct hmap *m, uint64_t *out)
{
	size_t n = 0;

	for (size_t i = 0; i < m->cap; i++)
		if (m->slot[i].st == FULL)
			out[n++] = m->slot[i].key;
	return n;
}

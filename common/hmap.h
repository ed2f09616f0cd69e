/*
 * hmap.h - the hash map: string keys (copied) or 64-bit keys, each to a
 * size_t (an index into the owner's array).  The replay source indexes
 * a journal with it (metric + focus, paths, instance handles, offsets).
 *
 * Open addressing with linear probing, kept at most half full, so a
 * lookup is O(1) whatever the journal's size; removal leaves a
 * tombstone, dropped at the next growth.
 */
#ifndef HMAP_H
#define HMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hmap_slot;

struct hmap {
	struct hmap_slot *slot;
	size_t cap;        /* a power of two, or 0 */
	size_t n;          /* keys present */
	size_t used;       /* slots not empty (keys and tombstones) */
	bool strings;      /* string keys (copied), else 64-bit keys */
};

/* FNV-1a of a string: short keys, no allocation (also for tables that
 * keep their own slots, as the where axis does). */
uint64_t hmap_hash_str(const char *s);

void hmap_init(struct hmap *m, bool strings);
void hmap_free(struct hmap *m);
/* Forget every key; the table keeps its size. */
void hmap_clear(struct hmap *m);

/* The value stored for a key, or NULL. */
size_t *hmap_get_s(const struct hmap *m, const char *key);
size_t *hmap_get(const struct hmap *m, uint64_t key);
/* Store (or replace) a value; -ENOMEM. */
int hmap_put_s(struct hmap *m, const char *key, size_t v);
int hmap_put(struct hmap *m, uint64_t key, size_t v);
/* Remove a 64-bit key; false if it was not there. */
bool hmap_del(struct hmap *m, uint64_t key);
/* The 64-bit keys present, into `out` (room for m->n); how many. */
size_t hmap_keys(const struct hmap *m, uint64_t *out);

#endif

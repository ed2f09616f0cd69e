/*
 * src_replay_map.h - the hash tables the replay source indexes a journal
 * with: string keys (metric + focus, paths) or 64-bit keys (instance
 * handles, byte offsets), each to a size_t (an index into an array).
 *
 * Open addressing with linear probing, kept at most half full, so a
 * lookup is O(1) whatever the journal's size; removal leaves a
 * tombstone, dropped at the next growth.
 */
#ifndef SRC_REPLAY_MAP_H
#define SRC_REPLAY_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rp_slot;

struct rp_map {
	struct rp_slot *slot;
	size_t cap;        /* a power of two, or 0 */
	size_t n;          /* keys present */
	size_t used;       /* slots not empty (keys and tombstones) */
	bool strings;      /* string keys (copied), else 64-bit keys */
};

void rp_map_init(struct rp_map *m, bool strings);
void rp_map_free(struct rp_map *m);
/* Forget every key; the table keeps its size. */
void rp_map_clear(struct rp_map *m);

/* The value stored for a key, or NULL. */
size_t *rp_map_get_s(const struct rp_map *m, const char *key);
size_t *rp_map_get(const struct rp_map *m, uint64_t key);
/* Store (or replace) a value; -ENOMEM. */
int rp_map_put_s(struct rp_map *m, const char *key, size_t v);
int rp_map_put(struct rp_map *m, uint64_t key, size_t v);
/* Remove a 64-bit key; false if it was not there. */
bool rp_map_del(struct rp_map *m, uint64_t key);
/* The 64-bit keys present, into `out` (room for m->n); how many. */
size_t rp_map_keys(const struct rp_map *m, uint64_t *out);

#endif

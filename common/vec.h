/*
 * vec.h - the one growable array.
 *
 * An array is a pointer, a count and a capacity kept by its owner (in the
 * owner's struct, typed); vec_reserve makes room for `need` elements,
 * doubling the capacity so that n pushes cost O(n).  It aborts on a failed
 * allocation, as xmalloc does.
 *
 *	VEC_RESERVE(t->items, t->cap, t->n + 1);
 *	t->items[t->n++] = item;
 */
#ifndef VEC_H
#define VEC_H

#include <stddef.h>

/* Room for `need` elements of `elem` bytes in *p (capacity *cap, which it
 * updates; the first allocation holds at least `first` elements).
 * Returns the (possibly moved) array. */
void *vec_reserve(void *p, size_t *cap, size_t need, size_t elem,
		  size_t first);

#define VEC_RESERVE(arr, cap, need)                                          \
	((arr) = vec_reserve((arr), &(cap), (need), sizeof(*(arr)), 16))

#endif

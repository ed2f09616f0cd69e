/*
 * sorted_u64.h - binary search in a sorted array of 64-bit values
 * (instruction starts, branch targets, addresses).
 */
#ifndef SORTED_U64_H
#define SORTED_U64_H

#include <stddef.h>
#include <stdint.h>

/* The first index whose value is >= x (n if none). */
size_t sorted_u64_lower(const uint64_t *v, size_t n, uint64_t x);

/* The index of x in v, or -1. */
long sorted_u64_find(const uint64_t *v, size_t n, uint64_t x);

#endif

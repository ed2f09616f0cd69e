/* sorted_u64.c - binary search in sorted uint64_t arrays (see sorted_u64.h). */
#include "sorted_u64.h"

size_t sorted_u64_lower(const uint64_t *v, size_t n, uint64_t x)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

long sorted_u64_find(const uint64_t *v, size_t n, uint64_t x)
{
	size_t i = sorted_u64_lower(v, n, x);

	return i < n && v[i] == x ? (long)i : -1;
}

/*
 * parse_check.h - invariants every parsed function must satisfy,
 * whatever the binary: shared by the target and corpus tests.
 */
#ifndef PARSE_CHECK_H
#define PARSE_CHECK_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "x86_parse.h"

static inline bool pc_sorted_has(const uint64_t *v, size_t n, uint64_t x)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid] == x)
			return true;
		if (v[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* Check what "ok" promises; on failure describe it in buf. */
static inline bool pc_invariants(const struct x86_func *f, char *buf,
				 size_t len)
{
	uint64_t end = f->addr + f->size;

	for (size_t i = 1; i < f->ninsns; i++)
		if (f->insns[i] <= f->insns[i - 1] || f->insns[i] >= end) {
			snprintf(buf, len, "instructions out of order at +0x%llx",
				 (unsigned long long)f->insns[i]);
			return false;
		}
	for (size_t i = 1; i < f->ntargets; i++)
		if (f->targets[i] <= f->targets[i - 1]) {
			snprintf(buf, len, "targets not sorted");
			return false;
		}
	for (size_t i = 0; i < f->npoints; i++) {
		const struct x86_point *p = &f->points[i];
		uint64_t ps = p->patch_start, pe = ps + p->patch_len;

		if (!p->ok) {
			if (p->why == X86_REFUSAL_NONE) {
				snprintf(buf, len, "refused point without a "
					 "reason at +0x%llx",
					 (unsigned long long)p->addr);
				return false;
			}
			continue;
		}
		/* Past the end only into the padding after a final
		 * instruction that is in the area. */
		if (p->patch_tail > 0 && (pe != end + p->patch_tail ||
		    p->patch_tail > 4 || f->ninsns == 0 ||
		    f->insns[f->ninsns - 1] < ps)) {
			snprintf(buf, len, "ok point at +0x%llx borrows %u "
				 "bytes after the end wrongly",
				 (unsigned long long)p->addr, p->patch_tail);
			return false;
		}
		if (p->patch_len < 5 || ps < f->addr ||
		    pe > end + p->patch_tail ||
		    !pc_sorted_has(f->insns, f->ninsns, ps) ||
		    !(p->addr >= ps && p->addr < pe)) {
			snprintf(buf, len, "ok point at +0x%llx has a bad patch "
				 "area +0x%llx+%u", (unsigned long long)p->addr,
				 (unsigned long long)ps, p->patch_len);
			return false;
		}
		for (uint64_t a = ps + 1; a < pe; a++)
			if (pc_sorted_has(f->targets, f->ntargets, a)) {
				snprintf(buf, len, "ok point at +0x%llx spans "
					 "target +0x%llx",
					 (unsigned long long)p->addr,
					 (unsigned long long)a);
				return false;
			}
	}
	if (f->ok && f->why != X86_REFUSAL_NONE) {
		snprintf(buf, len, "ok function with a reason");
		return false;
	}
	return true;
}

#endif

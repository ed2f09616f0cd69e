/* vec.c - the growable array's one growth rule (see vec.h). */
#include "vec.h"
#include "xmalloc.h"

void *vec_reserve(void *p, size_t *cap, size_t need, size_t elem,
		  size_t first)
{
	size_t c = *cap ? *cap : (first ? first : 1);

	if (need <= *cap && p != NULL)
		return p;
	while (c < need)
		c *= 2;
	p = xreallocarray(p, c, elem);
	*cap = c;
	return p;
}

/* xmalloc.c - allocation that aborts with a message (see xmalloc.h). */
#include "xmalloc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void xmalloc_fail(size_t n)
{
	fprintf(stderr, "hunch: out of memory (allocating %zu bytes)\n", n);
	abort();
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (q == NULL)
		xmalloc_fail(n);
	return q;
}

void *xreallocarray(void *p, size_t count, size_t size)
{
	if (size != 0 && count > SIZE_MAX / size)
		xmalloc_fail(SIZE_MAX);
	return xrealloc(p, count * size);
}

char *xstrdup(const char *s)
{
	char *d = strdup(s);

	if (d == NULL)
		xmalloc_fail(strlen(s) + 1);
	return d;
}

/*
 * xmalloc.h - allocation that cannot fail quietly.
 *
 * hunch's tables (the where axis, a sampler's rings, a search graph) cannot
 * be half-built: a failed allocation there has no sensible way back, so
 * these abort with a message naming the size, as tmux's xmalloc does.
 * Code that can refuse one request and go on (a user's file too large)
 * uses malloc and reports the error instead.
 */
#ifndef XMALLOC_H
#define XMALLOC_H

#include <stddef.h>

/* realloc; a size of 0 gives a valid (non-NULL) minimal block. */
void *xrealloc(void *p, size_t n);
/* realloc of count * size, with the multiplication checked. */
void *xreallocarray(void *p, size_t count, size_t size);
char *xstrdup(const char *s);

#endif

/*
 * cli_quote.h - a command line as one line a shell reads back: plain
 * words as they are, others '...' or $'...' with escapes (cli_quote.c).
 * The reports' headers, their replay, the journal listing and the
 * dashboard's printed report all show arguments this way.
 */
#ifndef CLI_QUOTE_H
#define CLI_QUOTE_H

#include <stddef.h>
#include <stdio.h>

void cli_quote_word(const char *s, FILE *out);
/* malloc'ed: `first` (if not NULL), then rest[0..nrest), one space
 * between words. */
char *cli_quote_argv(const char *first, const char *const *rest,
		     size_t nrest);

#endif

/*
 * cli_quote.c - a command line as one line a shell reads back: how the
 * reports, the journal listing and the logs show a program's arguments.
 *
 * A word of plain characters stays as it is; one with blanks or shell
 * characters is put in '...'; one with a newline, a tab, another control
 * character or a single quote is written $'...' with escapes, so that a
 * multi-line `python3 -c` script never breaks a report's line.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_quote.h"

static bool plain(const char *s)
{
	if (*s == '\0')
		return false;
	for (; *s; s++)
		if (strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			   "0123456789_@%+=:,./-", *s) == NULL)
			return false;
	return true;
}

static bool needs_escapes(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f || *s == '\'')
			return true;
	return false;
}

void cli_quote_word(const char *s, FILE *out)
{
	if (plain(s)) {
		fputs(s, out);
		return;
	}
	if (!needs_escapes(s)) {
		fprintf(out, "'%s'", s);
		return;
	}
	fputs("$'", out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '\n')
			fputs("\\n", out);
		else if (c == '\t')
			fputs("\\t", out);
		else if (c == '\r')
			fputs("\\r", out);
		else if (c == '\'' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(out, "\\x%02x", c);
		else
			fputc(c, out);
	}
	fputc('\'', out);
}

char *cli_quote_argv(const char *first, const char *const *rest,
		     size_t nrest)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (f == NULL)
		return NULL;
	if (first != NULL)
		cli_quote_word(first, f);
	for (size_t i = 0; i < nrest; i++) {
		if (first != NULL || i > 0)
			fputc(' ', f);
		cli_quote_word(rest[i], f);
	}
	fclose(f);
	return buf;
}

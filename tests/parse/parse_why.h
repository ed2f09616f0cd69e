/*
 * parse_why.h - short names for the parser's refusals (enum x86_refusal)
 * in the parse tests' expectations ("no:TARGET@2", verdicts.expected),
 * so that the tests compare the refusal itself and a reworded sentence
 * (x86_refusal.c) breaks none of them.  Header-only, for tests/parse.
 */
#ifndef PARSE_WHY_H
#define PARSE_WHY_H

#include <string.h>

#include "x86_refusal.h"

static const struct {
	enum x86_refusal why;
	const char *name;
} parse_why_names[] = {
	{ X86_REFUSAL_SMALL, "SMALL" },
	{ X86_REFUSAL_TARGET, "TARGET" },
	{ X86_REFUSAL_UNRESOLVED, "UNRESOLVED" },
	{ X86_REFUSAL_UNDECODABLE, "UNDECODABLE" },
	{ X86_REFUSAL_MISALIGNED, "MISALIGNED" },
	{ X86_REFUSAL_TABLE_BEFORE, "TABLE_BEFORE" },
	{ X86_REFUSAL_TABLE_OVERLAP, "TABLE_OVERLAP" },
	{ X86_REFUSAL_BAD_TRANSFER, "BAD_TRANSFER" },
	{ X86_REFUSAL_CALL_INSIDE, "CALL_INSIDE" },
	{ X86_REFUSAL_AT_END, "AT_END" },
	{ X86_REFUSAL_AT_START, "AT_START" },
	{ X86_REFUSAL_DATA, "DATA" },
	{ X86_REFUSAL_A_POINT, "A_POINT" },
	{ X86_REFUSAL_EMPTY, "EMPTY" },
	{ X86_REFUSAL_NO_BYTES, "NO_BYTES" },
};

/* The name of a parser refusal, "NONE", or "OTHER" (not the parser's). */
static inline const char *parse_why_name(enum x86_refusal why)
{
	if (why == X86_REFUSAL_NONE)
		return "NONE";
	for (size_t i = 0; i < sizeof parse_why_names /
	     sizeof parse_why_names[0]; i++)
		if (parse_why_names[i].why == why)
			return parse_why_names[i].name;
	return "OTHER";
}

/* The refusal named `name`, or X86_REFUSAL_NONE. */
static inline enum x86_refusal parse_why_of(const char *name)
{
	for (size_t i = 0; i < sizeof parse_why_names /
	     sizeof parse_why_names[0]; i++)
		if (strcmp(parse_why_names[i].name, name) == 0)
			return parse_why_names[i].why;
	return X86_REFUSAL_NONE;
}

#endif

/*
 * test_refusal.c - the sentence tables of the refusals
 * (arch/x86_64/x86_refusal.c, engine/eng_refusal.c): every enum value
 * has a sentence, non-empty and unlike every other, the "none" value and
 * values past the enum have none, an engine value below X86_REFUSAL_N
 * says what the architecture says, and the parse tests' short names
 * (parse_why.h) each name one distinct parser refusal.
 */
#include <stdio.h>
#include <string.h>

#include "eng_refusal.h"
#include "parse_why.h"
#include "tap.h"

/* Values in [1, n) with no sentence, an empty one, or one repeated. */
static void check_table(const char *name, const char *(*str)(int), int n)
{
	int missing = 0, empty = 0, repeated = 0;

	for (int i = 1; i < n; i++) {
		const char *s = str(i);

		if (s == NULL) {
			missing++;
			tap_diag("%s %d: no sentence", name, i);
			continue;
		}
		if (s[0] == '\0') {
			empty++;
			tap_diag("%s %d: empty sentence", name, i);
		}
		for (int k = 1; k < i; k++)
			if (str(k) != NULL && strcmp(str(k), s) == 0) {
				repeated++;
				tap_diag("%s %d and %d: both '%s'", name, k, i,
					 s);
			}
	}
	tap_eq(missing, 0, "%s: each of the %d values has a sentence", name,
	       n - 1);
	tap_eq(empty, 0, "%s: no sentence is empty", name);
	tap_eq(repeated, 0, "%s: no two values share a sentence", name);
	tap_ok(str(0) == NULL && str(n) == NULL && str(n + 100) == NULL &&
	       str(-1) == NULL, "%s: none, and values past the enum, have no "
	       "sentence", name);
}

static const char *x86_str(int r)
{
	return x86_refusal_str((enum x86_refusal)r);
}

static const char *eng_str(int r)
{
	return eng_refusal_str((enum eng_refusal)r);
}

int main(void)
{
	size_t nnames = sizeof parse_why_names / sizeof parse_why_names[0];
	int same = 0, bad_names = 0;

	check_table("x86_refusal", x86_str, X86_REFUSAL_N);
	check_table("eng_refusal", eng_str, ENG_REFUSAL_N);
	for (int i = 0; i < X86_REFUSAL_N; i++)
		same += eng_str(i) == x86_str(i);
	tap_eq(same, X86_REFUSAL_N, "eng_refusal: the %d architecture values "
	       "say what x86_refusal_str says", X86_REFUSAL_N);
	tap_eq(eng_refusal_of_x86(X86_REFUSAL_TARGET),
	       (enum eng_refusal)X86_REFUSAL_TARGET,
	       "eng_refusal_of_x86 keeps the value");
	for (size_t i = 0; i < nnames; i++)
		if (parse_why_of(parse_why_names[i].name) !=
		    parse_why_names[i].why ||
		    strcmp(parse_why_name(parse_why_names[i].why),
			   parse_why_names[i].name) != 0 ||
		    parse_why_names[i].why == X86_REFUSAL_NONE)
			bad_names++;
	tap_eq(bad_names, 0, "parse_why.h: the %zu names each name one "
	       "parser refusal and back", nnames);
	tap_ok(strcmp(parse_why_name(X86_REFUSAL_NONE), "NONE") == 0 &&
	       strcmp(parse_why_name(X86_REFUSAL_TRAMP_SPACE), "OTHER") == 0 &&
	       parse_why_of("NO_SUCH") == X86_REFUSAL_NONE,
	       "parse_why.h: NONE, OTHER, and an unknown name");
	return tap_done();
}

/*
 * test_report_samples.c - the whole-run tally of CPU stack samples
 * (consultant/src_live_samples.c) and the report's section printed from
 * it (consultant/pc_report_samples.c): 10 samples at 10 Hz over 2 s,
 * 6 in memcmp called from a stripped `sort+0x9a00` under main, 3 in
 * that function itself, 1 in a module's code no function covers; the
 * counts, order, percentages and chains of the object, and the exact
 * lines of the text; a Python function named by its script.
 */
#include <stdlib.h>
#include <string.h>

#include "pc_report_samples.h"
#include "src_live_samples.h"
#include "tap.h"

#define MEMCMP "/Code/libc.so.6/memcmp.S/__memcmp_evex_movbe"
#define CMP "/Code/sort/<unknown>/sort+0x9a00"
#define MAIN "/Code/sort/<unknown>/main"

static json_t *tally(void)
{
	struct src_live_samples *t = src_live_samples_new(10);
	const char *hot[] = { MEMCMP, CMP, CMP, MAIN };   /* recursion: once */
	const char *cmp[] = { CMP, MAIN };
	const char *none[] = { MAIN };
	json_t *j;

	for (int i = 0; i < 6; i++)
		src_live_samples_add(t, 0.2 * i, MEMCMP, hot, 4);
	for (int i = 0; i < 3; i++)
		src_live_samples_add(t, 1.4 + 0.1 * i, CMP, cmp, 2);
	src_live_samples_add(t, 2.0, "/Code/libfoo.so", none, 1);
	j = src_live_samples_json(t);
	src_live_samples_free(t);
	return j;
}

static long long ival(const json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

static const char *sval(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "(null)";
}

static void check_json(const json_t *j)
{
	const json_t *self = json_object_get(j, "self");
	const json_t *incl = json_object_get(j, "inclusive");
	const json_t *ch = json_object_get(j, "chains");
	const json_t *c0 = json_object_get(json_array_get(ch, 0), "functions");

	tap_eq(ival(j, "count"), 10, "10 samples counted");
	tap_eq(json_real_value(json_object_get(j, "seconds")) * 10, 20,
	       "over 2 s, the last sample's time");
	tap_eq(json_real_value(json_object_get(j, "cpus")) * 10, 5,
	       "0.5 CPU: 10 samples at 10 Hz over 2 s");
	tap_eq(json_array_size(self), 3, "3 functions (or modules) by self");
	tap_ok(strcmp(sval(json_array_get(self, 0), "function"),
		      "__memcmp_evex_movbe") == 0 &&
	       strcmp(sval(json_array_get(self, 0), "module"), "libc.so.6") == 0,
	       "top self: __memcmp_evex_movbe in libc.so.6");
	tap_eq(ival(json_array_get(self, 0), "samples"), 6, "6 self samples");
	tap_eq(json_real_value(json_object_get(json_array_get(self, 0),
					       "percent")), 60, "60%%");
	tap_ok(json_is_null(json_object_get(json_array_get(self, 2),
					    "function")) &&
	       strcmp(sval(json_array_get(self, 2), "module"), "libfoo.so") == 0,
	       "code no function covers: its module, function null");
	tap_ok(strcmp(sval(json_array_get(incl, 0), "function"), "main") == 0 &&
	       ival(json_array_get(incl, 0), "samples") == 10,
	       "top inclusive: main, in every sample");
	tap_ok(strcmp(sval(json_array_get(incl, 1), "function"),
		      "sort+0x9a00") == 0 &&
	       ival(json_array_get(incl, 1), "samples") == 9,
	       "sort+0x9a00 inclusive 9, its recursion counted once");
	tap_eq(json_array_size(ch), 3, "3 chains");
	tap_ok(json_array_size(c0) == 3 &&
	       strcmp(sval(json_array_get(c0, 1), "function"), "sort+0x9a00") == 0 &&
	       strcmp(sval(json_array_get(c0, 2), "function"), "main") == 0 &&
	       ival(json_array_get(ch, 0), "samples") == 6,
	       "top chain: memcmp <- sort+0x9a00 <- main (recursion one), 6");
}

static const char want[] =
	"\nstack samples (sampled, not concluded by the search): 10 over "
	"2.0 s, 0.5 CPU: 60% in `__memcmp_evex_movbe` (libc.so.6), called "
	"from `sort+0x9a00` (sort)\n"
	"  by self samples:\n"
	"     60.0%      6  `__memcmp_evex_movbe` (libc.so.6)\n"
	"     30.0%      3  `sort+0x9a00` (sort)\n"
	"     10.0%      1  code in (libfoo.so)\n"
	"  by inclusive samples:\n"
	"    100.0%     10  `main` (sort)\n"
	"     90.0%      9  `sort+0x9a00` (sort)\n"
	"     60.0%      6  `__memcmp_evex_movbe` (libc.so.6)\n"
	"     10.0%      1  code in (libfoo.so)\n"
	"  call chains (innermost first, called from the next):\n"
	"     60.0%      6  `__memcmp_evex_movbe` (libc.so.6) <- "
	"`sort+0x9a00` (sort) <- `main` (sort)\n"
	"     30.0%      3  `sort+0x9a00` (sort) <- `main` (sort)\n"
	"     10.0%      1  code in (libfoo.so) <- `main` (sort)\n";

/* A Python function is named by its script, as the findings name it;
 * the interpreter's C code by its module. */
static void python_names(void)
{
	json_t *f = json_pack("{s:s, s:s, s:s}", "function", "f", "module",
			      "<python>", "path", "/Code/<python>/loop.py/f");
	json_t *c = json_pack("{s:s, s:s, s:s}", "function",
			      "_PyEval_EvalFrameDefault", "module",
			      "python3.11", "path", "/Code/python3.11/"
			      "<unknown>/_PyEval_EvalFrameDefault");
	char buf[256];

	tap_ok(strcmp(pc_report_samples_name(f, buf, sizeof(buf)),
		      "`f` (loop.py)") == 0, "a Python function: named by "
	       "its script (%s)", buf);
	tap_ok(strcmp(pc_report_samples_name(c, buf, sizeof(buf)),
		      "`_PyEval_EvalFrameDefault` (python3.11)") == 0,
	       "the interpreter's C code: by its module (%s)", buf);
	json_decref(f);
	json_decref(c);
}

int main(void)
{
	json_t *j = tally();
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	tap_ok(j != NULL, "a tally with samples gives an object");
	if (j != NULL)
		check_json(j);
	pc_report_samples_text(j, f);
	pc_report_samples_text(NULL, f);   /* none: nothing */
	fclose(f);
	tap_ok(strcmp(buf, want) == 0, "the section's text, exactly");
	if (strcmp(buf, want) != 0)
		tap_diag("got:\n%s", buf);
	free(buf);
	json_decref(j);
	j = src_live_samples_json(NULL);
	tap_ok(j == NULL, "no tally: no object");
	{
		struct src_live_samples *t = src_live_samples_new(99);

		tap_ok(src_live_samples_json(t) == NULL,
		       "a tally without samples: no object (no section)");
		src_live_samples_free(t);
	}
	python_names();
	return tap_done();
}

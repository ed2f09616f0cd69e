/*
 * test_journal_bad.c - every kind of bad input gets its own message,
 * asserted word for word: a newer version, JSON that is not a journal, a
 * text file, a binary file, an empty file, a directory, a corrupt line in
 * the middle (then the rest is read), wrong fields, time going backwards,
 * a second header, huge lines (the limit itself is accepted).
 */
#include <errno.h>
#include <sys/stat.h>

#include "jtest.h"
#include "tap.h"

static char header_line[8192];   /* a real header, with its newline */

static void make_header_line(void)
{
	json_t *hyp, *tun;
	struct jnl_header h = jt_header(&hyp, &tun);
	struct jnl_writer *w;
	char path[300];
	size_t len;
	char *b;

	jt_path(path, sizeof(path), "hdr.jsonl");
	jnl_write_open(&w, path, &h, NULL, NULL);
	jnl_write_close(w, NULL);
	b = jt_slurp(path, &len);
	snprintf(header_line, sizeof(header_line), "%s", b ? b : "");
	free(b);
	json_decref(hyp);
	json_decref(tun);
}

static const char *file_with(const char *name, const void *b, size_t len)
{
	static char path[300];

	jt_path(path, sizeof(path), name);
	jt_spit(path, b, len);
	return path;
}

static bool same(const char *got, const char *want)
{
	if (strcmp(got, want) == 0)
		return true;
	tap_diag("got:  %s", got);
	tap_diag("want: %s", want);
	return false;
}

/* Opening `content` fails with exactly "<path><want_tail>". */
static void open_fails(const char *what, const char *name, const void *b,
		       size_t len, const char *want_tail)
{
	const char *path = file_with(name, b, len);
	struct jnl_reader *r = NULL;
	struct hunch_err err = { 0 };
	char want[HUNCH_ERR_MAX];
	int rc = jnl_read_open(&r, path, &err);

	snprintf(want, sizeof(want), "%s%s", path, want_tail);
	tap_ok(rc < 0 && r == NULL && same(err.msg, want), "%s: \"%s\"", what,
	       want_tail);
	jnl_read_close(r);
}

static void test_headers(void)
{
	static const char bin[] = "\x7f" "ELF\x02\x01\x01\0\0\0\n\0\xff\xfe";
	const char *not_jnl = " is not a hunch journal: line 1 is ";

	open_fails("newer version", "newer.jsonl",
		   "{\"t\":\"header\",\"journal_version\":2,\"x\":1}\n", 41,
		   " is a version 2 journal, newer than this hunch reads (version 1): replay it with a newer hunch");
	open_fails("empty file", "empty.jsonl", "", 0,
		   " is empty: not a hunch journal (a journal starts with a header line; hunch may have been killed before writing it)");
	char want[300];
	snprintf(want, sizeof(want), "%snot JSON (a journal starts with {\"t\":\"header\",...})", not_jnl);
	open_fails("text file", "notes.txt", "Hello, world.\nThis is text.\n", 28, want);
	open_fails("binary file", "a.out", bin, sizeof(bin) - 1, want);
	snprintf(want, sizeof(want), "%sa JSON object without a record kind (\"t\") (a journal starts with {\"t\":\"header\",...})", not_jnl);
	open_fails("JSON that is not a journal", "package.json",
		   "{\"name\":\"pkg\",\"version\":\"1.0\"}\n", 31, want);
	snprintf(want, sizeof(want), "%sJSON but not an object (a journal starts with {\"t\":\"header\",...})", not_jnl);
	open_fails("a JSON array", "list.json", "[1,2,3]\n", 8, want);
	open_fails("a journal's second line first", "headless.jsonl",
		   "{\"t\":\"sample\",\"ts\":0.2,\"dt\":0.2,\"i\":[],\"v\":[]}\n", 47,
		   " is not a hunch journal: line 1 is JSON but not a journal header (its \"t\" is not \"header\")");
	open_fails("version not an integer", "v1.jsonl",
		   "{\"t\":\"header\",\"journal_version\":\"1\"}\n", 37,
		   " has a header without a valid journal_version: it is damaged, or not written by hunch");
	open_fails("header fields missing", "thin.jsonl",
		   "{\"t\":\"header\",\"journal_version\":1}\n", 35,
		   " has an invalid header (line 1): required field \"hunch_version\" (a string) is missing");
}

static void test_open_errors(void)
{
	struct jnl_reader *r = NULL;
	struct hunch_err err = { 0 };
	char path[300], want[400];

	jt_path(path, sizeof(path), "no-such.jsonl");
	snprintf(want, sizeof(want),
		 "cannot open journal %s: No such file or directory", path);
	tap_ok(jnl_read_open(&r, path, &err) == -ENOENT && same(err.msg, want),
	       "missing file: \"cannot open journal ...: No such file or directory\"");
	jt_path(path, sizeof(path), "adir");
	mkdir(path, 0700);
	snprintf(want, sizeof(want), "cannot read %s: Is a directory", path);
	tap_ok(jnl_read_open(&r, path, &err) == -EISDIR && same(err.msg, want),
	       "a directory: \"cannot read ...: Is a directory\"");
}

/* A journal: the real header, then `lines` (each with its newline).
 * Expect each to be read (want == NULL) or skipped with "<path>: line N
 * (byte B): <want>; the line is skipped and replay goes on without it". */
struct mid { const char *line; const char *want; };

static void check_middle(const char *what, const struct mid *m, size_t n,
			 enum jnl_end_kind want_end)
{
	char *content = malloc(strlen(header_line) + 1);
	size_t len = strlen(header_line), off;
	struct jnl_reader *r;
	struct hunch_err err = { 0 };
	struct jnl_record rec;
	const char *path;
	bool ok = true;

	memcpy(content, header_line, len + 1);
	for (size_t k = 0; k < n; k++) {
		size_t l = strlen(m[k].line);

		content = realloc(content, len + l + 1);
		memcpy(content + len, m[k].line, l + 1);
		len += l;
	}
	path = file_with("mid.jsonl", content, len);
	if (jnl_read_open(&r, path, &err) != 0) {
		tap_ok(0, "%s: open: %s", what, err.msg);
		free(content);
		return;
	}
	off = strlen(header_line);
	for (size_t k = 0; k < n && ok; k++) {
		int rc;
		char want[HUNCH_ERR_MAX];

		if (strcmp(m[k].line, "\n") == 0) {   /* read as nothing */
			off++;
			continue;
		}
		rc = jnl_read_next(r, &rec, &err);
		if (m[k].want == NULL) {
			ok = rc == JNL_NEXT_RECORD && rec.line == k + 2 &&
			     rec.offset == off;
			if (!ok)
				tap_diag("line %zu: rc %d %s", k + 2, rc, err.msg);
		} else {
			snprintf(want, sizeof(want),
				 "%s: line %zu (byte %zu): %s; the line is skipped and replay goes on without it",
				 path, k + 2, off, m[k].want);
			ok = rc == JNL_NEXT_BAD && same(err.msg, want);
		}
		off += strlen(m[k].line);
	}
	ok = ok && jnl_read_next(r, &rec, &err) == JNL_NEXT_END &&
	     jnl_read_end(r, NULL) == want_end;
	tap_ok(ok, "%s", what);
	jnl_read_close(r);
	free(content);
}

#define GOOD_SAMPLE "{\"t\":\"sample\",\"ts\":1.0,\"t0\":0.8,\"t1\":1.0,\"i\":[1],\"v\":[0.5]}\n"
#define GOOD_END "{\"t\":\"end\",\"ts\":2.0,\"reason\":\"target_exited\"}\n"

static void test_corrupt_middle(void)
{
	const struct mid garbage[] = {
		{ GOOD_SAMPLE, NULL },
		{ "garbage \x01 here\n", "not valid JSON ('[' or '{' expected near 'garbage', at column 7)" },
		{ "{\"t\":\"sample\",\"ts\":1.2,\"t0\":1,\"t1\":1.2,\"i\":[1],\"v\":[0.\n",
		  "not valid JSON (invalid token near '0.', at column 54)" },
		{ GOOD_END, NULL },
	};
	const struct mid fields[] = {
		{ "{\"t\":\"enable\",\"ts\":1.5,\"req\":3}\n",
		  "\"enable\" record: required field \"metric\" (a string) is missing" },
		{ "{\"t\":\"enable\",\"ts\":1.5,\"req\":3,\"metric\":\"m\",\"focus\":\"</Code,/Process,/SyncObject,/Files>\",\"predicted_cost\":0}\n",
		  "\"enable\" record: field \"focus\" is not an array" },
		{ "{\"t\":\"predict\",\"ts\":1.5,\"metric\":\"m\",\"focus\":[\"/Code\",\"/Process\"],\"cost\":0}\n",
		  "\"predict\" record: \"focus\" has 2 paths, expected 4 (one per hierarchy)" },
		{ "{\"t\":\"callees\",\"ts\":1.5,\"callees\":[\"/Code/a\",7]}\n",
		  "\"callees\" record: \"callees\"[1] is not a string" },
		{ "{\"t\":\"disable\",\"ts\":1.5,\"inst\":\"3\"}\n",
		  "\"disable\" record: field \"inst\" is not an integer" },
		{ "{\"t\":\"sample\",\"ts\":1.5,\"t0\":1.3,\"t1\":1.5,\"i\":[1,2],\"v\":[0.5]}\n",
		  "\"sample\" record: arrays \"i\" (2) and \"v\" (1) differ in length" },
		{ "{\"t\":\"resource\",\"ts\":1.5,\"op\":\"add\",\"kind\":\"gpu\"}\n",
		  "\"resource\" record: field \"kind\" is \"gpu\", expected function, process, thread, syncobj or file" },
		{ "{\"t\":\"output\",\"ts\":1.5,\"stream\":\"stdout\"}\n",
		  "\"output\" record: exactly one of \"text\" and \"b64\" must be present" },
		{ "{\"t\":\"x_new\",\"ts\":1.6,\"y\":1}\n", NULL },
		{ "{\"t\":\"x_new\",\"y\":1}\n",
		  "\"x_new\" record: required field \"ts\" (a number) is missing" },
		{ "[1,2]\n", "JSON but not an object" },
		{ "{\"ts\":1.7}\n", "a JSON object without a record kind (\"t\")" },
		{ "\n", NULL },   /* a blank line is skipped silently */
		{ GOOD_SAMPLE, "\"sample\" record: ts 1.000000 is earlier than the previous record's 1.600000" },
		{ "{\"t\":\"cost\",\"ts\":-1,\"observed\":0.1}\n",
		  "\"cost\" record: field \"ts\" is negative" },
		{ header_line, "a second header record" },
		{ GOOD_END, NULL },
	};
	check_middle("a corrupt line in the middle (not JSON, JSON cut short) is skipped with its line and byte; the rest is read",
		     garbage, 4, JNL_END_COMPLETE);
	check_middle("wrong records: missing field, wrong type, focus not 4 paths, callee not a string, unequal arrays, unknown resource kind, no text, no ts, no kind, time backwards, negative ts, second header: each its message; unknown kinds and blank lines pass; the end is read",
		     fields, sizeof(fields) / sizeof(fields[0]), JNL_END_COMPLETE);
	check_middle("without an end record the journal ends NO_END",
		     fields, 9, JNL_END_NO_END);
}

/* A line of exactly `len` bytes (plus newline) that is a valid record. */
static char *padded_record(size_t len)
{
	const char *pre = "{\"t\":\"x_pad\",\"ts\":1.0,\"p\":\"", *post = "\"}\n";
	char *b = malloc(len + 2);
	size_t pl = strlen(pre);

	memcpy(b, pre, pl);
	memset(b + pl, 'x', len - pl - 2);
	memcpy(b + len - 2, post, 4);
	return b;
}

static void test_huge(void)
{
	char *at_limit = padded_record(JNL_MAX_LINE);
	char *over = padded_record(JNL_MAX_LINE + 1);
	const struct mid lines[] = {
		{ at_limit, NULL },
		{ over, "longer than 16 MiB (the limit): no journal hunch writes has one, the file was damaged" },
		{ GOOD_END, NULL },
	};
	char *first = malloc(JNL_MAX_LINE + 10);

	check_middle("a line of exactly 16 MiB is read; one byte more is skipped with its message; the rest is read",
		     lines, 3, JNL_END_COMPLETE);
	memset(first, '{', JNL_MAX_LINE + 9);
	first[JNL_MAX_LINE + 9] = '\n';
	open_fails("huge first line", "huge.jsonl", first, JNL_MAX_LINE + 10,
		   " is not a hunch journal: line 1 is longer than 16 MiB");
	free(at_limit);
	free(over);
	free(first);
}

int main(void)
{
	make_header_line();
	test_headers();
	test_open_errors();
	test_corrupt_middle();
	test_huge();
	jt_rm_tmpdir();
	return tap_done();
}

/*
 * test_journal_doc.c - docs/journal-format.md is the specification and
 * jnl_format.c's schema its executable form: every record kind has a
 * "### `kind`" section, and every field of the schema appears in it as
 * `field`, with "yes" in its row when it is required.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jnl_format.h"
#include "jtest.h"
#include "tap.h"

/* The section of `kind`: from its heading to the next one. */
static char *section(const char *doc, const char *kind)
{
	char head[64];
	const char *s, *e;

	snprintf(head, sizeof(head), "### `%s`\n", kind);
	if ((s = strstr(doc, head)) == NULL)
		return NULL;
	e = strstr(s + strlen(head), "\n## ");
	const char *e3 = strstr(s + strlen(head), "\n### ");
	if (e == NULL || (e3 && e3 < e))
		e = e3;
	return e ? strndup(s, (size_t)(e - s)) : strdup(s);
}

/* The table row of `field`: "| `field` | type | yes/no | ...". */
static bool row_ok(const char *sec, const struct jnl_field *f)
{
	char cell[80];
	const char *row, *end;
	char *line;
	bool ok;

	snprintf(cell, sizeof(cell), "| `%s` |", f->name);
	if ((row = strstr(sec, cell)) == NULL)
		return false;
	end = strchr(row, '\n');
	line = strndup(row, end ? (size_t)(end - row) : strlen(row));
	ok = f->required ? strstr(line, "| yes |") != NULL
			 : strstr(line, "| no |") || strstr(line, "| one of |");
	free(line);
	return ok;
}

int main(void)
{
	const char *root = getenv("HUNCH_SOURCE_ROOT");
	char path[512];
	size_t len;
	char *doc;

	snprintf(path, sizeof(path), "%s/docs/journal-format.md", root ? root : ".");
	doc = jt_slurp(path, &len);
	if (!tap_ok(doc != NULL, "%s is there", path))
		return tap_done();
	for (int k = 1; k < JNL_REC_NKINDS; k++) {
		const char *name = jnl_format_kind_name(k);
		char *sec = section(doc, name);
		int missing = 0;

		for (const struct jnl_field *f = jnl_format_kind_fields(k); sec && f->name; f++)
			if (strcmp(f->name, "ts") != 0 && !row_ok(sec, f)) {
				tap_diag("%s: field %s missing or required-ness wrong",
					 name, f->name);
				missing++;
			}
		tap_ok(sec && missing == 0,
		       "record kind \"%s\": documented, every field with its required-ness",
		       name);
		free(sec);
	}
	tap_ok(strstr(doc, "`journal_version` in the header is **1**") != NULL &&
	       JNL_VERSION == 1, "the documented version is JNL_VERSION (%d)",
	       JNL_VERSION);
	free(doc);
	return tap_done();
}

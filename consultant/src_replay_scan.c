/*
 * src_replay_scan.c - what a lazily built index must know at once: the
 * keys the journal ever recorded an answer for.
 *
 * The replay source answers an enable nobody recorded with "not
 * recorded" at once, and a prediction, hint or callee list nobody
 * recorded with its default; both need the whole journal ("recorded
 * later?").  Parsing every record takes seconds for a long journal
 * (JSON numbers: samples are 70% of the bytes), so opening lazily
 * (src_replay_open_lazy) first skims the file: only lines that contain
 * one of those kinds' names in quotes are parsed, and the keys of the
 * enable, predict, hint and callees records among them kept.  A key
 * missing here was never recorded; a key present but not yet in the
 * partial index makes the source index the rest first.
 */
#include "src_replay_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static const char *const kinds[] = { "enable", "predict", "hint",
				     "callees" };
/* A record of one of these kinds has its name in quotes somewhere. */
static const char *const quoted[] = { "\"enable\"", "\"predict\"",
				      "\"hint\"", "\"callees\"" };

/* The key a lookup of kind k asks with, as the scan stores it. */
char *src_replay_scan_key(int k, const char *key)
{
	size_t n = strlen(key) + 3;
	char *s = malloc(n);

	if (s == NULL)
		abort();
	snprintf(s, n, "%c:%s", kinds[k][0], key);
	return s;
}

static void keep(struct hmap *ever, int k, const char *key)
{
	char *s;

	if (key == NULL)
		return;
	s = src_replay_scan_key(k, key);
	hmap_put_s(ever, s, 1);
	free(s);
}

/* Could the line be a record of one of the four kinds?  hunch writes
 * the kind first (`{"t":"sample",...`: the kind is known without
 * parsing, and a second "t" makes the reader reject the line); any other
 * layout is looked through for the kinds' names. */
static bool may_be(const char *p, size_t n)
{
	static const char lead[] = "{\"t\":\"";
	const size_t l = sizeof(lead) - 1;
	const char *q;

	if (n > l && memcmp(p, lead, l) == 0 &&
	    (q = memchr(p + l, '"', n - l)) != NULL && q + 1 < p + n &&
	    q[1] == ',' && memchr(p + l, '\\', (size_t)(q - p) - l) == NULL) {
		for (size_t k = 0; k < 4; k++)
			if ((size_t)(q - p) - l == strlen(kinds[k]) &&
			    memcmp(p + l, kinds[k], strlen(kinds[k])) == 0)
				return true;
		return false;
	}
	for (size_t k = 0; k < 4; k++)
		if (memmem(p, n, quoted[k], strlen(quoted[k])) != NULL)
			return true;
	return false;
}

static void scan_line(struct hmap *ever, const char *p, size_t n)
{
	const char *t;
	json_t *j;

	if (!may_be(p, n) ||
	    (j = json_loadb(p, n, JSON_ALLOW_NUL, NULL)) == NULL)
		return;
	t = json_string_value(json_object_get(j, "t"));
	if (t != NULL && strcmp(t, "enable") == 0) {
		char *key = src_replay_idx_record_key(j);

		keep(ever, RP_SCAN_ENABLE, key);
		free(key);
	} else if (t != NULL && strcmp(t, "predict") == 0) {
		char *key = src_replay_idx_record_key(j);

		keep(ever, RP_SCAN_PREDICT, key);
		free(key);
	} else if (t != NULL && strcmp(t, "hint") == 0) {
		keep(ever, RP_SCAN_HINT,
		     json_string_value(json_object_get(j, "path")));
	} else if (t != NULL && strcmp(t, "callees") == 0) {
		const char *s = json_string_value(json_object_get(j, "path"));

		keep(ever, RP_SCAN_CALLEES, s ? s : "");
	}
	json_decref(j);
}

int src_replay_scan(struct hmap *ever, const char *path)
{
	enum { CHUNK = 4 << 20 };
	gzFile f = gzopen(path, "rb");   /* plain or gzip-compressed */
	char *buf = malloc(CHUNK);
	size_t have = 0, got;
	int n;

	if (f == NULL || buf == NULL) {
		free(buf);
		if (f != NULL)
			gzclose(f);
		return -1;
	}
	for (;;) {
		n = gzread(f, buf + have, (unsigned)(CHUNK - have));
		got = n > 0 ? (size_t)n : 0;
		if (got == 0 && have == 0)
			break;
		char *p = buf, *end = buf + have + got, *nl;

		while ((nl = memchr(p, '\n', (size_t)(end - p))) != NULL) {
			scan_line(ever, p, (size_t)(nl - p));
			p = nl + 1;
		}
		have = (size_t)(end - p);
		if (have == CHUNK)   /* a line over 4 MiB: index it all */
			break;
		if (got == 0) {      /* the last line, without a newline */
			scan_line(ever, p, have);
			have = 0;
			break;
		}
		memmove(buf, p, have);
	}
	free(buf);
	gzclose(f);
	return have == CHUNK ? -1 : 0;
}

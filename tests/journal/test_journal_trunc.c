/*
 * test_journal_trunc.c - a power cut simulated by truncating a real
 * journal (written by the writer) at 100 random byte offsets, plus the
 * edges (0, inside the header, right after it, at a line boundary, one
 * byte short of the end).  At every cut the reader must not crash, must
 * return every record before the cut and nothing else, and must say
 * exactly where the journal stops and why (line and byte offset).
 */
#include <stdint.h>

#include "jtest.h"
#include "tap.h"

struct journal {
	char *buf;
	size_t len;
	size_t *line_end;   /* offset of each line's newline */
	size_t nlines;
};

static uint64_t rng = 6;   /* deterministic */

static uint64_t xorshift(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A few hundred records of every size and shape the writer makes:
 * resources, UTF-8 and binary output, samples, target events, end. */
static void write_real(const char *path)
{
	json_t *hyp, *tun;
	struct jnl_header h = jt_header(&hyp, &tun);
	struct jnl_writer *w;
	uint64_t ids[20];
	double vals[20];
	char name[64];

	jnl_write_open(&w, path, &h, NULL, NULL);
	for (int k = 0; k < 300; k++) {
		double ts = k * 0.05;
		struct pc_discovery d = { .kind = PC_DISC_FUNCTION,
			.module = "prog", .srcfile = "m\xc3\xbcnchen.c",
			.function = name, .addr = 0x401000u + 16u * (unsigned)k };
		struct jnl_target t = { .event = JNL_TEV_THREAD_START, .pid = 100,
					.tid = 100 + k, .function = "worker" };

		snprintf(name, sizeof(name), "func_%d", k);
		switch (k % 5) {
		case 0: jnl_write_discovery(w, ts, &d); break;
		case 1: jnl_write_output(w, ts, JNL_STDOUT,
					 "l\xc3\xadne \xe2\x82\xac 1", 12, true); break;
		case 2: jnl_write_output(w, ts, JNL_STDERR, "\x00\xff\x80", 3,
					 false); break;
		case 3: jnl_write_target(w, ts, &t); break;
		case 4:
			for (int i = 0; i < 20; i++) {
				ids[i] = (uint64_t)i;
				vals[i] = (k * 20 + i) / 7.0;
			}
			jnl_write_tick(w, ts, ts + 0.5);
			jnl_write_sample_arrays(w, ts, ts - 0.05 + 0.5, ts + 0.5,
						20, ids, vals);
			jnl_write_flush(w);
			break;
		}
	}
	jnl_write_end(w, 15.0, "target_exited", NULL);
	jnl_write_close(w, NULL);
	json_decref(hyp);
	json_decref(tun);
}

static int load(const char *path, struct journal *j)
{
	j->buf = jt_slurp(path, &j->len);
	if (j->buf == NULL)
		return -1;
	j->line_end = malloc(j->len * sizeof(size_t));
	for (size_t i = 0; i < j->len; i++)
		if (j->buf[i] == '\n')
			j->line_end[j->nlines++] = i;
	return 0;
}

/* Lines complete before a cut at `off` (their newline is before it). */
static size_t complete_lines(const struct journal *j, size_t off)
{
	size_t n = 0;

	while (n < j->nlines && j->line_end[n] < off)
		n++;
	return n;
}

static double line_ts(const struct journal *j, size_t line)
{
	size_t start = line > 1 ? j->line_end[line - 2] + 1 : 0;
	json_t *o = json_loadb(j->buf + start, j->line_end[line - 1] - start,
			       0, NULL);
	double ts = json_number_value(json_object_get(o, "ts"));

	json_decref(o);
	return ts;
}

static void expected_end(const struct journal *j, const char *name,
			 size_t off, size_t lines, char *msg, size_t len)
{
	char stops[200];

	if (lines <= 1)
		snprintf(stops, sizeof(stops),
			 "there is nothing after the header to replay");
	else
		snprintf(stops, sizeof(stops),
			 "replay stops at the last complete record, line %zu (ts %.3f s)",
			 lines, line_ts(j, lines));
	if (j->buf[off - 1] == '\n')
		snprintf(msg, len,
			 "%s: ends at line %zu (byte %zu) without an end record: hunch stopped before the search ended (killed or crashed); %s",
			 name, lines, off, stops);
	else
		snprintf(msg, len,
			 "%s: line %zu (byte %zu) is incomplete: the journal was cut there (hunch was killed while writing, or the disk filled); %s",
			 name, lines + 1, j->line_end[lines - 1] + 1, stops);
}

/* Open failures: an empty file and a header cut short. */
static bool check_open_error(const char *name, size_t off, const char *got)
{
	char want[HUNCH_ERR_MAX];

	if (off == 0)
		snprintf(want, sizeof(want),
			 "%s is empty: not a hunch journal (a journal starts with a header line; hunch may have been killed before writing it)",
			 name);
	else
		snprintf(want, sizeof(want),
			 "%s has an incomplete header: the journal was cut after %zu bytes, before the header was written in full; there is nothing to replay",
			 name, off);
	if (strcmp(got, want) != 0) {
		tap_diag("got:  %s", got);
		tap_diag("want: %s", want);
		return false;
	}
	return true;
}

/* Read everything; true when it matches the original up to the cut. */
static bool read_cut(const struct journal *j, struct jnl_reader *r,
		     const char *name, size_t off)
{
	size_t lines = complete_lines(j, off), n = 1;
	struct jnl_record rec = { 0 };
	struct hunch_err err = { 0 };
	const char *msg = NULL;
	char want[HUNCH_ERR_MAX];
	enum jnl_end_kind end;
	int rc;

	while ((rc = jnl_read_next(r, &rec, &err)) == JNL_NEXT_RECORD) {
		n++;
		if (rec.line != n || rec.offset != j->line_end[n - 2] + 1)
			return tap_diag("record %zu at line %llu", n,
					(unsigned long long)rec.line), false;
	}
	if (rc != JNL_NEXT_END || n != lines)
		return tap_diag("read %zu lines, want %zu (rc %d: %s)", n, lines,
				rc, err.msg), false;
	end = jnl_read_end(r, &msg);
	if (off == j->len)
		return end == JNL_END_COMPLETE && msg == NULL;
	expected_end(j, name, off, lines, want, sizeof(want));
	if (end != (j->buf[off - 1] == '\n' ? JNL_END_NO_END : JNL_END_TRUNCATED) ||
	    msg == NULL || strcmp(msg, want) != 0)
		return tap_diag("got:  %s", msg ? msg : "(none)"),
		       tap_diag("want: %s", want), false;
	return true;
}

/* One cut, through a real file and through memory. */
static void check_cut(const struct journal *j, size_t off)
{
	char path[300];
	struct jnl_reader *r;
	struct hunch_err err = { 0 };
	bool ok = true;
	size_t header_len = j->line_end[0] + 1;

	jt_path(path, sizeof(path), "cut.jsonl");
	jt_spit(path, j->buf, off);
	for (int mem = 0; mem < 2 && ok; mem++) {
		int rc = mem ? jnl_read_open_mem(&r, j->buf, off, path, &err)
			     : jnl_read_open(&r, path, &err);

		if (off < header_len) {
			ok = rc != 0 && r == NULL && check_open_error(path, off, err.msg);
			continue;
		}
		if (rc != 0) {
			tap_diag("open: %s", err.msg);
			ok = false;
			continue;
		}
		ok = read_cut(j, r, path, off);
		jnl_read_close(r);
	}
	tap_ok(ok, "cut at byte %zu of %zu (%zu complete lines): records before it read, the stop reported exactly",
	       off, j->len, complete_lines(j, off));
}

int main(void)
{
	struct journal j = { 0 };
	char path[300];

	jt_path(path, sizeof(path), "real.jsonl");
	write_real(path);
	if (load(path, &j) != 0 || j.nlines < 300) {
		tap_ok(0, "a real journal written");
		return tap_done();
	}
	tap_diag("journal of %zu bytes, %zu lines", j.len, j.nlines);
	size_t edges[] = { 0, 1, j.line_end[0], j.line_end[0] + 1,
			   j.line_end[5] + 1, j.line_end[5], j.len - 1, j.len };
	for (size_t k = 0; k < sizeof(edges) / sizeof(edges[0]); k++)
		check_cut(&j, edges[k]);
	for (int k = 0; k < 100; k++)
		check_cut(&j, (size_t)(xorshift() % (j.len + 1)));
	free(j.buf);
	free(j.line_end);
	jt_rm_tmpdir();
	return tap_done();
}

/* jnl_read.c - the journal reader (see jnl_read.h). */
#include "jnl_read.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define IN_CHUNK 65536

enum line_st { LINE_OK, LINE_HUGE, LINE_PARTIAL, LINE_EOF, LINE_ERROR };

struct jnl_reader {
	char *name;
	int fd;                   /* -1 for a memory buffer */
	gzFile gz;                /* a gzip-compressed file, read through fd */
	const char *mem;
	size_t mem_len, mem_pos;
	char *chunk;              /* fd input */
	const char *in;
	size_t in_len, in_pos;
	char *line;
	size_t line_len, line_cap;
	uint64_t lineno;          /* line being read / last read */
	uint64_t line_off;        /* its first byte */
	uint64_t next_off;
	bool line_huge;           /* the line was over JNL_MAX_LINE */
	int read_errno;
	json_t *header;
	uint64_t body_off;        /* the first byte after the header line */
	json_t *cur;              /* the record last delivered */
	bool end_seen;
	enum jnl_end_kind end;
	char end_msg[HUNCH_ERR_MAX];
	struct jnl_read_stats st;
};

/* Uncompressed bytes of a gzip journal.  A stream cut short (hunch
 * killed while its compressor wrote) ends where the data ends: zlib
 * reports that as Z_BUF_ERROR, and the reader then sees a last line cut
 * short, as for a plain journal. */
static ssize_t gz_fill(struct jnl_reader *r)
{
	int n = gzread(r->gz, r->chunk, IN_CHUNK), zerr;

	if (n >= 0)
		return n;
	gzerror(r->gz, &zerr);
	return zerr == Z_BUF_ERROR ? 0 : -1;
}

/* Next input chunk: 1 if there is one, 0 at end of input, -1 on error. */
static int fill(struct jnl_reader *r)
{
	ssize_t n;

	if (r->fd < 0) {
		if (r->mem_pos == r->mem_len)
			return 0;
		r->in = r->mem + r->mem_pos;
		r->in_len = r->mem_len - r->mem_pos;
		r->mem_pos = r->mem_len;
		r->in_pos = 0;
		return 1;
	}
	if (r->gz != NULL)
		n = gz_fill(r);
	else
		do
			n = read(r->fd, r->chunk, IN_CHUNK);
		while (n < 0 && errno == EINTR);
	if (n < 0) {
		r->read_errno = r->gz != NULL ? EIO : errno;
		return -1;
	}
	r->in = r->chunk;
	r->in_len = (size_t)n;
	r->in_pos = 0;
	return n > 0;
}

static bool line_append(struct jnl_reader *r, const char *p, size_t n)
{
	if (r->line_len + n + 1 > r->line_cap) {
		size_t cap = r->line_cap ? r->line_cap : 4096;
		char *b;

		while (cap < r->line_len + n + 1)
			cap *= 2;
		if ((b = realloc(r->line, cap)) == NULL)
			return false;
		r->line = b;
		r->line_cap = cap;
	}
	memcpy(r->line + r->line_len, p, n);
	r->line_len += n;
	r->line[r->line_len] = '\0';
	return true;
}

/* Read one line (without its newline) into r->line.  A line over
 * JNL_MAX_LINE is consumed but not kept, so memory stays bounded. */
static enum line_st get_line(struct jnl_reader *r)
{
	bool huge = false, any = false;

	r->line_len = 0;
	r->line_off = r->next_off;
	r->lineno++;
	for (;;) {
		if (r->in_pos == r->in_len) {
			int rc = fill(r);

			if (rc < 0)
				return LINE_ERROR;
			if (rc == 0) {
				r->line_huge = huge;
				if (any)
					return LINE_PARTIAL;
				r->lineno--;
				return LINE_EOF;
			}
		}
		const char *p = r->in + r->in_pos;
		size_t avail = r->in_len - r->in_pos;
		const char *nl = memchr(p, '\n', avail);
		size_t take = nl ? (size_t)(nl - p) : avail;

		any = true;
		if (!huge && r->line_len + take > JNL_MAX_LINE)
			huge = true;
		if (!huge && !line_append(r, p, take))
			huge = true;  /* out of memory: treat as too long */
		r->in_pos += take + (nl != NULL);
		r->next_off += take + (nl != NULL);
		if (nl) {
			r->line_huge = huge;
			return huge ? LINE_HUGE : LINE_OK;
		}
	}
}

static int line_err(struct jnl_reader *r, struct hunch_err *err,
		    const char *fmt, const char *what)
{
	char detail[HUNCH_ERR_MAX];

	snprintf(detail, sizeof(detail), fmt, what);
	r->st.bad_lines++;
	hunch_err_set(err, -EINVAL,
		   "%s: line %llu (byte %llu): %.700s; the line is skipped and replay goes on without it",
		   r->name, (unsigned long long)r->lineno,
		   (unsigned long long)r->line_off, detail);
	return JNL_NEXT_BAD;
}

/* Parse r->line; NULL with a reason in `why` when it is not an object
 * with a string "t". */
static json_t *parse_line(struct jnl_reader *r, char *why, size_t len,
			  bool *not_json)
{
	json_error_t je;
	json_t *j = json_loadb(r->line, r->line_len, JSON_ALLOW_NUL, &je);

	*not_json = j == NULL;
	if (j == NULL) {
		snprintf(why, len, "not valid JSON (%s, at column %d)",
			 je.text, je.column);
		return NULL;
	}
	if (!json_is_object(j)) {
		snprintf(why, len, "JSON but not an object");
	} else if (!json_is_string(json_object_get(j, "t"))) {
		snprintf(why, len, "a JSON object without a record kind (\"t\")");
	} else {
		return j;
	}
	json_decref(j);
	return NULL;
}

static int check_record(struct jnl_reader *r, json_t *j, enum jnl_kind k,
			const char *kname, struct hunch_err *err)
{
	struct hunch_err verr = { 0 };
	double ts;
	char what[HUNCH_ERR_MAX];

	if (k == JNL_REC_HEADER)
		return line_err(r, err, "%s", "a second header record");
	if (k == JNL_REC_UNKNOWN &&
	    !json_is_number(json_object_get(j, "ts")))
		return line_err(r, err, "\"%s\" record: required field \"ts\" (a number) is missing", kname);
	if (jnl_format_validate(k, j, &verr) != 0) {
		snprintf(what, sizeof(what), "\"%.100s\" record: %.800s", kname, verr.msg);
		return line_err(r, err, "%s", what);
	}
	ts = json_number_value(json_object_get(j, "ts"));
	if (ts < r->st.last_ts) {
		snprintf(what, sizeof(what),
			 "\"%s\" record: ts %.6f is earlier than the previous record's %.6f",
			 kname, ts, r->st.last_ts);
		return line_err(r, err, "%s", what);
	}
	return 0;
}

static int deliver_line(struct jnl_reader *r, struct jnl_record *rec,
			struct hunch_err *err)
{
	char why[512];
	bool not_json;
	json_t *j = parse_line(r, why, sizeof(why), &not_json);
	const char *kname;
	enum jnl_kind k;

	if (j == NULL)
		return line_err(r, err, "%s", why);
	kname = json_string_value(json_object_get(j, "t"));
	k = jnl_format_kind_from_name(kname);
	if (check_record(r, j, k, kname, err) != 0) {
		json_decref(j);
		return JNL_NEXT_BAD;
	}
	json_decref(r->cur);
	r->cur = j;
	rec->kind = k;
	rec->kind_name = kname;
	rec->ts = json_number_value(json_object_get(j, "ts"));
	rec->json = j;
	rec->line = r->lineno;
	rec->offset = r->line_off;
	r->st.records++;
	r->st.unknown += k == JNL_REC_UNKNOWN;
	r->st.last_line = r->lineno;
	r->st.last_ts = rec->ts;
	if (k == JNL_REC_END)
		r->end_seen = true;
	return JNL_NEXT_RECORD;
}

static void where_replay_stops(const struct jnl_reader *r, char *buf,
			       size_t len)
{
	if (r->st.last_line <= 1)
		snprintf(buf, len, "there is nothing after the header to replay");
	else
		snprintf(buf, len,
			 "replay stops at the last complete record, line %llu (ts %.3f s)",
			 (unsigned long long)r->st.last_line, r->st.last_ts);
}

static int finish(struct jnl_reader *r, enum jnl_end_kind end)
{
	char stops[256];

	r->end = end;
	where_replay_stops(r, stops, sizeof(stops));
	if (end == JNL_END_TRUNCATED)
		snprintf(r->end_msg, sizeof(r->end_msg),
			 "%s: line %llu (byte %llu) is incomplete: the journal was cut there (hunch was killed while writing, or the disk filled); %s",
			 r->name, (unsigned long long)r->lineno,
			 (unsigned long long)r->line_off, stops);
	else if (end == JNL_END_NO_END)
		snprintf(r->end_msg, sizeof(r->end_msg),
			 "%s: ends at line %llu (byte %llu) without an end record: hunch stopped before the search ended (killed or crashed); %s",
			 r->name, (unsigned long long)r->lineno,
			 (unsigned long long)r->next_off, stops);
	else if (end == JNL_END_READ_ERROR)
		snprintf(r->end_msg, sizeof(r->end_msg),
			 "%s: cannot read at byte %llu (%s); %s", r->name,
			 (unsigned long long)r->next_off,
			 strerror(r->read_errno), stops);
	return JNL_NEXT_END;
}

int jnl_read_next(struct jnl_reader *r, struct jnl_record *rec,
	     struct hunch_err *err)
{
	if (r->end != JNL_END_NOT_YET)
		return JNL_NEXT_END;
	for (;;) {
		switch (get_line(r)) {
		case LINE_EOF:
			return finish(r, r->end_seen ? JNL_END_COMPLETE
						     : JNL_END_NO_END);
		case LINE_PARTIAL:
			return finish(r, JNL_END_TRUNCATED);
		case LINE_ERROR:
			return finish(r, JNL_END_READ_ERROR);
		case LINE_HUGE:
			return line_err(r, err,
					"longer than %s (the limit): no journal hunch writes has one, the file was damaged",
					"16 MiB");
		case LINE_OK:
			if (r->line_len == 0)
				continue;  /* blank lines are harmless */
			return deliver_line(r, rec, err);
		}
	}
}

/* --- opening: the header --- */

static int header_bad(struct jnl_reader *r, struct hunch_err *err,
		      const char *fmt, const char *a)
{
	char what[HUNCH_ERR_MAX];

	snprintf(what, sizeof(what), fmt, a);
	return hunch_err_set(err, -EINVAL, "%s %.900s", r->name, what);
}

/* A cut first line that starts like our header (or is a prefix of how
 * it starts: a cut after 1 byte is "{"). */
static bool looks_like_header(const struct jnl_reader *r)
{
	static const char start[] = "{\"t\":\"header\"";
	size_t n = r->line_len < sizeof(start) - 1 ? r->line_len
						   : sizeof(start) - 1;

	return n > 0 && memcmp(r->line, start, n) == 0;
}

static int check_version(struct jnl_reader *r, json_t *j,
			 struct hunch_err *err)
{
	json_t *v = json_object_get(j, "journal_version");
	char num[64];

	if (!json_is_integer(v) || json_integer_value(v) < 1)
		return header_bad(r, err,
				  "has a header without a valid journal_version%s: it is damaged, or not written by hunch",
				  "");
	if (json_integer_value(v) > JNL_VERSION) {
		snprintf(num, sizeof(num), "%lld", json_integer_value(v));
		return hunch_err_set(err, -EPROTONOSUPPORT,
				  "%s is a version %s journal, newer than this hunch reads (version %d): replay it with a newer hunch",
				  r->name, num, JNL_VERSION);
	}
	return 0;
}

static int read_header(struct jnl_reader *r, struct hunch_err *err)
{
	enum line_st st = get_line(r);
	struct hunch_err verr = { 0 };
	char why[512];
	bool not_json;
	json_t *j;

	if (st == LINE_ERROR)
		return hunch_err_set(err, -r->read_errno, "cannot read %s: %s",
				  r->name, strerror(r->read_errno));
	if (st == LINE_EOF)
		return header_bad(r, err, "is empty: not a hunch journal%s (a journal starts with a header line; hunch may have been killed before writing it)", "");
	if (st == LINE_HUGE || (st == LINE_PARTIAL && r->line_huge))
		return header_bad(r, err, "is not a hunch journal: line 1 is longer than %s", "16 MiB");
	if (st == LINE_PARTIAL && looks_like_header(r)) {
		snprintf(why, sizeof(why), "%llu", (unsigned long long)r->next_off);
		return header_bad(r, err, "has an incomplete header: the journal was cut after %s bytes, before the header was written in full; there is nothing to replay", why);
	}
	j = parse_line(r, why, sizeof(why), &not_json);
	if (j == NULL)
		/* jansson's detail helps inside a journal, not for a file
		 * that never was one. */
		return header_bad(r, err, "is not a hunch journal: line 1 is %s (a journal starts with {\"t\":\"header\",...})",
				  not_json ? "not JSON" : why);
	if (strcmp(json_string_value(json_object_get(j, "t")), "header") != 0) {
		json_decref(j);
		return header_bad(r, err, "is not a hunch journal: line 1 is JSON but not a journal header (its \"t\" is not \"header\")%s", "");
	}
	if (check_version(r, j, err) != 0 ||
	    (jnl_format_validate(JNL_REC_HEADER, j, &verr) != 0 &&
	     header_bad(r, err, "has an invalid header (line 1): %.800s", verr.msg))) {
		json_decref(j);
		return err ? err->code : -EINVAL;
	}
	if (st == LINE_PARTIAL) {
		/* Not cut inside the header but right after it. */
		json_decref(j);
		snprintf(why, sizeof(why), "%llu", (unsigned long long)r->next_off);
		return header_bad(r, err, "has an incomplete header: the journal was cut after %s bytes, before the header was written in full; there is nothing to replay", why);
	}
	r->header = j;
	r->body_off = r->next_off;
	r->st.records = 1;
	r->st.last_line = 1;
	return 0;
}

static int open_common(struct jnl_reader **out, struct jnl_reader *r,
		       const char *name, struct hunch_err *err)
{
	int rc;

	*out = NULL;
	r->name = strdup(name ? name : "(journal)");
	if (r->name == NULL) {
		jnl_read_close(r);
		return hunch_err_set(err, -ENOMEM, "out of memory reading %s", name);
	}
	rc = read_header(r, err);
	if (rc != 0) {
		jnl_read_close(r);
		return rc;
	}
	*out = r;
	return 0;
}

/* A file that starts with gzip's magic (journals are often kept
 * compressed: `gzip run.jsonl`).  Only a file that can be read at an
 * offset is looked at: a pipe is taken as it comes. */
static bool is_gzip(int fd)
{
	unsigned char m[2];

	return pread(fd, m, 2, 0) == 2 && m[0] == 0x1f && m[1] == 0x8b;
}

/* A reader over an fd (closed by jnl_read_close); `name` is used in
 * messages. */
static int jnl_read_open_fd(struct jnl_reader **out, int fd, const char *name,
			    struct hunch_err *err)
{
	struct jnl_reader *r = calloc(1, sizeof(*r));

	if (r == NULL || (r->chunk = malloc(IN_CHUNK)) == NULL) {
		free(r);
		close(fd);
		*out = NULL;
		return hunch_err_set(err, -ENOMEM, "out of memory reading %s", name);
	}
	r->fd = fd;
	if (is_gzip(fd) && (r->gz = gzdopen(dup(fd), "rb")) == NULL) {
		jnl_read_close(r);
		*out = NULL;
		return hunch_err_set(err, -ENOMEM,
				     "cannot decompress %s: out of "
				     "memory",
				     name);
	}
	if (r->gz != NULL)
		gzbuffer(r->gz, IN_CHUNK);
	return open_common(out, r, name, err);
}

int jnl_read_open_mem(struct jnl_reader **out, const void *buf,
			size_t len, const char *name, struct hunch_err *err)
{
	struct jnl_reader *r = calloc(1, sizeof(*r));

	*out = NULL;
	if (r == NULL)
		return hunch_err_set(err, -ENOMEM, "out of memory reading %s", name);
	r->fd = -1;
	r->mem = buf;
	r->mem_len = len;
	return open_common(out, r, name, err);
}

int jnl_read_open(struct jnl_reader **out, const char *path,
		    struct hunch_err *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	*out = NULL;
	if (fd < 0)
		return hunch_err_set(err, -errno, "cannot open journal %s: %s",
				  path, strerror(errno));
	return jnl_read_open_fd(out, fd, path, err);
}

/* Back to the line after the header, as just after opening: the replay
 * source plays a journal again from its start without reading (and
 * validating) the header a second time. */
int jnl_read_rewind(struct jnl_reader *r)
{
	return jnl_read_seek(r, r->body_off);
}

int jnl_read_seek(struct jnl_reader *r, uint64_t off)
{
	if (off < r->body_off)
		return -EINVAL;
	if (r->gz != NULL) {
		/* offsets are of the uncompressed text: zlib seeks back by
		 * decompressing again from the start */
		if (gzseek(r->gz, (z_off_t)off, SEEK_SET) < 0)
			return -EIO;
	} else if (r->fd >= 0) {
		if (lseek(r->fd, (off_t)off, SEEK_SET) < 0)
			return -errno;
	} else {
		if (off > r->mem_len)
			return -EINVAL;
		r->mem_pos = off;
	}
	r->in_len = r->in_pos = 0;
	r->next_off = off;
	r->lineno = 1;   /* after a seek elsewhere: unknown, messages say 1 */
	r->line_len = 0;
	r->end_seen = false;
	r->end = JNL_END_NOT_YET;
	r->end_msg[0] = '\0';
	json_decref(r->cur);
	r->cur = NULL;
	memset(&r->st, 0, sizeof(r->st));
	r->st.records = 1;
	r->st.last_line = 1;
	return 0;
}

const json_t *jnl_read_header(const struct jnl_reader *r)
{
	return r->header;
}

enum jnl_end_kind jnl_read_end(const struct jnl_reader *r,
				 const char **msg)
{
	if (msg)
		*msg = r->end == JNL_END_COMPLETE || r->end == JNL_END_NOT_YET
			? NULL : r->end_msg;
	return r->end;
}

void jnl_read_get_stats(const struct jnl_reader *r, struct jnl_read_stats *st)
{
	*st = r->st;
}

void jnl_read_close(struct jnl_reader *r)
{
	if (r == NULL)
		return;
	if (r->gz != NULL)
		gzclose(r->gz);
	if (r->fd >= 0)
		close(r->fd);
	json_decref(r->header);
	json_decref(r->cur);
	free(r->chunk);
	free(r->line);
	free(r->name);
	free(r);
}

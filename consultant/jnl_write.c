/* jnl_write.c - the journal writer (see jnl_write.h). */
#include "jnl_write.h"
#include "clock_mono.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>  /* isfinite: a macro, no libm */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "hunch_config.h"

struct jnl_writer {
	int fd;
	char *name;
	char *buf;
	size_t len, cap;
	size_t flush_bytes;
	uint64_t pending;       /* records in buf */
	uint64_t lines_done;    /* complete lines handed to the kernel */
	bool sync;
	bool failed;
	struct hunch_err err;
	struct jnl_stats st;
	uint64_t origin_ns;
	double last_ts;
};

/* Seconds since the header's start for a CLOCK_MONOTONIC time. */
static double jnl_write_ts(const struct jnl_writer *w, uint64_t mono_ns)
{
	return mono_ns <= w->origin_ns ? 0.0
				       : (double)(mono_ns - w->origin_ns) / 1e9;
}

double jnl_write_ts_now(const struct jnl_writer *w)
{
	return jnl_write_ts(w, clock_mono_ns());
}

static int buf_append(const char *s, size_t n, void *data)
{
	struct jnl_writer *w = data;

	if (w->len + n + 1 > w->cap) {
		size_t cap = w->cap ? w->cap : 65536;
		char *b;

		while (cap < w->len + n + 1)
			cap *= 2;
		b = realloc(w->buf, cap);
		if (b == NULL)
			return -1;
		w->buf = b;
		w->cap = cap;
	}
	memcpy(w->buf + w->len, s, n);
	w->len += n;
	return 0;
}

/* The digits a real needs to read back as the same double: 15 covers a
 * microsecond ts and most measured values and keeps lines short; 17
 * always round-trips.  jansson's precision is per dump, so each of a
 * record's fields is dumped with the largest any of its reals needs:
 * a tick's measured samples take 17 digits without making its ts and
 * dt read 100.20000000000000284. */
static int real_digits(double x)
{
	char s[40];

	for (int p = 15; p < 17; p++) {
		snprintf(s, sizeof(s), "%.*g", p, x);
		if (strtod(s, NULL) == x)
			return p;
	}
	return 17;
}

/* Stops at the first real that needs 17 digits: a tick's samples are
 * measured values that usually do, and scanning on would cost two
 * snprintf and strtod per value for nothing. */
static int record_digits(const json_t *j)
{
	const char *key;
	json_t *v;
	size_t i;
	int p = 15, q;

	if (json_is_real(j))
		return real_digits(json_real_value(j));
	if (json_is_object(j)) {
		json_object_foreach((json_t *)j, key, v)
			if ((q = record_digits(v)) > p && (p = q) == 17)
				break;
	} else if (json_is_array(j)) {
		json_array_foreach(j, i, v)
			if ((q = record_digits(v)) > p && (p = q) == 17)
				break;
	}
	return p;
}

static void set_failed(struct jnl_writer *w, int code, const char *what)
{
	const char *advice = code == -ENOSPC || code == -EDQUOT
		? "free space there, or journal elsewhere with --journal FILE"
		: code == -EFBIG
		? "the file size limit (ulimit -f) was reached; raise it or journal elsewhere with --journal FILE"
		: "check the disk, or journal elsewhere with --journal FILE";

	w->failed = true;
	hunch_err_set(&w->err, code,
		   "journal %s: %s failed at byte %llu (line %llu, ts %.3f s): %s; "
		   "the search goes on, records from here on are not journaled: %s",
		   w->name, what, (unsigned long long)w->st.bytes,
		   (unsigned long long)w->lines_done + 1, w->last_ts,
		   strerror(-code), advice);
}

/* Records are whole lines: those whose newline reached the kernel are
 * written, whatever happens to the rest of the buffer. */
static void count_written_lines(struct jnl_writer *w, const char *p, size_t n)
{
	for (const char *e = p + n; (p = memchr(p, '\n', (size_t)(e - p))); p++) {
		w->lines_done++;
		w->st.written++;
		w->pending--;
	}
}

/* write(2) the whole buffer; on error the records still in it (and any
 * part of a line already written) are lost: the reader reports a line
 * cut short as a truncation. */
static int flush_buf(struct jnl_writer *w)
{
	size_t off = 0;

	while (off < w->len) {
		ssize_t n = write(w->fd, w->buf + off, w->len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int code = n < 0 ? -errno : -EIO;

			w->st.dropped += w->pending;
			w->pending = 0;
			w->len = 0;
			set_failed(w, code, "write");
			return code;
		}
		count_written_lines(w, w->buf + off, (size_t)n);
		w->st.bytes += (uint64_t)n;
		off += (size_t)n;
	}
	w->len = 0;
	return 0;
}

static int refuse(struct jnl_writer *w)
{
	w->st.dropped++;
	return w->err.code ? w->err.code : -EIO;
}

/* Append `rec` (complete, with "t") as one line. */
static int dump_value(struct jnl_writer *w, const json_t *v)
{
	size_t flags = JSON_COMPACT | JSON_ENCODE_ANY |
		       JSON_REAL_PRECISION(record_digits(v));

	return json_dump_callback(v, buf_append, w, flags);
}

/* {"key":value,...} with each value at its own precision; jansson
 * escapes the keys (generic records may bring any). */
static int dump_record(struct jnl_writer *w, const json_t *rec)
{
	const char *key;
	json_t *v;
	bool first = true;
	int rc = buf_append("{", 1, w);

	json_object_foreach((json_t *)rec, key, v) {
		json_t *k = json_string(key);

		if (rc == 0 && !first)
			rc = buf_append(",", 1, w);
		if (rc == 0)
			rc = k ? dump_value(w, k) : -1;
		json_decref(k);
		if (rc == 0)
			rc = buf_append(":", 1, w);
		if (rc == 0)
			rc = dump_value(w, v);
		first = false;
	}
	return rc == 0 ? buf_append("}\n", 2, w) : rc;
}

static int append_record(struct jnl_writer *w, const json_t *rec)
{
	size_t start = w->len;

	if (w->failed)
		return refuse(w);
	w->st.records++;
	if (dump_record(w, rec) != 0) {
		w->len = start;
		w->st.dropped++;
		return -ENOMEM;
	}
	if (w->len - start > JNL_MAX_LINE) {
		w->len = start;
		w->st.oversize++;
		w->st.dropped++;
		return -EMSGSIZE;
	}
	w->pending++;
	if (w->len >= w->flush_bytes)
		return flush_buf(w);
	return 0;
}

static double clamp_ts(struct jnl_writer *w, double ts)
{
	/* Microseconds: enough to order events at any tick rate, and
	 * 15 digits print it exactly for 30 years of search. */
	if (!(ts >= w->last_ts))    /* earlier, or NaN */
		ts = w->last_ts;
	if (ts < 1e12)              /* rounding without libm */
		ts = (double)(int64_t)(ts * 1e6 + 0.5) / 1e6;
	w->last_ts = ts;
	return ts;
}

/* `fields` is stolen. */
static int write_new(struct jnl_writer *w, const char *kind, double ts,
		     json_t *fields)
{
	json_t *rec;
	int rc;

	if (w->failed) {
		json_decref(fields);
		return refuse(w);
	}
	rec = json_object();
	json_object_set_new(rec, "t", json_string(kind));
	json_object_set_new(rec, "ts", json_real(clamp_ts(w, ts)));
	/* "t" and "ts" are the record's own: fields cannot override them. */
	json_object_del(fields, "t");
	json_object_del(fields, "ts");
	json_object_update(rec, fields);
	json_decref(fields);
	rc = append_record(w, rec);
	json_decref(rec);
	return rc;
}

int jnl_write_json(struct jnl_writer *w, const char *kind, double ts,
		   const json_t *fields)
{
	json_t *copy = json_is_object(fields) ? json_copy((json_t *)fields)
					      : json_object();

	return write_new(w, kind, ts, copy);
}

int jnl_write_discovery(struct jnl_writer *w, double ts,
			const struct pc_discovery *d)
{
	return write_new(w, "resource", ts, jnl_record_discovery_json(d));
}

int jnl_write_output(struct jnl_writer *w, double ts, enum jnl_stream s,
		     const void *bytes, size_t len, bool eol)
{
	const unsigned char *p = bytes;
	int rc = 0;

	do {
		size_t n = len > JNL_OUTPUT_CHUNK ? JNL_OUTPUT_CHUNK : len;
		bool last = n == len;
		int r = write_new(
			w, "output", ts,
			jnl_record_output_json(s, p, n, last ? eol : false));

		if (r < 0 && rc == 0)
			rc = r;
		p += n;
		len -= n;
	} while (len > 0);
	return rc;
}

int jnl_write_target(struct jnl_writer *w, double ts,
		     const struct jnl_target *t)
{
	return write_new(w, "target", ts, jnl_record_target_json(t));
}

int jnl_write_sample_arrays(struct jnl_writer *w, double ts, double t0,
			    double t1, size_t n, const uint64_t *ids,
			    const double *vals)
{
	json_t *o = json_object(), *i = json_array(), *v = json_array();

	for (size_t k = 0; k < n; k++) {
		json_array_append_new(i, json_integer((json_int_t)ids[k]));
		/* JSON has no NaN or infinity: null says "not finite". */
		json_array_append_new(v, isfinite(vals[k]) ? json_real(vals[k])
							   : json_null());
	}
	json_object_set_new(o, "t0", json_real(t0));
	json_object_set_new(o, "t1", json_real(t1));
	json_object_set_new(o, "i", i);
	json_object_set_new(o, "v", v);
	return write_new(w, "sample", ts, o);
}

int jnl_write_samples(struct jnl_writer *w, double ts,
		      const struct pc_src_sample *s, size_t n)
{
	uint64_t ids[256];
	double vals[256];
	int rc = 0;

	/* Runs of one interval share a record (usually the whole tick). */
	for (size_t k = 0; k < n;) {
		size_t m = 0;
		int r;

		while (k + m < n && m < 256 && s[k + m].t0 == s[k].t0 &&
		       s[k + m].t1 == s[k].t1) {
			ids[m] = s[k + m].handle;
			vals[m] = s[k + m].value;
			m++;
		}
		r = jnl_write_sample_arrays(w, ts, s[k].t0, s[k].t1, m, ids, vals);
		if (r < 0 && rc == 0)
			rc = r;
		k += m;
	}
	return rc;
}

int jnl_write_tick(struct jnl_writer *w, double ts, double now)
{
	json_t *o = json_object();

	json_object_set_new(o, "now", json_real(now));
	return write_new(w, "tick", ts, o);
}

int jnl_write_enable(struct jnl_writer *w, double ts, const char *metric,
		     const struct pc_src_focus *f, uint64_t req,
		     double predicted_cost, int node, int phase)
{
	json_t *o = json_object();

	json_object_set_new(o, "req", json_integer((json_int_t)req));
	json_object_set_new(o, "metric", json_string(metric ? metric : ""));
	json_object_set_new(o, "focus", jnl_record_focus_json(f));
	if (predicted_cost >= 0)
		json_object_set_new(o, "predicted_cost", json_real(predicted_cost));
	if (node >= 0)
		json_object_set_new(o, "node", json_integer(node));
	if (phase >= 0)
		json_object_set_new(o, "phase", json_integer(phase));
	return write_new(w, "enable", ts, o);
}

int jnl_write_reply(struct jnl_writer *w, double ts,
		    const struct pc_src_reply *r)
{
	return write_new(w, "reply", ts, jnl_record_reply_json(r));
}

int jnl_write_disable(struct jnl_writer *w, double ts, pc_src_handle h,
		      const char *reason)
{
	json_t *o = json_object();

	json_object_set_new(o, "inst", json_integer((json_int_t)h));
	if (reason != NULL)
		json_object_set_new(o, "reason", json_string(reason));
	return write_new(w, "disable", ts, o);
}

int jnl_write_cost(struct jnl_writer *w, double ts, double observed,
		   double predicted, double limit, long holds, double held_s)
{
	json_t *o = json_object();

	json_object_set_new(o, "observed", json_real(observed));
	if (holds > 0) {
		json_object_set_new(o, "holds", json_integer(holds));
		json_object_set_new(o, "held", json_real(held_s));
	}
	if (predicted >= 0)
		json_object_set_new(o, "predicted", json_real(predicted));
	if (limit >= 0)
		json_object_set_new(o, "limit", json_real(limit));
	return write_new(w, "cost", ts, o);
}

int jnl_write_predict(struct jnl_writer *w, double ts, const char *metric,
		      const struct pc_src_focus *f, double cost)
{
	json_t *o = json_object();

	json_object_set_new(o, "metric", json_string(metric ? metric : ""));
	json_object_set_new(o, "focus", jnl_record_focus_json(f));
	json_object_set_new(o, "cost", json_real(cost));
	return write_new(w, "predict", ts, o);
}

int jnl_write_callees(struct jnl_writer *w, double ts, const char *path,
		      const char *const *callees, size_t n)
{
	json_t *o = json_object(), *a = json_array();

	if (path != NULL)
		json_object_set_new(o, "path", json_string(path));
	for (size_t k = 0; k < n; k++)
		json_array_append_new(a, json_string(callees[k]));
	json_object_set_new(o, "callees", a);
	return write_new(w, "callees", ts, o);
}

int jnl_write_hint(struct jnl_writer *w, double ts, const char *path,
		   double share)
{
	json_t *o = json_object();

	json_object_set_new(o, "path", json_string(path ? path : ""));
	json_object_set_new(o, "share", json_real(share));
	return write_new(w, "hint", ts, o);
}

int jnl_write_period(struct jnl_writer *w, double ts, double seconds)
{
	json_t *o = json_object();

	json_object_set_new(o, "seconds", json_real(seconds));
	return write_new(w, "period", ts, o);
}

int jnl_write_end(struct jnl_writer *w, double ts, const char *reason,
		  const char *message)
{
	json_t *o = json_object();

	json_object_set_new(o, "reason", json_string(reason ? reason : "unknown"));
	if (message != NULL)
		json_object_set_new(o, "message", json_string(message));
	/* Counted before this record, so a reader can check completeness. */
	json_object_set_new(o, "records", json_integer((json_int_t)w->st.records));
	json_object_set_new(o, "dropped", json_integer((json_int_t)w->st.dropped));
	return write_new(w, "end", ts, o);
}

int jnl_write_flush(struct jnl_writer *w)
{
	int rc;

	if (w->failed)
		return w->err.code;
	w->st.ticks++;
	rc = flush_buf(w);
	if (rc == 0 && w->sync && fdatasync(w->fd) != 0 && errno != EINVAL) {
		/* EINVAL: a pipe or /dev/null cannot sync, and need not. */
		rc = -errno;
		set_failed(w, rc, "fdatasync");
	}
	return rc;
}

static void iso8601(const struct timespec *t, char *buf, size_t len)
{
	struct tm tm;
	char day[32];

	gmtime_r(&t->tv_sec, &tm);
	strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%06ldZ", day, t->tv_nsec / 1000);
}

static json_t *header_target(const struct jnl_header *h)
{
	json_t *t = json_object();

	if (h->argv != NULL) {
		json_t *a = json_array();

		for (const char *const *p = h->argv; *p; p++)
			json_array_append_new(a, json_string(*p));
		json_object_set_new(t, "argv", a);
		/* A launched program's pid too: the replayed report names it
		 * as the live one did. */
		if (h->pid > 0)
			json_object_set_new(t, "pid", json_integer(h->pid));
	} else {
		json_object_set_new(t, "pid", json_integer(h->pid));
	}
	return t;
}

static json_t *header_json(const struct jnl_header *h)
{
	struct utsname u;
	json_t *o = json_object(), *k = json_object(), *c = json_object();
	char when[64];

	if (uname(&u) != 0)
		memset(&u, 0, sizeof(u));
	json_object_set_new(o, "t", json_string("header"));
	json_object_set_new(o, "journal_version", json_integer(JNL_VERSION));
	json_object_set_new(o, "hunch_version", json_string(HUNCH_VERSION));
	json_object_set_new(o, "host", json_string(u.nodename));
	json_object_set_new(k, "sysname", json_string(u.sysname));
	json_object_set_new(k, "release", json_string(u.release));
	json_object_set_new(k, "version", json_string(u.version));
	json_object_set_new(k, "machine", json_string(u.machine));
	json_object_set_new(o, "kernel", k);
	json_object_set_new(o, "program",
			    json_string(h->program ? h->program : ""));
	json_object_set_new(o, "target", header_target(h));
	if (h->mode != NULL)
		json_object_set_new(o, "mode", json_string(h->mode));
	iso8601(&h->start_wall, when, sizeof(when));
	json_object_set_new(o, "start_wall", json_string(when));
	json_object_set_new(o, "start_mono_ns",
			    json_integer((json_int_t)h->start_mono_ns));
	json_object_set_new(c, "tsc_hz", h->tsc_hz > 0 ? json_real(h->tsc_hz)
						       : json_null());
	json_object_set_new(c, "tsc_invariant", json_boolean(h->tsc_invariant));
	json_object_set_new(o, "clock", c);
	json_object_set_new(o, "hypotheses", h->hypotheses
			    ? json_deep_copy(h->hypotheses) : json_null());
	if (h->hypotheses_files != NULL)
		json_object_set_new(o, "hypotheses_files",
				    json_deep_copy(h->hypotheses_files));
	if (h->config != NULL)
		json_object_set_new(o, "config", json_deep_copy(h->config));
	json_object_set_new(o, "tunables", h->tunables
			    ? json_deep_copy(h->tunables) : json_null());
	return o;
}

int jnl_write_fdopen(struct jnl_writer **out, int fd, const char *name,
		      const struct jnl_header *h,
		      const struct jnl_writer_opts *opts,
		      struct hunch_err *err)
{
	struct jnl_writer *w = calloc(1, sizeof(*w));
	json_t *hdr;

	*out = NULL;
	if (w == NULL || (w->name = strdup(name ? name : "(journal)")) == NULL) {
		free(w);
		close(fd);
		return hunch_err_set(err, -ENOMEM, "out of memory opening journal %s",
				  name);
	}
	w->fd = fd;
	w->origin_ns = h->start_mono_ns;
	w->sync = opts && opts->sync;
	w->flush_bytes = opts && opts->flush_bytes ? opts->flush_bytes
						   : (size_t)1 << 20;
	hdr = header_json(h);
	append_record(w, hdr);
	json_decref(hdr);
	jnl_write_flush(w);
	*out = w;
	return 0;
}

int jnl_write_open(struct jnl_writer **out, const char *path,
		    const struct jnl_header *h,
		    const struct jnl_writer_opts *opts, struct hunch_err *err)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	*out = NULL;
	if (fd < 0)
		return hunch_err_set(err, -errno,
				  "cannot create journal %s: %s; choose another file with --journal FILE, or --no-journal",
				  path, strerror(errno));
	return jnl_write_fdopen(out, fd, path, h, opts, err);
}

const struct hunch_err *jnl_write_error(const struct jnl_writer *w)
{
	return w->failed ? &w->err : NULL;
}

void jnl_write_get_stats(const struct jnl_writer *w, struct jnl_stats *st)
{
	*st = w->st;
}

const char *jnl_write_path(const struct jnl_writer *w)
{
	return w->name;
}

int jnl_write_close(struct jnl_writer *w, struct hunch_err *err)
{
	int rc;

	if (w == NULL)
		return 0;
	jnl_write_flush(w);
	if (close(w->fd) != 0 && !w->failed)
		set_failed(w, -errno, "close");
	rc = w->failed ? w->err.code : 0;
	if (rc && err)
		*err = w->err;
	free(w->buf);
	free(w->name);
	free(w);
	return rc;
}

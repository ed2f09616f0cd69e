/* jnl_record.c - typed journal records to and from JSON (jnl_record.h). */
#include "jnl_record.h"

#include <errno.h>
#include <math.h>  /* NAN: a macro, no libm */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static const char *const disc_kind_names[] = {
	[PC_DISC_FUNCTION] = "function", [PC_DISC_PROCESS] = "process",
	[PC_DISC_THREAD] = "thread", [PC_DISC_SYNCOBJ] = "syncobj",
	[PC_DISC_FILE] = "file",
};
#define N_DISC_KINDS (sizeof(disc_kind_names) / sizeof(disc_kind_names[0]))

static void set_str(json_t *o, const char *key, const char *s)
{
	if (s != NULL)
		json_object_set_new(o, key, json_string(s));
}

static void set_int(json_t *o, const char *key, long long v)
{
	json_object_set_new(o, key, json_integer(v));
}

static const char *get_str(const json_t *rec, const char *key)
{
	return json_string_value(json_object_get(rec, key));
}

static long long get_int(const json_t *rec, const char *key)
{
	return json_integer_value(json_object_get(rec, key));
}

/* The fields of a discovery record, in the order they are written, and
 * the kinds that use each (pc_source.h): only those are written, so a
 * function discovery costs no "pid":0,"tid":0 on 10,000 lines; all are
 * read back (an absent one reads as NULL or 0). */
enum disc_type { DISC_STR, DISC_ADDR, DISC_INT };
#define KIND(k) (1u << PC_DISC_##k)
static const struct disc_field {
	const char *key;
	enum disc_type type;
	size_t off;
	unsigned kinds;
} disc_fields[] = {
	{ "module", DISC_STR, offsetof(struct pc_discovery, module),
	  KIND(FUNCTION) },
	{ "srcfile", DISC_STR, offsetof(struct pc_discovery, srcfile),
	  KIND(FUNCTION) },
	{ "pid", DISC_INT, offsetof(struct pc_discovery, pid),
	  KIND(PROCESS) | KIND(THREAD) },
	{ "tid", DISC_INT, offsetof(struct pc_discovery, tid), KIND(THREAD) },
	{ "function", DISC_STR, offsetof(struct pc_discovery, function),
	  KIND(FUNCTION) | KIND(THREAD) },
	{ "sync_class", DISC_STR, offsetof(struct pc_discovery, sync_class),
	  KIND(SYNCOBJ) },
	{ "name", DISC_STR, offsetof(struct pc_discovery, name),
	  KIND(PROCESS) | KIND(SYNCOBJ) | KIND(FILE) },
	/* Addresses of user space fit in 63 bits; the cast keeps the bits
	 * of anything larger, and decode casts back. */
	{ "addr", DISC_ADDR, offsetof(struct pc_discovery, addr),
	  KIND(FUNCTION) | KIND(SYNCOBJ) },
};
#undef KIND
#define N_DISC_FIELDS (sizeof(disc_fields) / sizeof(disc_fields[0]))

static void set_field(json_t *o, const struct disc_field *f,
		      const struct pc_discovery *d)
{
	const char *at = (const char *)d + f->off;
	const char *s;
	uint64_t a;
	int i;

	switch (f->type) {
	case DISC_STR:
		memcpy(&s, at, sizeof(s));
		set_str(o, f->key, s);
		break;
	case DISC_ADDR:
		memcpy(&a, at, sizeof(a));
		set_int(o, f->key, (long long)a);
		break;
	case DISC_INT:
		memcpy(&i, at, sizeof(i));
		set_int(o, f->key, i);
		break;
	}
}

static void get_field(const json_t *rec, const struct disc_field *f,
		      struct pc_discovery *d)
{
	char *at = (char *)d + f->off;
	const char *s;
	uint64_t a;
	int i;

	switch (f->type) {
	case DISC_STR:
		s = get_str(rec, f->key);
		memcpy(at, &s, sizeof(s));
		break;
	case DISC_ADDR:
		a = (uint64_t)get_int(rec, f->key);
		memcpy(at, &a, sizeof(a));
		break;
	case DISC_INT:
		i = (int)get_int(rec, f->key);
		memcpy(at, &i, sizeof(i));
		break;
	}
}

/* A process's end, as far as hunch saw it. */
static void set_end(json_t *o, const struct pc_discovery *d)
{
	json_object_set_new(o, "end", json_string(
		d->end == 'x' ? "exited" : d->end == 's' ? "killed" :
		"unseen"));
	if (d->end != '?')
		set_int(o, "code", d->end_code);
	json_object_set_new(o, "end_t", json_real(d->end_t));
}

json_t *jnl_record_discovery_json(const struct pc_discovery *d)
{
	json_t *o = json_object();

	if ((unsigned)d->kind >= N_DISC_KINDS)
		return o;
	json_object_set_new(o, "op", json_string(d->retired ? "retire" : "add"));
	json_object_set_new(o, "kind", json_string(disc_kind_names[d->kind]));
	for (size_t i = 0; i < N_DISC_FIELDS; i++)
		if (disc_fields[i].kinds & 1u << d->kind)
			set_field(o, &disc_fields[i], d);
	if (d->kind == PC_DISC_PROCESS && d->retired && d->end != 0)
		set_end(o, d);
	return o;
}

int jnl_record_discovery_decode(const json_t *rec, struct pc_discovery *d,
			 struct hunch_err *err)
{
	const char *kind = get_str(rec, "kind");
	const char *op = get_str(rec, "op");
	const char *end = get_str(rec, "end");
	unsigned k;

	memset(d, 0, sizeof(*d));
	for (k = 0; k < N_DISC_KINDS; k++)
		if (kind && strcmp(kind, disc_kind_names[k]) == 0)
			break;
	if (k == N_DISC_KINDS || op == NULL)
		return hunch_err_set(err, -EINVAL,
				  "resource record without a known \"kind\" and \"op\"");
	d->kind = (enum pc_disc_kind)k;
	d->retired = strcmp(op, "retire") == 0;
	for (size_t i = 0; i < N_DISC_FIELDS; i++)
		get_field(rec, &disc_fields[i], d);
	if (end != NULL) {
		d->end = strcmp(end, "exited") == 0 ? 'x' :
			 strcmp(end, "killed") == 0 ? 's' : '?';
		d->end_code = (int)get_int(rec, "code");
		d->end_t = json_number_value(json_object_get(rec, "end_t"));
	}
	return 0;
}

static const char b64_alphabet[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* base64 (RFC 4648, padded).  Decode returns the length or -EINVAL. */
static char *jnl_record_b64_encode(const void *bytes, size_t len)
{
	const unsigned char *p = bytes;
	char *out = malloc((len + 2) / 3 * 4 + 1), *o = out;
	size_t i;

	if (out == NULL)
		return NULL;
	for (i = 0; i + 2 < len; i += 3, o += 4) {
		unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8 | p[i + 2];
		o[0] = b64_alphabet[v >> 18];
		o[1] = b64_alphabet[(v >> 12) & 63];
		o[2] = b64_alphabet[(v >> 6) & 63];
		o[3] = b64_alphabet[v & 63];
	}
	if (i < len) {
		unsigned v = (unsigned)p[i] << 16;

		if (i + 1 < len)
			v |= (unsigned)p[i + 1] << 8;
		o[0] = b64_alphabet[v >> 18];
		o[1] = b64_alphabet[(v >> 12) & 63];
		o[2] = i + 1 < len ? b64_alphabet[(v >> 6) & 63] : '=';
		o[3] = '=';
		o += 4;
	}
	*o = '\0';
	return out;
}

static int b64_value(char c)
{
	const char *p = c ? strchr(b64_alphabet, c) : NULL;

	return p ? (int)(p - b64_alphabet) : -1;
}

static long jnl_record_b64_decode(const char *s, size_t slen,
				  unsigned char *out)
{
	size_t i, n = 0;

	if (slen % 4 != 0)
		return -EINVAL;
	for (i = 0; i < slen; i += 4) {
		int v[4], pad = 0;

		for (int j = 0; j < 4; j++) {
			bool last = i + 4 == slen;

			if (last && s[i + j] == '=' && j >= 2 &&
			    (j == 3 || s[i + 3] == '=')) {
				v[j] = 0;
				pad++;
				continue;
			}
			v[j] = b64_value(s[i + j]);
			if (v[j] < 0)
				return -EINVAL;
		}
		unsigned x = (unsigned)v[0] << 18 | (unsigned)v[1] << 12 |
			     (unsigned)v[2] << 6 | (unsigned)v[3];
		out[n++] = (unsigned char)(x >> 16);
		if (pad < 2)
			out[n++] = (unsigned char)(x >> 8);
		if (pad < 1)
			out[n++] = (unsigned char)x;
	}
	return (long)n;
}

json_t *jnl_record_output_json(enum jnl_stream s, const void *bytes, size_t len,
			bool eol)
{
	json_t *o = json_object();
	/* json_stringn refuses invalid UTF-8; NUL would make "text" useless
	 * as a C string.  Anything else is kept readable (and greppable). */
	json_t *text = memchr(bytes, '\0', len) ? NULL
						 : json_stringn(bytes, len);

	json_object_set_new(o, "stream",
			    json_string(s == JNL_STDERR ? "stderr" : "stdout"));
	if (text != NULL) {
		json_object_set_new(o, "text", text);
	} else {
		char *b = jnl_record_b64_encode(bytes, len);

		json_object_set_new(o, "b64", json_string(b ? b : ""));
		free(b);
	}
	if (!eol)
		json_object_set_new(o, "eol", json_false());
	return o;
}

int jnl_record_output_decode(const json_t *rec, struct jnl_output *out,
		      struct hunch_err *err)
{
	const json_t *text = json_object_get(rec, "text");
	const json_t *b64 = json_object_get(rec, "b64");
	const json_t *eol = json_object_get(rec, "eol");
	const char *stream = get_str(rec, "stream");

	memset(out, 0, sizeof(*out));
	out->stream = stream && strcmp(stream, "stderr") == 0 ? JNL_STDERR
							      : JNL_STDOUT;
	out->eol = eol == NULL || json_is_true(eol);
	if (json_is_string(text)) {
		out->len = json_string_length(text);
		out->bytes = malloc(out->len + 1);
		if (out->bytes == NULL)
			return hunch_err_set(err, -ENOMEM, "out of memory");
		memcpy(out->bytes, json_string_value(text), out->len);
		out->bytes[out->len] = '\0';
		return 0;
	}
	if (!json_is_string(b64))
		return hunch_err_set(err, -EINVAL,
				  "output record without \"text\" or \"b64\"");
	size_t slen = json_string_length(b64);
	out->bytes = malloc(slen / 4 * 3 + 1);
	if (out->bytes == NULL)
		return hunch_err_set(err, -ENOMEM, "out of memory");
	long n =
		jnl_record_b64_decode(json_string_value(b64), slen, out->bytes);
	if (n < 0) {
		free(out->bytes);
		out->bytes = NULL;
		return hunch_err_set(err, -EINVAL,
				  "field \"b64\" is not valid base64");
	}
	out->len = (size_t)n;
	out->bytes[n] = '\0';
	return 0;
}

static const char *const tev_names[JNL_TEV_COUNT] = {
	[JNL_TEV_THREAD_START] = "thread_start",
	[JNL_TEV_THREAD_EXIT] = "thread_exit",
	[JNL_TEV_SIGNAL] = "signal", [JNL_TEV_EXIT] = "exit",
	[JNL_TEV_KILLED] = "killed", [JNL_TEV_EXEC] = "exec",
	[JNL_TEV_DETACHED] = "detached",
};

static const char *jnl_record_target_ev_name(enum jnl_target_ev ev)
{
	return (unsigned)ev < JNL_TEV_COUNT ? tev_names[ev] : "unknown";
}

/* The journal's view of a source's target event (code: exit status or
 * signal number, as pc_source.h says). */
static struct jnl_target jnl_record_target_from_pc(enum pc_target_event ev,
						   int pid, int code)
{
	struct jnl_target t = { .pid = pid };

	switch (ev) {
	case PC_TARGET_EXITED: t.event = JNL_TEV_EXIT; t.code = code; break;
	case PC_TARGET_KILLED: t.event = JNL_TEV_KILLED; t.signal = code; break;
	case PC_TARGET_EXEC: t.event = JNL_TEV_EXEC; t.code = code; break;
	case PC_TARGET_DETACHED: t.event = JNL_TEV_DETACHED; break;
	}
	return t;
}

struct jnl_target jnl_record_target_from_src(const struct pc_src_event *e,
					     int pid)
{
	struct jnl_target t = jnl_record_target_from_pc(e->ev, pid, e->code);

	t.has_t = true;
	t.t = e->t;
	return t;
}

int jnl_record_target_to_src(const struct jnl_target *t, struct pc_src_event *e)
{
	memset(e, 0, sizeof(*e));
	e->t = t->has_t ? t->t : 0;
	switch (t->event) {
	case JNL_TEV_EXIT: e->ev = PC_TARGET_EXITED; e->code = t->code; return 0;
	case JNL_TEV_KILLED: e->ev = PC_TARGET_KILLED; e->code = t->signal; return 0;
	case JNL_TEV_EXEC: e->ev = PC_TARGET_EXEC; e->code = t->code; return 0;
	case JNL_TEV_DETACHED: e->ev = PC_TARGET_DETACHED; return 0;
	default: return -ENOENT;
	}
}

json_t *jnl_record_target_json(const struct jnl_target *t)
{
	json_t *o = json_object();

	json_object_set_new(o, "event", json_string(jnl_record_target_ev_name(t->event)));
	if (t->has_t)   /* "t" is the record's kind: the time is "at" */
		json_object_set_new(o, "at", json_real(t->t));
	if (t->pid)
		set_int(o, "pid", t->pid);
	if (t->tid)
		set_int(o, "tid", t->tid);
	if (t->event == JNL_TEV_EXIT || t->event == JNL_TEV_EXEC)
		set_int(o, "code", t->code);
	if (t->event == JNL_TEV_SIGNAL || t->event == JNL_TEV_KILLED)
		set_int(o, "signal", t->signal);
	if (t->event == JNL_TEV_THREAD_START)
		set_str(o, "function", t->function);
	return o;
}

int jnl_record_target_decode(const json_t *rec, struct jnl_target *t,
		      struct hunch_err *err)
{
	const char *ev = get_str(rec, "event");
	unsigned k;

	memset(t, 0, sizeof(*t));
	for (k = 0; k < JNL_TEV_COUNT; k++)
		if (ev && strcmp(ev, tev_names[k]) == 0)
			break;
	if (k == JNL_TEV_COUNT)
		return hunch_err_set(err, -ENOENT,
				  "target event \"%s\" is not known to this hunch: skipped",
				  ev ? ev : "");
	t->event = (enum jnl_target_ev)k;
	t->has_t = json_is_number(json_object_get(rec, "at"));
	t->t = json_number_value(json_object_get(rec, "at"));
	t->pid = (int)get_int(rec, "pid");
	t->tid = (int)get_int(rec, "tid");
	t->code = (int)get_int(rec, "code");
	t->signal = (int)get_int(rec, "signal");
	t->function = get_str(rec, "function");
	return 0;
}

int jnl_record_sample_decode(const json_t *rec, struct jnl_sample *s,
		      struct hunch_err *err)
{
	const json_t *ids = json_object_get(rec, "i");
	const json_t *vals = json_object_get(rec, "v");
	size_t n = json_array_size(ids), k;

	memset(s, 0, sizeof(*s));
	if (n != json_array_size(vals))
		return hunch_err_set(err, -EINVAL,
				  "sample arrays \"i\" and \"v\" differ in length");
	s->t0 = json_number_value(json_object_get(rec, "t0"));
	s->t1 = json_number_value(json_object_get(rec, "t1"));
	s->ids = malloc((n ? n : 1) * sizeof(*s->ids));
	s->vals = malloc((n ? n : 1) * sizeof(*s->vals));
	if (s->ids == NULL || s->vals == NULL) {
		jnl_record_sample_free(s);
		return hunch_err_set(err, -ENOMEM, "out of memory");
	}
	for (k = 0; k < n; k++) {
		const json_t *v = json_array_get(vals, k);

		s->ids[k] = (uint64_t)json_integer_value(json_array_get(ids, k));
		s->vals[k] = json_is_number(v) ? json_number_value(v) : NAN;
	}
	s->n = n;
	return 0;
}

void jnl_record_sample_free(struct jnl_sample *s)
{
	free(s->ids);
	free(s->vals);
	s->ids = NULL;
	s->vals = NULL;
	s->n = 0;
}

struct pc_src_sample jnl_record_sample_at(const struct jnl_sample *s, size_t k)
{
	struct pc_src_sample x = { .handle = s->ids[k], .t0 = s->t0,
				   .t1 = s->t1, .value = s->vals[k] };

	return x;
}

char *jnl_record_focus_key(const char *metric, const struct pc_src_focus *f)
{
	size_t len = strlen(metric) + 1;
	char *k, *p;

	for (int h = 0; h < PC_SRC_NHIER; h++)
		len += strlen(f->path[h] ? f->path[h] : "") + 1;
	if ((k = malloc(len)) == NULL)
		return NULL;
	p = stpcpy(k, metric);
	for (int h = 0; h < PC_SRC_NHIER; h++) {
		*p++ = '\x1f';   /* a byte no path contains */
		p = stpcpy(p, f->path[h] ? f->path[h] : "");
	}
	return k;
}

json_t *jnl_record_focus_json(const struct pc_src_focus *f)
{
	json_t *a = json_array();

	for (int h = 0; h < PC_SRC_NHIER; h++)
		json_array_append_new(a, json_string(f->path[h] ? f->path[h] : ""));
	return a;
}

int jnl_record_focus_decode(const json_t *arr, struct pc_src_focus *f,
		     struct hunch_err *err)
{
	memset(f, 0, sizeof(*f));
	if (json_array_size(arr) != PC_SRC_NHIER)
		return hunch_err_set(err, -EINVAL,
				  "a focus has %d paths, one per hierarchy",
				  PC_SRC_NHIER);
	for (int h = 0; h < PC_SRC_NHIER; h++) {
		f->path[h] = json_string_value(json_array_get(arr, (size_t)h));
		if (f->path[h] == NULL)
			return hunch_err_set(err, -EINVAL,
					  "focus path %d is not a string", h);
	}
	return 0;
}

json_t *jnl_record_reply_json(const struct pc_src_reply *r)
{
	json_t *o = json_object();

	set_int(o, "req", (long long)r->req);
	set_int(o, "status", r->status);
	if (r->status == 0)
		set_int(o, "inst", (long long)r->handle);
	set_str(o, "reason", r->reason);
	if (r->sampled)
		json_object_set_new(o, "sampled", json_true());
	return o;
}

int jnl_record_reply_decode(const json_t *rec, struct pc_src_reply *r,
		     struct hunch_err *err)
{
	memset(r, 0, sizeof(*r));
	if (!json_is_integer(json_object_get(rec, "req")))
		return hunch_err_set(err, -EINVAL,
				     "reply record without \"req\"");
	r->req = (uint64_t)get_int(rec, "req");
	r->status = (int)get_int(rec, "status");
	r->handle = (pc_src_handle)get_int(rec, "inst");
	r->reason = get_str(rec, "reason");
	r->sampled = json_is_true(json_object_get(rec, "sampled"));
	return 0;
}

/*
 * jnl_record.h - typed journal records to and from JSON.
 *
 * The writer uses the *_json functions to build a record's fields; the
 * reader (and the replay source, once it exists) uses the *_decode
 * functions to turn a validated record back into the C types the
 * consultant consumes.  Encoding and decoding live side by side so that
 * the round trip is checked in one place.
 */
#ifndef JNL_RECORD_H
#define JNL_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "hunch_err.h"
#include "pc_source.h"

/* Resources: {"op","kind", and the fields that kind uses}. */
json_t *jnl_record_discovery_json(const struct pc_discovery *d);
/* Strings in `d` are borrowed from `rec` (valid while `rec` lives). */
int jnl_record_discovery_decode(const json_t *rec, struct pc_discovery *d,
			 struct hunch_err *err);

enum jnl_stream { JNL_STDOUT, JNL_STDERR };

/* Output: {"stream", "text" (valid UTF-8 without NUL) or "b64" (any
 * other bytes, base64), "eol": false when no newline followed}. */
json_t *jnl_record_output_json(enum jnl_stream s, const void *bytes, size_t len,
			bool eol);

struct jnl_output {
	enum jnl_stream stream;
	bool eol;
	size_t len;
	unsigned char *bytes;   /* malloc'd, NUL-terminated; caller frees */
};
int jnl_record_output_decode(const json_t *rec, struct jnl_output *out,
		      struct hunch_err *err);

/* Target events: everything the target did that the consultant hears of.
 * A superset of enum pc_target_event (which lacks threads and signals). */
enum jnl_target_ev {
	JNL_TEV_THREAD_START, /* pid, tid, function */
	JNL_TEV_THREAD_EXIT,  /* pid, tid */
	JNL_TEV_SIGNAL,       /* pid, tid, signal: delivered to the target */
	JNL_TEV_EXIT,         /* pid, code: exit status */
	JNL_TEV_KILLED,       /* pid, signal */
	JNL_TEV_EXEC,         /* pid */
	JNL_TEV_DETACHED,     /* pid */
	JNL_TEV_COUNT
};

struct jnl_target {
	enum jnl_target_ev event;
	int pid, tid;         /* 0 when not known */
	int code;             /* JNL_TEV_EXIT */
	int signal;           /* JNL_TEV_SIGNAL, JNL_TEV_KILLED */
	const char *function; /* JNL_TEV_THREAD_START, may be NULL */
	bool has_t;
	double t;             /* the source's time of the event, if has_t */
};

/* The journal's view of a source's target event, with its time (code:
 * exit status or signal number, as pc_source.h says). */
struct jnl_target jnl_record_target_from_src(const struct pc_src_event *e,
					     int pid);
/* Back to a source event; -ENOENT for thread and signal events, which
 * the source interface does not carry as events. */
int jnl_record_target_to_src(const struct jnl_target *t,
			     struct pc_src_event *e);
json_t *jnl_record_target_json(const struct jnl_target *t);
/* -ENOENT (with a message) for an event name this reader does not know:
 * newer journals may add events, and a replay can skip them. */
int jnl_record_target_decode(const json_t *rec, struct jnl_target *t,
		      struct hunch_err *err);

/* Samples of one interval: ids[k] averaged vals[k] (NAN where the
 * journal says null) over [t0, t1] (the source's time).  Arrays are
 * malloc'd; jnl_record_sample_free. */
struct jnl_sample {
	double t0, t1;
	size_t n;
	uint64_t *ids;
	double *vals;
};
int jnl_record_sample_decode(const json_t *rec, struct jnl_sample *s,
		      struct hunch_err *err);
/* The k-th sample as the source delivered it. */
struct pc_src_sample jnl_record_sample_at(const struct jnl_sample *s, size_t k);
void jnl_record_sample_free(struct jnl_sample *s);

/* A source focus: ["/Code/...", "/Process/...", "/SyncObject", "/Files"],
 * one path per hierarchy, exact (a focus name like "</Code,...>" cannot
 * be split again once a C++ name holds a comma). */
json_t *jnl_record_focus_json(const struct pc_src_focus *f);
/* "metric\x1fpath\x1fpath..." (malloc'd, NULL when out of memory): one
 * key per metric and focus, for the journal wrapper's and the replay
 * index's lookups. */
char *jnl_record_focus_key(const char *metric, const struct pc_src_focus *f);
/* Strings borrowed from `arr`. */
int jnl_record_focus_decode(const json_t *arr, struct pc_src_focus *f,
		     struct hunch_err *err);

/* The source's reply to an enable: {"req","status","inst","reason"}. */
json_t *jnl_record_reply_json(const struct pc_src_reply *r);
int jnl_record_reply_decode(const json_t *rec, struct pc_src_reply *r,
		     struct hunch_err *err);

#endif

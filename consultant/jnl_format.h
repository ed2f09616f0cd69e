/*
 * jnl_format.h - the journal's record kinds, version and schema.
 *
 * A journal is JSON Lines: one JSON object per line, the header first,
 * then every event in time order.  docs/journal-format.md is the
 * specification; this table is its executable form (the reader validates
 * every known record against it, and a test checks that the document
 * names every kind listed here).
 */
#ifndef JNL_FORMAT_H
#define JNL_FORMAT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "hunch_err.h"

/* Bump only when the meaning of an existing field changes or a required
 * field is added; new record kinds and new optional fields keep the
 * version (readers pass unknown kinds through and ignore unknown fields). */
#define JNL_VERSION 1

/* A line longer than this is not read (the reader skips it and says so);
 * the writer never writes one (it splits target output, refuses others). */
#define JNL_MAX_LINE (16u << 20)

/* Target output is split into records of at most this many bytes so that
 * one runaway line without a newline cannot make a huge record. */
#define JNL_OUTPUT_CHUNK (64u << 10)

enum jnl_kind {
	JNL_REC_UNKNOWN = 0, /* a kind this reader does not know: passed on */
	JNL_REC_HEADER,
	JNL_REC_TICK,        /* the consultant's tick, with the source's now */
	JNL_REC_RESOURCE,    /* a resource discovered or retired */
	JNL_REC_ENABLE,      /* a metric instance requested, predicted cost */
	JNL_REC_REPLY,       /* the source's answer: a handle or a failure */
	JNL_REC_DISABLE,     /* a metric instance disabled */
	JNL_REC_SAMPLE,      /* samples of instances over one interval */
	JNL_REC_COST,        /* observed instrumentation cost */
	JNL_REC_PREDICT,     /* a cost prediction the source made */
	JNL_REC_CALLEES,     /* the static call graph, as the source told it */
	JNL_REC_HINT,        /* cheap statistical evidence for a resource */
	JNL_REC_PERIOD,      /* the sample period was set */
	JNL_REC_NODE,        /* a search-history-graph node created */
	JNL_REC_EDGE,        /* a second (third...) parent found for a node */
	JNL_REC_NODE_STATE,  /* a node changed state, with its evidence */
	JNL_REC_ACTION,      /* a user action: tunable, pause, phase... */
	JNL_REC_OUTPUT,      /* bytes the target wrote on stdout/stderr */
	JNL_REC_TARGET,      /* target events: threads, signals, exit */
	JNL_REC_END,         /* the search ended, with the reason */
	JNL_REC_STACK_SAMPLES, /* the whole run's stack samples, as reported */
	JNL_REC_NKINDS
};

/* The "t" value of a kind ("resource"), or NULL for JNL_REC_UNKNOWN. */
const char *jnl_format_kind_name(enum jnl_kind k);
/* The kind named `name`; JNL_REC_UNKNOWN for a name not in the table. */
enum jnl_kind jnl_format_kind_from_name(const char *name);

/* Field types the schema knows.  JNL_F_NUMBER accepts integers too;
 * JNL_F_NUMBER_OR_NULL is a sample value (null = not finite). */
enum jnl_ftype {
	JNL_F_ANY, JNL_F_STRING, JNL_F_INTEGER, JNL_F_NUMBER, JNL_F_BOOL,
	JNL_F_ARRAY, JNL_F_OBJECT,
};

struct jnl_field {
	const char *name;
	enum jnl_ftype type;
	bool required;
};

/* The fields of kind `k` (terminated by a NULL name). */
const struct jnl_field *jnl_format_kind_fields(enum jnl_kind k);

/* Check that `rec` (an object whose "t" names kind `k`) has every
 * required field with the right type, that optional fields present have
 * the right type, and the per-kind rules (sample arrays of equal length,
 * resource kinds, output streams).  On failure the message names the
 * field and what was wrong, without a location (the reader adds it). */
int jnl_format_validate(enum jnl_kind k, const json_t *rec,
			struct hunch_err *err);

#endif

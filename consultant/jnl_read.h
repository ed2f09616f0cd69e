/*
 * jnl_read.h - the journal reader: streaming, validating, never crashing.
 *
 * Opening reads and checks the header (empty file, not a journal, newer
 * version, header cut short: each its own message).  jnl_read_next() then
 * returns one record at a time; memory stays bounded by the longest line
 * (at most JNL_MAX_LINE).  A bad line in the middle (not JSON, wrong
 * fields, too long, time going backwards) is reported with its line and
 * byte offset and skipped: replay shows what can be shown, and says what
 * it skipped.  The end says how the journal ended: an end record, no end
 * record (hunch was killed between ticks), or a last line cut short
 * (killed mid-write, disk full, power cut) - in which case everything up
 * to the last complete record has been returned.
 */
#ifndef JNL_READ_H
#define JNL_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "hunch_err.h"
#include "jnl_format.h"

enum jnl_next_rc {
	JNL_NEXT_END = 0,     /* no more records: see jnl_read_end() */
	JNL_NEXT_RECORD = 1,  /* `rec` holds the next record */
	JNL_NEXT_BAD = 2,     /* a line was skipped: `err` says which, why */
};

enum jnl_end_kind {
	JNL_END_NOT_YET = 0,  /* still reading */
	JNL_END_COMPLETE,     /* an end record was read, the file ended */
	JNL_END_NO_END,       /* the file ended at a line boundary, no end
			       * record: hunch stopped between two writes */
	JNL_END_TRUNCATED,    /* the last line is incomplete */
	JNL_END_READ_ERROR,   /* read(2) failed */
};

struct jnl_record {
	enum jnl_kind kind;      /* JNL_REC_UNKNOWN: a kind from a newer
				  * hunch, valid but not known here */
	const char *kind_name;   /* the "t" value */
	double ts;
	const json_t *json;      /* the whole record; valid until the next
				  * jnl_read_next() or jnl_read_close() */
	uint64_t line;           /* 1-based */
	uint64_t offset;         /* byte offset of the line's first byte */
};

struct jnl_read_stats {
	uint64_t records;        /* delivered, header included */
	uint64_t bad_lines;      /* skipped */
	uint64_t unknown;        /* delivered with JNL_REC_UNKNOWN */
	uint64_t last_line;      /* line of the last record delivered */
	double last_ts;          /* its ts */
};

struct jnl_reader;

/* Open and check the header.  On failure *out is NULL and `err` says
 * why, naming the file (and line and byte where it applies). */
int jnl_read_open(struct jnl_reader **out, const char *path,
		    struct hunch_err *err);
/* The same over a memory buffer (borrowed, must outlive the reader);
 * `name` is used in messages. */
int jnl_read_open_mem(struct jnl_reader **out, const void *buf,
			size_t len, const char *name, struct hunch_err *err);

const json_t *jnl_read_header(const struct jnl_reader *r);

/* Start again at the first record after the header (a seekable file or
 * a memory buffer): the records, skipped lines and end come again as
 * the first time.  0, or a negative errno (a pipe cannot go back). */
int jnl_read_rewind(struct jnl_reader *r);
/* The same at byte `off` (the start of a line, from an earlier pass):
 * the replay's checkpoints.  Line numbers after it are not known. */
int jnl_read_seek(struct jnl_reader *r, uint64_t off);

int jnl_read_next(struct jnl_reader *r, struct jnl_record *rec,
	     struct hunch_err *err);

/* How the journal ended (after jnl_read_next returned JNL_NEXT_END), with a
 * sentence for the user in *msg (NULL for a complete journal). */
enum jnl_end_kind jnl_read_end(const struct jnl_reader *r,
				 const char **msg);
void jnl_read_get_stats(const struct jnl_reader *r, struct jnl_read_stats *st);

void jnl_read_close(struct jnl_reader *r);

#endif

/*
 * src_replay.h - the replay source: a journal played back as a source.
 *
 * The journal (docs/journal-format.md) holds every exchange between the
 * consultant and the source it ran on (jnl_source_wrap).  The replay
 * source gives the consultant exactly those answers again, tick by tick:
 * each now() moves to the next `tick` record, and the polls deliver the
 * resources, target events, replies and samples recorded after it.  A
 * search run on it with the recorded tunables makes the recorded
 * decisions at the recorded times.
 *
 * With other tunables the search may ask for an experiment that was never
 * recorded: its enable is answered with a failure whose reason is
 * SRC_REPLAY_NOT_RECORDED, never with invented data.  An experiment
 * recorded later than the replay asks for it gets its reply when the
 * recorded one comes; samples flow only for instances the replay has
 * enabled and not disabled.
 *
 * The journal is streamed, never held whole: opening reads it once and
 * keeps an index (every tick's byte offset and time, every recorded
 * enable with its reply, the recorded predictions, hints and callees,
 * in hash tables), because replay must know whether an experiment was
 * ever recorded, even later on; playing then reads the records again
 * one tick at a time.  Memory is the index plus one tick's records.
 * Bad lines are skipped by the reader and kept as messages here, and the
 * reader's end message (truncated, no end record) is kept too, so the
 * caller can say what was shown.
 */
#ifndef SRC_REPLAY_H
#define SRC_REPLAY_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "hunch_err.h"
#include "pc_source.h"

#define SRC_REPLAY_NOT_RECORDED "not recorded"

struct src_replay;

/* Read the journal at `path`.  Fails only when the header cannot be read
 * (empty, not a journal, newer version...): `err` says why, where. */
int src_replay_open(struct src_replay **out, const char *path,
		    struct hunch_err *err);
/* The same, but indexing only the first `first` bytes now (the
 * dashboard: SRC_REPLAY_FIRST_SLICE; a small journal is then indexed
 * whole, as src_replay_open), after a skim of the file for the keys of
 * every recorded enable, prediction, hint and callee list; the rest is
 * indexed as playing needs it, or by src_replay_index_step while the
 * dashboard waits for keys.  What the source answers is the same
 * (tests/replay/test_replay_lazy.c).  A pipe is indexed at once. */
#define SRC_REPLAY_FIRST_SLICE (2u << 20)
int src_replay_open_lazy(struct src_replay **out, const char *path,
			 uint64_t first, struct hunch_err *err);
/* Index `bytes` more of the journal: 1 when the index is whole, 0 not
 * yet, or a negative errno. */
int src_replay_index_step(struct src_replay *r, uint64_t bytes);
/* The whole journal is indexed: src_replay_ticks, the skipped lines and
 * the end message are final. */
bool src_replay_indexed(const struct src_replay *r);
/* The last tick's `now`: the journal's length (before the index is
 * whole: read from the file's end). */
double src_replay_length(struct src_replay *r);
/* Index on until a tick after time t is known (or the end): the ticks
 * known then. */
size_t src_replay_ticks_to(struct src_replay *r, double t);
int src_replay_open_mem(struct src_replay **out, const void *buf, size_t len,
			const char *name, struct hunch_err *err);
void src_replay_free(struct src_replay *r);

/* The source (its close op does nothing: src_replay_free frees). */
struct pc_source *src_replay_source(struct src_replay *r);
const json_t *src_replay_header(const struct src_replay *r);

/* Every recorded tick has been played: the caller's loop stops here even
 * when the journal has no end (truncated, killed). */
bool src_replay_done(struct src_replay *r);
/* The ticks indexed so far: all of them after src_replay_open. */
size_t src_replay_ticks(const struct src_replay *r);

/* Skipped lines (messages with line and byte: the first 1,000 are kept,
 * the total counted), and the reader's sentence on how the journal ended
 * (NULL: complete, with its end record). */
size_t src_replay_nbad(const struct src_replay *r);
size_t src_replay_nbad_total(const struct src_replay *r);
const char *src_replay_bad(const struct src_replay *r, size_t i);
const char *src_replay_end_message(const struct src_replay *r);
/* The end record's reason ("target_exited"...), or NULL without one. */
const char *src_replay_end_reason(const struct src_replay *r);
/* Enables answered "not recorded" so far. */
int src_replay_unrecorded(const struct src_replay *r);

/* The tick played last (-1: none yet), and the source time (`now`) of
 * tick i, known from the index before it is played. */
long src_replay_tick(const struct src_replay *r);
double src_replay_tick_now(struct src_replay *r, size_t i);

/* Back to before the first tick, as just after opening: a consultant
 * made afresh on the source then plays the same search again (the
 * dashboard's backward seek).  0, or a negative errno. */
int src_replay_rewind(struct src_replay *r);

/* The user's actions recorded after the tick just played (`action`
 * records: pause, resume, phase_start, tunable), applied to `pc` in
 * journal order, as the live session applied them between this tick and
 * the next.  Call after pc_consult_start and after each pc_consult_tick;
 * a second call for the same tick does nothing.  Returns how many were
 * applied.  A tunable changed so is set back by src_replay_rewind (the
 * configuration must outlive the source, or be rewound before it goes). */
struct pc_consult;
int src_replay_actions(struct src_replay *r, struct pc_consult *pc);

/* The target's recorded output: `fn` is called for each `output` record
 * as the tick it belongs to is played (stream 0 stdout, 1 stderr; the
 * line's bytes without its newline). */
typedef void (*src_replay_output_fn)(void *arg, double ts, int stream,
				     const char *bytes, size_t len);
void src_replay_set_output(struct src_replay *r, src_replay_output_fn fn,
			   void *arg);

#endif

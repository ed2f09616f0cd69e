/*
 * pc_phase_at.h - current phases started at set times of a batch search
 * (`hunch run --batch --phase-at S`), journaled, and started again at
 * the same point of the replay.
 *
 * Live, a phase starts after the first consultant tick at which the
 * search has run S seconds; the journal gets an `action` record
 * `phase_start` carrying the number of ticks made so far.  The replay
 * source applies that action after the same tick (src_replay_actions),
 * so the phase starts at the same place in the search: same enables in
 * the same order, same report.
 */
#ifndef PC_PHASE_AT_H
#define PC_PHASE_AT_H

#include <stdbool.h>
#include <stddef.h>

struct pc_consult;
struct jnl_writer;
struct hunch_err;

#define PC_PHASE_AT_MAX 8

struct pc_phase_at {
	double at[PC_PHASE_AT_MAX];     /* live: search seconds, ascending */
	char label[PC_PHASE_AT_MAX][64];
	size_t n, next;
	long ticks;                     /* consultant ticks so far */
};

/* Live: add a start time (seconds of search); keeps them sorted.
 * Returns -1 when full. */
int pc_phase_at_add(struct pc_phase_at *p, double seconds);
/* Whether a phase is still to start (the search is not over before). */
bool pc_phase_at_pending(const struct pc_phase_at *p);
/* Live, after each pc_consult_tick: start the phases that are due at
 * `elapsed` seconds of search and journal them (jw may be NULL). */
void pc_phase_at_live(struct pc_phase_at *p, struct pc_consult *pc,
		      double elapsed, struct jnl_writer *jw);

#endif

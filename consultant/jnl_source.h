/*
 * jnl_source.h - a source that journals what passes through it.
 *
 * Wrap the live source in it and hand the wrapper to the consultant:
 * every call the consultant makes through pc_source_ops and every answer
 * (resources, now, predictions, enables and replies, disables, samples,
 * observed cost, events, call graph, hints, sample period) is written to
 * the journal as it happens, in the order the consultant saw it, and
 * passed on unchanged.  The consultant needs no journal code, and a
 * replay source that answers from these records gives the consultant
 * exactly what the live source gave (DESIGN §1).  An operation the inner
 * source lacks stays NULL, so the consultant behaves the same.
 */
#ifndef JNL_SOURCE_H
#define JNL_SOURCE_H

#include "jnl_write.h"
#include "pc_source.h"

/* The wrapper, or NULL without memory.  `inner` and `w` are borrowed and
 * must outlive it; closing the wrapper closes `inner` too.  `pid` names
 * the process in target event records (0 if unknown). */
struct pc_source *jnl_source_wrap(struct pc_source *inner,
				  struct jnl_writer *w, int pid);
/* Free the wrapper without closing `inner`; returns `inner`. */
struct pc_source *jnl_source_unwrap(struct pc_source *wrapper);

#endif

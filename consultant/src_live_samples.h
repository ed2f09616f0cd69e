/*
 * src_live_samples.h - the live source's whole-run tally of its CPU
 * stack samples (the hint sampler's, src_live_hint.h), for the report's
 * "stack samples" section: what the samples saw when the search could
 * not conclude in time.  The hint window forgets samples after
 * SRC_LIVE_HINT_WINDOW_S; this keeps counts for the whole run: per
 * function its self samples (innermost frame) and inclusive samples
 * (anywhere on the stack, once per sample), and the innermost call
 * chains.  Owned by the live source, fed by the program's hint sampler
 * and every followed child's, so it outlives the samplers (freed when
 * the program ends or is detached).
 *
 * Its answer (src_live_samples_json) is what the source's
 * `stack_samples` op returns; the journal records it (a `stack_samples`
 * record) and the replay returns the recorded one, so the report's
 * section prints the same live and replayed.
 */
#ifndef SRC_LIVE_SAMPLES_H
#define SRC_LIVE_SAMPLES_H

#include <jansson.h>

#define SRC_LIVE_SAMPLES_TOP 5        /* functions listed per order */
#define SRC_LIVE_SAMPLES_CHAINS 3     /* call chains listed */
#define SRC_LIVE_SAMPLES_DEPTH 3      /* functions in a chain, innermost first */

struct src_live_samples;

struct src_live_samples *src_live_samples_new(double hz);
void src_live_samples_free(struct src_live_samples *t);
/* One CPU sample at `t` (seconds of the source's clock): `self` the
 * /Code path of its innermost frame (a function, or a module when no
 * function covers the pc; NULL: outside every module), `stack` the /Code
 * paths of the functions on its stack, innermost first.  Paths are
 * copied. */
void src_live_samples_add(struct src_live_samples *t, double t_s,
			  const char *self, const char *const *stack,
			  int nstack);
/* The tally so far: NULL when no sample was counted, else a new
 * object (docs/report-schema.md, `samples`): count, seconds (time 0 to
 * the last sample), cpus (count / hz / seconds), hz, and the top
 * functions by self and by inclusive samples, the top chains. */
json_t *src_live_samples_json(const struct src_live_samples *t);

#endif

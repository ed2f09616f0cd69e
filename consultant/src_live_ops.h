/*
 * src_live_ops.h - the metric side of the live source (internal to
 * src_live.c): the sampler, the instrumentation manager and the metric
 * compiler of one target, behind the pc_source metric operations.
 *
 * Enables are done at once (one commit) and answered at the next
 * poll_replies, as the sim source does, so the consultant sees the same
 * asynchronous protocol whatever the source.  Samples are produced by
 * src_live_ops_tick, which the live source calls from its pump when a sample
 * period has passed: one sample per live instance per tick, as a rate
 * (counters per second, timers in seconds per second), or for the
 * internal metric active_threads the number of running threads.
 */
#ifndef SRC_LIVE_OPS_H
#define SRC_LIVE_OPS_H

#include <stdint.h>

#include "hunch_err.h"
#include "pc_config.h"
#include "pc_source.h"

struct eng_proc;
struct eng_shm;
struct src_live_ops;

/* The runtime library must have answered the handshake.  `cfg` is
 * borrowed and must outlive the object.  `t0_ns` is CLOCK_MONOTONIC at
 * the target's start (the source's time 0). */
int src_live_ops_new(struct eng_proc *p, struct eng_shm *shm,
		     const struct pc_config *cfg, uint64_t t0_ns,
		     struct src_live_ops **out, struct hunch_err *err);
/* Removes every instance's code from a running target, then frees. */
void src_live_ops_free(struct src_live_ops *o, bool target_alive);
/* Only the kernel's measures (an image hunch cannot instrument): every
 * enable that needs instrumentation is refused with `why`. */
int src_live_ops_new_kernel(struct eng_proc *p, const struct pc_config *cfg,
			    uint64_t t0_ns, const char *why,
			    struct src_live_ops **out);
/* Handles go on from one metric side to the next (pc_source.h: never
 * reused). */
pc_src_handle src_live_ops_last_handle(const struct src_live_ops *o);
void src_live_ops_handles_after(struct src_live_ops *o, pc_src_handle h);

double src_live_ops_now(const struct src_live_ops *o);
double src_live_ops_predict(struct src_live_ops *o, const char *metric,
			    const struct pc_src_focus *f);
int src_live_ops_enable(struct src_live_ops *o, const char *metric,
			const struct pc_src_focus *f, uint64_t req);
void src_live_ops_disable(struct src_live_ops *o, pc_src_handle h);
int src_live_ops_poll_replies(struct src_live_ops *o, pc_reply_fn fn,
			      void *arg);
/* Append to *reqs the requests whose reply has not been polled yet: a
 * side dropped at an exec must still have them answered. */
void src_live_ops_unanswered(const struct src_live_ops *o, uint64_t **reqs,
			     size_t *n);
int src_live_ops_poll_samples(struct src_live_ops *o, pc_sample_fn fn,
			      void *arg);
double src_live_ops_observed(const struct src_live_ops *o);
void src_live_ops_set_period(struct src_live_ops *o, double seconds);
/* Stack samples for catchup to date activations (eng_inst_catchup_set_psampler);
 * the sampler must outlive o, or be unset with NULL first. */
struct eng_perfsample;
/* The hint sampler, whose stack samples estimate the CPU time of code
 * that cannot be instrumented within the cost limit (NULL: none). */
struct src_live_hint;
void src_live_ops_set_hints(struct src_live_ops *o, struct src_live_hint *h);
void src_live_ops_set_psampler(struct src_live_ops *o,
			       struct eng_perfsample *ps);
/* Milliseconds until the next sample is due (0: now). */
int src_live_ops_due_ms(const struct src_live_ops *o);
/* Sample if due: read the sampler, queue samples, report objects seen
 * by discovery snippets through `fn` (sync objects and files). */
void src_live_ops_tick(struct src_live_ops *o, pc_disc_fn fn, void *arg);
/* A step of the search begins or ends: its enables and disables share
 * one stop of the program (eng_metric_batch_begin). */
void src_live_ops_step(struct src_live_ops *o, bool begins);
/* Tell the cost predictor that `function` starts a thread (it runs once
 * per thread, not at the default call rate). */
void src_live_ops_note_start(struct src_live_ops *o, const char *function);
/* How many instrumented instances are enabled (for tests and messages;
 * kernel CPU instances insert nothing and are not counted). */
size_t src_live_ops_ninstances(const struct src_live_ops *o);
/* The children followed (kernel CPU for /Process/<child> and its
 * threads, and summed into /Process); borrowed, NULL: none. */
struct src_live_kids;
void src_live_ops_set_kids(struct src_live_ops *o, struct src_live_kids *kids);
/* The instrumentation manager (NULL: kernel only), for a fork hook. */
struct eng_inst *src_live_ops_engine_inst(const struct src_live_ops *o);

#endif

/*
 * src_live_ops.h - the metric side of the live source (internal to
 * src_live.c): the sampler, the instrumentation manager and the metric
 * compiler of one target, behind the pc_source metric operations.
 *
 * Enables are done at once (one commit) and answered at the next
 * poll_replies, as the sim source does, so the consultant sees the same
 * asynchronous protocol whatever the source.  Samples are produced by
 * slo_tick, which the live source calls from its pump when a sample
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
struct slo;

/* The runtime library must have answered the handshake.  `cfg` is
 * borrowed and must outlive the object.  `t0_ns` is CLOCK_MONOTONIC at
 * the target's start (the source's time 0). */
int slo_new(struct eng_proc *p, struct eng_shm *shm,
	    const struct pc_config *cfg, uint64_t t0_ns, struct slo **out,
	    struct hunch_err *err);
/* Removes every instance's code from a running target, then frees. */
void slo_free(struct slo *o, bool target_alive);
/* Only the kernel's measures (an image hunch cannot instrument): every
 * enable that needs instrumentation is refused with `why`. */
int slo_new_kernel(struct eng_proc *p, const struct pc_config *cfg,
		   uint64_t t0_ns, const char *why, struct slo **out);
/* Handles go on from one metric side to the next (pc_source.h: never
 * reused). */
pc_src_handle slo_last_handle(const struct slo *o);
void slo_handles_after(struct slo *o, pc_src_handle h);

double slo_now(const struct slo *o);
double slo_predict(struct slo *o, const char *metric,
		   const struct pc_src_focus *f);
int slo_enable(struct slo *o, const char *metric,
	       const struct pc_src_focus *f, uint64_t req);
void slo_disable(struct slo *o, pc_src_handle h);
int slo_poll_replies(struct slo *o, pc_reply_fn fn, void *arg);
int slo_poll_samples(struct slo *o, pc_sample_fn fn, void *arg);
double slo_observed(const struct slo *o);
void slo_set_period(struct slo *o, double seconds);
/* Stack samples for catchup to date activations (eng_inst_set_psampler);
 * the sampler must outlive o, or be unset with NULL first. */
struct eng_perfsample;
/* The hint sampler, whose stack samples estimate the CPU time of code
 * that cannot be instrumented within the cost limit (NULL: none). */
struct slh;
void slo_set_hints(struct slo *o, struct slh *h);
void slo_set_psampler(struct slo *o, struct eng_perfsample *ps);
/* Milliseconds until the next sample is due (0: now). */
int slo_due_ms(const struct slo *o);
/* Sample if due: read the sampler, queue samples, report objects seen
 * by discovery snippets through `fn` (sync objects and files). */
void slo_tick(struct slo *o, pc_disc_fn fn, void *arg);
/* Tell the cost predictor that `function` starts a thread (it runs once
 * per thread, not at the default call rate). */
void slo_note_start(struct slo *o, const char *function);
/* How many instrumented instances are enabled (for tests and messages;
 * kernel CPU instances insert nothing and are not counted). */
size_t slo_ninstances(const struct slo *o);
/* The children followed (kernel CPU for /Process/<child> and its
 * threads, and summed into /Process); borrowed, NULL: none. */
struct slk;
void slo_set_kids(struct slo *o, struct slk *kids);
/* The instrumentation manager (NULL: kernel only), for a fork hook. */
struct eng_inst *slo_engine_inst(const struct slo *o);

#endif

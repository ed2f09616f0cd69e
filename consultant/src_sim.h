/*
 * src_sim.h - the sim source: scripted, deterministic values per metric x
 * focus over time, for tests of the search without a target.
 *
 * The test advances time by hand (src_sim_advance), which produces one
 * sample per enabled instance per period, then calls pc_consult_tick.
 * Values are piecewise constant in time; an optional noise amplitude
 * alternates +a, -a, +a, ... per sample (deterministic, mean-preserving).
 * A script for focus "*" applies to every focus without its own script;
 * unscripted pairs read 0, except active_threads, which reads 1.
 */
#ifndef SRC_SIM_H
#define SRC_SIM_H

#include "pc_source.h"

struct src_sim;

struct src_sim *src_sim_new(void);
void src_sim_free(struct src_sim *sim);
struct pc_source *src_sim_source(struct src_sim *sim);

/* Resources: queued and delivered at the next poll. */
void src_sim_function(struct src_sim *sim, const char *module,
		      const char *file, const char *fn);
void src_sim_thread(struct src_sim *sim, int pid, int tid, const char *fn);
void src_sim_syncobj(struct src_sim *sim, const char *cls, const char *name,
		     unsigned long addr);
/* Process pid ends (delivered at the next poll; end, code, t as in
 * pc_discovery): it is retired, its end recorded. */
void src_sim_process_end(struct src_sim *sim, int pid, char end, int code,
			 double t);
void src_sim_file(struct src_sim *sim, const char *path);
/* Static call graph, by /Code paths; caller NULL marks a start function. */
void src_sim_call(struct src_sim *sim, const char *caller, const char *callee);

/* From time `t` on, `metric` at `focus` ("</Code,...>" or "*") reads
 * `value` +- `noise`. */
void src_sim_script(struct src_sim *sim, const char *metric,
		    const char *focus, double t, double value, double noise);
/* Predicted cost of `metric` on any focus; the observed cost of an enabled
 * instance is predicted * `observed_factor`. */
void src_sim_cost(struct src_sim *sim, const char *metric, double predicted,
		  double observed_factor);
/* Enable replies arrive after `ticks` advances (0: by the next tick). */
void src_sim_enable_delay(struct src_sim *sim, int ticks);
/* The observed cost shows an instance only `s` seconds after it went
 * live (the real sampler's readings lag its launch by ~0.5 s). */
void src_sim_observed_lag(struct src_sim *sim, double s);
/* Enabling `metric` fails with this reason. */
void src_sim_fail(struct src_sim *sim, const char *metric, const char *why);
/* Enables on `focus` ("<path,path,path,path>") reply that their values
 * are estimated from stack samples (as the live source's do). */
void src_sim_sampled(struct src_sim *sim, const char *focus);
/* Cheap evidence for `path` (see pc_source.h hint); unset paths: -1. */
void src_sim_hint(struct src_sim *sim, const char *path, double share);
/* The target ends (delivered at the next poll). */
void src_sim_end(struct src_sim *sim, enum pc_target_event ev, int code);
/* The program replaces its image now, as the live source sees it: every
 * instance is dropped (no more samples), a request not answered yet is
 * answered as refused at the next poll, and the exec event is told. */
void src_sim_exec(struct src_sim *sim);

/* Move time forward by one sample period (set by the consultant, 0.2 s
 * to start with) and produce the samples of that period. */
void src_sim_advance(struct src_sim *sim);
double src_sim_period(const struct src_sim *sim);
/* Enables and disables seen so far (tests count them). */
int src_sim_enables(const struct src_sim *sim);
int src_sim_live(const struct src_sim *sim);

#endif

/*
 * eng_sampler.h - reading the target's counters and timers from shared
 * memory, without stopping it (devguide §1.9, §1.10, §1.15).
 *
 * One sampler per target process.  The caller drives it: call
 * eng_sampler_tick() once per sample period (a timerfd in the main
 * loop).  Each tick drains the thread-event ring, scans the thread table
 * (new threads; exiting threads get a final sample, their block cleaned
 * and their index freed), reads every live variable of every live thread
 * with the protector protocol, adds the running part of active timers
 * from outside (rdtsc or CLOCK_MONOTONIC for wall timers; schedstat for
 * CPU timers, read once per thread per tick), checks timers never go
 * backwards, and measures observed cost and its own cost.
 *
 * The segment is untrusted: the sampler works from its own copy of the
 * layout, bounds-checks every index and count it reads, bounds every loop
 * and retry, and reports what it had to reject (eng_sampler_problem).
 *
 * Units: counters as written; timers in ns (converted from native).
 */
#ifndef ENG_SAMPLER_H
#define ENG_SAMPLER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "hunch_err.h"
#include "eng_rt_vars.h"
#include "eng_shm.h"

struct eng_sampler;

#define ENG_SAMPLER_DEFAULT_HZ 5.0

int eng_sampler_create(struct eng_shm *shm, struct eng_sampler **out,
		       struct hunch_err *err);
void eng_sampler_destroy(struct eng_sampler *s);
/* The target's pid (needed for CPU timers and cost; set after launch). */
void eng_sampler_set_pid(struct eng_sampler *s, pid_t pid);
/* Sampling rate: 0.1 .. 1000 Hz (default 5). */
int eng_sampler_set_rate(struct eng_sampler *s, double hz,
			 struct hunch_err *err);

/* Variables (hunch is the only allocator).  The handle goes to the
 * instrumentation.  Free only once no instrumentation uses the handle:
 * the slot is zeroed in every block before it can be handed out again. */
int eng_sampler_var_alloc(struct eng_sampler *s, enum eng_var_kind kind,
			  uint32_t *id, uint64_t *handle, struct hunch_err *err);
void eng_sampler_var_free(struct eng_sampler *s, uint32_t id);

int eng_sampler_tick(struct eng_sampler *s, struct hunch_err *err);

struct eng_var_agg {
	int64_t sum;        /* live threads + retired */
	int64_t live_sum;   /* live threads only */
	int64_t retired;    /* final values of threads that exited */
	int64_t min, max;   /* over live threads (0 when none) */
	double avg;         /* live_sum / nlive */
	uint32_t nlive;
	uint32_t nstale;    /* live threads whose value is stale (below) */
};
int eng_sampler_var_agg(const struct eng_sampler *s, uint32_t id,
			struct eng_var_agg *a);
/* Read `id` in every adopted thread now, without a tick (the metric
 * compiler does after enabling, so a value reads as of then). */
int eng_sampler_var_refresh(struct eng_sampler *s, uint32_t id);
/* The value of `id` in live thread `idx`; -ENOENT if not live. */
int eng_sampler_var_thread(const struct eng_sampler *s, uint32_t id,
			   uint32_t idx, int64_t *v);
/* Whether the last read of timer `id` in live thread `idx` kept the value
 * before: the thread was inside an update of the timer (descheduled
 * between the protector increments, so no retry can wait it out).  Its
 * time since then is not lost, it shows at the next read; a rate over
 * that interval would read 0, and the next one twice. */
bool eng_sampler_var_stale(const struct eng_sampler *s, uint32_t id,
			   uint32_t idx);

struct eng_thread_info {
	uint32_t idx, gen;
	int32_t tid;
	uint64_t start_fn;
};
/* Live thread `idx` as of the last tick; -ENOENT if none. */
int eng_sampler_thread(const struct eng_sampler *s, uint32_t idx,
		       struct eng_thread_info *t);

enum eng_thread_event_kind { ENG_THREAD_NEW = 1, ENG_THREAD_EXIT = 2 };
struct eng_thread_event {
	enum eng_thread_event_kind kind;
	struct eng_thread_info t;
};
/* Next thread event found by a tick; 1 when one was returned, 0 if none. */
int eng_sampler_next_event(struct eng_sampler *s, struct eng_thread_event *e);

struct eng_sampler_stats {
	uint64_t ticks;
	uint64_t timer_reads, retries, skipped;  /* protector protocol */
	uint64_t rollbacks;        /* timer values that went backwards */
	uint64_t corrupt;          /* rejected values read from the segment */
	uint64_t threads_new, threads_retired, events_dropped;
	uint64_t ring_new, ring_exit, ring_lost;
	uint32_t live_threads, max_index;  /* highest index ever seen */
	uint64_t rt_no_index;      /* as the target reports it (untrusted) */
	/* Observed cost of the last tick, and in all (native units). */
	uint64_t obs_cost_ns, target_cpu_ns, obs_cost_total;
	double obs_fraction;       /* obs_cost_ns / target_cpu_ns */
	/* The slowdown it is: obs_cost_ns over the CPU time the target
	 * would have used without it (target_cpu_ns - obs_cost_ns), what
	 * the cost limit bounds; ENG_SAMPLER_MAX_SLOWDOWN when the
	 * instrumentation took the whole tick. */
	double obs_slowdown;
	/* The sampler's own cost. */
	uint64_t last_cpu_ns, last_wall_ns, total_cpu_ns;
	double cost_fraction;      /* of one core at the current rate */
};
#define ENG_SAMPLER_MAX_SLOWDOWN 100.0
const struct eng_sampler_stats *eng_sampler_stats(const struct eng_sampler *s);
/* The last thing rejected from the segment, "" if nothing. */
const char *eng_sampler_problem(const struct eng_sampler *s);

#endif

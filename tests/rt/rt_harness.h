/*
 * rt_harness.h - launching a test target with the runtime library
 * preloaded and a segment inherited, and sampling it at a fixed rate
 * while waiting for its lines (tests/rt only; process control by ptrace
 * is the engine's job, these tests only need "called directly").
 */
#ifndef RT_HARNESS_H
#define RT_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "eng_sampler.h"
#include "eng_shm.h"

struct rth;
typedef void (*rth_tick_fn)(struct rth *h, void *ctx);

struct rth {
	struct eng_shm *shm;
	struct eng_sampler *smp;
	const char *prog;       /* rt_prog path (argv[1] of the test) */
	pid_t pid;
	int to, from;           /* the target's stdin and stdout */
	char buf[4096];
	size_t blen;
	double hz;
	uint64_t next_tick;     /* CLOCK_MONOTONIC ns */
	uint64_t max_tick_ns;   /* longest tick seen (wall time) */
	uint64_t max_tick_cpu_ns; /* most CPU time one tick used: unlike
				   wall time, not stretched by a loaded
				   machine preempting the harness */
	uint64_t nticks;        /* ticks made by the harness */
	rth_tick_fn on_tick;
	uint64_t tick_start_ns;   /* when the current tick's reads began */
	void *ctx;
	int status;             /* wait status once reaped */
	bool reaped;
};

/* Segment (default layout, or `named`) and sampler; exits on failure. */
void rth_init(struct rth *h, const char *prog, double hz, bool named);
/* Allocate a variable; returns its id, handle in *handle. */
uint32_t rth_var(struct rth *h, enum eng_var_kind k, uint64_t *handle);
/* fork + exec prog with args (NULL-terminated, without argv[0]); with
 * `preload`, HUNCH_SHM_FD and LD_PRELOAD=$HUNCHRT.  Waits for the
 * handshake unless !preload. */
int rth_launch(struct rth *h, bool preload, const char *const *args);
/* Tick at h->hz until the target prints a line starting with `prefix`
 * (copied to out) or timeout; 0 on success. */
int rth_wait_line(struct rth *h, const char *prefix, char *out, size_t len,
		  int timeout_ms);
int rth_send(struct rth *h, const char *line);
/* Tick until the target exits (0, status in h->status) or timeout. */
int rth_wait_exit(struct rth *h, int timeout_ms);
/* Tick for `ms` milliseconds. */
void rth_run(struct rth *h, int ms);
/* Make `n` ticks at h->hz (however long that takes on a loaded machine,
 * up to timeout_ms); 0 when all were made. */
int rth_ticks(struct rth *h, uint64_t n, int timeout_ms);
/* One tick now (also calls on_tick). */
void rth_tick(struct rth *h);
void rth_fini(struct rth *h);
uint64_t rth_now_ns(void);

#endif

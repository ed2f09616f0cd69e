/*
 * rt_internal.h - state shared by the files of libhunchrt.so.
 *
 * Globals are written once, when the segment is mapped (before any
 * primitive can see them as valid), and read on hot paths.  Per-thread
 * state lives in initial-exec TLS so that finding it costs one %fs load
 * (devguide §7.7); the block pointer is a separate variable because
 * trampolines load it directly from its published %fs offset.
 */
#ifndef RT_INTERNAL_H
#define RT_INTERNAL_H

#include "hunch_abi.h"

#include <linux/perf_event.h>
#include <pthread.h>
#include <stdint.h>
#include <time.h>

#define RT_EXPORT __attribute__((visibility("default")))
#define RT_TLS __thread __attribute__((tls_model("initial-exec")))
#define rt_likely(x) __builtin_expect(!!(x), 1)
#define rt_unlikely(x) __builtin_expect(!!(x), 0)
#define rt_barrier() __asm__ __volatile__("" ::: "memory")

/* Thread states kept in TLS (not the shared table states). */
enum rt_tstate {
	RT_T_NEW = 0,        /* not registered yet: next primitive tries */
	RT_T_LIVE = 1,       /* holds an index; rt_tls_block is valid */
	RT_T_NOINDEX = 2,    /* table was full: retry at later primitives */
	RT_T_DEAD = 3,       /* exited, or inert after fork: never again */
};

struct rt_tls {
	int state;           /* enum rt_tstate */
	int registering;     /* re-entry guard (signal during registration) */
	int idx;
	uint32_t gen;
	uint32_t noindex_calls;  /* primitives since the table was full */
	/* CPU clock (rt_cpu.c) */
	int cpu_tried;       /* perf page open attempted */
	int perf_fd;
	volatile struct perf_event_mmap_page *pg;
	uint32_t seq;        /* pg->lock when cpu0/tsc0 were taken */
	uint64_t cpu0;       /* exact thread CPU ns at tsc0 */
	uint64_t tsc0;
};

struct rt_global {
	struct hunch_shm_header *shm;   /* NULL until mapped */
	size_t shm_size;
	char *blocks;
	struct hunch_thread_slot *table;
	struct hunch_ring_entry *ring;
	uint64_t ring_mask;
	uint64_t counter_mask;  /* keeps any handle inside the own block */
	uint64_t timer_mask;
	uint32_t max_threads;
	uint32_t block_shift;
	int wall_hw;            /* 1: rdtsc, 0: CLOCK_MONOTONIC */
	int cpu_hw;             /* 1: perf lock trick, 0: syscall per read */
	uint64_t tsc_mult;
	uint32_t tsc_shift;
	/* TSC ticks a CPU reading may be extended by before an exact one
	 * (RT_CPU_TRUST_NS): see rt_cpu.c */
	uint64_t cpu_trust_ticks;
	int inert;              /* set in a forked child */
	pthread_key_t key;      /* destructor notices thread exit */
	int key_ok;
};

/* Longest a thread's CPU reading is extended by the TSC from an exact
 * one (rt_cpu.c): 10 ms, an exact reading (a system call, ~0.3 us) per
 * 10 ms of running at most. */
#define RT_CPU_TRUST_NS 10000000ull

extern struct rt_global rt_g;
extern RT_TLS char *rt_tls_block;
extern RT_TLS struct rt_tls rt_t;

static inline uint64_t rt_rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

static inline uint64_t rt_clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t rt_wall_now(void)
{
	if (rt_likely(rt_g.wall_hw))
		return rt_rdtsc();
	return rt_clock_ns(CLOCK_MONOTONIC);
}

static inline uint64_t rt_tsc_to_ns(uint64_t ticks)
{
	return (uint64_t)(((unsigned __int128)ticks * rt_g.tsc_mult) >>
			  rt_g.tsc_shift);
}

/* Increments that a signal handler on the same thread cannot tear: one
 * instruction, no lock prefix (single writer, so no bus lock needed). */
static inline void rt_inc(volatile uint64_t *p)
{
	__asm__ __volatile__("incq %0" : "+m"(*p) : : "memory");
}

static inline int64_t rt_xadd(volatile int64_t *p, int64_t v)
{
	__asm__ __volatile__("xaddq %0, %1" : "+r"(v), "+m"(*p) : : "memory");
	return v;
}

/* The calling thread's block, registering it on first use; NULL when
 * there is no segment, the thread has exited, or no index is free. */
char *rt_thread_block_slow(void);

static inline char *rt_block(void)
{
	char *b = rt_tls_block;

	if (rt_likely(b != NULL))
		return b;
	return rt_thread_block_slow();
}

/* rt_thread.c */
int rt_thread_init(void);                 /* once, after mapping */
/* rt_trap.c: the SIGTRAP handler, in place from the handshake on (it
 * also finishes inferior calls that hunch could not), and the int3
 * inferior calls return to. */
int rt_trap_handler_init(void);
void hunchrt_infcall_ret(void);
char *rt_thread_register(uint64_t start_fn);
void rt_thread_fork_child(void);

/* rt_cpu.c */
uint64_t rt_cpu_now(void);
void rt_cpu_close(void);
/* Once, before any thread opens its perf page; and in a forked child,
 * the inherited page dropped (its fork handler, rt_thread.c). */
void rt_cpu_init(void);
void rt_cpu_forked(void);
void rt_cpu_mark_activation(void);

#endif

/*
 * hunchrt.h - the functions libhunchrt.so exports.
 *
 * Trampolines call (or inline) these; tests and benchmarks call them
 * directly.  A handle is a variable's offset inside every per-thread block,
 * handed out by hunch (engine/eng_rt_vars.h).  All primitives are
 * async-signal-safe, allocate nothing and take no lock; a bad handle can
 * only touch the calling thread's own block.  Before the segment is mapped,
 * after the thread exited, and in a forked child they do nothing.
 */
#ifndef HUNCHRT_H
#define HUNCHRT_H

#include <stdint.h>

#define HUNCHRT_API __attribute__((visibility("default")))

HUNCHRT_API int hunchrt_attach(const char *shm_name);
HUNCHRT_API long hunchrt_ping(long x);

/* Counters: 64-bit, single writer, no atomics. */
HUNCHRT_API void hunchrt_counter_add(uint64_t h, int64_t delta);
HUNCHRT_API void hunchrt_counter_set(uint64_t h, int64_t value);

/* Timers with nesting and the protector protocol (devguide §1.9); a stop
 * without a start is ignored. */
HUNCHRT_API void hunchrt_wall_start(uint64_t h);
HUNCHRT_API void hunchrt_wall_stop(uint64_t h);
HUNCHRT_API void hunchrt_cpu_start(uint64_t h);
HUNCHRT_API void hunchrt_cpu_stop(uint64_t h);

/* Trampoline guard: returns 1 and sets the flag when it was clear, 0 when
 * instrumentation is already running on this thread (or no block). */
HUNCHRT_API int hunchrt_guard_enter(void);
HUNCHRT_API void hunchrt_guard_leave(void);
/* Add to this thread's observed-cost counter (wall native units). */
HUNCHRT_API void hunchrt_cost_add(uint64_t native);

/* Trap fallback (rt_trap.c): install the SIGTRAP handler that sends an
 * int3 at an instrumentation point to its trampoline (table: cap
 * struct hunch_trap_entry, cap a power of two) and passes every other
 * SIGTRAP to the program's own disposition.  0 or -errno. */
HUNCHRT_API int hunchrt_trap_install(uint64_t table, uint64_t cap);
/* Register the .eh_frame blocks of relocated functions' copies, n
 * addresses in list (rt_frames.c); returns how many were. */
HUNCHRT_API long hunchrt_frames_register(uint64_t list, uint64_t n);
/* Deregister such blocks (copies hunch frees); returns how many were. */
HUNCHRT_API long hunchrt_frames_deregister(uint64_t list, uint64_t n);

/* The calling thread's block (registering it), NULL if none. */
HUNCHRT_API void *hunchrt_block(void);
/* The calling thread's index, -1 if it has none. */
HUNCHRT_API int hunchrt_thread_index(void);
/* Current readings of the clocks the timers use (native units). */
HUNCHRT_API uint64_t hunchrt_wall_now(void);
HUNCHRT_API uint64_t hunchrt_cpu_now(void);
/* Tests and benchmarks only: switch timer levels (enum
 * hunch_timer_level; -1 keeps).  Only safe while no timer is running. */
HUNCHRT_API void hunchrt_force_levels(int wall, int cpu);

#endif

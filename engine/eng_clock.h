/*
 * eng_clock.h - hunch's clocks: TSC calibration and timer levels.
 *
 * The runtime library keeps wall timers in native units (TSC ticks at the
 * hardware level, CLOCK_MONOTONIC ns at the software level) and CPU timers
 * in ns; hunch converts (devguide §1.17: conversion is moved out of the
 * target).  The hardware wall level needs an invariant TSC (cpuinfo flags
 * constant_tsc and nonstop_tsc) and a calibration against CLOCK_MONOTONIC.
 */
#ifndef ENG_CLOCK_H
#define ENG_CLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "hunch_err.h"
#include "clock_mono.h"  /* clock_mono_ns, for the sampler's users */

struct eng_clock {
	bool tsc_invariant;     /* cpuinfo says constant_tsc nonstop_tsc */
	double tsc_hz;          /* calibrated, 0 when not calibrated */
	uint64_t tsc_mult;      /* ns = (ticks * mult) >> shift */
	uint32_t tsc_shift;
	int wall_level;         /* enum hunch_timer_level */
	int cpu_level;          /* requested; the rtlib may still fall back */
	bool show;              /* HUNCH_SHOW_TIMER_INFO was set */
};

/* Check the TSC, calibrate it for `calib_ms` (0 = 20 ms) and choose the
 * levels, honouring HUNCH_SOFTWARE_LEVEL_{WALL,CPU}_TIMER from `getenv`
 * (pass getenv, or NULL to ignore the environment). */
int eng_clock_init(struct eng_clock *c, unsigned calib_ms,
		   char *(*env)(const char *), struct hunch_err *err);

static inline uint64_t eng_rdtsc(void)
{
	uint32_t lo, hi;

	/* Inline asm is a compiler extension: rdtsc has no C spelling. */
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

uint64_t eng_clock_thread_cpu_ns(void);
/* Now, in the wall level's native units (as the rtlib reads it). */
uint64_t eng_clock_wall_native(const struct eng_clock *c);
/* Native wall units to ns (identity at the software level). */
uint64_t eng_clock_wall_to_ns(const struct eng_clock *c, uint64_t native);
/* One line describing the levels, for HUNCH_SHOW_TIMER_INFO and logs. */
void eng_clock_describe(const struct eng_clock *c, char *buf, unsigned len);

#endif

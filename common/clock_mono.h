/*
 * clock_mono.h - the monotonic clock, in the units its callers use.
 *
 * Every deadline, timeout and timestamp in hunch (the tool side, never the
 * runtime library, which has its own TSC clock) reads CLOCK_MONOTONIC
 * through these, so that all of them agree and none is hand-written.
 */
#ifndef CLOCK_MONO_H
#define CLOCK_MONO_H

#include <stdint.h>

uint64_t clock_mono_ns(void);
uint64_t clock_mono_ms(void);
double clock_mono_s(void);

#endif

/* clock_mono.c - CLOCK_MONOTONIC in ns, ms and seconds (see clock_mono.h). */
#include "clock_mono.h"

#include <time.h>

uint64_t clock_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t clock_mono_ms(void)
{
	return clock_mono_ns() / 1000000u;
}

double clock_mono_s(void)
{
	return (double)clock_mono_ns() / 1e9;
}

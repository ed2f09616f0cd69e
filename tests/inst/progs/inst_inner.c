/*
 * inst_inner.c - catchup targets whose function is an inner frame (not
 * main, not a thread's start routine), so nothing recorded when it began
 * and catchup has to ask the stack samples
 * (tests/inst/inst_catchup_samples.c).
 *
 *   inst_inner spin   main -> cu_helper -> cu_inner, which prints
 *                     "begin <CLOCK_MONOTONIC ns> <thread CPU ns>" (read
 *                     as it starts) and "spinning", spins 3 s, then main
 *                     prints "done" and waits for a line.
 *   inst_inner reenter  main prints "log <addr of struct cu_log>" and
 *                     "calling", then cu_caller calls cu_short 1,000,000
 *                     times (~6 us each), prints "done" and waits.
 *
 * cu_short accounts for the time the thread spends OUTSIDE it, which is
 * exactly what a catchup dated by samples can count too much: the gap
 * from its last rdtsc to the first rdtsc of the next call, summed in
 * `out`, and the running sum at the first call of each 2^20-tick slot of
 * the TSC in `slot_out` (+1, so 0 means no call began in that slot).
 * Gaps over 50 us are also summed apart (`long_out`, `slot_long`): the
 * thread was off the CPU then (preempted, as every thread is under load),
 * which CPU-time samples cannot see.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#if defined(__clang__)
#define NOI __attribute__((noinline))
#else
#define NOI __attribute__((noipa))
#endif

#define SLOTS 65536
#define SLOT_SHIFT 20

struct cu_log {
	uint64_t tsc0;          /* TSC when cu_caller began */
	uint64_t out;           /* ticks outside cu_short, up to the newest
				 * call's start */
	uint64_t long_out;      /* the part of it in gaps over 50 us */
	uint64_t long_ticks;    /* what 50 us is in ticks (calibrated) */
	uint64_t calls;
	uint64_t slot_out[SLOTS];
	uint64_t slot_long[SLOTS];
};

static struct cu_log lg;
static uint64_t last_exit;
static volatile double sink;

static uint64_t rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

static uint64_t ns_of(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

NOI double cu_work(double x)
{
	return x * 1.0000001 + 1e-9;
}

/* ---- spin ---- */

/* The clock is read every 2^20 calls of cu_work (a few ms), so samples
 * almost never land in the vDSO. */
NOI long cu_inner(double secs)
{
	uint64_t start = ns_of(CLOCK_MONOTONIC), end;
	double x = 1;

	printf("begin %llu %llu\nspinning\n", (unsigned long long)start,
	       (unsigned long long)ns_of(CLOCK_THREAD_CPUTIME_ID));
	fflush(stdout);
	end = start + (uint64_t)(secs * 1e9);
	while (ns_of(CLOCK_MONOTONIC) < end)
		for (int i = 0; i < (1 << 20); i++)
			x = cu_work(x);
	return x > 0;
}

NOI long cu_helper(double secs)
{
	return cu_inner(secs) + 1;
}

/* ---- reenter ---- */

NOI void cu_short(void)
{
	uint64_t t = rdtsc(), slot;
	double x = sink;

	if (last_exit != 0) {
		uint64_t gap = t - last_exit;

		lg.out += gap;
		if (gap > lg.long_ticks)
			lg.long_out += gap;
	}
	slot = (t - lg.tsc0) >> SLOT_SHIFT;
	if (slot < SLOTS && lg.slot_out[slot] == 0) {
		lg.slot_out[slot] = lg.out + 1;
		lg.slot_long[slot] = lg.long_out + 1;
	}
	for (int i = 0; i < 2500; i++)
		x = x * 1.0000001 + 1e-9;
	sink = x;
	lg.calls++;
	last_exit = rdtsc();
}

NOI void cu_caller(long n)
{
	for (long i = 0; i < n; i++)
		cu_short();
}

/* 50 us in TSC ticks, measured against CLOCK_MONOTONIC. */
static uint64_t ticks_50us(void)
{
	uint64_t t0 = rdtsc(), n0 = ns_of(CLOCK_MONOTONIC), n1;

	do
		n1 = ns_of(CLOCK_MONOTONIC);
	while (n1 - n0 < 20000000);
	return (rdtsc() - t0) * 50000 / (n1 - n0);
}

int main(int argc, char **argv)
{
	char line[16];
	long r = 0;

	if (argc == 2 && strcmp(argv[1], "spin") == 0) {
		r = cu_helper(3.0);
	} else if (argc == 2 && strcmp(argv[1], "reenter") == 0) {
		lg.long_ticks = ticks_50us();
		printf("log %p\ncalling\n", (void *)&lg);
		fflush(stdout);
		lg.tsc0 = rdtsc();
		cu_caller(1000000);
		r = (long)lg.calls;
	} else {
		fprintf(stderr, "usage: inst_inner spin|reenter\n");
		return 2;
	}
	printf("done %ld\n", r);
	fflush(stdout);
	return fgets(line, sizeof line, stdin) == NULL;
}

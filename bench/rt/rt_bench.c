/*
 * rt_bench.c - cost of the runtime library's primitives and of sampling,
 * against rdtsc and an empty function call measured in the same run.
 *
 *   build/bench/rt/rt_bench [--quick]
 *
 * The benchmark maps its own segment (named, hunchrt_attach), so the
 * primitives run in this process exactly as they would in a target, and
 * samples itself.  Each figure is the best of 5 runs.  "cycles" are TSC
 * ticks (the TSC runs at a constant rate; see the GHz line).
 */
#include "eng_clock.h"
#include "eng_sampler.h"
#include "eng_shm.h"
#include "hunchrt.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double tsc_ghz;
static int quick;

/* Measured functions: noinline + called through a volatile pointer so the
 * loop pays exactly one real call, like a trampoline would. */
__attribute__((noinline)) static void empty(uint64_t h)
{
	__asm__ __volatile__("" : : "r"(h) : "memory");
}

typedef void (*op_fn)(uint64_t h);

static uint64_t H;   /* handle under test */
static int64_t tls_off;

static void op_empty(uint64_t h) { empty(h); }
static void op_rdtsc(uint64_t h) { (void)h; (void)eng_rdtsc(); }
static void op_mono(uint64_t h) { (void)h; (void)clock_mono_ns(); }
static void op_tcpu(uint64_t h) { (void)h; (void)eng_clock_thread_cpu_ns(); }
static void op_add(uint64_t h) { hunchrt_counter_add(h, 1); }
static void op_wall(uint64_t h) { hunchrt_wall_start(h); hunchrt_wall_stop(h); }
static void op_cpu(uint64_t h) { hunchrt_cpu_start(h); hunchrt_cpu_stop(h); }

/* What a trampoline emits for a counter: load the block from %fs, add. */
static void op_add_inline(uint64_t h)
{
	char *b;

	__asm__ __volatile__("mov %%fs:(%1), %0" : "=r"(b) : "r"(tls_off));
	if (b != NULL)
		*(volatile int64_t *)(b + h) += 1;
}

struct row {
	const char *name;
	op_fn fn;
	long iters;
	const char *goal;
	double ns, cyc;
};

static double run(op_fn fn, long n, double *cyc)
{
	double best = 1e30, bestc = 0;
	int r;

	for (r = 0; r < 5; r++) {
		uint64_t t0 = clock_mono_ns(), c0 = eng_rdtsc(), c1, t1;
		void (*volatile f)(uint64_t) = fn;
		long i;

		for (i = 0; i < n; i++)
			f(H);
		c1 = eng_rdtsc();
		t1 = clock_mono_ns();
		if ((double)(t1 - t0) / n < best) {
			best = (double)(t1 - t0) / n;
			bestc = (double)(c1 - c0) / n;
		}
	}
	*cyc = bestc;
	return best;
}

static void measure(struct row *r)
{
	long n = quick ? r->iters / 10 : r->iters;

	r->ns = run(r->fn, n, &r->cyc);
}

static void primitives(struct eng_sampler *s)
{
	uint64_t hc, hw, hcpu;
	uint32_t id;
	struct row rows[] = {
		{ "empty function call (baseline)", op_empty, 20000000, "", 0, 0 },
		{ "rdtsc (baseline)", op_rdtsc, 20000000, "", 0, 0 },
		{ "clock_gettime MONOTONIC", op_mono, 10000000, "", 0, 0 },
		{ "clock_gettime THREAD_CPUTIME", op_tcpu, 200000, "", 0, 0 },
		{ "counter add (exported call)", op_add, 20000000, "", 0, 0 },
		{ "counter add (inline, trampoline form)", op_add_inline, 20000000,
		  "<= 1 ns", 0, 0 },
		{ "wall timer start+stop, hw (rdtsc)", op_wall, 10000000,
		  "<= 1.2x two rdtsc", 0, 0 },
		{ "CPU timer start+stop, hw (perf lock)", op_cpu, 10000000,
		  "<= 60 ns", 0, 0 },
		{ "wall timer start+stop, sw (MONOTONIC)", op_wall, 5000000, "", 0, 0 },
		{ "CPU timer start+stop, sw (syscall)", op_cpu, 200000, "", 0, 0 },
	};
	unsigned i, n = sizeof(rows) / sizeof(rows[0]);
	double call, tsc;

	eng_sampler_var_alloc(s, ENG_VAR_COUNTER, &id, &hc, NULL);
	eng_sampler_var_alloc(s, ENG_VAR_WALL_TIMER, &id, &hw, NULL);
	eng_sampler_var_alloc(s, ENG_VAR_CPU_TIMER, &id, &hcpu, NULL);
	hunchrt_counter_add(hc, 0);   /* register this thread */
	for (i = 0; i < n; i++) {
		H = rows[i].fn == op_wall ? hw : rows[i].fn == op_cpu ? hcpu : hc;
		if (i == 8)
			hunchrt_force_levels(HUNCH_LEVEL_SW, HUNCH_LEVEL_SW);
		measure(&rows[i]);
	}
	hunchrt_force_levels(HUNCH_LEVEL_HW, HUNCH_LEVEL_HW);
	call = rows[0].ns;
	tsc = rows[1].ns;
	printf("%-40s %9s %9s %8s %8s %9s  %s\n", "primitive", "ns", "cycles",
	       "x rdtsc", "x call", "net ns", "goal");
	for (i = 0; i < n; i++)
		printf("%-40s %9.2f %9.1f %8.2f %8.2f %9.2f  %s\n", rows[i].name,
		       rows[i].ns, rows[i].cyc, rows[i].ns / tsc,
		       rows[i].ns / call, rows[i].ns - call, rows[i].goal);
	printf("\nwall pair / two rdtsc = %.2f (goal <= 1.2); net of the call: "
	       "%.2f\n", rows[6].ns / (2 * tsc), (rows[6].ns - call) / (2 * tsc));
	printf("CPU pair hw = %.1f ns (goal <= 60); sw pair = %.1f ns\n",
	       rows[7].ns, rows[9].ns);
}

static pthread_barrier_t bar;

static void *parked(void *arg)
{
	uint64_t *h = arg;

	hunchrt_counter_add(*h, 1);   /* register */
	pthread_barrier_wait(&bar);
	pthread_barrier_wait(&bar);
	return NULL;
}

/* With `running`, this thread starts every timer first, so each read
 * also computes the running part (rdtsc, or schedstat once per tick). */
static void sampler_cost(struct eng_shm *shm, enum eng_var_kind k,
			 unsigned nvars, unsigned nthreads, int running,
			 const char *what)
{
	struct eng_sampler *s;
	pthread_t t[64];
	uint64_t h = 0, best = UINT64_MAX;
	unsigned i;
	uint32_t id;
	int tick;
	double per;

	if (eng_sampler_create(shm, &s, NULL) < 0)
		return;
	eng_sampler_set_pid(s, getpid());
	for (i = 0; i < nvars; i++) {
		if (eng_sampler_var_alloc(s, k, &id, &h, NULL) < 0)
			break;
		if (running && k == ENG_VAR_WALL_TIMER)
			hunchrt_wall_start(h);
		else if (running)
			hunchrt_cpu_start(h);
	}
	nvars = i;
	pthread_barrier_init(&bar, NULL, nthreads + 1);
	for (i = 0; i < nthreads; i++)
		pthread_create(&t[i], NULL, parked, &h);
	pthread_barrier_wait(&bar);
	eng_sampler_tick(s, NULL);   /* adopt threads, fault pages in */
	for (tick = 0; tick < (quick ? 3 : 10); tick++) {
		eng_sampler_tick(s, NULL);
		if (eng_sampler_stats(s)->last_cpu_ns < best)
			best = eng_sampler_stats(s)->last_cpu_ns;
	}
	pthread_barrier_wait(&bar);
	for (i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	eng_sampler_tick(s, NULL);   /* retire them */
	per = (double)best / ((double)nvars * nthreads);
	printf("%-34s %7u %4u %10.3f %9.2f %10.3f%%\n", what, nvars, nthreads,
	       best / 1e6, per, best * 5 / 1e9 * 100);
	eng_sampler_destroy(s);
}

static volatile int rate_stop;

static void *busy_adder(void *arg)
{
	uint64_t h = *(uint64_t *)arg;

	while (!rate_stop)
		hunchrt_counter_add(h, 1);
	return NULL;
}

/* The rate the sampler keeps while 8 threads use the primitives flat
 * out on this machine (as in tests/rt/rt_exact): ticks asked at 100 Hz
 * on an absolute schedule, late ticks not made up.  A speed target, so
 * it lives here and not in the tests (they must pass on a loaded
 * machine). */
static void sampler_rate(struct eng_shm *shm)
{
	struct eng_sampler *s;
	pthread_t t[8];
	uint64_t h = 0, t0, next, end, last = 0, period = 10000000;
	uint32_t id;
	unsigned i;
	int ticks = 0;
	double hz;

	if (eng_sampler_create(shm, &s, NULL) < 0 ||
	    eng_sampler_var_alloc(s, ENG_VAR_COUNTER, &id, &h, NULL) < 0)
		return;
	eng_sampler_set_pid(s, getpid());
	rate_stop = 0;
	for (i = 0; i < 8; i++)
		pthread_create(&t[i], NULL, busy_adder, &h);
	t0 = next = clock_mono_ns();
	end = t0 + (quick ? 500000000ull : 3000000000ull);
	while (next < end) {
		struct timespec ts = { (time_t)(next / 1000000000u),
				       (long)(next % 1000000000u) };

		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		last = clock_mono_ns();
		eng_sampler_tick(s, NULL);
		ticks++;
		next += period;
		if (next < clock_mono_ns())   /* late: do not burst */
			next = clock_mono_ns() + period;
	}
	/* ticks - 1 periods between the first tick (at t0) and the last */
	hz = (ticks - 1) / ((last - t0) / 1e9);
	rate_stop = 1;
	for (i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	eng_sampler_tick(s, NULL);
	printf("\nsampler rate, 100 Hz asked, 8 busy threads: %.1f Hz "
	       "(goal >= 70 Hz: %s)\n", hz, hz >= 70 ? "met" : "MISSED");
	eng_sampler_destroy(s);
}

int main(int argc, char **argv)
{
	struct hunch_err err = { 0 };
	struct eng_shm *shm;
	struct eng_sampler *s;
	const struct eng_clock *clk;
	char desc[256];

	quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
	if (eng_shm_create(0, true, &shm, &err) < 0 ||
	    hunchrt_attach(eng_shm_name(shm)) != 0 ||
	    eng_shm_check_ready(shm, &err) != 0) {
		fprintf(stderr, "rt_bench: %s\n", err.msg[0] ? err.msg :
			"hunchrt_attach failed");
		return 1;
	}
	eng_shm_unlink(shm);
	tls_off = eng_shm_header(shm)->rt_tls_block_off;
	clk = eng_shm_clock(shm);
	tsc_ghz = clk->tsc_hz / 1e9;
	eng_clock_describe(clk, desc, sizeof(desc));
	printf("rt_bench: %s; rtlib CPU level %s\n\n", desc,
	       eng_shm_header(shm)->rt_cpu_level == HUNCH_LEVEL_HW ?
	       "hardware" : "software");
	if (eng_sampler_create(shm, &s, &err) < 0)
		return 1;
	primitives(s);
	eng_sampler_destroy(s);
	printf("\n%-34s %7s %4s %10s %9s %11s\n", "sampler (per tick)", "vars",
	       "thr", "ms/tick", "ns/var", "core @5Hz");
	/* Each sampler allocates from offset 64 again: they run one after
	 * the other on the same blocks, which is fine for timing. */
	sampler_cost(shm, ENG_VAR_COUNTER, 100000, 1, 0, "counters");
	sampler_cost(shm, ENG_VAR_WALL_TIMER, 100000, 1, 0,
		     "wall timers (stopped)");
	sampler_cost(shm, ENG_VAR_WALL_TIMER, 100000, 1, 1,
		     "wall timers (running)");
	sampler_cost(shm, ENG_VAR_CPU_TIMER, 100000, 1, 1,
		     "CPU timers (running)");
	sampler_cost(shm, ENG_VAR_COUNTER, 12500, 8, 0, "counters, 8 threads");
	printf("\ngoal: 100,000 variables at 5 Hz under 2%% of one core\n");
	sampler_rate(shm);
	eng_shm_destroy(shm);
	return 0;
}

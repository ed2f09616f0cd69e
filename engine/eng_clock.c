/*
 * eng_clock.c - TSC check and calibration, timer-level choice.
 */
#include "eng_clock.h"
#include "hunch_abi.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

uint64_t eng_clock_thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Both flags on the first "flags" line; a VM that hides them gets the
 * software level, which is slower but always right. */
static bool tsc_flags_ok(void)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[8192];
	bool ok = false;

	if (f == NULL)
		return false;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "flags", 5) != 0)
			continue;
		ok = strstr(line, " constant_tsc") != NULL &&
		     strstr(line, " nonstop_tsc") != NULL;
		break;
	}
	fclose(f);
	return ok;
}

/* A (mono, tsc) pair read as close together as possible: the best of a
 * few tries by the width of the monotonic window around rdtsc. */
static void sample_pair(uint64_t *mono, uint64_t *tsc)
{
	uint64_t best = UINT64_MAX;
	int i;

	*mono = *tsc = 0;

	for (i = 0; i < 16; i++) {
		uint64_t a = clock_mono_ns();
		uint64_t t = eng_rdtsc();
		uint64_t b = clock_mono_ns();

		if (b - a < best) {
			best = b - a;
			*mono = a + (b - a) / 2;
			*tsc = t;
		}
	}
}

static int calibrate(struct eng_clock *c, unsigned ms, struct hunch_err *err)
{
	uint64_t m0 = 0, t0 = 0, m1 = 0, t1 = 0;
	struct timespec d = { .tv_sec = ms / 1000,
			      .tv_nsec = (long)(ms % 1000) * 1000000L };
	double ns_per_tick;

	sample_pair(&m0, &t0);
	while (nanosleep(&d, &d) != 0 && errno == EINTR)
		;
	sample_pair(&m1, &t1);
	if (t1 <= t0 || m1 <= m0)
		return hunch_err_set(err, -EIO,
				     "the TSC did not advance during "
				     "calibration: use %s=1",
				     HUNCH_ENV_SW_WALL_TIMER);
	c->tsc_hz = (double)(t1 - t0) * 1e9 / (double)(m1 - m0);
	ns_per_tick = 1e9 / c->tsc_hz;
	c->tsc_shift = 32;
	c->tsc_mult = (uint64_t)(ns_per_tick * 4294967296.0 + 0.5);
	return 0;
}

static bool env_set(char *(*env)(const char *), const char *name)
{
	const char *v = env != NULL ? env(name) : NULL;

	return v != NULL && v[0] != '\0' && strcmp(v, "0") != 0;
}

int eng_clock_init(struct eng_clock *c, unsigned calib_ms,
		   char *(*env)(const char *), struct hunch_err *err)
{
	int rc;

	memset(c, 0, sizeof(*c));
	c->wall_level = HUNCH_LEVEL_SW;
	c->cpu_level = HUNCH_LEVEL_SW;
	c->tsc_invariant = tsc_flags_ok();
	c->show = env_set(env, HUNCH_ENV_SHOW_TIMER);
	if (c->tsc_invariant) {
		rc = calibrate(c, calib_ms ? calib_ms : 20, err);
		if (rc < 0)
			return rc;
		c->wall_level = HUNCH_LEVEL_HW;
		c->cpu_level = HUNCH_LEVEL_HW;
	}
	if (env_set(env, HUNCH_ENV_SW_WALL_TIMER))
		c->wall_level = HUNCH_LEVEL_SW;
	if (env_set(env, HUNCH_ENV_SW_CPU_TIMER))
		c->cpu_level = HUNCH_LEVEL_SW;
	if (c->show) {
		char buf[256];

		eng_clock_describe(c, buf, sizeof(buf));
		fprintf(stderr, "hunch: %s\n", buf);
	}
	return 0;
}

uint64_t eng_clock_wall_native(const struct eng_clock *c)
{
	return c->wall_level == HUNCH_LEVEL_HW ? eng_rdtsc()
					       : clock_mono_ns();
}

uint64_t eng_clock_wall_to_ns(const struct eng_clock *c, uint64_t native)
{
	unsigned __int128 p;

	if (c->wall_level != HUNCH_LEVEL_HW)
		return native;
	/* __int128 is a GCC/Clang extension; it keeps long spans exact. */
	p = (unsigned __int128)native * c->tsc_mult;
	return (uint64_t)(p >> c->tsc_shift);
}

void eng_clock_describe(const struct eng_clock *c, char *buf, unsigned len)
{
	snprintf(buf, len, "wall timer level %s (%s), CPU timer level %s "
		 "(%s); TSC %s, %.6f GHz",
		 c->wall_level == HUNCH_LEVEL_HW ? "hardware" : "software",
		 c->wall_level == HUNCH_LEVEL_HW ? "rdtsc" : "CLOCK_MONOTONIC",
		 c->cpu_level == HUNCH_LEVEL_HW ? "hardware" : "software",
		 c->cpu_level == HUNCH_LEVEL_HW
			? "perf task-clock lock + rdtsc"
			: "CLOCK_THREAD_CPUTIME_ID",
		 c->tsc_invariant ? "invariant" : "not invariant",
		 c->tsc_hz / 1e9);
}

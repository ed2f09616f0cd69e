/*
 * rt_corrupt.c - random bytes written over the segment (header, event
 * ring, thread table, blocks) at every tick for 2 s while the sampler
 * reads at 100 Hz and 4 target threads keep using primitives: hunch
 * reports what it rejects, never crashes, never hangs (every tick stays
 * short in CPU time), and goes on sampling afterwards.
 */
#include "rt_harness.h"
#include "tap.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

struct ctx {
	bool on;
	unsigned seed;
	uint64_t writes;
};

static uint64_t rnd64(unsigned *seed)
{
	return ((uint64_t)rand_r(seed) << 42) ^ ((uint64_t)rand_r(seed) << 21) ^
	       (uint64_t)rand_r(seed);
}

static void scribble(struct rth *h, void *p)
{
	struct ctx *c = p;
	const struct eng_shm_layout *lay = eng_shm_layout(h->shm);
	volatile unsigned char *base = eng_shm_base(h->shm);
	int k;

	if (!c->on)
		return;
	for (k = 0; k < 256; k++) {
		uint64_t off, r = rnd64(&c->seed);

		if (k % 2 == 0)   /* header, ring, table */
			off = r % lay->blocks_off;
		else              /* the first 8 blocks' variables */
			off = lay->blocks_off + ((r % 8) << lay->block_shift) +
			      (r >> 20) % 512;
		if (k % 16 == 0 && off + 8 <= lay->size)  /* whole words */
			*(volatile uint64_t *)(base + (off & ~7ull)) =
				rnd64(&c->seed);
		else
			base[off] = (unsigned char)rand_r(&c->seed);
		c->writes++;
	}
}

int main(int argc, char **argv)
{
	struct rth h;
	struct ctx c = { .seed = 12345 };
	char a[2][32];
	const char *args[] = { "busy", a[0], a[1], "4", NULL };
	uint64_t hc, hw, ticks0;
	const struct eng_sampler_stats *st;

	if (argc < 2) {
		fprintf(stderr, "usage: rt_corrupt RT_PROG\n");
		return 2;
	}
	rth_init(&h, argv[1], 100, false);
	rth_var(&h, ENG_VAR_COUNTER, &hc);
	rth_var(&h, ENG_VAR_WALL_TIMER, &hw);
	rth_var(&h, ENG_VAR_CPU_TIMER, &hw);
	snprintf(a[0], sizeof(a[0]), "%llu", (unsigned long long)hc);
	snprintf(a[1], sizeof(a[1]), "%llu", (unsigned long long)hw);
	h.on_tick = scribble;
	h.ctx = &c;
	st = eng_sampler_stats(h.smp);
	rth_launch(&h, true, args);
	tap_ok(rth_wait_line(&h, "done", NULL, 0, 10000) == 0,
	       "busy target running");
	c.on = true;
	rth_run(&h, 2000);
	c.on = false;
	tap_diag("%llu random writes, %llu ticks, longest tick %.3f ms, %llu "
		 "values rejected, last: %s",
		 (unsigned long long)c.writes, (unsigned long long)st->ticks,
		 h.max_tick_ns / 1e6, (unsigned long long)st->corrupt,
		 eng_sampler_problem(h.smp));
	tap_ok(st->corrupt > 0, "hunch reported the corruption");
	tap_ok(eng_sampler_problem(h.smp)[0] != '\0', "with a message");
	/* CPU time, not wall time: a loaded machine may preempt the harness
	 * inside a tick for longer than 100 ms, but a sampler looping over
	 * garbage (a hang) burns CPU. */
	tap_ok(h.max_tick_cpu_ns < 100000000ull, "no tick used 100 ms of CPU "
	       "or more (no hang; most %.3f ms)", h.max_tick_cpu_ns / 1e6);
	ticks0 = st->ticks;
	tap_ok(rth_ticks(&h, 20, 30000) == 0 && st->ticks == ticks0 + 20,
	       "sampling goes on afterwards: 20 more ticks made and counted");
	tap_ok(kill(h.pid, 0) == 0 && waitpid(h.pid, NULL, WNOHANG) == 0,
	       "the target survived its scribbled segment");
	rth_send(&h, "exit\n");
	rth_wait_exit(&h, 5000);
	rth_fini(&h);
	return tap_done();
}

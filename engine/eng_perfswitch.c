/*
 * eng_perfswitch.c - one thread's switch-outs, sampled with their user
 * stack, and its time off a CPU (see eng_perfswitch.h).
 *
 * Why a ring of their own and not the cpu-clock event's: a switch
 * sample copies ENG_PERFSWITCH_STACK bytes, and hundreds a second
 * filled the cpu-clock ring between two drains, whose lost records
 * cleared the thread's retained CPU samples.  Why a dummy event for the
 * switch records: attr.context_switch cannot be turned on for an event
 * already open, and the switch samples are started only when asked
 * (eng_perfsample_offcpu_start), on the cpu-clock sampler's threads.
 */
#include "eng_perfswitch.h"
#include "eng_perfring.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "eng_clock.h"
#include "eng_perfsample.h"

#define RING_PAGES 32
#define RATE_NS 100000000ull    /* the switch rate, over 0.1 s or more */
#define NREGS_USER 17           /* perf's user registers sampled */

struct eng_perfswitch {
	pid_t tid;
	int tp_fd, sw_fd;           /* the tracepoint; the switch records */
	void *map;
	size_t map_len;
	uint64_t period;
	uint64_t rate_n, rate_t0;   /* switch-ins since rate_t0 */
	struct eng_psample pend;    /* the last sampled switch-out */
	bool have_pend;
	struct eng_psample *done;   /* closed since the last hand-on */
	size_t ndone, capdone;
	uint64_t out_ns;            /* the last switch-out, 0: on a CPU */
	uint64_t off_all, off_smp;  /* time off since the last hand-on:
				     * every switch's, the sampled ones' */
	struct eng_perfring_buf ring;  /* a wrapped record, put together */
};

uint64_t eng_perfswitch_tracepoint(void)
{
	static const char *const paths[] = {
		"/sys/kernel/tracing/events/sched/sched_switch/id",
		"/sys/kernel/debug/tracing/events/sched/sched_switch/id",
	};
	unsigned long long id = 0;

	for (size_t i = 0; i < 2 && id == 0; i++) {
		FILE *f = fopen(paths[i], "r");

		if (f == NULL)
			continue;
		if (fscanf(f, "%llu", &id) != 1)
			id = 0;
		fclose(f);
	}
	return id != 0 ? id : ENG_PERFSWITCH_SW_EVENT;
}

static int perf_open(struct perf_event_attr *a, pid_t tid)
{
	a->size = sizeof(*a);
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->wakeup_events = 1u << 30;   /* never woken: drained by polling */
	return (int)syscall(SYS_perf_event_open, a, tid, -1, -1,
			    PERF_FLAG_FD_CLOEXEC);
}

int eng_perfswitch_open(pid_t tid, uint64_t tp, uint64_t regs_mask,
			struct eng_perfswitch **out, const char **why)
{
	struct eng_perfswitch *sw = calloc(1, sizeof(*sw));
	struct perf_event_attr a;
	long page = sysconf(_SC_PAGESIZE);
	int rc;

	*out = NULL;
	if (sw == NULL)
		return -ENOMEM;
	sw->tid = tid;
	sw->sw_fd = -1;
	memset(&a, 0, sizeof(a));
	if (tp == ENG_PERFSWITCH_SW_EVENT) {
		a.type = PERF_TYPE_SOFTWARE;
		a.config = PERF_COUNT_SW_CONTEXT_SWITCHES;
	} else {
		a.type = PERF_TYPE_TRACEPOINT;
		a.config = tp;
	}
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	a.sample_regs_user = regs_mask;
	a.sample_stack_user = ENG_PERFSWITCH_STACK;
	sw->tp_fd = perf_open(&a, tid);
	if (sw->tp_fd < 0) {
		rc = -errno;
		*why = tp == ENG_PERFSWITCH_SW_EVENT ?
		       "the kernel refused a context-switches perf event "
		       "(root or perf_event_paranoid -1 is needed)" :
		       "the kernel refused a sched:sched_switch perf event "
		       "(root or perf_event_paranoid -1 is needed)";
		free(sw);
		return rc;
	}
	sw->map_len = (RING_PAGES + 1) * (size_t)page;
	sw->map = mmap(NULL, sw->map_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       sw->tp_fd, 0);
	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.context_switch = 1;
	a.sample_id_all = 1;
	a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	if (sw->map != MAP_FAILED)
		sw->sw_fd = perf_open(&a, tid);
	if (sw->map == MAP_FAILED || sw->sw_fd < 0 ||
	    ioctl(sw->sw_fd, PERF_EVENT_IOC_SET_OUTPUT, sw->tp_fd) < 0) {
		rc = -errno;
		*why = "the kernel refused the switch records' perf event or "
		       "its ring";
		if (sw->map == MAP_FAILED)
			sw->map = NULL;
		eng_perfswitch_close(sw);
		return rc;
	}
	sw->period = 1;
	sw->rate_t0 = clock_mono_ns();
	*out = sw;
	return 0;
}

void eng_perfswitch_close(struct eng_perfswitch *sw)
{
	if (sw == NULL)
		return;
	if (sw->sw_fd >= 0)
		close(sw->sw_fd);
	if (sw->map != NULL)
		munmap(sw->map, sw->map_len);
	close(sw->tp_fd);
	free(sw->done);
	free(sw->ring.rec);
	free(sw);
}

/* A switch-out sample: pid/tid, time, regs_user (abi + regs),
 * stack_user (size, data, dyn_size); unwound into sw->pend. */
static void switch_out(struct eng_perfswitch *sw, const uint8_t *p,
		       const uint8_t *end, eng_perfswitch_unwind_fn unwind,
		       void *uarg)
{
	uint64_t t_ns, abi, size, dyn = 0;
	const uint64_t *regs = (const uint64_t *)(p + 24);
	const uint8_t *stack = p + 32 + NREGS_USER * 8;

	if (end - p < 32 + NREGS_USER * 8)
		return;
	memcpy(&t_ns, p + 8, 8);
	memcpy(&abi, p + 16, 8);
	if (abi == PERF_SAMPLE_REGS_ABI_NONE)
		return;
	memcpy(&size, p + 24 + NREGS_USER * 8, 8);
	if (size > 0 && (uint64_t)(end - stack) >= size + 8)
		memcpy(&dyn, stack + size, 8);
	if (!unwind(uarg, sw->tid, t_ns, regs, stack, dyn < size ? dyn : size,
		    &sw->pend))
		return;
	sw->pend.cpu_ns = 0;
	sw->have_pend = true;
}

/* A switch record (its sample_id: pid/tid, time): every switch's time
 * off is counted; a switch-in closes the pending sample. */
static void switch_record(struct eng_perfswitch *sw,
			  const struct perf_event_header *h, const uint8_t *p)
{
	uint64_t at, d;

	if (h->size < sizeof(*h) + 16)
		return;
	memcpy(&at, p + 8, 8);
	if (h->misc & PERF_RECORD_MISC_SWITCH_OUT) {
		sw->out_ns = at;
		return;
	}
	sw->rate_n++;
	if (sw->out_ns != 0 && at > sw->out_ns)
		sw->off_all += at - sw->out_ns;
	sw->out_ns = 0;
	if (!sw->have_pend)
		return;
	sw->have_pend = false;
	d = at > sw->pend.t_ns ? at - sw->pend.t_ns : 0;
	if (sw->ndone == sw->capdone) {
		sw->capdone = sw->capdone ? sw->capdone * 2 : 16;
		sw->done = realloc(sw->done, sw->capdone * sizeof(*sw->done));
		if (sw->done == NULL)
			abort();
	}
	sw->done[sw->ndone] = sw->pend;
	sw->done[sw->ndone++].off_ns = d;
	sw->off_smp += d;
}

/* The closed samples, scaled to every switch's time off since the last
 * hand-on; time off with no sample closed waits for the next drain. */
static int hand_on(struct eng_perfswitch *sw, eng_perfswitch_fn fn,
		   void *arg)
{
	size_t n = sw->ndone;
	double scale;

	if (n == 0 || sw->off_smp == 0) {
		sw->ndone = 0;
		return 0;
	}
	scale = (double)sw->off_all / (double)sw->off_smp;
	for (size_t i = 0; i < n; i++) {
		sw->done[i].off_ns = (uint64_t)((double)sw->done[i].off_ns *
						scale);
		if (fn != NULL)
			fn(arg, &sw->done[i]);
	}
	sw->ndone = 0;
	sw->off_all = sw->off_smp = 0;
	return (int)n;
}

/* The least power of two that keeps the samples at ENG_PERFSWITCH_HZ. */
static void adapt_period(struct eng_perfswitch *sw, uint64_t now)
{
	double rate;
	uint64_t p = 1;

	if (now - sw->rate_t0 < RATE_NS)
		return;
	rate = (double)sw->rate_n * 1e9 / (double)(now - sw->rate_t0);
	while ((double)p * ENG_PERFSWITCH_HZ < rate && p < (1u << 20))
		p *= 2;
	if (p != sw->period &&
	    ioctl(sw->tp_fd, PERF_EVENT_IOC_PERIOD, &p) == 0)
		sw->period = p;
	sw->rate_n = 0;
	sw->rate_t0 = now;
}

struct drain_ctx {
	struct eng_perfswitch *sw;
	eng_perfswitch_unwind_fn unwind;
	void *uarg;
};

static void on_record(void *arg, const struct perf_event_header *h,
		      const uint8_t *body, const uint8_t *end)
{
	struct drain_ctx *c = arg;

	if (h->type == PERF_RECORD_SAMPLE)
		switch_out(c->sw, body, end, c->unwind, c->uarg);
	else if (h->type == PERF_RECORD_SWITCH)
		switch_record(c->sw, h, body);
	else if (h->type == PERF_RECORD_LOST)
		c->sw->have_pend = false;  /* its switch-in may be lost */
}

int eng_perfswitch_drain(struct eng_perfswitch *sw,
			 eng_perfswitch_unwind_fn unwind, void *uarg,
			 eng_perfswitch_fn fn, void *arg)
{
	struct drain_ctx c = { sw, unwind, uarg };

	eng_perfring_drain(sw->map, &sw->ring, on_record, &c);
	adapt_period(sw, clock_mono_ns());
	return hand_on(sw, fn, arg);
}

/*
 * rt_prims.c - counters, wall and CPU timers, guard, observed cost.
 *
 * Hot paths: one %fs load for the block, one AND that keeps the handle
 * inside the caller's own block (a wrong handle from hunch cannot scribble
 * on the program), then the work.  Timers follow the devguide §1.9
 * protocol exactly: prot1++, work, prot2++; the increments are single
 * instructions so a signal handler on the same thread cannot tear them.
 */
#include "hunchrt.h"
#include "rt_internal.h"

/* Each primitive has a frameless fast path (block pointer already set)
 * and a noinline slow path that registers the thread first; keeping the
 * call to the slow path out of the fast path saves the stack frame the
 * compiler would otherwise set up on every call. */
#define RT_PRIM(name, args, call, body)                                        \
	__attribute__((noinline, cold)) static void name##_slow args           \
	{                                                                      \
		char *b = rt_thread_block_slow();                              \
		if (b != NULL)                                                 \
			body;                                                  \
	}                                                                      \
	void name args                                                         \
	{                                                                      \
		char *b = rt_tls_block;                                        \
		if (rt_unlikely(b == NULL)) {                                  \
			name##_slow call;                                      \
			return;                                                \
		}                                                              \
		body;                                                          \
	}

#define CTR(b, h) ((volatile int64_t *)((b) + ((h) & rt_g.counter_mask)))
#define TMR(b, h) ((struct hunch_timer *)((b) + ((h) & rt_g.timer_mask)))

static inline void rt_timer_start(struct hunch_timer *t, uint64_t (*now)(void))
{
	rt_inc(&t->prot1);
	if (rt_xadd(&t->count, 1) == 0)
		t->start = now();
	rt_inc(&t->prot2);
}

/* A stop without a start (instrumentation enabled while the thread was
 * already inside the function) finds count == 0 and does nothing. */
static inline void rt_timer_stop(struct hunch_timer *t, uint64_t (*now)(void))
{
	if (t->count <= 0)
		return;
	rt_inc(&t->prot1);
	if (rt_xadd(&t->count, -1) == 1)
		t->total += now() - t->start;
	rt_inc(&t->prot2);
}

RT_PRIM(hunchrt_counter_add, (uint64_t h, int64_t delta), (h, delta),
	*CTR(b, h) += delta)
RT_PRIM(hunchrt_counter_set, (uint64_t h, int64_t value), (h, value),
	*CTR(b, h) = value)
RT_PRIM(hunchrt_wall_start, (uint64_t h), (h),
	rt_timer_start(TMR(b, h), rt_wall_now))
RT_PRIM(hunchrt_wall_stop, (uint64_t h), (h),
	rt_timer_stop(TMR(b, h), rt_wall_now))
RT_PRIM(hunchrt_cpu_start, (uint64_t h), (h),
	rt_timer_start(TMR(b, h), rt_cpu_now))
RT_PRIM(hunchrt_cpu_stop, (uint64_t h), (h),
	rt_timer_stop(TMR(b, h), rt_cpu_now))

int hunchrt_guard_enter(void)
{
	struct hunch_block_hdr *bh = (struct hunch_block_hdr *)rt_block();

	if (bh == NULL || bh->guard != 0)
		return 0;
	bh->guard = 1;
	rt_barrier();
	return 1;
}

void hunchrt_guard_leave(void)
{
	struct hunch_block_hdr *bh = (struct hunch_block_hdr *)rt_tls_block;

	rt_barrier();
	if (bh != NULL)
		bh->guard = 0;
}

void hunchrt_cost_add(uint64_t native)
{
	struct hunch_block_hdr *bh = (struct hunch_block_hdr *)rt_block();

	if (rt_likely(bh != NULL))
		bh->obs_cost += native;
}

uint64_t hunchrt_wall_now(void)
{
	return rt_wall_now();
}

uint64_t hunchrt_cpu_now(void)
{
	return rt_cpu_now();
}

void hunchrt_force_levels(int wall, int cpu)
{
	if (wall >= 0)
		rt_g.wall_hw = wall == HUNCH_LEVEL_HW && rt_g.tsc_mult != 0;
	if (cpu >= 0)
		rt_g.cpu_hw = cpu == HUNCH_LEVEL_HW && rt_g.tsc_mult != 0;
	if (rt_g.shm != NULL)
		rt_g.shm->wall_level = rt_g.wall_hw ? HUNCH_LEVEL_HW
						    : HUNCH_LEVEL_SW;
}

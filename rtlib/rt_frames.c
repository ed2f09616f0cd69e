/*
 * rt_frames.c - unwind information for code hunch generates in the
 * target: a relocated function's copy (engine/eng_funcreloc.h) has real
 * calls, so its return addresses are on stacks while its callees run;
 * C++ exceptions, backtrace(), pthread_exit and pthread_cancel must find
 * an FDE for them.  hunch writes the copy's .eh_frame (CIE, FDE, zero
 * terminator) into trampoline memory and calls this by an inferior call,
 * every thread stopped, once per commit for all the copies it links,
 * before anything leads there.
 *
 * Registered with libgcc_s's __register_frame_info, the unwinder glibc
 * itself loads for pthread_exit/cancel and backtrace, and the one C++
 * programs use: one library, one list of registered objects.  The
 * `struct object` libgcc keeps per registration comes from a static pool
 * here, not from malloc (another thread, stopped by hunch, may hold the
 * allocator's lock).  hunch checks that no thread is inside libgcc_s
 * (its object lock) before calling.
 *
 * When hunch frees a copy (no thread runs in it and no return address
 * points into it: engine/eng_funcreloc_free.c) it deregisters the block
 * first, by one inferior call for every copy freed in that commit, and
 * the pool slot is reused.  __deregister_frame_info frees the sorted
 * table libgcc built for the object if an unwind ever searched it: one
 * small block (16 bytes + 8 per FDE), which glibc's free puts in the
 * thread's tcache or a fastbin without the arena lock, so a stopped
 * thread holding that lock does not block it.
 */
#include "hunchrt.h"
#include "rt_internal.h"

#include <stdint.h>

/* libgcc_s (GCC_3.0).  Its struct object is 6-8 words depending on the
 * version; 16 leaves room. */
extern void __register_frame_info(const void *begin, void *ob);
extern void *__deregister_frame_info(const void *begin);

#define RT_FRAMES_MAX 8192

struct rt_frame_obj { void *w[16]; };

static struct rt_frame_obj rt_frame_obj[RT_FRAMES_MAX];
/* only hunch's inferior calls touch these (one at a time) */
static unsigned rt_frames_used;              /* slots handed out once */
static unsigned rt_frames_free[RT_FRAMES_MAX];  /* slots given back */
static unsigned rt_frames_nfree;

static struct rt_frame_obj *obj_get(void)
{
	if (rt_frames_nfree > 0)
		return &rt_frame_obj[rt_frames_free[--rt_frames_nfree]];
	if (rt_frames_used < RT_FRAMES_MAX)
		return &rt_frame_obj[rt_frames_used++];
	return 0;
}

/* Register the n .eh_frame blocks whose addresses are in list[];
 * returns how many were (all of them, unless the pool is full). */
HUNCHRT_API long hunchrt_frames_register(uint64_t list, uint64_t n)
{
	const uint64_t *eh = (const uint64_t *)(uintptr_t)list;
	uint64_t i;

	for (i = 0; i < n; i++) {
		struct rt_frame_obj *ob = obj_get();

		if (ob == 0)
			break;
		__register_frame_info((const void *)(uintptr_t)eh[i], ob);
	}
	return (long)i;
}

/* Deregister the n blocks in list[] (each registered above: libgcc
 * aborts on a block it does not know); their pool slots are reused. */
HUNCHRT_API long hunchrt_frames_deregister(uint64_t list, uint64_t n)
{
	const uint64_t *eh = (const uint64_t *)(uintptr_t)list;
	long done = 0;

	for (uint64_t i = 0; i < n; i++) {
		struct rt_frame_obj *ob =
			__deregister_frame_info((const void *)(uintptr_t)eh[i]);

		if (ob < rt_frame_obj || ob >= rt_frame_obj + RT_FRAMES_MAX)
			continue;       /* not ours: leave it */
		rt_frames_free[rt_frames_nfree++] = (unsigned)(ob - rt_frame_obj);
		done++;
	}
	return done;
}

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
 * (its object lock) before calling.  Registrations are never removed: a
 * copy stays in memory for as long as the process lives.
 */
#include "hunchrt.h"
#include "rt_internal.h"

#include <stdint.h>

/* libgcc_s (GCC_3.0).  Its struct object is 6-8 words depending on the
 * version; 16 leaves room. */
extern void __register_frame_info(const void *begin, void *ob);

#define RT_FRAMES_MAX 8192

static struct { void *w[16]; } rt_frame_obj[RT_FRAMES_MAX];
static unsigned rt_frames_used;   /* only hunch's inferior calls write */

/* Register the n .eh_frame blocks whose addresses are in list[];
 * returns how many were (all of them, unless the pool is full). */
HUNCHRT_API long hunchrt_frames_register(uint64_t list, uint64_t n)
{
	const uint64_t *eh = (const uint64_t *)(uintptr_t)list;
	uint64_t i;

	for (i = 0; i < n && rt_frames_used < RT_FRAMES_MAX; i++)
		__register_frame_info((const void *)(uintptr_t)eh[i],
				      &rt_frame_obj[rt_frames_used++]);
	return (long)i;
}

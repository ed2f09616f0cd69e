/*
 * eng_funcreloc.h - whole-function relocation, the first fallback for
 * points too small for a jmp (devguide §1.18 "Function
 * relocation"; DESIGN §6).  The copy is built by arch/x86_64/
 * x86_funcreloc.h; this side decides, allocates, registers unwind
 * information in the target, and patches the original entry.
 *
 * Turned on per image: eng_funcreloc_image(in, cache, img, base).  Then
 * every eng_inst_add of a point inside a function of that image is
 * routed: when the function has a point that cannot take a jmp, its
 * entry can, and it can be relocated, the function is copied (once per
 * process) and the request goes to the matching point of the copy,
 * where every point takes a jmp (normal base and mini trampolines, no
 * trap).  The first request relocates the function even if its own
 * point was big enough, since all the function's points live in the
 * copy from then on.  Functions that cannot be relocated keep today's
 * fallback: traps (eng_inst_point_from).
 *
 * Calls in the copy are real calls: their return addresses are in the
 * copy, so exits in the copy run after the callee returns.  The copy's
 * unwind information (the original FDE with its locations moved,
 * eng_funcreloc_cfi.c) is registered in the target with libgcc_s's
 * __register_frame_info (rtlib/rt_frames.c) before the original entry
 * leads there, so exceptions, backtrace(), pthread_exit and
 * pthread_cancel unwind through the copy as through the original.
 * Functions with an LSDA (C++ cleanups or catch blocks) are refused.
 *
 * At commit (every thread stopped):
 *   - before the adds: a function whose copy gets its first request
 *     has its copy flushed, its FDE registered, threads stopped inside
 *     the original entry's patch bytes moved to the copy, then the
 *     original entry patched with `jmp copy` (not while a stack word
 *     points inside those bytes: its queued requests then fail with
 *     the reason, as a patch refused in place does);
 *   - after the removals: a function whose copy has no request left
 *     gets its original entry bytes back.  The copy stays while threads
 *     may still run in it (a PC or a stack word inside it or its
 *     points' bases), reused if the function is instrumented again
 *     meanwhile;
 *   - at the end (eng_funcreloc_free_reclaim, eng_funcreloc_free.c): an
 *     unlinked copy no thread can be executing is freed, its unwind
 *     info deregistered first.  A commit with nothing queued checks
 *     again while a copy waits.
 * Threads inside the original body when it is relocated keep running
 * the original, which is unchanged but for the entry: they run neither
 * entry nor exit snippets of that activation, and catchup (which looks
 * at the copy's range) leaves them alone, so exits stay balanced.
 */
#ifndef ENG_FUNCRELOC_H
#define ENG_FUNCRELOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hunch_err.h"
#include "eng_refusal.h"

struct eng_inst;
struct eng_inst_point;
struct eng_image;
struct eng_func;
struct eng_points_cache;
struct inst_threads;

/* Relocate functions of `img`, loaded so that runtime = base +
 * image-relative address, when their points need it; parses through
 * `pc` (which must outlive `in`). */
int eng_funcreloc_image(struct eng_inst *in, struct eng_points_cache *pc,
			struct eng_image *img, uint64_t base,
			struct hunch_err *err);

/* The same for a loaded module by path and load bias (runtime =
 * bias + link-time address), with its own image and parse cache, kept
 * until the module is dropped (eng_inst_drop_range) or `in` destroyed:
 * what a caller without an image of its own (or whose images come and
 * go) calls once per module. */
int eng_funcreloc_module(struct eng_inst *in, const char *path,
			 uint64_t bias, struct hunch_err *err);

/* Route a point: 1 and *out = the copy's point when its function is (or
 * now gets) relocated; 0 to use pt as it is; <0 on error. */
int eng_funcreloc_route(struct eng_inst *in, const struct eng_inst_point *pt,
			struct eng_inst_point *out, struct hunch_err *err);

/* The point right after the call site `call` (an original call point,
 * as eng_inst_point_from gives it) in the relocated copy of its
 * function, relocating the function for it if need be
 * (eng_funcreloc_post.c): 1 and *out, a point eng_inst_add takes as it
 * is; 0 and *why when there is none (not relocatable, other points of
 * the function instrumented in place, no room after the call); <0 on
 * error. */
int eng_funcreloc_post_call(struct eng_inst *in,
			     const struct eng_inst_point *call,
			     struct eng_inst_point *out, enum eng_refusal *why,
			     struct hunch_err *err);

/* The copy of the function [lo, hi) when relocated and live: 1 and
 * *clo, *chi; else 0. */
int eng_funcreloc_copy_range(const struct eng_inst *in, uint64_t lo,
			     uint64_t hi, uint64_t *clo, uint64_t *chi);

struct eng_funcreloc_stats {
	size_t relocated;       /* functions with a copy */
	size_t live;            /* original entry patched now */
	size_t refused;         /* functions that needed it but cannot */
	size_t frames;          /* FDEs registered in the target now */
	size_t waiting;         /* copies unlinked, not freed yet */
	size_t built, freed;    /* copies built and given back, in all */
	size_t checks;          /* reclaim passes (commits with waiting) */
	size_t busy;            /* copies a pass kept (a thread in them) */
};
void eng_funcreloc_stats(const struct eng_inst *in,
			 struct eng_funcreloc_stats *st);

/* Commit hooks (eng_inst_commit.c), every thread stopped. */
/* Before the adds; a copy that cannot be linked now fails its queued
 * requests with the reason (counted in *failed). */
int eng_funcreloc_link_before(struct eng_inst *in, struct inst_threads *th,
			 int *failed, struct hunch_err *err);
int eng_funcreloc_link_after(struct eng_inst *in, struct inst_threads *th,
			struct hunch_err *err);
void eng_funcreloc_free(struct eng_inst *in);
/* After the commit's frees: give back every unlinked copy no thread can
 * be executing (eng_funcreloc_free.c). */
int eng_funcreloc_free_reclaim(struct eng_inst *in, struct inst_threads *th,
			  struct hunch_err *err);
/* Is a copy unlinked and not freed yet?  (A commit then runs even with
 * nothing queued, to check it again.) */
bool eng_funcreloc_free_waiting(const struct eng_inst *in);
/* A frame at `pc` in a live copy unwinds as one at the returned address
 * in the original (its CFI, which a stack walker finds there: the copy's
 * own FDE is registered in the target only), or 0 when pc is in no
 * copy.  `ra`: pc is a return address (the call before it is meant),
 * else where the thread is. */
uint64_t eng_funcreloc_unwind_pc(const struct eng_inst *in, uint64_t pc,
				 bool ra);
/* At the start of a commit: drop the freed copies' points from the
 * point table once they are many.  0 or -ENOMEM. */
int eng_funcreloc_free_compact(struct eng_inst *in, struct hunch_err *err);

/* A library in [lo, hi) was unloaded (eng_inst_drop_range): is `a` in
 * the copy of one of its functions (its points are dropped too)?  Then
 * forget its functions and image, writing nothing. */
bool eng_funcreloc_in_copy_of(const struct eng_inst *in, uint64_t a,
			      uint64_t lo, uint64_t hi);
void eng_funcreloc_drop(struct eng_inst *in, uint64_t lo, uint64_t hi);


/* Offline (no process): what relocation would do with function f of
 * img, for reports (`hunch points`, the shares of
 * `tests/inst/inst_funcreloc --shares`) and the cost predictor. */
enum eng_funcreloc_verdict {
	ENG_FUNCRELOC_IN_PLACE,    /* every point takes a jmp in place */
	ENG_FUNCRELOC_RELOCATED,   /* the copy builds, every point of it
	                              takes a jmp, its unwind info builds */
	ENG_FUNCRELOC_REFUSED,     /* *why: traps or refusal stay */
};
struct eng_funcreloc_checker;
int eng_funcreloc_check_new(struct eng_funcreloc_checker **out);
void eng_funcreloc_check_free(struct eng_funcreloc_checker *c);
enum eng_funcreloc_verdict
eng_funcreloc_check(struct eng_funcreloc_checker *c,
		    struct eng_points_cache *pc, struct eng_image *img,
		    const struct eng_func *f, enum eng_refusal *why);

#endif

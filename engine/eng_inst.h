/*
 * eng_inst.h - the instrumentation manager: base trampolines per active
 * point, one mini-trampoline per request, inserted into and removed from
 * a running program (DESIGN §6, devguide §1.8, §1.12-1.14, §1.18, MDL
 * §3.4-3.11).
 *
 * Requests are queued (eng_inst_add / eng_inst_remove) and applied
 * together by eng_inst_commit in one stop of every thread:
 *   1. read every thread's registers and stack;
 *   2. unlink removed minis (the point's original bytes come back when
 *      its last mini goes);
 *   3. for a newly patched point: refuse it when a word on any stack
 *      points into the bytes that change (a possible return address),
 *      write the base trampoline and minis, then move every PC that is
 *      inside the changed bytes to its relocated copy, then write the
 *      `jmp` (or `int3` for trap points);
 *   4. free trampolines no PC or stack word points into (the rest wait
 *      for a later commit) and resume.
 * Every intermediate state is a correct program, so hunch may be killed
 * at any moment: trampolines live in the target and keep working.
 */
#ifndef ENG_INST_H
#define ENG_INST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hunch_err.h"
#include "eng_refusal.h"
#include "x86_tramp.h"

struct eng_fork_patch;
struct eng_proc;
struct eng_shm;
struct eng_inst;
struct x86_point;

/* A point in absolute target addresses. */
struct eng_inst_point {
	uint64_t addr;          /* the instruction at the point */
	uint64_t patch_start;   /* bytes a jmp replaces (see x86_parse.h) */
	uint8_t patch_len;
	uint8_t insn_len;       /* length of the point instruction (traps) */
	bool trap;              /* int3 at addr instead of a jmp */
};

/* From a parsed point (image-relative addresses + load base).  A point
 * the parser marks not ok becomes a trap point (an int3 replaces only
 * its own first byte, which is safe wherever the parser's instruction
 * boundaries are right); points of a function the parser could not
 * decode should not be requested at all. */
void eng_inst_point_from(const struct x86_point *xp, uint64_t base,
			 struct eng_inst_point *out);

/* The runtime library must have answered the handshake.  Allocates the
 * shared call thunks in the target (stopping it briefly if it runs). */
int eng_inst_create(struct eng_proc *p, struct eng_shm *shm,
		    struct eng_inst **out, struct hunch_err *err);
/* Frees hunch's bookkeeping only; call eng_inst_commit_remove_all first to
 * restore the program's code. */
void eng_inst_destroy(struct eng_inst *in);

/* Queue a mini-trampoline with snippets `s` (copied as code now) at a
 * point; `prepend` runs it before the point's other minis.  *id names
 * the request.  -EINVAL when the snippet cannot be compiled. */
int eng_inst_add(struct eng_inst *in, const struct eng_inst_point *pt,
		 const struct x86_snip *s, size_t n, bool prepend,
		 uint32_t *id, struct hunch_err *err);
/* Queue the removal of a request (pending or active). */
int eng_inst_remove(struct eng_inst *in, uint32_t id);

/* Apply every queued request in one stop (resumes the program unless it
 * was already stopped).  Returns the number of requests that failed
 * (eng_inst_state says why), or a negative error. */
int eng_inst_commit(struct eng_inst *in, struct hunch_err *err);
/* Measure, before a program is launched, what eng_inst_create would
 * measure that does not depend on the program (a trap's cost, on a
 * traced child of hunch's: ~95 ms, once per hunch process), so that the
 * program is not held stopped at main for it. */
void eng_inst_warm(void);
/* Has eng_inst_commit anything to do (insertions or removals queued,
 * code memory to free)? */
bool eng_inst_commit_due(struct eng_inst *in);

enum eng_req_state {
	ENG_REQ_FREE = 0,
	ENG_REQ_PENDING,        /* queued for insertion */
	ENG_REQ_ACTIVE,
	ENG_REQ_REMOVING,       /* queued for removal */
	ENG_REQ_FAILED,         /* refused: why says why (released) */
};
enum eng_req_state eng_inst_state(const struct eng_inst *in, uint32_t id,
				  enum eng_refusal *why);

/* Remove every request and restore every patched byte (for detach and
 * every exit path); commits. */
int eng_inst_commit_remove_all(struct eng_inst *in, struct hunch_err *err);

/* From an eng_fork_follow hook: every patched byte of the parent gets
 * the program's bytes back in the stopped child (eng_inst_fork.c); the
 * number of patches restored. */
size_t eng_inst_fork_restore(struct eng_inst *in, pid_t child);
/* From an eng_fork_follow hook, for a child that keeps its
 * instrumentation in a segment of its own: every later commit's writes
 * (trampolines, code patches, their removal) are made in it too, its
 * threads stopped meanwhile (eng_inst_mirror.c).  A child that cannot
 * take them any more is dropped, with a line on stderr;
 * eng_inst_mirror_live says whether it still gets them. */
int eng_inst_mirror_add(struct eng_inst *in, pid_t child);
bool eng_inst_mirror_live(const struct eng_inst *in, pid_t child);
/* Let child go (the program exec'ed: nothing will change its patches
 * any more): every site written in it, and each of the `inh` sites it
 * inherited at its fork (whose orig are the program's bytes), as a
 * list of patches whose orig are the program's bytes, into *out (n
 * returned, -ENOMEM); the child is mirrored no more, and the destroy
 * writes nothing into it.  The mirror's own record of a site first
 * written by a removal holds the inherited patch, not the program's
 * bytes: restored, it sent the child into trampoline memory rewritten
 * since (a subshell of sh killed by SIGSEGV at sh's exec). */
ssize_t eng_inst_mirror_release(struct eng_inst *in, pid_t child,
				const struct eng_fork_patch *inh, size_t ninh,
				struct eng_fork_patch **out);
/* The patches a child inherits now (eng_fork_patch.h), malloc'ed. */
size_t eng_inst_fork_patches(struct eng_inst *in, struct eng_fork_patch **out);

/* A library in [lo, hi) was unloaded (dlclose): forget its points
 * without writing there (the bytes are gone; another library may be
 * mapped there next), release its requests (state ENG_REQ_FREE) and
 * their trampolines (deferred), and retire its trap-table entries.
 * Returns the number of requests dropped. */
int eng_inst_drop_range(struct eng_inst *in, uint64_t lo, uint64_t hi,
			struct hunch_err *err);

/* Catchup (devguide §1.12): run the entry snippets `s` of the function
 * [lo, hi) now, by inferior calls of the rtlib primitives, once for each
 * activation of it on each thread (PC inside, or a return address into
 * it on the stack).  Call it after the commit that inserted the entry
 * and exit instrumentation, before resuming (every thread stopped), so
 * the exit snippet will see the start.  Timer starts and constant
 * counter adds only.  Returns the number of threads caught up. */
int eng_inst_catchup(struct eng_inst *in, uint64_t lo, uint64_t hi,
		     const struct x86_snip *s, size_t n, struct hunch_err *err);
/* The same, saying when each timer started by catchup counts from: the
 * beginning of the activation when it is known for sure (the thread's
 * outermost activation of its start function: engine/README.md,
 * Catchup), else the oldest of the stack samples that all saw the
 * activation (eng_inst_catchup_set_psampler; at least 2), else from now (the
 * time before enabling is missing: the value is a lower bound). */
struct eng_catchup_info {
	unsigned threads;       /* threads with at least one activation */
	unsigned activations;   /* activations caught up */
	unsigned from_begin;    /* timers started at the activation's begin */
	unsigned from_samples;  /* timers started where samples saw it */
	unsigned from_enable;   /* timers started now (begin unknown) */
	unsigned samples;       /* from_samples: samples in the runs used
				 * (one run per thread), in all */
	uint64_t samples_ns;    /* from_samples: CLOCK_MONOTONIC of the oldest
				 * sample used (the earliest start) */
	unsigned walked;        /* threads whose stacks CFI walked whole */
	unsigned scanned;       /* threads with stack words judged by their
				 * look (above where the walk stopped) */
	unsigned through_thunk; /* threads inside an rtlib call made by a
				 * trampoline, walked on from its site */
	unsigned through_copy;  /* threads with a frame in a relocated copy,
				 * walked on from the same place in the
				 * original (its CFI) */
	unsigned stepped_out;   /* threads stopped in trampoline code,
				 * single-stepped out of it first */
};
/* Stack samples of the target's threads (eng_perfsample.h) that catchup
 * may ask since when an activation has been running; NULL: none.  The
 * sampler stays the caller's. */
struct eng_perfsample;
void eng_inst_catchup_set_psampler(struct eng_inst *in,
				   struct eng_perfsample *ps);
int eng_inst_catchup_info(struct eng_inst *in, uint64_t lo, uint64_t hi,
			  const struct x86_snip *s, size_t n,
			  struct eng_catchup_info *ci, struct hunch_err *err);
/* Called by eng_launch once the program is stopped at main: records in
 * the main thread's block that main's activation begins now. */
struct eng_shm;
int eng_inst_catchup_mark_main(struct eng_shm *shm, pid_t pid);

struct eng_inst_stats {
	size_t points_patched;      /* now */
	size_t requests_active;     /* now */
	uint64_t commits;
	uint64_t pcs_moved;         /* threads moved into relocated code */
	uint64_t refused_stack;     /* points refused: stack word inside */
	uint64_t frees_deferred;    /* trampolines still possibly in use */
	uint64_t writes;            /* memory writes into the target */
	uint64_t int3_first;        /* patches across a page, int3 first */
	size_t code_bytes;          /* trampoline memory in use */
	uint64_t last_commit_ns;
};
void eng_inst_stats(const struct eng_inst *in, struct eng_inst_stats *st);

/* The environment generated code is built for (timer level, rtlib). */
const struct x86_tramp_env *eng_inst_env(const struct eng_inst *in);

#endif

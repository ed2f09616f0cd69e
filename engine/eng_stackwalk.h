/*
 * eng_stackwalk.h - the frames of a stopped thread, by CFI (libdwfl).
 *
 * Catchup must know which functions a thread is inside.  Reading every
 * stack word and keeping those that follow a call instruction finds
 * them, and also finds stale return addresses: a callee that returned
 * long ago leaves its return address in dead stack memory, which a
 * later call's uninitialised locals still hold.  Counting one of those
 * as an activation runs an entry snippet that no exit will undo (a
 * /Code constraint stuck on for good).  Unwinding with the call frame
 * information visits only live frames.
 *
 * The walk reads the thread's stack from a copy the caller made (from
 * %rsp up), like a perf sample is unwound.  It reports whether it
 * reached the outermost frame (whose return address CFI marks
 * undefined: _start, clone3) or stopped early, and then the stack
 * pointer where it stopped: code libdwfl has no CFI for (relocated
 * copies and trampolines in hunch's code memory) or a frame whose
 * caller lies beyond the copy.
 */
#ifndef ENG_STACKWALK_H
#define ENG_STACKWALK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

struct eng_stackwalk;

/* One libdwfl session over process pid, kept across walks (modules are
 * read lazily).  The memory map is read again when told
 * (eng_stackwalk_maps_changed), or unasked when a walk starts or ends
 * in no known module and the map is older than rescan_ns: a library
 * loaded since, or code outside any file (hunch's trampolines, JIT
 * code), where reading it again would not help, hence the bound. */
int eng_stackwalk_open(pid_t pid, uint64_t rescan_ns,
		       struct eng_stackwalk **out);
void eng_stackwalk_maps_changed(struct eng_stackwalk *sw);
void eng_stackwalk_close(struct eng_stackwalk *sw);

/* Called per frame, innermost first: pc is where the thread is (frame
 * 0, or a frame a signal interrupted: act) or a return address (the
 * others, not minus one); sp is the frame's stack pointer (0 if CFI
 * did not say).  Returning false ends the walk at this frame (it is
 * then the last one, and the walk incomplete): for code the caller
 * knows CFI cannot describe, where libdwfl would guess from %rbp.  A
 * walk may start over (i == 0 again) after reading the map again. */
typedef bool (*eng_frame_fn)(void *arg, int i, uint64_t pc, uint64_t sp,
			     bool act);

struct eng_walk_end {
	bool complete;      /* reached the outermost frame */
	uint64_t stop_sp;   /* if not: the last frame's stack pointer */
	int nframes;
	/* The last frame: its pc and the callee-saved registers as
	 * unwound there (rbx, rbp, r12-r15; 0 when CFI did not say), so
	 * that a caller who knows the frame above can walk on. */
	uint64_t last_pc;
	uint64_t rbx, rbp, r12, r13, r14, r15;
};

/* Walk thread tid (ptrace-stopped, registers r) over stack[0, len),
 * the copy of its memory from r->rsp.  Returns 0, or -errno when
 * libdwfl could not be started for the process. */
int eng_stackwalk(struct eng_stackwalk *sw, pid_t tid,
		  const struct user_regs_struct *r, const void *stack,
		  size_t len, eng_frame_fn fn, void *arg,
		  struct eng_walk_end *end);
/* The same over a copy that starts at stack_lo, under r->rsp: the red
 * zone, where a function's epilogue leaves the callee-saved registers
 * it has already popped (CFI still locates them there until the
 * return, so without those bytes a thread stopped between a `pop` and
 * its `ret` loses them, %rbp among them). */
int eng_stackwalk_from(struct eng_stackwalk *sw, pid_t tid,
		       const struct user_regs_struct *r, const void *stack,
		       uint64_t stack_lo, size_t len, eng_frame_fn fn,
		       void *arg, struct eng_walk_end *end);
/* The same from registers in DWARF order (rax rdx rcx rbx rsi rdi rbp
 * rsp r8..r15 rip: ENG_DWARF_NREGS of them), as perf samples carry. */
#define ENG_DWARF_NREGS 17
int eng_stackwalk_dw(struct eng_stackwalk *sw, pid_t tid,
		     const uint64_t regs[ENG_DWARF_NREGS], const void *stack,
		     size_t len, eng_frame_fn fn, void *arg,
		     struct eng_walk_end *end);
/* The same when only some registers are known (bit i of `known`: DWARF
 * register i; rsp (7) and rip (16) are needed): a thread blocked in a
 * system call shows only its stack pointer and pc (/proc/TID/syscall).
 * A frame whose CFA needs an unknown register ends the walk there. */
int eng_stackwalk_dw_known(struct eng_stackwalk *sw, pid_t tid,
			   const uint64_t regs[ENG_DWARF_NREGS],
			   uint32_t known, const void *stack, size_t len,
			   eng_frame_fn fn, void *arg,
			   struct eng_walk_end *end);

#endif

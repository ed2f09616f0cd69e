/*
 * eng_unwind.h - naming a thread by the function it started in.
 *
 * The where axis shows threads as "<tid> <start function>".  The start
 * function is found by unwinding the thread's stack with libdw (CFI from
 * .eh_frame) and taking the outermost frame that is not in the C library
 * or the dynamic linker: libc.so.6 is stripped on Debian, so its
 * start_thread and clone3 frames have no useful names, and the routine
 * passed to pthread_create is the first frame above them.
 *
 * For the main thread this returns the executable's entry function
 * (`_start`, whose caller is the dynamic linker); callers name tid == pid
 * "main" anyway.  A thread with no frame outside libc (caught before its
 * routine runs, or a libc-internal helper) gets its outermost frame,
 * typically clone3: name such a thread again a little later.
 *
 * The caller must have ptrace-stopped the thread (PTRACE_SEIZE +
 * PTRACE_INTERRUPT, or attach) from the calling thread: the unwinder
 * reads registers and memory with ptrace and never attaches by itself.
 */
#ifndef ENG_UNWIND_H
#define ENG_UNWIND_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "hunch_err.h"

struct eng_unwinder;

/* Where a thread started. */
struct eng_thread_start {
	uint64_t pc;         /* runtime address: the function's entry when
			      * its symbol is known, else a pc inside it */
	bool at_entry;       /* pc is a function entry (symbol found) */
	const char *module;  /* path of the file holding pc (valid until
			      * the unwinder is closed), or NULL */
	uint64_t bias;       /* runtime minus link-time address in module */
	const char *symbol;  /* libdw's name for the function, or NULL */
	int nframes;         /* depth of the stack that was unwound */
};

/* Read the process's memory map once (modules and their load bases) so
 * that many threads can be unwound cheaply.  Libraries loaded after this
 * are unknown to it: open a new one after dlopen. */
int eng_unwind_open(pid_t pid, struct eng_unwinder **out,
		      struct hunch_err *err);
void eng_unwind_close(struct eng_unwinder *u);

int eng_unwind_thread_start(struct eng_unwinder *u, pid_t tid,
			      struct eng_thread_start *out,
			      struct hunch_err *err);

/* One-shot form: open, unwind one thread, close.  *pc_out as in
 * eng_thread_start.pc. */
int eng_unwind_thread_start_function(pid_t pid, pid_t tid, uint64_t *pc_out,
			      struct hunch_err *err);

#endif

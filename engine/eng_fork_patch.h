/*
 * eng_fork_patch.h - the patches a forked child inherited, and taking
 * them out of it later (eng_fork_patch.c).
 *
 * A child that keeps the parent's instrumentation (it has a segment of
 * its own, eng_fork_shm.h) runs untraced with the patches of the fork's
 * moment.  Before hunch goes (detach, its own end), each such child
 * still alive gets the program's bytes back: every thread of it is
 * seized and interrupted, the bytes written, every thread detached.
 * Its trampolines stay mapped (its private copy), so a thread inside
 * one runs it to its end and returns to the program's code.
 */
#ifndef ENG_FORK_PATCH_H
#define ENG_FORK_PATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hunch_err.h"

struct eng_fork_patch {
	uint64_t addr;
	uint8_t len;
	uint8_t orig[32];     /* the program's bytes */
	uint8_t cur[32];      /* the patch as the child inherited it */
};

/* Read the patches as they are in the stopped child (cur): a restore
 * writes only where they still are, so it is safe in any process (one
 * that exec'ed, or a descendant that inherited them in turn). */
int eng_fork_patch_read(pid_t child, struct eng_fork_patch *p, size_t n);

/* Put the program's bytes back at every patch still in place in the
 * running, untraced process `pid`; 0 (also when it has ended meanwhile: nothing to do),
 * or an error naming the pid.  No thread is left traced or stopped. */
int eng_fork_patch_restore(pid_t pid, const struct eng_fork_patch *p,
			   size_t n, struct hunch_err *err);

/* Every thread of the running, untraced process pid seized and
 * stopped for a few writes (NULL: none could be, it has ended). */
struct eng_fork_stopped;
struct eng_fork_stopped *eng_fork_patch_stop(pid_t pid);
/* Write len bytes at addr; with code, a thread whose PC is inside the
 * bytes (past their first) is single-stepped out first, without (code
 * memory), one whose next instruction's bytes would change (-EBUSY when
 * it does not leave). */
int eng_fork_patch_write(struct eng_fork_stopped *st, uint64_t addr,
			 const void *buf, size_t len, bool code);
int eng_fork_patch_peek(struct eng_fork_stopped *st, uint64_t addr,
			void *buf, size_t len);
/* mmap(addr, len, r-x, private anonymous, MAP_FIXED_NOREPLACE) run in
 * the stopped process (eng_fork_sys.h): the address, or -errno. */
long eng_fork_patch_mmap(struct eng_fork_stopped *st, uint64_t addr,
			 size_t len);
/* Every thread detached again, running. */
void eng_fork_patch_resume(struct eng_fork_stopped *st);

#endif

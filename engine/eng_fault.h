/*
 * eng_fault.h - named fault points, for tests of what a hunch killed at
 * the worst moment leaves behind.
 *
 * A test arms one point, by HUNCH_TEST_KILL_AT=POINT:N in hunch's
 * environment (read once, at the first fault point reached) or by
 * eng_fault_arm() in a test program; hunch then SIGKILLs itself at the
 * N-th occurrence (from 0) of that point counted from the arming.  The
 * points:
 *
 *   infcall:N            as inferior call N starts running
 *   signal:N             right after the signal-delivery-stop N that
 *                        hunch parks or takes
 *   signal-in-commit:N   the same, counting only stops taken while every
 *                        thread is kept stopped (a signal that beat the
 *                        interrupt of a commit)
 *   signal-in-step:N     the same, counting only stops met while a
 *                        thread steps over one of hunch's int3s
 *   C:N                  before page write N of instrumentation commit
 *                        C (1 = the first commit)
 *
 * Production code calls eng_fault_hit() at these points and never reads
 * the environment itself.  HUNCH_NO_TAILPAD (eng_fault_no_tailpad) keeps
 * the parser from borrowing the padding after a function, for tests of
 * whole-function relocation.
 */
#ifndef ENG_FAULT_H
#define ENG_FAULT_H

#include <stdbool.h>
#include <stdint.h>

enum eng_fault {
	ENG_FAULT_NONE,
	ENG_FAULT_INFCALL,
	ENG_FAULT_SIGNAL,
	ENG_FAULT_SIGNAL_IN_COMMIT,
	ENG_FAULT_SIGNAL_IN_STEP,
	ENG_FAULT_COMMIT_WRITE,
};

/* Arm the point `spec` names (the syntax above), counting from now;
 * NULL or "" disarms.  Returns 0, or -1 for a spec that names no point
 * (nothing is armed then). */
int eng_fault_arm(const char *spec);
/* One occurrence of point f: hunch SIGKILLs itself if it is the armed
 * one.  Cheap when nothing is armed. */
void eng_fault_hit(enum eng_fault f);
/* Instrumentation commit number `commit` starts: page writes count for
 * C:N from here when C is this commit. */
void eng_fault_commit_start(uint64_t commit);
/* HUNCH_NO_TAILPAD is set. */
bool eng_fault_no_tailpad(void);

#endif

/*
 * eng_inst_int.h - private state of the instrumentation manager, shared
 * by eng_inst.c (requests, points, commit) and eng_inst_threads.c (the
 * stopped threads' PCs and stack words).
 */
#ifndef ENG_INST_INT_H
#define ENG_INST_INT_H

#include <sys/types.h>
#include <sys/user.h>

#include "eng_codemem.h"
#include "eng_inst.h"
#include "x86_reloc.h"

/* Every stopped thread, read once per commit. */
struct inst_thread {
	pid_t tid;
	struct user_regs_struct regs;
	bool regs_changed;
};

struct inst_threads {
	struct inst_thread *t;
	size_t n;
	uint64_t *words;        /* every stack word of every thread, sorted */
	size_t nwords;
};

int inst_threads_read(struct eng_proc *p, struct inst_threads *th,
		      struct hunch_err *err);
void inst_threads_free(struct inst_threads *th);
/* Is a PC (any thread) or a stack word in [lo, hi)? */
bool inst_threads_pc_in(const struct inst_threads *th, uint64_t lo,
			uint64_t hi);
bool inst_threads_word_in(const struct inst_threads *th, uint64_t lo,
			  uint64_t hi);
int inst_threads_write_regs(struct eng_proc *p, struct inst_threads *th,
			    struct hunch_err *err);

struct eng_shm;
int inst_catchup(struct eng_proc *p, struct eng_shm *shm,
		 struct eng_codemem *mem, uint64_t lo, uint64_t hi,
		 const struct x86_snip *s, size_t n, struct hunch_err *err);

#endif

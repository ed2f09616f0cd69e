/*
 * eng_fork_sys.h - system calls run in a child stopped at its fork stop
 * (eng_fork_sys.c): begin saves its registers, each call re-runs the
 * fork's own `syscall` instruction with other arguments, end restores.
 */
#ifndef ENG_FORK_SYS_H
#define ENG_FORK_SYS_H

#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

struct eng_fork_sys {
	pid_t pid;
	struct user_regs_struct saved;
	int pending;     /* a signal that stopped it meanwhile, re-sent */
	uint64_t at;     /* the `syscall` instruction run */
};

/* 0, or -ENOEXEC when the child does not stand after a `syscall`. */
int eng_fork_sys_begin(struct eng_fork_sys *s, pid_t child);
/* Any stopped thread tid, running the `syscall` instruction at `at`
 * (eng_fork_sys_gadget: the bytes 0f 05 anywhere in an executable
 * mapping of pid, 0 when none was found). */
int eng_fork_sys_begin_at(struct eng_fork_sys *s, pid_t tid, uint64_t at);
uint64_t eng_fork_sys_gadget(pid_t pid);
/* The call's result (a negative errno from the call or from ptrace). */
long eng_fork_sys_call(struct eng_fork_sys *s, long nr, long a1, long a2,
		       long a3, long a4, long a5, long a6);
int eng_fork_sys_end(struct eng_fork_sys *s);

#endif

/*
 * eng_taskstate.h - what a thread is doing, from /proc, without stopping
 * it: its scheduler state, the system call it is blocked in and that
 * call's arguments, and the file behind a descriptor.
 *
 * /proc/PID/task/TID/syscall needs the same permission as ptrace (hunch
 * has it: it traces the process, or launched it).  It reads "running"
 * for a thread on a CPU; for a blocked one "NR ARG0 .. ARG5 SP PC".
 */
#ifndef ENG_TASKSTATE_H
#define ENG_TASKSTATE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum eng_task_wait {
	ENG_TASK_RUNNING,    /* R: on a CPU or runnable */
	ENG_TASK_SYNC,       /* blocked in futex: args[0] is the address */
	ENG_TASK_IO,         /* blocked in a file or socket call on args[0] */
	ENG_TASK_OTHER,      /* sleeping in anything else (nanosleep, poll,
			      * wait...), stopped, or unknown */
};

struct eng_taskstate {
	pid_t tid;
	char state;          /* the letter of /proc/.../stat: R S D T t Z */
	enum eng_task_wait wait;
	long syscall;        /* -1: none known */
	uint64_t args[6];
	/* user stack pointer and pc at the system call (0: unknown): the
	 * blocked thread's stack can be unwound from them while it stays
	 * blocked, without stopping it (eng_perfsample_unwind_blocked) */
	uint64_t sp, pc;
	char wchan[64];      /* kernel function it sleeps in, or "" */
};

/* Read one thread's state; -ESRCH when it is gone. */
int eng_taskstate_read(pid_t pid, pid_t tid, struct eng_taskstate *out);
/* Is system call `nr` a file or socket operation on descriptor arg 0? */
int eng_task_is_io_syscall(long nr);
/* The file behind /proc/PID/fd/FD, named as the metric compiler's
 * discovery names files (a socket by its peer); -errno when not open. */
int eng_task_fd_path(pid_t pid, int fd, char *buf, size_t len);

#endif

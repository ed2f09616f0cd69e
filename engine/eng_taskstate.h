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

#include <stdbool.h>
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

/* The fields of /proc/PID/stat (tid 0) or /proc/PID/task/TID/stat that
 * hunch reads (proc(5) numbers them): the state letter (3), CPU time in
 * clock ticks, its own (14, 15) and that of the children it reaped
 * (16, 17), and the exit status (52: a zombie's, 0 while it runs; -1
 * where the kernel does not give it). */
struct eng_taskstat {
	char state;
	uint64_t utime, stime, cutime, cstime;
	int exit_code;
};

/* Read and parse it: 0, -errno when the file is gone (-ENOENT, -ESRCH),
 * -EINVAL when it cannot be parsed. */
int eng_taskstate_stat(pid_t pid, pid_t tid, struct eng_taskstat *out);
/* The state letter of /proc/PID/task/TID/stat (tid 0: /proc/PID/stat,
 * the process); 0 when the file is gone. */
char eng_taskstate_letter(pid_t pid, pid_t tid);
/* Has the thread (tid 0: the process) exited, a zombie or dead, though
 * its end may not have been reported yet? */
bool eng_taskstate_dead(pid_t pid, pid_t tid);
/* Read one thread's state; -ESRCH when it is gone. */
int eng_taskstate_read(pid_t pid, pid_t tid, struct eng_taskstate *out);
/* Is system call `nr` a file or socket operation on descriptor arg 0? */
int eng_taskstate_is_io_syscall(long nr);
/* The file behind /proc/PID/fd/FD, named as the metric compiler's
 * discovery names files (a socket by its peer); -errno when not open. */
int eng_taskstate_fd_path(pid_t pid, int fd, char *buf, size_t len);

#endif

/*
 * eng_proc.h - controlling a target process with ptrace.
 *
 * One `eng_proc` per target process.  Every ptrace request is made from
 * the thread that created the eng_proc (ptrace requires the tracer
 * thread).  Threads are seized with PTRACE_SEIZE (clone, exec and exit
 * events on), stopped with PTRACE_INTERRUPT, and every signal not caused
 * by hunch is delivered to the program as if hunch were not there.
 *
 * Addresses are absolute addresses in the target.
 */
#ifndef ENG_PROC_H
#define ENG_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "hunch_err.h"

struct eng_proc;
struct eng_shm;

struct eng_launch_opts {
	const char *path;        /* program; searched in PATH if no '/' */
	char *const *argv;       /* argv[0] included, NULL-terminated */
	char *const *envp;       /* NULL: hunch's own environment */
	const char *cwd;         /* NULL: hunch's working directory */
	int stdin_fd;            /* -1: inherit hunch's */
	int stdout_fd;           /* -1: inherit */
	int stderr_fd;           /* -1: inherit */
	const char *rtlib_path;  /* NULL: do not load the runtime library */
	struct eng_shm *shm;     /* the segment (memfd) the rtlib maps */
};

/* Start a program and run it until its main(); returns with every thread
 * stopped, the runtime library loaded and its handshake answered (when
 * rtlib_path is set).  Errors: program missing, not executable, not an
 * x86-64 ELF, runtime library refused. */
int eng_launch(const struct eng_launch_opts *o, struct eng_proc **out,
	       struct hunch_err *err);

/* Seize every thread of a running process and stop them all.  With
 * rtlib_path, load the runtime library by an inferior call of dlopen and
 * hand it the named segment `shm` (hunchrt_attach).  Errors: no such pid,
 * not permitted (other user, ptrace_scope, already traced), not x86-64. */
int eng_attach(pid_t pid, const char *rtlib_path, struct eng_shm *shm,
	       struct eng_proc **out, struct hunch_err *err);

/* Detach from every thread and leave the program running as before.
 * Safe to call in any state; frees nothing (call eng_proc_free). */
int eng_detach(struct eng_proc *p, struct hunch_err *err);
/* Kill (launched targets only) and reap. */
int eng_detach_kill(struct eng_proc *p);
void eng_proc_free(struct eng_proc *p);

pid_t eng_proc_pid(const struct eng_proc *p);
bool eng_proc_launched(const struct eng_proc *p);

/* Stop every thread (PTRACE_INTERRUPT) and wait until all are stopped;
 * resume them all.  Nesting is not counted: stop twice, resume once. */
int eng_ptrace_stop_all(struct eng_proc *p, struct hunch_err *err);
int eng_ptrace_resume_all(struct eng_proc *p, struct hunch_err *err);
bool eng_proc_stopped(const struct eng_proc *p);
/* How often hunch held every thread stopped (eng_ptrace_stop_all to
 * eng_ptrace_resume_all: to patch, to call into the program) and for
 * how long in all, ns (a hold still on counts to now): the pause its
 * tracing costs the program beside the instrumentation's own cost. */
void eng_proc_held(const struct eng_proc *p, uint64_t *holds,
		   uint64_t *ns);

/* Live threads (tids), main thread first. */
size_t eng_proc_threads(const struct eng_proc *p, pid_t *tids, size_t max);

int eng_mem_read(struct eng_proc *p, uint64_t addr, void *buf, size_t len,
		 struct hunch_err *err);
int eng_mem_write(struct eng_proc *p, uint64_t addr, const void *buf,
		  size_t len, struct hunch_err *err);
/* Registers of a stopped thread. */
int eng_regs_get(struct eng_proc *p, pid_t tid,
		 struct user_regs_struct *regs, struct hunch_err *err);
int eng_regs_set(struct eng_proc *p, pid_t tid,
		 const struct user_regs_struct *regs, struct hunch_err *err);

/* Single-step the stopped thread `tid` while inside(arg, its pc) holds,
 * at most max_steps steps: 0 once it is outside, -EAGAIN when it is
 * still inside (the steps ran out, a signal came, or the next
 * instruction is a system call, which could block: never stepped),
 * -ESRCH when it is gone.  Every other thread stays stopped. */
int eng_bp_step_while(struct eng_proc *p, pid_t tid,
			bool (*inside)(void *arg, uint64_t pc), void *arg,
			int max_steps);

/* Call fn(args...) (up to 6 integer arguments) on thread `tid`, which must
 * be stopped, and return its %rax in *ret.  Safe when the thread sits in a
 * blocking system call: the call is restarted afterwards as if nothing
 * happened.  The red zone is preserved; the stack is aligned. */
int eng_infcall(struct eng_proc *p, pid_t tid, uint64_t fn,
		const uint64_t *args, int nargs, uint64_t *ret,
		struct hunch_err *err);
/* Copy `len` bytes to scratch space on the thread's stack below the red
 * zone for the next infcall (e.g. a string argument); returns address. */
int eng_infcall_push(struct eng_proc *p, pid_t tid, const void *data,
		     size_t len, uint64_t *addr, struct hunch_err *err);

/* Loaded modules (executable first, then shared objects in load order),
 * kept current by the dynamic linker's r_debug breakpoint. */
struct eng_module {
	char *path;        /* absolute path of the file */
	uint64_t bias;     /* load bias: runtime = bias + link-time vaddr */
	bool is_exe;
};
size_t eng_solib_nmodules(const struct eng_proc *p);
const struct eng_module *eng_solib_module(const struct eng_proc *p, size_t i);

/* Events, produced while the target runs. */
enum eng_event_kind {
	ENG_EV_THREAD_NEW,     /* tid */
	ENG_EV_THREAD_EXIT,    /* tid */
	ENG_EV_LIB_LOAD,       /* path, bias */
	ENG_EV_LIB_UNLOAD,     /* path */
	ENG_EV_SIGNAL,         /* signo delivered to the program (tid) */
	ENG_EV_EXEC,           /* the process called execve (path); status
				  ENG_EXEC_FOREIGN: not an x86-64 image */
	ENG_EV_EXEC_ENTRY,     /* with eng_exec_follow: the new image is
				  held stopped at its entry point */
	ENG_EV_EXITED,         /* status: exit code (-1: unknown, the
				  process was reaped by someone else) */
	ENG_EV_KILLED,         /* signo: killed by that signal; core */
	ENG_EV_FORK,           /* with eng_fork_follow: tid is a new child
				  process (already detached), status the
				  thread that made it, signo 1 if it shares
				  the parent's memory (vfork) */
};

struct eng_event {
	enum eng_event_kind kind;
	pid_t tid;
	int status;
	int signo;
	bool core;
	char path[4096];
	uint64_t bias;
};

/* Handle whatever ptrace has to report (call when SIGCHLD arrives, or
 * with timeout_ms to wait; 0 never blocks, -1 waits until an event);
 * returns the number of events stored (0..max), or a negative error.  Breakpoints hunch owns (r_debug) are handled
 * inside and never reach the program. */
int eng_ptrace_poll_events(struct eng_proc *p, struct eng_event *evs, int max,
		    int timeout_ms);

/* Following execve.  From the exec event until eng_exec_load_rtlib or
 * eng_exec_release, nothing is written into the program and no
 * inferior call runs (they fail with -ESTALE): the client drops what it
 * built on the old image first.  With eng_exec_follow(p, true) a new
 * x86-64 image is held stopped at its entry point, its libraries
 * loaded (ENG_EV_EXEC_ENTRY), until eng_exec_release; meanwhile
 * eng_exec_load_rtlib loads the runtime library into it by dlopen and
 * hands it the named segment `shm`, as eng_attach does (a static
 * program has no dlopen: -ENOENT, and the error says so). */
#define ENG_EXEC_FOREIGN 1
void eng_exec_follow(struct eng_proc *p, bool on);
int eng_exec_load_rtlib(struct eng_proc *p, const char *rtlib_path,
			struct eng_shm *shm, struct hunch_err *err);
int eng_exec_release(struct eng_proc *p, struct hunch_err *err);

/* Child processes (eng_fork.c).  A new child is stopped by the kernel
 * before its first instruction; unless it shares the parent's memory
 * (vfork), hunch's int3s are restored in it and hook(arg, child) (set by
 * eng_fork_follow, NULL: none) is called while the parent and the child
 * are both stopped, to restore the client's patches (with
 * eng_fork_write); then the child is detached.  With following on
 * (eng_fork_follow(p, true, ...)) ENG_EV_FORK is queued; without, the
 * child is not reported. */
typedef void (*eng_fork_fn)(void *arg, pid_t child);
void eng_fork_follow(struct eng_proc *p, bool on, eng_fork_fn hook,
		     void *arg);
/* Write into, read from a stopped child's memory (from a fork hook,
 * or a child hunch holds stopped); 0 or -errno. */
int eng_fork_write(pid_t child, uint64_t addr, const void *buf, size_t len);
int eng_fork_read(pid_t child, uint64_t addr, void *buf, size_t len);

/* Has the target ended (exited or killed)? */
bool eng_proc_ended(const struct eng_proc *p);

/* What eng_launch found: the entry point (AT_ENTRY), main (0 when it
 * was not found: then the program is stopped at the entry point and
 * eng_proc_note says so), and the dynamic linker's r_brk where hunch
 * keeps an int3 (0 when shared libraries are not tracked). */
uint64_t eng_proc_entry(const struct eng_proc *p);
uint64_t eng_proc_main(const struct eng_proc *p);
uint64_t eng_proc_r_brk(const struct eng_proc *p);
/* A remark worth showing the user ("" if none), e.g. main not found. */
const char *eng_proc_note(const struct eng_proc *p);
/* How long an inferior call may run before it is abandoned (10 s). */
void eng_detach_infcall_timeout(struct eng_proc *p, int ms);
/* Inferior calls return to `addr` (the rtlib's HUNCH_RT_ENTRY_INFCALL_RET
 * int3) with the thread's registers saved above the return address, so
 * that the rtlib puts the thread back if hunch dies during a call; 0
 * (no rtlib yet): return to address 0, the thread is lost then. */
void eng_infcall_set_return(struct eng_proc *p, uint64_t addr);
/* The trap table of the instrumentation (rtlib/hunch_abi.h, in the
 * target's memory): a SIGTRAP at one of its live points is handled in
 * the ptrace stop, as the rtlib's handler would, instead of being held
 * for delivery: a signal hunch holds is lost if hunch is killed (its
 * waitpid took it from the kernel), leaving the thread after the int3. */
void eng_trap_set_table(struct eng_proc *p, uint64_t table, uint64_t cap);

#endif

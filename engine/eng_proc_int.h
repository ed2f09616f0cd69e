/*
 * eng_proc_int.h - the inside of `struct eng_proc`, shared by the
 * eng_*.c files that implement eng_proc.h.  Nothing outside engine/'s
 * process-control files includes this.
 *
 * Thread model.  Every traced thread is RUNNING (resumed by us), STOPPED
 * (in a ptrace-stop we have seen and not yet ended) or GONE.  A stopped
 * thread remembers how it stopped, because that decides how it resumes:
 * a group-stop (job control) resumes with PTRACE_LISTEN so it stays
 * stopped for the program's point of view, a signal-delivery-stop
 * resumes with the program's signal, anything else with PTRACE_CONT 0.
 * A signal-delivery-stop is normally *parked* (eng_sigpark.c): hunch
 * never collected it, so the kernel still holds the signal.
 */
#ifndef ENG_PROC_INT_H
#define ENG_PROC_INT_H

#include "eng_proc.h"

#include <signal.h>

/* TS_ZOMBIE: a leader that called pthread_exit while other threads run
 * on; it cannot stop, and its death is reported only with the last
 * thread's, so we keep polling it but never wait for it to stop. */
enum eng_tstate { TS_RUNNING, TS_STOPPED, TS_ZOMBIE, TS_GONE };

/* The last stop of a thread, when it is STOPPED. */
enum eng_stop {
	SK_NONE,        /* not stopped, or the stop was consumed */
	SK_EXITED,      /* the thread is gone (exit or killed) */
	SK_EVENT,       /* PTRACE_EVENT_STOP (interrupt, new thread) */
	SK_GROUP,       /* PTRACE_EVENT_STOP inside a job-control stop */
	SK_SIGNAL,      /* signal-delivery-stop; pending_sig holds it */
	SK_BREAK,       /* one of our int3s; hit_bp holds its address */
	SK_STEP,        /* single step finished */
	SK_INFCALL,     /* an inferior call returned to address 0 */
	SK_FAULT,       /* an inferior call crashed (fault_sig) */
	SK_EXEC,        /* PTRACE_EVENT_EXEC: a new image */
	SK_OTHER,       /* clone, syscall stop: resume with 0 */
};

#define ENG_MAX_PENDING 8

struct eng_thread {
	pid_t tid;
	enum eng_tstate state;
	enum eng_stop stop;
	bool group_stopped;     /* the process is job-control stopped */
	bool sigstop_now;       /* current stop is a signal-delivery-stop */
	int pending[ENG_MAX_PENDING];  /* the program's signals, owed */
	siginfo_t pending_si[ENG_MAX_PENDING];  /* and their siginfo */
	int npending;
	uint64_t requeued;      /* signals given back to the kernel (bit
				   n-1: signal n, see eng_infcall.c): no
				   second event when they stop it again */
	bool parked;            /* in a signal-delivery-stop hunch never
				   collected: the kernel still holds
				   parked_sig (eng_sigpark.c) */
	int parked_sig;
	bool stepping;          /* PTRACE_SINGLESTEP in flight */
	bool deferred;          /* to resume once p->hold drops to 0 */
	uint64_t hit_bp;        /* address of the int3 it stopped at */
	uint64_t step_over;     /* int3 to step over before running on */
	bool in_infcall;
	int fault_sig;          /* SK_FAULT: the signal and address */
	uint64_t fault_addr;
	uint64_t scratch;       /* bytes pushed by eng_infcall_push */
	uint64_t scratch_sp;    /* the %rsp the scratch was measured from */
	bool trap_sent;         /* eng_trap_preempt sent it on: no signal */
};

/* BP_EXEC_ENTRY: the entry point of an image the program exec'ed;
 * there ld.so has run, so r_debug can be found again. */
enum eng_bp_kind { BP_ENTRY, BP_MAIN, BP_RBRK, BP_EXEC_ENTRY };

struct eng_bp {
	uint64_t addr;
	uint8_t orig;
	enum eng_bp_kind kind;
};

#define ENG_MAX_BPS 8

struct eng_mod_int {
	struct eng_module pub;
	uint64_t lm;            /* address of its link_map, 0 for the exe */
};

struct eng_proc {
	pid_t pid;
	bool launched;
	bool ended;             /* the leader exited or was killed */
	bool detached;
	bool want_stop;         /* the user asked for all threads stopped */
	/* Held stopped by hunch (stop_all to resume_all): since when
	 * (CLOCK_MONOTONIC ns, 0: running), how often, how long in all. */
	uint64_t held_t0, held_ns, holds;
	int hold;               /* >0: never resume anything (step-over) */
	int memfd;              /* /proc/pid/mem, -1 if not usable */

	/* Pointers, so that a thread stays put when clone grows the
	 * table under a caller that holds it. */
	struct eng_thread **th;
	size_t nth, capth;
	size_t wait_next;       /* where eng_ptrace_wait_any scans from */
	int infcall_timeout_ms;
	uint64_t trap_table, trap_cap;  /* eng_trap.c */
	uint64_t infcall_ret;   /* the rtlib's return int3, 0: return to 0 */
	/* eng_exec.c: after an exec nothing is written into the program
	 * and no inferior call runs (the fence) until its client has let
	 * go of the old image; with exec_follow the new image is held at
	 * its entry point (exec_held) for its runtime library. */
	bool exec_fence, exec_follow, exec_held;
	/* eng_fork.c: children are cleaned and reported (fork_follow),
	 * the client's patches restored in them by fork_hook. */
	bool fork_follow;
	eng_fork_fn fork_hook;
	void *fork_arg;

	struct eng_bp bps[ENG_MAX_BPS];
	size_t nbps;

	struct eng_mod_int *mods;
	size_t nmods, capmods;

	uint64_t entry;         /* AT_ENTRY */
	uint64_t main_addr;     /* 0 when main was not found */
	/* where main returns to and the stack pointer its return leaves
	 * (0: not known), and that address as an offset in its file, for
	 * the images an exec brings (eng_main.c) */
	uint64_t main_ret, main_ret_sp, main_ret_off;
	char *main_ret_file;
	bool main_ret_looked;
	uint64_t r_debug;       /* address of struct r_debug, 0 if unknown */
	uint64_t r_brk;         /* _dl_debug_state, where our int3 is */
	char note[4352];         /* e.g. why we stopped at the entry */

	/* Events seen while hunch waited inside a call (stop_all,
	 * infcall...), delivered by the next eng_ptrace_poll_events. */
	struct eng_event *evq;
	size_t nevq, capevq;
};

/* eng_trap.c: where a thread stopped on the int3 at addr goes on (the
 * table's trampoline), 0 if that int3 is not a live trap point. */
uint64_t eng_trap_target(struct eng_proc *p, uint64_t addr);
/* Before a wait takes a thread's SIGTRAP stop, peeked into *w (see
 * eng_trap.c); true when the thread was sent on to its trampoline. */
bool eng_trap_preempt(struct eng_proc *p, struct eng_thread *t,
		      const siginfo_t *w);

/* eng_sigpark.c: what a poll of t may do (see there). */
enum eng_peek {
	PEEK_QUIET,     /* nothing to take: do not waitpid */
	PEEK_TAKE,      /* a report waitpid must take and eng_ptrace_dispatch */
	PEEK_PARKED,    /* t stopped in a signal-delivery-stop, parked */
};
enum eng_peek eng_sigpark_peek(struct eng_proc *p, struct eng_thread *t);
/* Collect a parked stop: its signal becomes owed (hunch holds it). */
void eng_sigpark_unpark(struct eng_proc *p, struct eng_thread *t);
/* One signal stop taken, for the fault points (eng_fault.h). */
void eng_sigpark_test_kill_signal(const struct eng_proc *p);

/* eng_ptrace.c */
struct eng_thread *eng_ptrace_thread_find(struct eng_proc *p, pid_t tid);
struct eng_thread *eng_ptrace_thread_add(struct eng_proc *p, pid_t tid,
				  enum eng_tstate st);
struct eng_proc *eng_proc_new(pid_t pid, bool launched);
int eng_ptrace_queue_event(struct eng_proc *p, const struct eng_event *ev);
/* Wait for the next ptrace report of thread t (at most timeout_ms; -1
 * forever) and classify it; the thread stays stopped.  Returns 0 when
 * one was handled, -ETIMEDOUT, or -ECHILD when the thread is gone. */
int eng_ptrace_wait_thread(struct eng_proc *p, struct eng_thread *t,
		    int timeout_ms);
/* The same for whichever thread reports first; *tid says which. */
int eng_ptrace_wait_any(struct eng_proc *p, int timeout_ms, pid_t *tid);
/* Classify one waitpid status of thread t (updates t, queues events). */
enum eng_stop eng_ptrace_dispatch(struct eng_proc *p, struct eng_thread *t,
			   int status);
/* Resume t the way its stop requires (stepping over our int3 first). */
int eng_ptrace_thread_resume(struct eng_proc *p, struct eng_thread *t);
/* Continue t with PTRACE_CONT 0 (inferior calls, launch). */
int eng_ptrace_thread_cont(struct eng_proc *p, struct eng_thread *t, int sig);
int eng_ptrace_thread_interrupt_wait(struct eng_proc *p, struct eng_thread *t);
/* Move a thread stopped inside a system call (clone/exec event) to a
 * stop on its way to user mode, where its registers are its own. */
int eng_ptrace_thread_to_user_stop(struct eng_proc *p, struct eng_thread *t);
/* Leave t stopped or resume it, following want_stop and hold. */
int eng_ptrace_settle(struct eng_proc *p, struct eng_thread *t);
struct eng_thread *eng_ptrace_leader(struct eng_proc *p);

/* eng_regs.c */
int eng_regs_get_xstate(struct eng_proc *p, pid_t tid, void *buf, size_t *len);
int eng_regs_set_xstate(struct eng_proc *p, pid_t tid, const void *buf,
		   size_t len);
#define ENG_XSTATE_MAX 16384

/* eng_mem.c */
int eng_mem_open(struct eng_proc *p);
/* eng_mem_write through the exec fence: hunch's own int3s. */
int eng_mem_write_any(struct eng_proc *p, uint64_t addr, const void *buf,
		      size_t len, struct hunch_err *err);
int eng_mem_read_str(struct eng_proc *p, uint64_t addr, char *buf, size_t len);

/* eng_fork.c: a fork or vfork event of thread parent (the child is
 * waited for, cleaned, detached, reported). */
void eng_fork_event(struct eng_proc *p, struct eng_thread *parent);

/* eng_bp.c (breakpoints, step-over) */
int eng_bp_insert(struct eng_proc *p, uint64_t addr, enum eng_bp_kind k,
		  struct hunch_err *err);
int eng_bp_remove(struct eng_proc *p, uint64_t addr);
void eng_bp_remove_all(struct eng_proc *p);
struct eng_bp *eng_bp_find(struct eng_proc *p, uint64_t addr);
int eng_bp_step_over(struct eng_proc *p, struct eng_thread *t);

/* eng_solib.c */
int eng_solib_init(struct eng_proc *p, struct hunch_err *err);
/* Called at an r_brk hit with every event it finds queued. */
int eng_solib_hit(struct eng_proc *p);
int eng_solib_set_exe(struct eng_proc *p);
void eng_solib_clear(struct eng_proc *p);
int eng_solib_read_auxv(pid_t pid, uint64_t type, uint64_t *val);

/* eng_exec.c: the exec fence's refusal (-ESTALE and why), 0 if down */
int eng_exec_fenced(struct eng_proc *p, const char *what,
		    struct hunch_err *err);
/* eng_exec.c: classify a new image at its exec event: false when it is
 * not an x86-64 ELF (then nothing of it is read or patched). */
bool eng_exec_image_ok(struct eng_proc *p);
/* eng_exec.c: the new image reached its entry point. */
void eng_exec_at_entry(struct eng_proc *p);

/* eng_inject.c */
int eng_inject_rtlib(struct eng_proc *p, const char *rtlib,
		     struct eng_shm *shm, struct hunch_err *err);

/* eng_attach_why.c: why an attach is refused ("cannot attach to process
 * PID (COMM): REASON: ADVICE" in err).  The precheck looks at /proc before
 * seizing and returns 0 when it finds nothing in the way; refused
 * explains a PTRACE_SEIZE that failed with errnum. */
int eng_attach_why_precheck(pid_t pid, const char *comm,
			    struct hunch_err *err);
int eng_attach_why_refused(pid_t pid, const char *comm, int errnum,
			   struct hunch_err *err);

/* eng_detach.c */
/* SIGKILL the process and reap every thread (error paths, eng_detach_kill). */
void eng_detach_kill_reap(struct eng_proc *p);

/* eng_launch.c, eng_attach.c */
int eng_launch_elf_check(const char *path, struct hunch_err *err);
/* eng_launch_script.c: a script whose #! interpreters lead to an
 * x86-64 program can be launched: how many interpreters deep it is (0:
 * not a script), or -errno with a message naming the script. */
int eng_launch_script_check(const char *path, struct hunch_err *err);
int eng_attach_status_field(pid_t pid, const char *field, char *buf,
			  size_t len);

/* eng_ptrace.c: the owed signals at a resume or detach: a parked
 * signal rides on its own stop; else the first owed rides on the
 * current stop with its own siginfo when that stop is a
 * signal-delivery-stop; the others are sent again.  Returns the signal
 * to pass to PTRACE_CONT/PTRACE_DETACH (0: none). */
int eng_ptrace_owed_signals(struct eng_proc *p, struct eng_thread *t);
/* Remember a signal the program is owed (hunch holds it). */
void eng_ptrace_owe_signal(struct eng_thread *t, int sig, const siginfo_t *si);
/* Queue ENG_EV_SIGNAL for sig on t unless it was given back before. */
void eng_ptrace_signal_event(struct eng_proc *p, struct eng_thread *t, int sig);

#endif

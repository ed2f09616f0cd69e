/*
 * eng_inst_trapcost.c - what one pass through a trap point costs the
 * target's own CPU while hunch is attached (eng_inst_cost.h, trap_ns).
 *
 * A point with no room for a jump takes an int3.  While hunch traces the
 * program, every hit is a SIGTRAP stop that hunch handles
 * (engine/eng_trap.c: the stop is peeked at, the thread's %rip set to
 * the trampoline, the stop taken and the thread resumed): the thread
 * pays the exception, the signal's generation, the stop (a switch out)
 * and the switch back in, in its own CPU time, and none of it passes
 * through a trampoline's cost add.  Charged nothing, python3.11 with a
 * CPU timer at _PyEval_EvalFrameDefault's entry (a trap) read an
 * observed cost of 0.3-4% while its CPU time grew by 19-22%.
 *
 * So it is measured, once per hunch process, the way it happens: a
 * child traced by this process runs int3s in a loop, hunch handles each
 * stop with the same requests as eng_trap.c, and the child reads its
 * own CPU clock around the loop.  The time the thread spends stopped,
 * waiting for hunch, is not CPU time and is not in the figure; the
 * search's gate keeps its own, far larger, per-trap figure for that
 * (ENG_METRIC_TRAP_COST_NS).
 */
#include "eng_inst_cost.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TRAP_ITERS 400u
#define TRAP_REPS 3      /* the median is taken of three */

struct trap_result {
	volatile uint64_t ns[TRAP_REPS];
	volatile int done;
};

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The traced child: only async-signal-safe calls (hunch has threads). */
static _Noreturn void child(struct trap_result *res)
{
	if (ptrace(PTRACE_TRACEME, 0, 0, 0) != 0)
		_exit(1);
	raise(SIGSTOP);
	for (int r = 0; r < TRAP_REPS; r++) {
		uint64_t t0 = thread_cpu_ns();

		for (unsigned i = 0; i < TRAP_ITERS; i++)
			__asm__ volatile("int3" ::: "memory");
		res->ns[r] = (thread_cpu_ns() - t0) / TRAP_ITERS;
	}
	res->done = 1;
	_exit(0);
}

/* One stop, handled as eng_trap_preempt and eng_ptrace do: peek, the
 * signal's info, the registers read and written, the stop taken, the
 * thread resumed without the signal. */
static int handle_stop(pid_t pid, bool *exited)
{
	struct user_regs_struct regs;
	siginfo_t w, si;
	int st;

	memset(&w, 0, sizeof w);
	if (waitid(P_PID, (id_t)pid, &w, WSTOPPED | WEXITED | WNOWAIT |
		   __WALL) != 0)
		return -errno;
	if (w.si_code == CLD_EXITED || w.si_code == CLD_KILLED ||
	    w.si_code == CLD_DUMPED) {
		*exited = true;
		return waitpid(pid, &st, __WALL) < 0 ? -errno : 0;
	}
	if (w.si_status == SIGTRAP &&
	    (ptrace(PTRACE_GETSIGINFO, pid, 0, &si) != 0 ||
	     ptrace(PTRACE_GETREGS, pid, 0, &regs) != 0 ||
	     ptrace(PTRACE_SETREGS, pid, 0, &regs) != 0))
		return -errno;
	if (waitpid(pid, &st, __WALL) < 0)
		return -errno;
	if (ptrace(PTRACE_CONT, pid, 0, 0) != 0)
		return -errno;
	return 0;
}

int eng_inst_trapcost_measure(double *ns)
{
	static double cached = -1;
	struct trap_result *res;
	bool exited = false;
	int rc = 0, st;
	pid_t pid;

	if (cached > 0) {
		*ns = cached;
		return 0;
	}
	res = mmap(NULL, sizeof *res, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (res == MAP_FAILED)
		return -errno;
	memset((void *)res, 0, sizeof *res);
	pid = fork();
	if (pid < 0) {
		rc = -errno;
		munmap(res, sizeof *res);
		return rc;
	}
	if (pid == 0)
		child(res);
	/* the SIGSTOP, then TRAP_REPS * TRAP_ITERS traps, then the exit */
	for (unsigned n = 0; rc == 0 && !exited &&
	     n < TRAP_REPS * TRAP_ITERS + 4; n++)
		rc = handle_stop(pid, &exited);
	if (!exited) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, __WALL);
	}
	if (rc == 0 && !res->done)
		rc = -EPROTO;
	if (rc == 0) {
		uint64_t a = res->ns[0], b = res->ns[1], c = res->ns[2];
		/* the median of the three: a trap in a program also
		 * disturbs its caches, which this loop does not show */
		uint64_t med = a > b ? (b > c ? b : (a > c ? c : a))
				     : (a > c ? a : (b > c ? c : b));

		cached = *ns = (double)(med ? med : 1);
	}
	munmap(res, sizeof *res);
	return rc;
}

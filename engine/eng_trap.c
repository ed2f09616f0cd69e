/*
 * eng_trap.c - SIGTRAPs at the instrumentation's trap points, handled in
 * the ptrace stop.
 *
 * The rtlib's SIGTRAP handler (rtlib/rt_trap.c) sends a thread that hit
 * a trap point's int3 to its trampoline.  While hunch is attached the
 * SIGTRAP first stops the thread for hunch, and a waitpid that reports
 * the stop takes the signal from the kernel (the tracee's exit_code is
 * cleared): until hunch resumes the thread with it, the signal lives
 * only in hunch.  If hunch is SIGKILLed then, the kernel resumes the
 * thread after the int3 with no signal, in the middle of the patched
 * instruction, and the program computes garbage (inst_kill: one wrong
 * result per thread held so).
 *
 * So before any wait takes such a stop, hunch peeks at it (WNOWAIT, the
 * signal stays in the kernel; eng_sigpark.c peeks, for every signal), sets the thread's %rip to the trampoline
 * and only then takes the stop, owing nothing.  Killed before the %rip is
 * set, the kernel delivers the SIGTRAP and the rtlib's handler does the
 * work; killed after, the SIGTRAP arrives at the trampoline itself, which
 * the handler recognises and lets run.  hunch reads the same table as the
 * handler, in the target's memory, so it needs no pointer into the
 * instrumentation manager and stays right after that is gone.
 */
#include "eng_proc_int.h"

#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>

#include "hunch_abi.h"

void eng_trap_set_table(struct eng_proc *p, uint64_t table, uint64_t cap)
{
	p->trap_table = table;
	p->trap_cap = cap;
}

uint64_t eng_trap_target(struct eng_proc *p, uint64_t addr)
{
	uint64_t cap = p->trap_cap, i;

	if (p->trap_table == 0 || cap == 0 || (cap & (cap - 1)) != 0)
		return 0;
	i = hunch_trap_slot(addr, cap);
	for (uint64_t n = 0; n < cap; n++, i = (i + 1) & (cap - 1)) {
		struct hunch_trap_entry e;

		if (eng_mem_read(p, p->trap_table + i * sizeof e, &e, sizeof e,
				 NULL) < 0 || e.addr == 0)
			return 0;
		/* tramp == addr: a removed point, its int3 is gone, so this
		 * one is someone else's; 0: its library was unloaded */
		if (e.addr == addr)
			return e.tramp == addr ? 0 : e.tramp;
	}
	return 0;
}

bool eng_trap_preempt(struct eng_proc *p, struct eng_thread *t,
		      const siginfo_t *w)
{
	struct user_regs_struct r;
	siginfo_t si;
	uint64_t to;

	if (p->trap_table == 0 || t->trap_sent || t->state != TS_RUNNING ||
	    w->si_code != CLD_TRAPPED || w->si_status != SIGTRAP)
		return false;  /* not a signal-delivery-stop for SIGTRAP */
	if (ptrace(PTRACE_GETSIGINFO, t->tid, 0, &si) != 0 ||
	    si.si_code != SI_KERNEL || eng_regs_get(p, t->tid, &r, NULL) < 0 ||
	    (to = eng_trap_target(p, r.rip - 1)) == 0)
		return false;
	r.rip = to;
	if (eng_regs_set(p, t->tid, &r, NULL) == 0)
		t->trap_sent = true;
	return t->trap_sent;
}

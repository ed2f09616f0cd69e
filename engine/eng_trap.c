/*
 * eng_trap.c - SIGTRAPs at the instrumentation's trap points, handled in
 * the ptrace stop.
 *
 * The rtlib's SIGTRAP handler (rtlib/rt_trap.c) sends a thread that hit
 * a trap point's int3 to its trampoline.  While hunch is attached the
 * SIGTRAP first stops the thread for hunch, whose waitpid takes the
 * signal from the kernel (the tracee's exit_code is cleared): until hunch
 * resumes the thread with it, the signal lives only in hunch.  If hunch
 * is SIGKILLed then, the kernel resumes the thread after the int3 with no
 * signal, in the middle of the patched instruction: the program computes
 * garbage (inst_kill: one wrong result per thread that was held).  So
 * hunch does the handler's work itself, at once: the thread's %rip is
 * set to the trampoline and it resumes with no signal owed.  It reads
 * the same table as the handler, in the target's memory, so it needs no
 * pointer into the instrumentation manager and stays right after it is
 * gone.
 */
#include "eng_proc_int.h"

#include "hunch_abi.h"

void eng_set_trap_table(struct eng_proc *p, uint64_t table, uint64_t cap)
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

		if (eng_read_mem(p, p->trap_table + i * sizeof e, &e, sizeof e,
				 NULL) < 0 || e.addr == 0)
			return 0;
		/* tramp == addr: a removed point, its int3 is gone, so this
		 * one is someone else's; 0: its library was unloaded */
		if (e.addr == addr)
			return e.tramp == addr ? 0 : e.tramp;
	}
	return 0;
}

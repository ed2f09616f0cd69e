/*
 * rt_trap.c - the trap fallback (devguide §1.18): an int3 at a point
 * too small for a 5-byte jmp raises SIGTRAP; this handler, inside the
 * program, looks the address up in hunch's table and resumes the thread
 * in the point's trampoline.  In-process, so it keeps working after hunch
 * detaches or is killed, and costs a signal delivery instead of a
 * ptrace round trip once hunch is gone.
 *
 * Coexisting with the program: every SIGTRAP that is not one of ours
 * (raise, a debugger's int3, single-step) goes to the disposition the
 * program set.  With LD_PRELOAD, sigaction() and signal() for SIGTRAP
 * are interposed: the program's handler is recorded as the one to chain
 * to, and the program is told what it set before, as if we were not
 * there.  (An rtlib loaded by dlopen at attach cannot interpose; a
 * program that sets SIGTRAP after attach replaces our handler, and its
 * traps at points then go to it: documented limitation.)
 */
#include "hunchrt.h"
#include "rt_internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <ucontext.h>

typedef int (*sigaction_fn)(int, const struct sigaction *,
			    struct sigaction *);

static struct {
	volatile uint64_t table;
	volatile uint64_t cap;
	volatile int installed;
	struct sigaction prog;       /* the program's own SIGTRAP action */
	sigaction_fn real_sigaction;
} rt_trap;

static sigaction_fn real_sigaction(void)
{
	if (rt_trap.real_sigaction == NULL)
		rt_trap.real_sigaction = (sigaction_fn)dlsym(RTLD_NEXT,
							     "sigaction");
	return rt_trap.real_sigaction;
}

static uint64_t lookup(uint64_t addr)
{
	const struct hunch_trap_entry *t =
		(const struct hunch_trap_entry *)(uintptr_t)rt_trap.table;
	uint64_t cap = rt_trap.cap;

	if (t == NULL || cap == 0)
		return 0;
	for (uint64_t i = hunch_trap_slot(addr, cap), n = 0; n < cap;
	     i = (i + 1) & (cap - 1), n++) {
		if (t[i].addr == addr)
			return t[i].tramp;
		if (t[i].addr == 0)
			return 0;
	}
	return 0;
}

/* Is pc a trampoline of the table (a live entry's tramp)?  hunch sends a
 * thread stopped on one of our int3s there itself (engine/eng_trap.c),
 * before it takes the stop's signal from the kernel; if hunch is killed
 * in between, that SIGTRAP is delivered with the thread already there.
 * Rare, so a scan. */
static int at_tramp(uint64_t pc)
{
	const struct hunch_trap_entry *t =
		(const struct hunch_trap_entry *)(uintptr_t)rt_trap.table;
	uint64_t cap = rt_trap.cap;

	for (uint64_t i = 0; t != NULL && i < cap; i++)
		if (t[i].tramp == pc && t[i].addr != pc && t[i].addr != 0)
			return 1;
	return 0;
}

/* Hand a SIGTRAP that is not ours to the program's disposition. */
static void chain(int sig, siginfo_t *si, void *uc)
{
	struct sigaction *p = &rt_trap.prog;

	if (rt_g.shm != NULL)
		rt_g.shm->rt_traps_foreign++;
	if (p->sa_flags & SA_SIGINFO) {
		if (p->sa_sigaction != NULL)
			p->sa_sigaction(sig, si, uc);
		return;
	}
	if (p->sa_handler == SIG_IGN)
		return;
	if (p->sa_handler != SIG_DFL) {
		p->sa_handler(sig);
		return;
	}
	/* default: die of SIGTRAP as the program would have.  Through the
	 * real sigaction: signal() here binds to our own interposed one
	 * (the rtlib is preloaded), which only records the program's wish,
	 * so raise() came back to this handler, and with SA_NODEFER it
	 * recursed until the thread's stack ran out: the demo's SIGSEGV
	 * with an 8 MB stack used up (issue 4, inst_trapdemo). */
	struct sigaction dfl;

	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	if (real_sigaction() != NULL)
		real_sigaction()(SIGTRAP, &dfl, NULL);
	raise(SIGTRAP);
}

static void handler(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	uint64_t pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP] - 1;
	int saved = errno;
	uint64_t to = si->si_code == SI_KERNEL ? lookup(pc) : 0;

	if (to != 0) {
		uc->uc_mcontext.gregs[REG_RIP] = (greg_t)to;
		if (rt_g.shm != NULL)
			rt_g.shm->rt_traps++;
	} else if (si->si_code == SI_KERNEL && at_tramp(pc + 1)) {
		;       /* already sent on by hunch: run the trampoline */
	} else {
		chain(sig, si, ucv);
	}
	errno = saved;
}

int hunchrt_trap_install(uint64_t table, uint64_t cap)
{
	struct sigaction sa;
	sigaction_fn sf = real_sigaction();

	if (cap == 0 || (cap & (cap - 1)) != 0 || sf == NULL)
		return -EINVAL;
	rt_trap.table = table;
	rt_trap.cap = cap;
	if (rt_trap.installed)
		return 0;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	if (sf(SIGTRAP, &sa, &rt_trap.prog) != 0)
		return -errno;
	rt_trap.installed = 1;
	return 0;
}

/* Interposed: while our handler is in place, the program's SIGTRAP
 * action is kept as the one to chain to. */
RT_EXPORT int sigaction(int sig, const struct sigaction *act,
			struct sigaction *old)
{
	sigaction_fn sf = real_sigaction();

	if (sf == NULL) {
		errno = ENOSYS;
		return -1;
	}
	if (sig != SIGTRAP || !rt_trap.installed)
		return sf(sig, act, old);
	if (old != NULL)
		*old = rt_trap.prog;
	if (act != NULL)
		rt_trap.prog = *act;
	return 0;
}

RT_EXPORT sighandler_t signal(int sig, sighandler_t h)
{
	struct sigaction sa, old;

	if (sig != SIGTRAP || !rt_trap.installed) {
		sighandler_t (*real)(int, sighandler_t) =
			(sighandler_t (*)(int, sighandler_t))dlsym(RTLD_NEXT,
								   "signal");

		return real ? real(sig, h) : SIG_ERR;
	}
	(void)sa;
	old = rt_trap.prog;
	memset(&rt_trap.prog, 0, sizeof rt_trap.prog);
	rt_trap.prog.sa_handler = h;
	rt_trap.prog.sa_flags = SA_RESTART;
	return old.sa_handler;
}

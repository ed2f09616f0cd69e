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
#include <link.h>
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
	 * with an 8 MB stack used up (inst_trapdemo). */
	struct sigaction dfl;

	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	if (real_sigaction() != NULL)
		real_sigaction()(SIGTRAP, &dfl, NULL);
	raise(SIGTRAP);
}

/* Inferior calls return to this int3.  hunch, alive, takes the SIGTRAP
 * in the ptrace stop and restores the thread itself; if hunch died
 * during the call, the kernel delivers it here (infcall_done).  If hunch
 * died after its wait took the SIGTRAP but before it restored the
 * thread, the signal is lost and the thread runs on after the int3: the
 * jmp brings it back to the int3, the save area still at its %rsp. */
__asm__(".pushsection .text\n"
	".globl hunchrt_infcall_ret\n"
	".hidden hunchrt_infcall_ret\n"
	".type hunchrt_infcall_ret, @function\n"
	"hunchrt_infcall_ret:\n"
	"\tint3\n"
	"\tjmp hunchrt_infcall_ret\n"
	".size hunchrt_infcall_ret, .-hunchrt_infcall_ret\n"
	".popsection\n");

#define FX_SW_OFF 464            /* software bytes of the FXSAVE area */
#define FP_MAGIC1 0x46505853u

/* The interrupted system call restarts as the kernel would have done on
 * hunch's resume (sigreturn leaves orig_rax at -1: no restart). */
static void restart_syscall_regs(uint64_t *r)
{
	int64_t rax = (int64_t)r[10];

	if ((int64_t)r[15] < 0)
		return;
	if (rax == -512 || rax == -513 || rax == -514) {  /* ERESTART* */
		r[10] = r[15];
		r[16] -= 2;
	} else if (rax == -516) {                          /* RESTARTBLOCK */
		r[10] = 219;                               /* restart_syscall */
		r[16] -= 2;
	}
}

/* Vector state back into the signal frame (restored by sigreturn): the
 * legacy area but its software bytes, then the XSAVE header and
 * components as far as the frame holds them. */
static void restore_xstate(ucontext_t *uc, const struct hunch_infcall_save *s)
{
	uint8_t *f = (uint8_t *)uc->uc_mcontext.fpregs;
	uint32_t magic, size;
	uint64_t feat, n;

	if (f == NULL || s->xlen < 512)
		return;
	memcpy(f, s->xstate, FX_SW_OFF);
	memcpy(&magic, f + FX_SW_OFF, 4);
	memcpy(&feat, f + FX_SW_OFF + 8, 8);
	memcpy(&size, f + FX_SW_OFF + 16, 4);
	if (magic != FP_MAGIC1 || size <= 576 || s->xlen <= 576)
		return;
	n = size < s->xlen ? size : s->xlen;
	memcpy(f + 512, s->xstate + 512, n - 512);
	*(uint64_t *)(void *)(f + 512) &= feat;      /* xstate_bv */
	memset(f + 520, 0, 8);                       /* xcomp_bv: standard */
}

/* hunch died during an inferior call: put the thread back exactly where
 * it was, from the save area hunch wrote above the return address. */
static int infcall_done(ucontext_t *uc, uint64_t pc)
{
	struct hunch_infcall_save *s;
	greg_t *g = uc->uc_mcontext.gregs;
	uint64_t r[27];

	if (pc != (uint64_t)(uintptr_t)hunchrt_infcall_ret)
		return 0;
	s = (struct hunch_infcall_save *)(uintptr_t)g[REG_RSP];
	if (s->magic != HUNCH_INFCALL_MAGIC || s->ret != pc)
		return 0;
	memcpy(r, s->regs, sizeof r);
	restart_syscall_regs(r);
	g[REG_R15] = (greg_t)r[0];
	g[REG_R14] = (greg_t)r[1];
	g[REG_R13] = (greg_t)r[2];
	g[REG_R12] = (greg_t)r[3];
	g[REG_RBP] = (greg_t)r[4];
	g[REG_RBX] = (greg_t)r[5];
	g[REG_R11] = (greg_t)r[6];
	g[REG_R10] = (greg_t)r[7];
	g[REG_R9] = (greg_t)r[8];
	g[REG_R8] = (greg_t)r[9];
	g[REG_RAX] = (greg_t)r[10];
	g[REG_RCX] = (greg_t)r[11];
	g[REG_RDX] = (greg_t)r[12];
	g[REG_RSI] = (greg_t)r[13];
	g[REG_RDI] = (greg_t)r[14];
	g[REG_RIP] = (greg_t)r[16];
	g[REG_EFL] = (greg_t)r[18];
	g[REG_RSP] = (greg_t)r[19];
	/* hunch unblocked SIGTRAP for the call; the thread's own mask
	 * comes back with sigreturn */
	memcpy(&uc->uc_sigmask, &s->sigmask, sizeof s->sigmask);
	restore_xstate(uc, s);
	s->magic = 0;
	if (rt_g.shm != NULL)
		rt_g.shm->rt_infcalls_finished++;
	return 1;
}

/* hunch's int3 on the dynamic linker's r_brk (_dl_debug_state, a bare
 * `ret` called at every dlopen/dlclose) stays in the program when hunch
 * is SIGKILLed: its `ret` is emulated here, or the program would die of
 * SIGTRAP at its next dlopen. */
static int r_brk_hit(ucontext_t *uc, uint64_t pc)
{
	greg_t *g = uc->uc_mcontext.gregs;

	if (pc == 0 || pc != (uint64_t)_r_debug.r_brk ||
	    *(volatile const uint8_t *)(uintptr_t)pc != 0xcc)
		return 0;
	g[REG_RIP] = *(const greg_t *)(uintptr_t)g[REG_RSP];
	g[REG_RSP] += 8;
	return 1;
}

static void handler(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	uint64_t pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP] - 1;
	int saved = errno;
	uint64_t to = si->si_code == SI_KERNEL ? lookup(pc) : 0;

	if (to == 0 && si->si_code == SI_KERNEL && infcall_done(uc, pc)) {
		;       /* back where hunch found it (errno restored below) */
	} else if (to == 0 && si->si_code == SI_KERNEL && r_brk_hit(uc, pc)) {
		;       /* _dl_debug_state returned */
	} else if (to != 0) {
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
	if (cap == 0 || (cap & (cap - 1)) != 0 || real_sigaction() == NULL)
		return -EINVAL;
	rt_trap.table = table;
	rt_trap.cap = cap;
	return rt_trap_handler_init();
}

int rt_trap_handler_init(void)
{
	struct sigaction sa;
	sigaction_fn sf = real_sigaction();

	if (sf == NULL)
		return -EINVAL;
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

/*
 * eng_stackwalk.c - the frames of a stopped thread, by CFI (see
 * eng_stackwalk.h).  The same libdwfl set-up as the stack sampler's
 * (eng_perfsample.c): registers and stack come from the caller, so the
 * unwind never touches the process itself.
 */
#include "eng_stackwalk.h"
#include "clock_mono.h"

#include <elfutils/libdwfl.h>
#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NREGS ENG_DWARF_NREGS
#define MAX_WALK_FRAMES 4096

struct eng_stackwalk {
	pid_t pid;
	Dwfl *dwfl;
	uint64_t loaded_ns;
	uint64_t rescan_ns;
	bool maps_changed;
	/* the walk in progress */
	pid_t tid;
	Dwarf_Word regs[NREGS];
	uint32_t known;           /* which of regs hold values (bit = regno) */
	const unsigned char *stack;
	uint64_t stack_lo;        /* address of stack[0]: at or under %rsp */
	uint64_t sp0;             /* the innermost frame's %rsp */
	size_t stack_len;
	eng_frame_fn fn;
	void *arg;
	struct eng_walk_end *end;
	uint64_t last_pc;
};

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct eng_stackwalk *sw = arg;

	(void)dwfl;
	if (*thread_argp != NULL)
		return 0;
	*thread_argp = sw;
	return sw->tid;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	struct eng_stackwalk *sw = arg;

	(void)dwfl;
	*thread_argp = sw;
	return tid == sw->tid;
}

/* Only the copied stack is readable: a frame that needs more ends the
 * walk there (it is then incomplete).  The bounds are offsets into the
 * copy, never addr + 8: libdwfl asks for any address a frame gives it,
 * and where it has no CFI for a pc (in no module it knows: a library
 * mapped, or an image exec'ed, since the map was read) its frame-pointer
 * fallback reads at %rbp and %rbp + 8, which code built without frame
 * pointers may hold as -1; addr + 8 wrapped past 0 and the read went to
 * the copy plus nearly 2^64 (hunch's SIGSEGV at an exec). */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result,
			void *arg)
{
	struct eng_stackwalk *sw = arg;

	(void)dwfl;
	if (addr < sw->stack_lo || sw->stack_len < 8 ||
	    addr - sw->stack_lo > sw->stack_len - 8)
		return false;
	memcpy(result, sw->stack + (addr - sw->stack_lo), 8);
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct eng_stackwalk *sw = arg;

	if (sw->known == (1u << NREGS) - 1)
		return dwfl_thread_state_registers(thread, 0, NREGS, sw->regs);
	/* a register left unset is undefined to libdwfl: a frame whose
	 * CFA needs it ends the walk rather than being guessed */
	for (int i = 0; i < NREGS; i++)
		if ((sw->known & 1u << i) &&
		    !dwfl_thread_state_registers(thread, i, 1, &sw->regs[i]))
			return false;
	return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
};

static int reload(struct eng_stackwalk *sw)
{
	if (sw->dwfl != NULL)
		dwfl_end(sw->dwfl);
	sw->loaded_ns = clock_mono_ns();
	sw->maps_changed = false;
	sw->dwfl = dwfl_begin(&proc_callbacks);
	if (sw->dwfl == NULL)
		return -ENOMEM;
	if (dwfl_linux_proc_report(sw->dwfl, sw->pid) != 0 ||
	    dwfl_report_end(sw->dwfl, NULL, NULL) != 0 ||
	    !dwfl_attach_state(sw->dwfl, NULL, sw->pid, &thread_callbacks,
			       sw)) {
		dwfl_end(sw->dwfl);
		sw->dwfl = NULL;
		return -ESRCH;
	}
	return 0;
}

int eng_stackwalk_open(pid_t pid, uint64_t rescan_ns,
		       struct eng_stackwalk **out)
{
	struct eng_stackwalk *sw = calloc(1, sizeof(*sw));
	int rc;

	*out = NULL;
	if (sw == NULL)
		return -ENOMEM;
	sw->pid = pid;
	sw->rescan_ns = rescan_ns;
	rc = reload(sw);
	if (rc < 0) {
		free(sw);
		return rc;
	}
	*out = sw;
	return 0;
}

void eng_stackwalk_maps_changed(struct eng_stackwalk *sw)
{
	sw->maps_changed = true;
}

void eng_stackwalk_close(struct eng_stackwalk *sw)
{
	if (sw == NULL)
		return;
	if (sw->dwfl != NULL)
		dwfl_end(sw->dwfl);
	free(sw);
}

static uint64_t reg_or_0(Dwfl_Frame *state, unsigned regno)
{
	Dwarf_Word v;

	return dwfl_frame_reg(state, regno, &v) == 0 ? v : 0;
}

static int on_frame(Dwfl_Frame *state, void *arg)
{
	struct eng_stackwalk *sw = arg;
	struct eng_walk_end *end = sw->end;
	Dwarf_Addr pc;
	Dwarf_Word sp = 0;
	bool act, go_on;

	if (!dwfl_frame_pc(state, &pc, &act) || pc == 0)
		return DWARF_CB_ABORT;
	if (dwfl_frame_reg(state, 7, &sp) != 0)
		sp = 0;
	go_on = sw->fn(sw->arg, end->nframes, pc, sp, act);
	sw->last_pc = pc;
	if (sp != 0)
		end->stop_sp = sp;
	end->last_pc = pc;
	end->rbx = reg_or_0(state, 3);
	end->rbp = reg_or_0(state, 6);
	end->r12 = reg_or_0(state, 12);
	end->r13 = reg_or_0(state, 13);
	end->r14 = reg_or_0(state, 14);
	end->r15 = reg_or_0(state, 15);
	end->nframes++;
	return go_on && end->nframes < MAX_WALK_FRAMES ? DWARF_CB_OK
							: DWARF_CB_ABORT;
}

/* One walk; true when it reached the outermost frame.  libdwfl returns
 * 0 from dwfl_getthread_frames only when the unwinder found no caller
 * (CFI marks the return address undefined), not when a callback
 * aborted or a frame could not be unwound. */
static bool walk_once(struct eng_stackwalk *sw)
{
	memset(sw->end, 0, sizeof(*sw->end));
	sw->end->stop_sp = sw->sp0;
	sw->last_pc = 0;
	return dwfl_getthread_frames(sw->dwfl, sw->tid, on_frame, sw) == 0 &&
	       sw->end->nframes > 0;
}

/* The map is old and pc lies in no module it knows. */
static bool stale_map(struct eng_stackwalk *sw, uint64_t pc)
{
	return pc != 0 && dwfl_addrmodule(sw->dwfl, pc) == NULL &&
	       clock_mono_ns() - sw->loaded_ns >= sw->rescan_ns;
}

int eng_stackwalk_dw(struct eng_stackwalk *sw, pid_t tid,
		     const uint64_t regs[NREGS], const void *stack,
		     size_t len, eng_frame_fn fn, void *arg,
		     struct eng_walk_end *end)
{
	return eng_stackwalk_dw_known(sw, tid, regs, (1u << NREGS) - 1,
				      stack, len, fn, arg, end);
}

/* The walk itself, over a copy of the stack that starts at stack_lo. */
static int walk(struct eng_stackwalk *sw, pid_t tid,
		const uint64_t regs[NREGS], uint32_t known,
		const void *stack, uint64_t stack_lo, size_t len,
		eng_frame_fn fn, void *arg, struct eng_walk_end *end)
{
	memset(end, 0, sizeof(*end));
	memcpy(sw->regs, regs, sizeof(sw->regs));
	sw->known = known;
	sw->tid = tid;
	sw->stack = stack;
	sw->stack_lo = stack_lo;
	sw->sp0 = regs[7];
	sw->stack_len = len;
	sw->fn = fn;
	sw->arg = arg;
	sw->end = end;
	if ((sw->dwfl == NULL || sw->maps_changed ||
	     stale_map(sw, regs[16])) && reload(sw) < 0)
		return -ESRCH;
	end->complete = walk_once(sw);
	if (end->complete || !stale_map(sw, sw->last_pc))
		return 0;
	/* stopped in no known module: a library loaded since the map was
	 * read?  Read it again and walk again (frames are reported anew) */
	if (reload(sw) < 0)
		return -ESRCH;
	end->complete = walk_once(sw);
	return 0;
}

int eng_stackwalk_dw_known(struct eng_stackwalk *sw, pid_t tid,
			   const uint64_t regs[NREGS], uint32_t known,
			   const void *stack, size_t len, eng_frame_fn fn,
			   void *arg, struct eng_walk_end *end)
{
	return walk(sw, tid, regs, known, stack, regs[7], len, fn, arg, end);
}

int eng_stackwalk_from(struct eng_stackwalk *sw, pid_t tid,
		       const struct user_regs_struct *r, const void *stack,
		       uint64_t stack_lo, size_t len, eng_frame_fn fn,
		       void *arg, struct eng_walk_end *end)
{
	const uint64_t dw[NREGS] = {
		r->rax, r->rdx, r->rcx, r->rbx, r->rsi, r->rdi, r->rbp, r->rsp,
		r->r8, r->r9, r->r10, r->r11, r->r12, r->r13, r->r14, r->r15,
		r->rip,
	};

	return walk(sw, tid, dw, (1u << NREGS) - 1, stack, stack_lo, len, fn,
		    arg, end);
}

int eng_stackwalk(struct eng_stackwalk *sw, pid_t tid,
		  const struct user_regs_struct *r, const void *stack,
		  size_t len, eng_frame_fn fn, void *arg,
		  struct eng_walk_end *end)
{
	return eng_stackwalk_from(sw, tid, r, stack, r->rsp, len, fn, arg,
				  end);
}

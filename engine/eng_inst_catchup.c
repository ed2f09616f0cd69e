/*
 * eng_inst_catchup.c - catchup (devguide §1.12): instrumentation inserted
 * while threads are inside a function missed their entry snippets; they
 * are run now, by inferior calls of the rtlib primitives on each such
 * thread, once per activation, outermost first, with every thread
 * stopped (so the function cannot exit and re-enter in between).
 *
 * An activation is the top frame (PC inside the function, but not at
 * its first byte: that thread will run the entry snippet itself) or a
 * return address into the function on the thread's stack.  Without
 * frame pointers, a stack word counts as a return address only when the
 * bytes before it are a call instruction, so stale data rarely passes;
 * a thread whose PC is in trampoline memory is skipped (its frame is
 * mid-instrumentation: devguide caveat 7).
 */
#include "eng_inst_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "eng_proc.h"
#include "eng_shm.h"

#define SCAN_BYTES (64u << 10)

/* Is `ra` plausibly a return address (a call instruction ends there)? */
static bool after_call(struct eng_proc *p, uint64_t ra)
{
	uint8_t b[7];

	if (eng_read_mem(p, ra - 7, b, 7, NULL) < 0)
		return false;
	if (b[2] == 0xe8)                            /* call rel32 */
		return true;
	if (b[5] == 0xff && (b[6] & 0x38) == 0x10)   /* call *%reg */
		return true;
	if (b[1] == 0xff && (b[2] & 0xf8) == 0x10 + 0x00 &&
	    (b[2] & 0xc7) == 0x05)                   /* call *d32(%rip) */
		return true;
	if (b[4] == 0xff && (b[5] & 0x38) == 0x10)   /* call *d8(%reg) */
		return true;
	if (b[1] == 0xff && (b[2] & 0x38) == 0x10)   /* call *d32(%reg) */
		return true;
	return false;
}

/* Activations of [lo, hi) on one thread. */
static int activations(struct eng_proc *p, pid_t tid, uint64_t lo,
		       uint64_t hi, bool (*in_tramp)(void *, uint64_t),
		       void *arg)
{
	struct user_regs_struct r;
	uint64_t *w;
	int n = 0;

	if (eng_get_regs(p, tid, &r, NULL) < 0 || in_tramp(arg, r.rip))
		return 0;
	if (r.rip > lo && r.rip < hi)
		n++;
	w = malloc(SCAN_BYTES);
	if (w == NULL)
		return n;
	/* read what exists of the stack, in shrinking pieces that end on a
	 * page boundary (a main thread may have less than 4 KiB above %rsp:
	 * an unaligned 4 KiB read would then fail and find nothing) */
	for (size_t len = SCAN_BYTES; len >= 4096; len /= 2) {
		size_t n8 = len - (r.rsp & 4095);

		if (eng_read_mem(p, r.rsp, w, n8, NULL) < 0)
			continue;
		for (size_t i = 0; i < n8 / 8; i++)
			if (w[i] > lo && w[i] <= hi && after_call(p, w[i]))
				n++;
		break;
	}
	free(w);
	return n;
}

static bool tramp_pc(void *arg, uint64_t pc)
{
	return eng_codemem_contains(arg, pc);
}

/* One snippet as an inferior call of its rtlib primitive. */
static int run_snip(struct eng_proc *p, struct eng_shm *shm, pid_t tid,
		    const struct x86_snip *s, struct hunch_err *err)
{
	uint64_t args[2] = { s->handle, (uint64_t)s->delta }, ret;
	enum hunch_rt_entry e;
	int nargs = 1;

	switch (s->kind) {
	case X86_SN_WALL_START: e = HUNCH_RT_ENTRY_WALL_START; break;
	case X86_SN_CPU_START: e = HUNCH_RT_ENTRY_CPU_START; break;
	case X86_SN_ADD:
		if (s->value != NULL)
			goto unsupported;
		e = HUNCH_RT_ENTRY_COUNTER_ADD;
		nargs = 2;
		break;
	default:
	unsupported:
		return hunch_errf(err, -ENOTSUP, "catchup supports timer "
				  "starts and constant counter adds only");
	}
	return eng_infcall(p, tid, eng_shm_entry(shm, e), args, nargs, &ret,
			   err);
}

int inst_catchup(struct eng_proc *p, struct eng_shm *shm,
		 struct eng_codemem *mem, uint64_t lo, uint64_t hi,
		 const struct x86_snip *s, size_t n, struct hunch_err *err)
{
	pid_t tids[4096];
	size_t nt;
	int caught = 0, rc;

	if (!eng_proc_stopped(p))
		return hunch_errf(err, -EINVAL, "catchup needs every thread "
				  "stopped (call it before resuming)");
	nt = eng_proc_threads(p, tids, 4096);
	for (size_t i = 0; i < nt; i++) {
		int k = activations(p, tids[i], lo, hi, tramp_pc, mem);

		for (int a = 0; a < k; a++)
			for (size_t j = 0; j < n; j++)
				if ((rc = run_snip(p, shm, tids[i], &s[j],
						   err)) < 0)
					return rc;
		caught += k > 0;
	}
	return caught;
}

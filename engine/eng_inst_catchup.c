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

#define SCAN_BYTES (512u << 10)

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

/* Activations of [lo, hi) on one thread: its stack is read from %rsp to
 * the end of its mapping (at most SCAN_BYTES). */
static int activations(struct eng_proc *p, pid_t tid, uint64_t lo,
		       uint64_t hi, const struct inst_range *maps, size_t nmaps,
		       struct eng_codemem *mem)
{
	struct user_regs_struct r;
	uint64_t *w, end;
	size_t len;
	int n = 0;

	if (eng_get_regs(p, tid, &r, NULL) < 0 ||
	    eng_codemem_contains(mem, r.rip))
		return 0;
	if (r.rip > lo && r.rip < hi)
		n++;
	end = inst_map_end(maps, nmaps, r.rsp);
	len = end > r.rsp ? end - r.rsp : 0;
	len = (len > SCAN_BYTES ? SCAN_BYTES : len) & ~(size_t)7;
	w = len ? malloc(len) : NULL;
	if (w != NULL && eng_read_mem(p, r.rsp, w, len, NULL) == 0)
		for (size_t i = 0; i < len / 8; i++)
			if (w[i] > lo && w[i] <= hi && after_call(p, w[i]))
				n++;
	free(w);
	return n;
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
	struct inst_range *maps = NULL;
	size_t nt, nmaps;
	int caught = 0, rc = 0;

	if (!eng_proc_stopped(p))
		return hunch_errf(err, -EINVAL, "catchup needs every thread "
				  "stopped (call it before resuming)");
	nt = eng_proc_threads(p, tids, 4096);
	nmaps = inst_read_maps(eng_proc_pid(p), &maps);
	for (size_t i = 0; i < nt && rc >= 0; i++) {
		int k = activations(p, tids[i], lo, hi, maps, nmaps, mem);

		for (int a = 0; a < k && rc >= 0; a++)
			for (size_t j = 0; j < n && rc >= 0; j++)
				rc = run_snip(p, shm, tids[i], &s[j], err);
		caught += k > 0;
	}
	free(maps);
	return rc < 0 ? rc : caught;
}

/*
 * eng_inst_catchup.c - catchup (devguide §1.12): instrumentation inserted
 * while threads are inside a function missed their entry snippets; they
 * are run now, by inferior calls of the rtlib primitives on each such
 * thread, once per activation, outermost first, with every thread
 * stopped (so the function cannot exit and re-enter in between).
 *
 * An activation is the top frame (PC inside the function, but not at
 * its first byte: that thread will run the entry snippet itself) or a
 * return address into the function in a live frame of the thread's
 * stack, found by walking it with CFI (eng_stackwalk.h).  A stack word
 * that merely looks like a return address (a call instruction ends
 * there) is not enough: a callee that returned long ago leaves one in
 * dead stack that later frames' locals still hold, and an entry snippet
 * caught up for it is never undone by an exit.  The walk goes on
 * through hunch's code memory where the engine knows the frame: a
 * relocated copy unwinds as the same place in the original (the copy
 * holds the original's instructions; libdwfl knows only the original's
 * CFI), an rtlib call made through the call thunk from its instrumented
 * instruction.  Only above a frame the walk cannot pass (a trampoline,
 * code without CFI) are words judged by their look.  Judged so above a
 * copy, the stale words over a bn_smallwrites writer inside write()'s
 * copy can hold a return address into fflush(), left by its one call
 * before the loop: caught up, every later write counts as "within
 * fflush", a false finding a search once reported.  A
 * thread whose PC is in trampoline memory (its frame is
 * mid-instrumentation: devguide caveat 7) is single-stepped out of it
 * first (in_codemem).
 *
 * When did the activation begin?  A timer started by catchup counts
 * from now, missing the time before enabling, unless the beginning is
 * known for sure.  It is for one kind of activation: the outermost one
 * of the thread's start function (main on the main thread, the start
 * routine on the others), which lives as long as the thread does.  Its
 * beginning is in the thread's block header: written by the rtlib just
 * before it calls the start routine, or, for main, by hunch when launch
 * stopped the program at main (eng_inst_catchup_mark_main).  Both are read
 * at or after the real beginning, so the time is never overstated.
 * Every other activation is dated by the stack sampler when hunch runs
 * one (eng_inst_catchup_set_psampler: the live source's hint sampler): the
 * activation is named by its frame's CFA and return address (found by
 * unwinding the stopped thread as a sample is unwound), and the timer
 * starts at the oldest of the newest samples that all held it, if there
 * are at least two (`from_samples`).  That is never more than one sample
 * period after the real beginning; it can be earlier only if the thread
 * left the function and came back to the same frame between two samples,
 * and then what is counted too much is the time it spent outside, which
 * a sample would have hit in proportion to its length (engine/README.md,
 * Catchup, has the bound).  Without samples (or a program hunch attached
 * to) it counts from enabling, and eng_catchup_info says which was done.
 */
#include "eng_inst_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "eng_funcreloc.h"
#include "eng_main.h"
#include "eng_perfsample.h"
#include "eng_proc.h"
#include "eng_clock.h"
#include "eng_shm.h"
#include "eng_stackwalk.h"
#include "hunch_abi.h"
#include "eng_taskcpu.h"

#define SCAN_BYTES (512u << 10)
/* The copy of a stack starts this far under %rsp: the System V red
 * zone, where a leaf's epilogue leaves the registers it popped. */
#define RED_ZONE 128u
/* A walk ending in no known module reads the memory map again, at most
 * once a second: catchups are rare, and a library dlopen'ed since
 * should not cost the walk. */
#define RESCAN_NS 1000000000ull

/* Is `ra` plausibly a return address (a call instruction ends there)? */
static bool after_call(struct eng_proc *p, uint64_t ra)
{
	uint8_t b[7];

	if (eng_mem_read(p, ra - 7, b, 7, NULL) < 0)
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

/* Counting the frames of [lo, hi) during a walk. */
struct act_count {
	const struct eng_inst *in;
	uint64_t lo, hi;
	int n;
	int base;         /* frames counted by an earlier walk */
	bool last_act;    /* the last frame is where its thread is (frame 0
			   * of a walk, or interrupted): not a return address */
	/* main's return, when [lo, hi) is main: the frame returning there
	 * is main's activation even when its pc is not in main (main
	 * tail-called the code that runs: eng_proc_main_return) */
	uint64_t main_ret, main_ret_sp;
	bool prev_in;     /* the frame before this one was counted */
	uint64_t prev_pc; /* and its pc */
};

/* A frame in hunch's code memory ends the walk: no CFI describes it. */
static bool count_frame(void *arg, int i, uint64_t pc, uint64_t sp,
			bool act)
{
	struct act_count *c = arg;
	bool in;

	if (i == 0)       /* a walk starts (again): count from its base */
		c->n = c->base;
	in = i == 0 ? pc > c->lo && pc < c->hi : pc > c->lo && pc <= c->hi;
	c->n += in;
	/* the caller of a main that tail-called: main has no frame, the
	 * code it jumped to returns here (not a thread at main's first
	 * byte, or walked on from a site there: it runs the entry itself) */
	if (i > 0 && !c->prev_in && c->prev_pc != c->lo && c->main_ret != 0 &&
	    pc == c->main_ret && (c->main_ret_sp == 0 || sp == c->main_ret_sp))
		c->n++;
	c->prev_in = in;
	c->prev_pc = pc;
	c->last_act = i == 0 || act;
	return !eng_codemem_contains(c->in->mem, pc);
}

/* Would count_frame count a walk's first frame at pc? */
static int first_counts(const struct act_count *c, uint64_t pc)
{
	return pc > c->lo && pc < c->hi;
}

/* Stack words in w[from/8, len/8) that are return addresses into
 * [lo, hi): for the part of the stack the walk could not reach. */
static int scan_words(struct eng_proc *p, const uint64_t *w, size_t from,
		      size_t len, uint64_t lo, uint64_t hi)
{
	int n = 0;

	for (size_t i = from / 8; i < len / 8; i++)
		if (w[i] > lo && w[i] <= hi && after_call(p, w[i]))
			n++;
	return n;
}

/* The instrumented instruction whose mini made the call that returns
 * to `ra`, or 0 (a base trampoline's own call: registering the thread). */
static uint64_t mini_site(const struct eng_inst *in, uint64_t ra)
{
	for (size_t i = 0; i < in->nreq; i++) {
		const struct request *q = &in->req[i];

		if (q->mini != 0 && ra > q->mini && ra <= q->mini + q->mini_len)
			return q->site;
	}
	return 0;
}

/* One thread's stack, copied from %rsp up (w, len bytes) with `red`
 * bytes of the red zone readable under it. */
struct act_stack {
	pid_t tid;
	const uint64_t *w;
	size_t red, len;
	uint64_t rsp;
};

enum walk_on_rc {
	WALK_NOT_MINE,   /* the frame is not one this step knows */
	WALK_STUCK,      /* known, but nothing to walk on from */
	WALK_WENT_ON,    /* walked on: `end` is the new walk's */
};

/* Walk on from registers r2 (a frame the walk could not pass, as if
 * the thread were stopped there).  `counted`: that frame was counted at
 * another pc already; its first frame is then not counted again. */
static enum walk_on_rc walk_from(struct eng_inst *in, const struct act_stack *st,
				 struct user_regs_struct *r2, int counted,
				 struct act_count *c, struct eng_walk_end *end,
				 uint64_t *scan_from)
{
	int before = c->n;

	c->base = c->n + counted - first_counts(c, r2->rip);
	if (eng_stackwalk_from(in->sw, st->tid, r2, st->w - st->red / 8,
			       st->rsp - st->red, st->len + st->red,
			       count_frame, c, end) < 0 ||
	    end->nframes == 0) {
		c->n = before + counted;
		*scan_from = r2->rsp;
		return WALK_STUCK;
	}
	*scan_from = end->complete ? st->rsp + st->len : end->stop_sp;
	return WALK_WENT_ON;
}

/* The registers a walk ended with, at pc and sp. */
static void end_regs(const struct eng_walk_end *end, uint64_t pc,
		     uint64_t sp, struct user_regs_struct *r2)
{
	*r2 = (struct user_regs_struct){
		.rip = pc, .rsp = sp, .rbp = end->rbp, .rbx = end->rbx,
		.r12 = end->r12, .r13 = end->r13, .r14 = end->r14,
		.r15 = end->r15,
	};
}

/* The walk stopped in the call thunk: the thread is inside an rtlib
 * primitive (or the vDSO under it) called from a trampoline.  Walk on
 * from the instrumented instruction, as if the thread were stopped
 * there (x86_tramp_thunk_frame gives its stack pointer); an instruction
 * of a relocated copy is walked from as its original.  Where the
 * instruction cannot be walked from (the base's own call), *scan_from
 * is set to its stack pointer instead: the trampoline's frame and the
 * red zone it skipped, where stale words lie, stay out of the scan
 * either way. */
static enum walk_on_rc thunk_on(struct eng_inst *in, const struct act_stack *st,
				struct act_count *c, struct eng_walk_end *end,
				uint64_t *scan_from)
{
	struct x86_thunk_frame sf;
	struct user_regs_struct r2;
	uint8_t before[2];
	uint64_t site, pc;
	int counted = 0;

	if (end->last_pc <= in->thunk_lo || end->last_pc > in->thunk_hi ||
	    eng_mem_read(in->p, end->last_pc - 2, before, 2, NULL) < 0 ||
	    !x86_tramp_thunk_ret(before))
		return WALK_NOT_MINE;
	x86_tramp_thunk_frame(end->rbp, &sf);
	if (sf.saved_rbp_at < st->rsp || sf.site_sp > st->rsp + st->len)
		return WALK_NOT_MINE;
	*scan_from = sf.site_sp;
	site = sf.ra_at + 8 <= st->rsp + st->len
		? mini_site(in, st->w[(sf.ra_at - st->rsp) / 8]) : 0;
	pc = site;
	if (site != 0 && eng_codemem_contains(in->mem, site)) {
		/* the thread is in the copy, at site: count it there */
		pc = eng_funcreloc_unwind_pc(in, site, false);
		counted = first_counts(c, site);
	}
	if (pc == 0)
		return WALK_STUCK;
	end_regs(end, pc, sf.site_sp, &r2);
	r2.rbp = st->w[(sf.saved_rbp_at - st->rsp) / 8];
	c->n -= end->last_pc > c->lo && end->last_pc <= c->hi;
	return walk_from(in, st, &r2, counted, c, end, scan_from);
}

/* The walk stopped in a relocated copy (no CFI that libdwfl knows
 * describes it): walk on from the same place in the original, which
 * unwinds the same, since the copy holds the original's instructions
 * with the same stack effects.  That frame was counted in the copy. */
static enum walk_on_rc copy_on(struct eng_inst *in, const struct act_stack *st,
			       struct act_count *c, struct eng_walk_end *end,
			       uint64_t *scan_from)
{
	struct user_regs_struct r2;
	uint64_t pc = eng_funcreloc_unwind_pc(in, end->last_pc, !c->last_act);

	if (pc == 0 || end->stop_sp < st->rsp ||
	    end->stop_sp > st->rsp + st->len)
		return WALK_NOT_MINE;
	end_regs(end, pc, end->stop_sp, &r2);
	return walk_from(in, st, &r2, 0, c, end, scan_from);
}

/* Past every frame in hunch's code memory the engine can describe: an
 * rtlib call made through the thunk, a relocated copy (a chain of them,
 * at most WALK_HOPS).  *thunk, *copy: whether each was passed. */
#define WALK_HOPS 16

static void walk_past_codemem(struct eng_inst *in, const struct act_stack *st,
			      struct act_count *c, struct eng_walk_end *end,
			      uint64_t *scan_from, bool *thunk, bool *copy)
{
	for (int hop = 0; hop < WALK_HOPS && end->nframes > 0 &&
			  !end->complete; hop++) {
		enum walk_on_rc rc = thunk_on(in, st, c, end, scan_from);

		if (rc != WALK_NOT_MINE) {
			*thunk = true;
		} else {
			rc = copy_on(in, st, c, end, scan_from);
			*copy |= rc != WALK_NOT_MINE;
		}
		if (rc != WALK_WENT_ON)
			return;
	}
}

/* A thread stopped inside trampoline code (a snippet's frame, half
 * pushed: no CFI describes it) is stepped out first, back into the
 * program's code or a relocated copy (walked as its original), which
 * takes a few dozen instructions; a call into the runtime library ends
 * the steps too (thunk_on walks through its thunk).
 * Skipped, such a thread was never caught up: bn_smallwrites' writer,
 * stopped in write()'s trampoline at most insertions, never had
 * bnsw_write_loop's constraint set (it never returns), so its small
 * writes read "no data".  A thread still inside after the steps, or
 * at a system call there, is skipped as before. */
#define CODEMEM_STEPS 256

static bool in_codemem(void *arg, uint64_t pc)
{
	const struct eng_inst *in = arg;

	return eng_codemem_contains(in->mem, pc) &&
	       eng_funcreloc_unwind_pc(in, pc, false) == 0;
}

/* Activations of [lo, hi) on one thread: its stack is read from %rsp to
 * the end of its mapping (at most SCAN_BYTES) and walked by CFI, on
 * through the call thunk into the instrumented code (walk_on); only above
 * where the walk stopped (a frame in hunch's code memory, code without
 * CFI) are words taken for return addresses by their look.  The top
 * frame counts past the function's first byte only, as that thread will
 * run the entry snippet itself. */
static int activations(struct eng_inst *in, pid_t tid, uint64_t lo,
		       uint64_t hi, bool is_main, const struct inst_range *maps,
		       size_t nmaps, struct eng_catchup_info *ci)
{
	struct act_count c = { .in = in, .lo = lo, .hi = hi };
	struct user_regs_struct r;
	struct eng_walk_end end = { .complete = false };
	struct act_stack st = { .tid = tid };
	uint64_t *buf, stop, scan_from;
	bool thunk = false, copy = false;

	if (eng_regs_get(in->p, tid, &r, NULL) < 0)
		return 0;
	if (is_main)
		eng_main_return(in->p, &c.main_ret, &c.main_ret_sp);
	if (in_codemem(in, r.rip)) {
		if (eng_bp_step_while(in->p, tid, in_codemem, in,
					CODEMEM_STEPS) < 0 ||
		    eng_regs_get(in->p, tid, &r, NULL) < 0)
			return 0;
		ci->stepped_out++;
	}
	stop = eng_inst_threads_map_end(maps, nmaps, r.rsp);
	st.rsp = r.rsp;
	st.len = stop > r.rsp ? stop - r.rsp : 0;
	st.len = (st.len > SCAN_BYTES ? SCAN_BYTES : st.len) & ~(size_t)7;
	/* w is the stack from %rsp up; buf adds the red zone under it */
	buf = st.len ? malloc(RED_ZONE + st.len) : NULL;
	if (buf == NULL ||
	    eng_mem_read(in->p, r.rsp, buf + RED_ZONE / 8, st.len, NULL) < 0) {
		free(buf);
		return r.rip > lo && r.rip < hi;
	}
	st.w = buf + RED_ZONE / 8;
	/* unreadable (a guard page under the stack): walk without it */
	st.red = eng_mem_read(in->p, r.rsp - RED_ZONE, buf, RED_ZONE,
			      NULL) < 0 ? 0 : RED_ZONE;
	if (in->sw == NULL)
		eng_stackwalk_open(eng_proc_pid(in->p), RESCAN_NS, &in->sw);
	if (in->sw == NULL ||
	    eng_stackwalk_from(in->sw, tid, &r, st.w - st.red / 8,
			       r.rsp - st.red, st.red + st.len, count_frame,
			       &c, &end) < 0)
		end.nframes = 0;
	scan_from = end.stop_sp;
	walk_past_codemem(in, &st, &c, &end, &scan_from, &thunk, &copy);
	ci->through_thunk += thunk;
	ci->through_copy += copy;
	if (end.nframes == 0)  /* no walk: every word is judged by its look */
		c.n = (r.rip > lo && r.rip < hi) +
		      scan_words(in->p, st.w, 0, st.len, lo, hi);
	else if (!end.complete && scan_from >= r.rsp)
		c.n += scan_words(in->p, st.w, scan_from - r.rsp, st.len, lo,
				  hi);
	ci->walked += end.complete;
	ci->scanned += !end.complete;
	free(buf);
	return c.n;
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
		return hunch_err_set(err, -ENOTSUP, "catchup supports timer "
				  "starts and constant counter adds only");
	}
	return eng_infcall(p, tid, eng_shm_entry(shm, e), args, nargs, &ret,
			   err);
}

/* A thread's slot and block in hunch's mapping, by tid; false if the
 * thread has no live slot. */
struct tview {
	volatile struct hunch_thread_slot *slot;
	volatile unsigned char *block;
	uint64_t block_size;
};

static bool thread_view(struct eng_shm *shm, pid_t tid, struct tview *v)
{
	const struct eng_shm_layout *l = eng_shm_layout(shm);
	volatile unsigned char *b = eng_shm_base(shm);
	volatile struct hunch_thread_slot *tab =
		(volatile void *)(b + l->table_off);

	for (uint32_t i = 0; i < l->max_threads; i++)
		if (tab[i].tid == tid && tab[i].state == HUNCH_THR_LIVE) {
			v->slot = &tab[i];
			v->block = b + l->blocks_off +
				   ((uint64_t)i << l->block_shift);
			v->block_size = (uint64_t)1 << l->block_shift;
			return true;
		}
	return false;
}

/* The beginning of the thread's outermost activation of [lo, hi) in the
 * timer's units, or 0 when unknown: [lo, hi) must hold the thread's
 * start function, and the header's record must be this thread's (not
 * older than its registration: a reused block may hold a stale one). */
static uint64_t act_begin(struct eng_proc *p, const struct tview *v,
			  pid_t tid, uint64_t lo, uint64_t hi, bool cpu)
{
	volatile struct hunch_block_hdr *bh = (volatile void *)v->block;
	uint64_t fn = tid == eng_proc_pid(p) ? eng_proc_main(p)
					     : v->slot->start_fn;
	uint64_t wall = bh->act_wall;

	if (fn < lo || fn >= hi || wall == 0 || wall < v->slot->t_create)
		return 0;
	return cpu ? bh->act_cpu : wall;
}

/* Timer `s` (a start snippet's) of thread tid in hunch's mapping, or
 * NULL: not a timer start, no live slot, or a handle out of the block. */
static volatile struct hunch_timer *timer_of(struct eng_shm *shm, pid_t tid,
					     const struct x86_snip *s,
					     struct tview *v)
{
	if ((s->kind != X86_SN_WALL_START && s->kind != X86_SN_CPU_START) ||
	    !thread_view(shm, tid, v) || s->handle < HUNCH_BLOCK_VARS_START ||
	    s->handle + sizeof(struct hunch_timer) > v->block_size)
		return NULL;
	return (volatile void *)(v->block + s->handle);
}

/* After `k` starts of timer t by catchup on a thread: when they were its
 * only ones (count == k: it was not running), move its start back to
 * `begin` (never forward).  The thread is stopped and the sampler runs
 * on this thread: no one reads meanwhile, the protectors are bumped
 * anyway for the record. */
static bool move_start(volatile struct hunch_timer *t, int k, uint64_t begin)
{
	if (t == NULL || begin == 0 || t->count != k || begin > t->start)
		return false;
	t->prot1++;
	t->start = begin;
	t->prot2++;
	return true;
}

static bool start_at_begin(struct eng_proc *p, struct eng_shm *shm,
			   pid_t tid, uint64_t lo, uint64_t hi,
			   const struct x86_snip *s, int k)
{
	struct tview v;
	volatile struct hunch_timer *t = timer_of(shm, tid, s, &v);

	return t != NULL &&
	       move_start(t, k, act_begin(p, &v, tid, lo, hi,
					  s->kind == X86_SN_CPU_START));
}

/* What the samples say about one thread's outermost activation of
 * [lo, hi): when the run of samples holding it began, in both clocks. */
struct sampled {
	bool ok;
	unsigned n;             /* samples in the run */
	uint64_t first_ns;      /* CLOCK_MONOTONIC of its oldest sample */
	uint64_t wall_begin;    /* that moment in wall native units */
	uint64_t cpu_begin;     /* the thread's CPU time then */
};

/* The outermost frame of [lo, hi) in the stopped thread's unwound stack:
 * its CFA and return address (0 when unknown).  The top frame counts
 * only past the first byte, as in activations(). */
static bool outermost(const struct eng_psample *u, uint64_t lo, uint64_t hi,
		      uint64_t *cfa, uint64_t *ra)
{
	int i;

	for (i = u->nframes - 1; i >= 0; i--)
		if (u->pc[i] >= lo && u->pc[i] < hi &&
		    (i > 0 || u->pc[i] > lo))
			break;
	if (i < 0 || u->cfa[i] == 0)
		return false;
	*cfa = u->cfa[i];
	*ra = i + 1 < u->nframes ? u->pc[i + 1] + 1 : 0;
	return true;
}

/* ns of wall time to native units (ticks at the hardware level). */
static uint64_t ns_to_native(const struct eng_clock *c, uint64_t ns)
{
	uint64_t one = eng_clock_wall_to_ns(c, 1ull << 32);

	/* __int128 (a GCC/Clang extension, as in eng_clock.c) keeps it
	 * exact: ns << 32 overflows 64 bits after 4 s */
	return one == 0 ? ns
	       : (uint64_t)(((unsigned __int128)ns << 32) / one);
}

/* Unwind the stopped thread as a sample is unwound, name its outermost
 * activation of [lo, hi) by CFA and return address, and ask the sampler
 * for the run of newest samples holding it (at least 2). */
static void sample_estimate(struct eng_proc *p, struct eng_shm *shm,
			    struct eng_perfsample *ps, pid_t tid, uint64_t lo,
			    uint64_t hi, const struct inst_range *maps,
			    size_t nmaps, struct sampled *e)
{
	uint8_t stack[ENG_PS_STACK_BYTES];
	struct user_regs_struct r;
	struct eng_psample u;
	struct eng_ps_run run;
	uint64_t cfa = 0, ra = 0, end, len, dcpu, cpu, mono, native;

	memset(e, 0, sizeof(*e));
	if (ps == NULL || eng_regs_get(p, tid, &r, NULL) < 0)
		return;
	end = eng_inst_threads_map_end(maps, nmaps, r.rsp);
	len = end > r.rsp ? end - r.rsp : 0;
	len = len > sizeof(stack) ? sizeof(stack) : len;
	if (len == 0 || eng_mem_read(p, r.rsp, stack, len, NULL) < 0 ||
	    eng_perfsample_unwind_stopped(ps, tid, &r, stack, len, &u) < 1 ||
	    !outermost(&u, lo, hi, &cfa, &ra) ||
	    eng_perfsample_activation_run(ps, tid, lo, hi, cfa, ra, &run) < 1 ||
	    run.n < 2)
		return;
	/* the thread is stopped: its CPU clocks stand still, and the wall
	 * clocks are read together */
	cpu = eng_taskcpu_thread_ns(eng_proc_pid(p), tid);
	mono = clock_mono_ns();
	native = eng_clock_wall_native(eng_shm_clock(shm));
	if (eng_perfsample_cpu_since(ps, tid, run.first_cpu, cpu, &dcpu) < 0 ||
	    cpu < dcpu || mono < run.first_ns)
		return;
	e->ok = true;
	e->n = run.n;
	e->first_ns = run.first_ns;
	e->cpu_begin = cpu - dcpu;
	e->wall_begin = native - ns_to_native(eng_shm_clock(shm),
					       mono - run.first_ns);
}

/* Timer `s`, started k times by catchup on a thread: start it where
 * the samples first saw the activation, if they did. */
static bool start_at_samples(struct eng_shm *shm, pid_t tid,
			     const struct x86_snip *s, int k,
			     const struct sampled *e)
{
	struct tview v;
	volatile struct hunch_timer *t = timer_of(shm, tid, s, &v);

	return e->ok && t != NULL &&
	       move_start(t, k, s->kind == X86_SN_CPU_START ? e->cpu_begin
							    : e->wall_begin);
}

/* Catch up one thread with k activations: every snippet k times, then
 * each timer moved back to where its outermost activation began, if
 * known. */
static int catch_thread(struct eng_inst *in, pid_t tid, int k, uint64_t lo,
			uint64_t hi, const struct x86_snip *s, size_t n,
			const struct inst_range *maps, size_t nmaps,
			struct eng_catchup_info *ci, struct hunch_err *err)
{
	struct sampled e = { .ok = false };
	bool estimated = false, used = false;
	int rc = 0;

	for (size_t j = 0; j < n && rc >= 0; j++) {
		bool timer = s[j].kind == X86_SN_WALL_START ||
			     s[j].kind == X86_SN_CPU_START;

		for (int a = 0; a < k && rc >= 0; a++)
			rc = run_snip(in->p, in->shm, tid, &s[j], err);
		if (rc < 0 || !timer)
			continue;
		if (start_at_begin(in->p, in->shm, tid, lo, hi, &s[j], k)) {
			ci->from_begin++;
			continue;
		}
		if (!estimated) {  /* once per thread, after its first start */
			sample_estimate(in->p, in->shm, in->ps, tid, lo, hi,
					maps, nmaps, &e);
			estimated = true;
		}
		if (start_at_samples(in->shm, tid, &s[j], k, &e)) {
			ci->from_samples++;
			used = true;
		} else {
			ci->from_enable++;
		}
	}
	if (used) {
		ci->samples += e.n;
		if (ci->samples_ns == 0 || e.first_ns < ci->samples_ns)
			ci->samples_ns = e.first_ns;
	}
	return rc;
}

static int catchup(struct eng_inst *in, uint64_t lo, uint64_t hi,
		   bool is_main, const struct x86_snip *s, size_t n,
		   struct eng_catchup_info *ci, struct hunch_err *err)
{
	pid_t tids[4096];
	struct inst_range *maps = NULL;
	size_t nt, nmaps;
	int rc = 0;

	memset(ci, 0, sizeof(*ci));
	if (!eng_proc_stopped(in->p))
		return hunch_err_set(err, -EINVAL, "catchup needs every thread "
				  "stopped (call it before resuming)");
	/* the newest samples: every thread is stopped, so none is missing
	 * (the sampler's owner still gets them through its sink) */
	if (in->ps != NULL)
		eng_perfsample_drain(in->ps, NULL, NULL);
	nt = eng_proc_threads(in->p, tids, 4096);
	nmaps = eng_inst_threads_read_maps(eng_proc_pid(in->p), &maps);
	for (size_t i = 0; i < nt && rc >= 0; i++) {
		int k = activations(in, tids[i], lo, hi, is_main, maps, nmaps,
				    ci);

		if (k > 0)
			rc = catch_thread(in, tids[i], k, lo, hi, s, n, maps,
					  nmaps, ci, err);
		ci->threads += k > 0;
		ci->activations += (unsigned)(k > 0 ? k : 0);
	}
	free(maps);
	return rc < 0 ? rc : (int)ci->threads;
}

/* Is [lo, hi) the program's main (before any relocation)? */
static bool is_main_fn(struct eng_inst *in, uint64_t lo, uint64_t hi)
{
	uint64_t m = eng_proc_main(in->p);

	return m != 0 && m >= lo && m < hi;
}

int eng_inst_catchup(struct eng_inst *in, uint64_t lo, uint64_t hi,
		     const struct x86_snip *s, size_t n, struct hunch_err *err)
{
	struct eng_catchup_info ci;
	bool is_main = is_main_fn(in, lo, hi);

	/* a relocated function runs in its copy; frames in the original
	 * body will not run the copy's exits: left alone */
	eng_funcreloc_copy_range(in, lo, hi, &lo, &hi);
	return catchup(in, lo, hi, is_main, s, n, &ci, err);
}

int eng_inst_catchup_info(struct eng_inst *in, uint64_t lo, uint64_t hi,
			  const struct x86_snip *s, size_t n,
			  struct eng_catchup_info *ci, struct hunch_err *err)
{
	bool is_main = is_main_fn(in, lo, hi);

	eng_funcreloc_copy_range(in, lo, hi, &lo, &hi);
	return catchup(in, lo, hi, is_main, s, n, ci, err);
}

void eng_inst_catchup_set_psampler(struct eng_inst *in,
				   struct eng_perfsample *ps)
{
	in->ps = ps;
}

/* Launch stopped the program at main: main's activation begins now (or
 * a moment ago, so this never overstates it).  Recorded in the main
 * thread's block header as the rtlib records a start routine's. */
int eng_inst_catchup_mark_main(struct eng_shm *shm, pid_t pid)
{
	volatile struct hunch_block_hdr *bh;
	struct tview v;
	uint64_t cpu;

	if (shm == NULL || !thread_view(shm, pid, &v))
		return -ENOENT;
	cpu = eng_taskcpu_thread_ns(pid, pid);
	if (cpu == 0)
		return -EIO;
	bh = (volatile void *)v.block;
	bh->act_cpu = cpu;
	bh->act_wall = eng_clock_wall_native(eng_shm_clock(shm));
	return 0;
}

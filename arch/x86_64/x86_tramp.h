/*
 * x86_tramp.h - base trampolines and mini-trampolines (devguide §1.18,
 * MDL §3.5-3.6), generated from a small snippet AST.
 *
 * Base trampoline for a patch [pstart, pstart+plen) holding the point
 * instruction at `point`:
 *
 *   relocated instructions before the point        (exit points)
 *   PRE: lea -128(%rsp),%rsp   skip the red zone
 *        push rax, rcx, rdx; lahf; seto al; push rax   (flags, no popf)
 *        mov %fs:BLK,%rcx; test; jz SLOW   (thread not registered yet)
 *   CHK: cmpq $0,guard(%rcx); jne OUT      (per-thread guard)
 *        movq $1,guard(%rcx)
 *        jmp SLOT                          -> first mini-trampoline
 *   BACK: mov %fs:BLK,%rcx; addq $COST,obs_cost(%rcx); movq $0,guard(%rcx)
 *   OUT: pop rax; add $0x7f,al; sahf; pop rdx, rcx, rax; lea 128(%rsp),%rsp
 *   relocated point instruction and instructions after it
 *   jmp pstart+plen
 *   SLOW: call the REG thunk (hunchrt_block() registers the thread with
 *        everything saved); jmp CHK (or OUT when still no block)
 *
 * Mini-trampolines are chained from SLOT; each is its snippet code then
 * `jmp rel32` to the next mini or to BACK.  On entry to a mini, %rcx holds
 * the thread's block, %rax/%rdx are free, every other register holds the
 * program's value; minis that call C go through the CALL thunk, which
 * saves the rest (GPRs, xmm0-15, 16-byte alignment) around the call.
 */
#ifndef X86_TRAMP_H
#define X86_TRAMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "x86_reloc.h"

/* What generated code needs to know about the runtime library. */
struct x86_tramp_env {
	int32_t fs_block_off;   /* %fs offset of the per-thread block ptr */
	uint64_t fn_block;      /* hunchrt_block */
	uint64_t fn_wall_start, fn_wall_stop, fn_cpu_start, fn_cpu_stop;
	bool wall_rdtsc;        /* wall timers inline with rdtsc (HW level) */
	bool shadow_stack;      /* CET shadow stack on: calls are not moved
				   (push + jmp would not match its ret) */
	uint64_t thunk_call;    /* shared thunks (x86_tramp_thunks) in the */
	uint64_t thunk_reg;     /* target, generated once per process */
};

/* The shared thunks generated code calls with `call *%rcx`: CALL (fn in
 * %rax, argument in %rdx) saves everything else the program can see
 * (rsi, rdi, r8-r11, rbp, xmm0-15; 16-byte alignment; DF clear), calls,
 * restores and returns with %rcx = the thread's block; REG calls
 * hunchrt_block() the same way.  Returns bytes, offsets of both. */
int x86_tramp_thunks(const struct x86_tramp_env *env, uint8_t *buf,
		     size_t cap, uint64_t at, size_t *call_off, size_t *reg_off);

/* Unwinding out of instrumentation.  A thread inside a function the
 * CALL thunk called (an rtlib primitive) has %rbp = the thunk's frame,
 * since the callee preserves it: the registers the thunk saved sit at
 * thunk_rbp (the program's %rbp first), the thunk's return address into
 * the mini or base trampoline right above them, and above that the
 * base trampoline's own frame (pushes, then the red zone it skipped).
 * Minis keep %rsp where the base left it around their calls, so the
 * site's stack pointer follows from thunk_rbp alone. */
struct x86_thunk_frame {
	uint64_t saved_rbp_at;  /* where the program's %rbp was saved */
	uint64_t ra_at;         /* the return address into the trampoline */
	uint64_t site_sp;       /* %rsp at the instrumented instruction */
};
void x86_tramp_thunk_frame(uint64_t thunk_rbp, struct x86_thunk_frame *f);
/* Is `ra` the thunk's return address from the function it called? */
bool x86_tramp_thunk_ret(const uint8_t before[2]);

/* ---- snippet AST ---- */
enum x86_ex_kind {
	X86_EX_CONST,   /* v */
	X86_EX_VAR,     /* the calling thread's counter at `handle` */
	X86_EX_ARG,     /* integer argument `arg` (0..5), at entry */
	X86_EX_RET,     /* %rax, at exit */
	X86_EX_SP,      /* %rsp at the instrumented instruction, before it
			   runs (at an entry or a tail-call jmp: where the
			   return address is) */
	X86_EX_ADD, X86_EX_SUB, X86_EX_AND,
	X86_EX_EQ, X86_EX_NE, X86_EX_LT, X86_EX_GT, /* signed, 0 or 1 */
};

struct x86_expr {
	enum x86_ex_kind kind;
	int64_t v;
	uint64_t handle;
	int arg;
	const struct x86_expr *l, *r;
};

enum x86_sn_kind {
	X86_SN_ADD,          /* counter[handle] += value (or += delta) */
	X86_SN_SET,          /* counter[handle] = value (or = delta) */
	X86_SN_WALL_START, X86_SN_WALL_STOP,
	X86_SN_CPU_START, X86_SN_CPU_STOP,
	X86_SN_IF,           /* if (cond != 0) body */
};

struct x86_snip {
	enum x86_sn_kind kind;
	uint64_t handle;
	int64_t delta;                 /* when value == NULL */
	const struct x86_expr *value;
	const struct x86_expr *cond;
	const struct x86_snip *body;
	size_t nbody;
};

/* Position-independent code of a snippet list (no trailing jump).
 * Returns bytes written, or -ENOSPC / -EINVAL. */
int x86_tramp_snip_code(const struct x86_tramp_env *env,
			const struct x86_snip *s, size_t n, uint8_t *buf,
			size_t cap);
/* Does any snippet call into the runtime library? */
bool x86_tramp_snip_calls(const struct x86_tramp_env *env,
			  const struct x86_snip *s, size_t n);

#define X86_TRAMP_MAX_INSNS 24
#define X86_TRAMP_MAX_SITES 4

/* One instrumented instruction inside a patch (a patch may hold several,
 * e.g. entry and exit of `lea 1(%rdi,%rdi,2),%rax; ret`). */
struct x86_site {
	size_t pre_off;
	size_t slot_off;        /* the `jmp rel32` to the first mini */
	size_t back_off;        /* where the last mini jumps */
	size_t cost_off;        /* imm32 of the observed-cost add */
};

struct x86_base {
	size_t len;
	struct x86_site site[X86_TRAMP_MAX_SITES];
	size_t nsite;
	size_t ninsn;           /* original instructions in the patch */
	uint8_t orig_off[X86_TRAMP_MAX_INSNS];
	uint16_t new_off[X86_TRAMP_MAX_INSNS];
	enum x86_refusal why;   /* when x86_tramp_base fails */
};

/* Generate the base trampoline for code `orig` (plen bytes at pstart,
 * instrumented before each of the nsites instructions at `sites`,
 * ascending) to run at address `at`.  Returns 0 or a negative errno with
 * out->why.  */
int x86_tramp_base(struct x86_reloc *r, const struct x86_tramp_env *env,
		   const uint8_t *orig, size_t plen, uint64_t pstart,
		   const uint64_t *sites, size_t nsites, uint64_t at,
		   uint8_t *buf, size_t cap, struct x86_base *out);

/* Where a thread stopped at original address `pc` inside the patch must
 * resume in the trampoline (base address `at`); 0 when pc is not an
 * instruction boundary the trampoline holds.  A site instruction maps
 * to its PRE, so a thread stopped on it still runs the instrumentation. */
uint64_t x86_tramp_map_pc(const struct x86_base *b, uint64_t pstart,
			  const uint64_t *sites, uint64_t at, uint64_t pc);

#endif

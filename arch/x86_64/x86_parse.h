/*
 * x86_parse.h - parsing one function's machine code into instrumentation
 * points, with the facts that decide whether each point can be patched.
 *
 * Addresses are whatever the caller decoded at (the engine passes
 * image-relative addresses and adds load bases itself).  Rules follow the
 * devguide §1.18 (x86 port): a patch is a 5-byte `jmp rel32`; an entry
 * point borrows only the instructions after it; a return point borrows
 * the instructions before it (and nop/int3 padding after it); a call
 * site borrows only instructions before it; a borrowed sequence must not
 * contain a known branch target (except its first byte) nor a `call` in
 * its middle.
 *
 * Added by the parser's owner (arch/x86_64/README.md, "Parsing", has the
 * whole story):
 * - ENTRY after `endbr64`: when a function starts with endbr64, the entry
 *   point is the instruction after it (addr = patch_start = entry + 4), so
 *   that the endbr64 stays in place where indirect calls land.
 * - A call may be the last instruction of any patch area (its return
 *   address is then the end of the area, a valid boundary); never before
 *   the last.
 * - "Known branch targets" are the direct jump targets inside the
 *   function, jump-table entries, code addresses taken with a rip-relative
 *   `lea`, targets given by the caller (cold parts), and the first
 *   instruction after every unconditional transfer (jmp, ret, ud2, hlt)
 *   that is not padding: such code is only reachable by a jump, known or
 *   not (switch cases, C++ landing pads).
 * - A function with an indirect jump that is neither a resolved jump
 *   table nor a tail call has unknown targets: only points whose patch
 *   area is one instruction stay ok.
 * - Patch areas of different points may overlap in small functions
 *   (entry borrowing up to a ret); x86_point.overlaps says so.
 */
#ifndef X86_PARSE_H
#define X86_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "x86_refusal.h"

struct x86_decoder;

enum x86_point_kind {
	X86_PT_ENTRY,      /* the first instruction */
	X86_PT_EXIT,       /* a ret, or a jump that leaves the function */
	X86_PT_CALL,       /* a call instruction (pre = before, post = after) */
};

struct x86_point {
	enum x86_point_kind kind;
	uint64_t addr;          /* the instruction at the point */
	uint8_t insn_len;       /* its length */
	bool tail_call;         /* EXIT: a jmp out of the function */
	bool indirect;          /* CALL/EXIT: through a register or memory */
	uint64_t target;        /* CALL/EXIT tail call: direct target, or 0 */
	/* The bytes a 5-byte jmp would replace, instructions borrowed by
	 * the rules above: [patch_start, patch_start + patch_len). */
	uint64_t patch_start;
	uint8_t patch_len;
	bool ok;                /* a jmp can be patched here */
	enum x86_refusal why;   /* when !ok: why (x86_refusal_str words it) */
	/* Added fields (the parser's owner). */
	uint64_t why_at;        /* the address `why` is about (a target, a
	                           call, ...), or 0 */
	uint8_t patch_ninsns;   /* instructions in the patch area */
	uint8_t patch_tail;     /* of patch_len, padding after the function's
				   end (x86_parse_ctx.tail_max) */
	bool start_is_target;   /* a known branch target is patch_start */
	bool after_endbr;       /* ENTRY: an endbr64 precedes addr */
	bool cond;              /* EXIT: a conditional jump out (jcc) */
	bool overlaps;          /* the patch area overlaps another point's */
};

/* A range [start, end) of addresses. */
struct x86_range {
	uint64_t start, end;
};

/* A resolved jump table (x86_func.jtables): what whole-function
 * relocation needs to give a copy its own table. */
struct x86_jtable {
	uint64_t jmp_at;        /* the indirect jmp */
	uint64_t table;         /* the table's start */
	size_t nentries;
	uint8_t entry_size;     /* 4: int32 relative to the table (PIC);
	                           8: absolute addresses */
	/* entry_size 4: the `lea table(%rip)` whose value the entry is
	 * loaded from and the one it is added to (often the same), or 0
	 * when the base does not come from a lea the parser saw. */
	uint64_t lea_at[2];
	uint64_t *targets;      /* nentries targets */
};

struct x86_func {
	uint64_t addr, size;
	bool ok;                /* every point is patchable */
	enum x86_refusal why;   /* when !ok: the function-level reason */
	struct x86_point *points;
	size_t npoints;
	uint64_t *insns;        /* start of every instruction, sorted */
	size_t ninsns;
	uint64_t *targets;      /* known branch targets inside, sorted */
	size_t ntargets;
	bool has_jump_table;
	bool unresolved_indirect_jump;
	/* Added fields (the parser's owner). */
	uint64_t why_at;        /* the address `why` is about, or 0 */
	struct x86_range *data; /* data skipped inside: jump tables */
	size_t ndata;
	size_t njump_tables;    /* resolved jump tables */
	bool code_address_taken; /* a rip-relative lea points inside */
	bool endbr;             /* starts with endbr64 */
	/* Branch and jump-table targets in ctx.also_inside (the function's
	 * other parts), unsorted, possibly repeated. */
	uint64_t *outside_targets;
	size_t noutside_targets;
	/* Every resolved jump table (njump_tables of them). */
	struct x86_jtable *jtables;
	size_t njtables;
};

/* Reading bytes outside the function (jump tables in .rodata). */
struct x86_parse_ctx {
	int (*read)(void *arg, uint64_t addr, void *buf, size_t len);
	void *arg;
	/* Added fields; zero is the right default for all of them. */
	/* Non-PIC code embeds link-time addresses (absolute jump tables):
	 * image-relative address = absolute address - abs_base.  0 for
	 * position-independent code. */
	uint64_t abs_base;
	/* Other code that belongs to this function (gcc's `foo.cold`): a
	 * jump into these ranges is not an exit. */
	const struct x86_range *also_inside;
	size_t nalso_inside;
	/* Branch targets inside this function known from elsewhere (jumps
	 * back from a cold part). */
	const uint64_t *extra_targets;
	size_t nextra_targets;
	/* Bytes after the function's end (code[len..len+tail_max)) that the
	 * caller has read and that no symbol covers: the alignment padding
	 * up to the next function.  Where they decode as nops/int3 right
	 * after a final ret or jmp, a point may borrow them (a function
	 * smaller than 5 bytes can then take a jump at its entry). */
	uint32_t tail_max;
};

/* Parse `len` bytes of code at `addr`.  Returns 0 (out filled, free with
 * x86_parse_func_free) or a negative errno; a function that cannot be decoded
 * is not an error: it comes back with ok=false and a reason. */
int x86_parse_function(struct x86_decoder *d, const uint8_t *code,
		       size_t len, uint64_t addr,
		       const struct x86_parse_ctx *ctx, struct x86_func *out);
void x86_parse_func_free(struct x86_func *f);

/* Every direct jmp, jcc and call in `len` bytes of code at addr, decoded
 * linearly (stopping at undecodable bytes): fn(arg, insn address,
 * target) for each; a non-zero return stops and is returned.  For
 * finding branches from one function into the middle of another, which
 * the other function's parse must know as targets. */
int x86_parse_direct_targets(struct x86_decoder *d, const uint8_t *code,
		       size_t len, uint64_t addr,
		       int (*fn)(void *arg, uint64_t from, uint64_t target),
		       void *arg);

/* A short name for a point kind: "entry", "exit", "call". */
const char *x86_parse_point_kind_name(enum x86_point_kind k);

#endif

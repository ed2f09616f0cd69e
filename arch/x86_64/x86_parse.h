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
 */
#ifndef X86_PARSE_H
#define X86_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
	const char *why;        /* when !ok: a static, human-readable reason */
};

struct x86_func {
	uint64_t addr, size;
	bool ok;                /* every point is patchable */
	const char *why;        /* when !ok: the function-level reason */
	struct x86_point *points;
	size_t npoints;
	uint64_t *insns;        /* start of every instruction, sorted */
	size_t ninsns;
	uint64_t *targets;      /* known branch targets inside, sorted */
	size_t ntargets;
	bool has_jump_table;
	bool unresolved_indirect_jump;
};

/* Reading bytes outside the function (jump tables in .rodata). */
struct x86_parse_ctx {
	int (*read)(void *arg, uint64_t addr, void *buf, size_t len);
	void *arg;
};

/* Parse `len` bytes of code at `addr`.  Returns 0 (out filled, free with
 * x86_func_free) or a negative errno; a function that cannot be decoded
 * is not an error: it comes back with ok=false and a reason. */
int x86_parse_function(struct x86_decoder *d, const uint8_t *code,
		       size_t len, uint64_t addr,
		       const struct x86_parse_ctx *ctx, struct x86_func *out);
void x86_func_free(struct x86_func *f);

#endif

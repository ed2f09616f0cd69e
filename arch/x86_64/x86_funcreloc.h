/*
 * x86_funcreloc.h - whole-function relocation (devguide §1.18, "Function
 * relocation"): a copy of a function laid out with room for a 5-byte jmp
 * at every point, for functions whose points are too small in place.
 *
 * The copy holds every instruction of the original, in order, each in a
 * "slot": [pre padding][the instruction, relocated][post padding].
 *   - internal jmp/jcc are re-emitted as rel32 to the slot of their
 *     target in the copy (short jumps widened);
 *   - jmp/jcc out of the function (tail calls) keep their original
 *     targets (rel32, or the far forms of x86_emit.h);
 *   - calls are REAL calls (return addresses into the copy: the engine
 *     registers unwind information for it), direct ones to the original
 *     target, `call *d(%rip)` through the original slot;
 *   - rip-relative operands are rewritten for the new address;
 *   - a call site or a conditional/fall-through exit shorter than 5 bytes
 *     gets nops before it, a `ret` or indirect `jmp` exit int3s after it,
 *     and the entry instruction nops after it, so that parsing the copy
 *     gives every point room for a jmp.
 *   - a PIC jump table (`lea tbl(%rip),%r; movslq (%r,%i,4),%s; add
 *     %r,%s; jmp *%s`) gets a table of its own after the code, entries
 *     relative to it pointing to the slots of the original targets, and
 *     its `lea` (the one or two the parser names) loads the new table.
 * Branch targets map to slot starts (the padding before an instruction
 * does nothing), so every jump lands where the parser expects.  Sizes do
 * not depend on the copy's address except for out-of-reach external
 * branches, which x86_funcreloc_build handles by laying out at the real address.
 */
#ifndef X86_FUNCRELOC_H
#define X86_FUNCRELOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "x86_refusal.h"

struct x86_reloc;
struct x86_decoder;
struct x86_func;

#define X86_FR_MAX_SIZE 16384   /* larger functions are not relocated */

struct x86_funcreloc {
	uint64_t from, size;    /* the original function (absolute) */
	uint64_t to;            /* where the copy runs */
	uint8_t *code;          /* the copy's bytes: code, then tables */
	size_t len;
	size_t code_len;        /* the code alone: [to, to + code_len) */
	size_t n;               /* instructions */
	uint64_t *orig;         /* original instruction starts, sorted */
	uint64_t *slot;         /* copy: slot start (pre padding first) */
	uint64_t *at;           /* copy: the instruction itself */
	uint64_t *cfi;          /* copy: where the original CFI row of
	                           orig[i] starts (end of insn i-1's code) */
	enum x86_refusal why;   /* when refused */
	uint64_t why_at;
};

/* Why a parsed function (addresses image-relative or absolute, as
 * parsed) cannot be relocated, or X86_REFUSAL_NONE: jump tables other than the PIC
 * form with its base lea known (absolute tables), unresolved indirect
 * jumps, code addresses taken, data inside, an entry that cannot take a
 * jmp itself, size.  Instruction-level refusals come from x86_funcreloc_build. */
enum x86_refusal x86_funcreloc_refusal(const struct x86_func *xf);

/* Build the copy of function xf (parsed at addresses xf->addr...; its
 * runtime addresses are those + `base`), whose bytes are code[0..size),
 * to run at `to`.  Returns 0, -ENOMEM, or -ENOTSUP with fr->why (an
 * instruction that cannot be moved: loop/jrcxz, a far rip-relative
 * operand, a jump into another part of the function). */
int x86_funcreloc_build(struct x86_reloc *r, struct x86_decoder *d,
		 const struct x86_func *xf, uint64_t base,
		 const uint8_t *code, uint64_t to, struct x86_funcreloc *fr);
void x86_funcreloc_free(struct x86_funcreloc *fr);

/* Read len bytes of the copy at address addr (arg: the struct x86_funcreloc),
 * for x86_parse_ctx.read when the copy is parsed: its tables lie after
 * the code.  0, or -EFAULT outside the copy. */
int x86_funcreloc_read(void *arg, uint64_t addr, void *buf, size_t len);

/* Copy address of the slot of the original instruction at `orig`
 * (absolute), or 0 when orig is not an instruction start.  The end of
 * the function maps to the end of the copy. */
uint64_t x86_funcreloc_slot(const struct x86_funcreloc *fr, uint64_t orig);
/* The same for the instruction itself (after its pre padding). */
uint64_t x86_funcreloc_at(const struct x86_funcreloc *fr, uint64_t orig);
/* Where the CFI row that starts at original address `orig` starts in
 * the copy (0 if orig is not an instruction boundary). */
uint64_t x86_funcreloc_cfi(const struct x86_funcreloc *fr, uint64_t orig);
/* The inverse: the original instruction whose CFI row holds copy
 * address `at` (its code, or the padding before it), or 0 outside the
 * copy's code.  A thread stopped at `at` in the copy unwinds as one at
 * that instruction of the original; for a return address, ask at
 * address - 1 (the call). */
uint64_t x86_funcreloc_orig(const struct x86_funcreloc *fr, uint64_t at);

#endif

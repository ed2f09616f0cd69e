/*
 * x86_reloc.h - moving an instruction to another address (a trampoline)
 * without changing what it does (devguide §1.18).
 *
 * Handled: rip-relative memory operands (displacement rewritten; refused
 * when the new one does not fit in 32 bits), jmp/jcc rel8 and rel32
 * (always widened to rel32, or a 14-byte absolute jump when the target
 * is beyond ±2 GiB), direct and rip-relative indirect calls (emulated by
 * pushing the ORIGINAL return address and jumping, so no return address
 * into a trampoline is ever on the stack while program code runs; this
 * keeps unwinding, exceptions and pthread_cancel correct).  Refused:
 * loop/jrcxz (no rel32 form), instructions capstone cannot decode.
 */
#ifndef X86_RELOC_H
#define X86_RELOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "x86_emit.h"
#include "x86_refusal.h"

struct x86_reloc;

int x86_reloc_open(struct x86_reloc **out);
void x86_reloc_close(struct x86_reloc *r);

struct x86_reloc_info {
	uint8_t len;         /* length of the original instruction */
	bool is_call;        /* relocated as push + jmp: nothing after it runs */
	bool is_ret;
	bool is_uncond_jmp;  /* control never falls through */
	enum x86_refusal why; /* reason when the call failed */
};

/* Decode the instruction at code[0..avail) (originally at `from`) and
 * append an equivalent sequence to `o`.  Returns 0, -EINVAL (cannot be
 * decoded) or -ERANGE/-ENOTSUP (cannot be relocated there), with
 * info->why set. */
int x86_reloc_insn(struct x86_reloc *r, const uint8_t *code, size_t avail,
		   uint64_t from, struct x86_buf *o,
		   struct x86_reloc_info *info);

/* Is the instruction at code a jcc with a direct target?  Returns its
 * length (0 if not) with the condition (low nibble of 0x7X) and target. */
size_t x86_reloc_insn_jcc(struct x86_reloc *r, const uint8_t *code,
			  size_t avail, uint64_t from, unsigned *cc,
			  uint64_t *target);

#endif

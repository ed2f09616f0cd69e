/*
 * x86_decode_int.h - the decoder's insides, shared by the files of
 * arch/x86_64 only (the parser reuses the decoder's capstone handles and
 * scratch memory, so that parsing allocates little per function).
 */
#ifndef X86_DECODE_INT_H
#define X86_DECODE_INT_H

#include <capstone/capstone.h>
#include <stdint.h>

#include "x86_decode.h"

/* Instructions decoded with detail around an indirect jump. */
#define X86_WINDOW 24

struct x86_decoder {
	csh handle;        /* detail on: operands, registers */
	cs_insn *insn;     /* capstone's scratch instruction, reused */
	csh fast;          /* detail off: lengths and ids only (the sweep) */
	cs_insn *fast_insn;
	cs_insn *win[X86_WINDOW + 1];  /* detail-on copies, lazily made */
	/* Parser scratch, grown on demand and reused between functions. */
	void *pins;        /* struct pinsn[] (x86_parse.c) */
	size_t pins_cap;
	uint8_t *marks;    /* one byte per code byte */
	size_t marks_cap;
};

/* The 64-bit register that contains `reg` (EAX, AX, AL -> RAX), or
 * X86_REG_INVALID for anything that is not a general register. */
unsigned x86_reg_canon(unsigned reg);

#endif

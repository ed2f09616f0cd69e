/*
 * x86_decode_int.h - the decoder's insides, shared by the files of
 * arch/x86_64 only (the parser reuses the decoder's capstone handles and
 * scratch memory, so that parsing allocates little per function).
 */
#ifndef X86_DECODE_INT_H
#define X86_DECODE_INT_H

#include <capstone/capstone.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "x86_decode.h"

/* What an instruction does to control flow, as the parser sees it. */
enum pkind {
	PK_OTHER,      /* falls through, nothing else */
	PK_PAD,        /* nop or int3: padding, never executed on purpose */
	PK_JMP,        /* direct jmp */
	PK_JCC,        /* direct conditional branch (jcc, loop, jrcxz) */
	PK_CALL,       /* direct call */
	PK_RET,
	PK_JMP_IND,
	PK_CALL_IND,
	PK_STOP,       /* ud2, hlt: no fall-through */
	PK_BAD,        /* a transfer we refuse to reason about */
};

/* An instruction decoded from the opcode tables (x86_fastlen.c). */
struct x86_fast {
	uint8_t len;
	uint8_t kind;         /* enum pkind */
	bool has_target;      /* direct branch */
	bool lea_rip;         /* lea with a rip-relative operand */
	uint64_t target;
};

/* Encoding classes checked against capstone (x86_fastlen.c). */
#define X86_FAST_CLASSES 262144

/* Length and control flow without capstone; 0 when the tables do not
 * cover the bytes (ask capstone then). */
/* Bytes taken by a ModRM byte and what follows it (SIB, displacement),
 * the same in 64- and 32-bit addressing; 0 when they run past len
 * (x86_fastlen.c; the decoder's length checks use it too). */
size_t x86_fastlen_modrm_bytes(const uint8_t *m, size_t len);
size_t x86_fastlen_decode(struct x86_decoder *d, const uint8_t *b, size_t len,
		       uint64_t addr, struct x86_fast *out);

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
	uint8_t *fast_class;  /* X86_FAST_CLASSES states, lazily */
	bool no_fast;         /* sweep with capstone only (benchmarks) */
};

/* The 64-bit register that contains `reg` (EAX, AX, AL -> RAX), or
 * X86_REG_INVALID for anything that is not a general register. */
unsigned x86_decode_reg_canon(unsigned reg);

#endif

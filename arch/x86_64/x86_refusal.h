/*
 * x86_refusal.h - why arch/x86_64 refuses something: a point or a
 * function the parser will not patch, a function whole-function
 * relocation will not copy, an instruction the relocator cannot move, a
 * patch the trampoline generator cannot build.  Every refusal is one
 * value of enum x86_refusal, carried in the result structs
 * (x86_point.why, x86_func.why, x86_funcreloc.why, x86_reloc_info.why,
 * x86_base.why); its sentence comes from x86_refusal_str alone, so that
 * callers compare values and only the printing knows the wording.
 */
#ifndef X86_REFUSAL_H
#define X86_REFUSAL_H

enum x86_refusal {
	X86_REFUSAL_NONE = 0,          /* not refused */
	/* The parser (x86_parse.c, x86_points.c). */
	X86_REFUSAL_SMALL,             /* function smaller than a jmp */
	X86_REFUSAL_TARGET,            /* branch target in the patch area */
	X86_REFUSAL_UNRESOLVED,        /* indirect jump, targets unknown */
	X86_REFUSAL_UNDECODABLE,       /* why_at: the bytes */
	X86_REFUSAL_MISALIGNED,        /* target inside an instruction */
	X86_REFUSAL_TABLE_BEFORE,      /* jump table before its jump */
	X86_REFUSAL_TABLE_OVERLAP,     /* an instruction runs into a table */
	X86_REFUSAL_BAD_TRANSFER,      /* far jump/call, iret, 66 prefix */
	X86_REFUSAL_CALL_INSIDE,       /* a call in the patch area */
	X86_REFUSAL_AT_END,            /* too few bytes before the end */
	X86_REFUSAL_AT_START,          /* too few instructions before */
	X86_REFUSAL_DATA,              /* the patch area holds data */
	X86_REFUSAL_A_POINT,           /* function: one of its points */
	X86_REFUSAL_EMPTY,             /* size 0 */
	X86_REFUSAL_NO_BYTES,          /* the caller could not read them */
	/* Indirect jumps (x86_jumptable.c), x86_ij.why. */
	X86_REFUSAL_JT_UNREADABLE,
	X86_REFUSAL_JT_OUTSIDE,
	X86_REFUSAL_JT_UNSIZED,
	X86_REFUSAL_JT_NO_BOUND,
	X86_REFUSAL_JT_UNKNOWN,
	/* Whole-function relocation, the function (x86_funcreloc_refusal). */
	X86_REFUSAL_FR_NO_ENTRY,
	X86_REFUSAL_FR_ENTRY,
	X86_REFUSAL_FR_LARGE,
	X86_REFUSAL_FR_TABLE,
	X86_REFUSAL_FR_ABS_TABLE,
	X86_REFUSAL_FR_TABLE_LEA,
	X86_REFUSAL_FR_UNRESOLVED,
	X86_REFUSAL_FR_CODE_ADDR,
	X86_REFUSAL_FR_DATA,
	X86_REFUSAL_FR_COLD_BACK,
	/* Whole-function relocation, one instruction (x86_funcreloc_build). */
	X86_REFUSAL_FR_COLD_JUMP,
	X86_REFUSAL_FR_FAR_SLOT,
	X86_REFUSAL_FR_CAPSTONE,
	X86_REFUSAL_FR_XBEGIN,
	X86_REFUSAL_FR_TABLE_BASE,
	X86_REFUSAL_FR_CALL_MIDDLE,
	X86_REFUSAL_FR_TABLE_MIDDLE,
	X86_REFUSAL_FR_JUMP_MIDDLE,
	X86_REFUSAL_FR_LAYOUT,
	X86_REFUSAL_FR_SIZE,
	/* Moving one instruction (x86_reloc.c). */
	X86_REFUSAL_RELOC_LOOP,
	X86_REFUSAL_RELOC_NO_DISP,
	X86_REFUSAL_RELOC_FAR,
	X86_REFUSAL_RELOC_RSP_CALL,
	X86_REFUSAL_RELOC_NO_MODRM,
	X86_REFUSAL_RELOC_FAR_SLOT,
	X86_REFUSAL_RELOC_UNDECODABLE,
	/* Base trampolines (x86_tramp.c). */
	X86_REFUSAL_TRAMP_NSITES,
	X86_REFUSAL_TRAMP_OUTSIDE,
	X86_REFUSAL_TRAMP_INSNS,
	X86_REFUSAL_TRAMP_CROSS,
	X86_REFUSAL_TRAMP_CALL_MIDDLE,
	X86_REFUSAL_TRAMP_CET,
	X86_REFUSAL_TRAMP_BOUNDARY,
	X86_REFUSAL_TRAMP_SPACE,
	X86_REFUSAL_N
};

/* The sentence for r (static, lower case, no final stop); NULL for
 * X86_REFUSAL_NONE and for values outside the enum. */
const char *x86_refusal_str(enum x86_refusal r);

#endif

/*
 * eng_refusal.h - why the engine refuses to instrument something: a
 * point it will not patch now, a function it will not relocate, an
 * after-call point it cannot place.  One value space with the
 * architecture's refusals: values below X86_REFUSAL_N are the
 * enum x86_refusal the parser, relocator or trampoline generator gave
 * (passed on unchanged, eng_refusal_of_x86), the engine's own follow.
 * The sentence of every value comes from eng_refusal_str alone.
 */
#ifndef ENG_REFUSAL_H
#define ENG_REFUSAL_H

#include "x86_refusal.h"

enum eng_refusal {
	ENG_REFUSAL_NONE = X86_REFUSAL_NONE,
	/* [1, X86_REFUSAL_N): an x86_refusal as it is. */
	ENG_REFUSAL_NO_MEMORY = X86_REFUSAL_N,
	/* Unwind info of a copy (eng_funcreloc_cfi.c). */
	ENG_REFUSAL_CFI_NO_HDR,
	ENG_REFUSAL_CFI_FDE,
	ENG_REFUSAL_CFI_ENCODING,
	ENG_REFUSAL_CFI_COVER,
	ENG_REFUSAL_CFI_LSDA,
	ENG_REFUSAL_CFI_ALIGN,
	ENG_REFUSAL_CFI_AUGMENTATION,
	ENG_REFUSAL_CFI_SIGNAL_FRAME,
	ENG_REFUSAL_CFI_AUG_TRUNCATED,
	ENG_REFUSAL_CFI_UNKNOWN_INSN,
	ENG_REFUSAL_CFI_ROW_INSIDE,
	ENG_REFUSAL_CFI_TRUNCATED,
	/* Building a copy (eng_funcreloc.c, eng_funcreloc_check.c). */
	ENG_REFUSAL_FR_COPY_POINT,
	ENG_REFUSAL_FR_COPY_NO_POINTS,
	ENG_REFUSAL_FR_NO_FIT,
	ENG_REFUSAL_FR_NO_UNWIND,
	ENG_REFUSAL_FR_NO_BYTES,
	ENG_REFUSAL_FR_GLIBC_PC,
	ENG_REFUSAL_FR_LIBGCC,
	/* After-call points (eng_funcreloc_post.c, eng_metric_gen.c). */
	ENG_REFUSAL_POST_NO_NEXT,
	ENG_REFUSAL_POST_ENDS,
	ENG_REFUSAL_POST_TARGET,
	ENG_REFUSAL_POST_CALL,
	ENG_REFUSAL_POST_DATA,
	ENG_REFUSAL_POST_OFF,
	ENG_REFUSAL_POST_IN_PLACE,
	ENG_REFUSAL_POST_NOT_RELOCATED,
	ENG_REFUSAL_POST_OVERLAP,
	ENG_REFUSAL_UNLOADED,
	/* Linking a copy (eng_funcreloc_link.c). */
	ENG_REFUSAL_LINK_NO_RT,
	ENG_REFUSAL_LINK_UNWINDER,
	ENG_REFUSAL_LINK_TABLE_FULL,
	ENG_REFUSAL_LINK_STACK,
	ENG_REFUSAL_LINK_R_BRK,
	ENG_REFUSAL_LINK_INT3,
	ENG_REFUSAL_LINK_THREAD,
	/* Patching a point (eng_inst_commit.c). */
	ENG_REFUSAL_PATCH_STACK,
	ENG_REFUSAL_PATCH_INT3,
	ENG_REFUSAL_PATCH_R_BRK,
	ENG_REFUSAL_PATCH_THREAD,
	ENG_REFUSAL_PATCH_GREW,
	ENG_REFUSAL_PROCESS_ENDED,
	ENG_REFUSAL_N
};

/* An architecture refusal as an engine one (the same value). */
static inline enum eng_refusal eng_refusal_of_x86(enum x86_refusal r)
{
	return (enum eng_refusal)r;
}

/* The sentence for r (static); NULL for ENG_REFUSAL_NONE and for values
 * outside the enum. */
const char *eng_refusal_str(enum eng_refusal r);

#endif

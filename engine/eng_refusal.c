/*
 * eng_refusal.c - the sentence of every refusal of the engine
 * (eng_refusal.h): its own table for the engine's values, the
 * architecture's table (x86_refusal_str) for the values it passes on.
 */
#include "eng_refusal.h"

#include <assert.h>
#include <stddef.h>

#define ENG_REFUSAL_FIRST ENG_REFUSAL_NO_MEMORY

/* Writing a jump over live bytes, whether a copy's link at the original
 * entry (LINK_*) or a point's patch (PATCH_*), is refused for the same
 * four reasons; `where` names the bytes. */
#define BYTES_IN_USE(kind, where)                                          \
	E(kind##_STACK) = "a stack word points into " where " (maybe a "    \
		"return address); try again later",                         \
	E(kind##_R_BRK) = "hunch's breakpoint on the dynamic linker's "     \
		"r_brk is in " where,                                       \
	E(kind##_INT3) = "an int3 (a debugger's or hunch's own "            \
		"breakpoint) is already in " where,                         \
	E(kind##_THREAD) = "a thread stopped between instructions of "      \
		where

static const char *const eng_refusal_table[] = {
	[ENG_REFUSAL_NO_MEMORY - ENG_REFUSAL_FIRST] = "out of memory",
#define E(v) [ENG_REFUSAL_##v - ENG_REFUSAL_FIRST]
	E(CFI_NO_HDR) = "its file's unwind table cannot be searched "
		"(no .eh_frame_hdr table)",
	E(CFI_FDE) = "its FDE cannot be read",
	E(CFI_ENCODING) = "unsupported FDE pointer encoding",
	E(CFI_COVER) = "its FDE does not cover exactly the function",
	E(CFI_LSDA) = "it has C++ cleanups or catch blocks (an LSDA)",
	E(CFI_ALIGN) = "CFI code alignment is not 1",
	E(CFI_AUGMENTATION) = "unknown CIE augmentation",
	E(CFI_SIGNAL_FRAME) = "a signal frame's CIE",
	E(CFI_AUG_TRUNCATED) = "truncated CIE augmentation",
	E(CFI_UNKNOWN_INSN) = "a CFI instruction hunch does not know",
	E(CFI_ROW_INSIDE) = "a CFI row starts inside an instruction",
	E(CFI_TRUNCATED) = "truncated CFI instructions",
	E(FR_COPY_POINT) = "a point of the copy still cannot take a jmp",
	E(FR_COPY_NO_POINTS) = "the copy has no points",
	E(FR_NO_FIT) = "the copy does not fit",
	E(FR_NO_UNWIND) = "cannot read its unwind sections",
	E(FR_NO_BYTES) = "its bytes are not in the file",
	E(FR_GLIBC_PC) = "glibc checks PCs against its address range",
	E(FR_LIBGCC) = "libgcc_s: the unwinder is not relocated",
	E(POST_NO_NEXT) = "the call has no instruction after it in the "
		"relocated copy",
	E(POST_ENDS) = "the function ends too soon after the call",
	E(POST_TARGET) = "a branch target follows the call too closely "
		"for a jmp",
	E(POST_CALL) = "another call follows too closely for a jmp",
	E(POST_DATA) = "data follows the call",
	E(POST_OFF) = "whole-function relocation is not on for its file",
	E(POST_IN_PLACE) = "other points of the function are instrumented "
		"in place (or queued); request the after-call point first",
	E(POST_NOT_RELOCATED) = "the function cannot be relocated",
	E(POST_OVERLAP) = "the point after the call overlaps an "
		"instrumented point of the relocated copy (request both in "
		"one metric)",
	E(UNLOADED) = "its library was unloaded",
	E(LINK_NO_RT) = "the runtime library cannot register unwind "
		"information (older build?)",
	E(LINK_UNWINDER) = "a thread is inside libgcc's unwinder; try "
		"again later",
	E(LINK_TABLE_FULL) = "the runtime library's table of unwind "
		"information is full",
	BYTES_IN_USE(LINK, "the function's entry"),
	BYTES_IN_USE(PATCH, "the bytes to patch"),
	E(PATCH_GREW) = "trampoline grew",
	E(PROCESS_ENDED) = "the process has ended",
#undef E
#undef BYTES_IN_USE
};

static_assert(sizeof eng_refusal_table / sizeof eng_refusal_table[0] ==
	      ENG_REFUSAL_N - ENG_REFUSAL_FIRST,
	      "one sentence for every engine refusal");

const char *eng_refusal_str(enum eng_refusal r)
{
	if ((unsigned)r < X86_REFUSAL_N)
		return x86_refusal_str((enum x86_refusal)r);
	if ((unsigned)r >= ENG_REFUSAL_N)
		return NULL;
	return eng_refusal_table[r - ENG_REFUSAL_FIRST];
}

/*
 * x86_refusal.c - the sentence of every refusal of arch/x86_64
 * (x86_refusal.h): one table, indexed by the enum, so that a reason is
 * worded in one place and `hunch points` prints the same words wherever
 * the refusal comes from.
 */
#include "x86_refusal.h"

#include <assert.h>
#include <stddef.h>

static const char *const x86_refusal_table[] = {
	[X86_REFUSAL_NONE] = NULL,
	[X86_REFUSAL_SMALL] = "function smaller than 5 bytes",
	[X86_REFUSAL_TARGET] =
		"a branch target lies inside the bytes the jump would replace",
	[X86_REFUSAL_UNRESOLVED] =
		"unresolved indirect jump (possible jump table)",
	[X86_REFUSAL_UNDECODABLE] = "undecodable bytes",
	[X86_REFUSAL_MISALIGNED] = "a branch target is not on an "
		"instruction boundary (data in code?)",
	[X86_REFUSAL_TABLE_BEFORE] =
		"a jump table inside the function lies before its jump",
	[X86_REFUSAL_TABLE_OVERLAP] =
		"an instruction runs into a jump table inside the function",
	[X86_REFUSAL_BAD_TRANSFER] = "unsupported control transfer (far "
		"jump or call, iret, operand-size prefix on a branch)",
	[X86_REFUSAL_CALL_INSIDE] =
		"a call lies inside the bytes the jump would replace",
	[X86_REFUSAL_AT_END] = "not enough bytes before the function's end",
	[X86_REFUSAL_AT_START] =
		"not enough instructions before the point to borrow",
	[X86_REFUSAL_DATA] = "the bytes to replace include data",
	[X86_REFUSAL_A_POINT] = "a point cannot be patched",
	[X86_REFUSAL_EMPTY] = "no code (size 0)",
	[X86_REFUSAL_NO_BYTES] = "the function's bytes are not in the file",
	[X86_REFUSAL_JT_UNREADABLE] = "jump table not readable",
	[X86_REFUSAL_JT_OUTSIDE] = "jump table entries outside the function",
	[X86_REFUSAL_JT_UNSIZED] =
		"jump target computed from memory we cannot size",
	[X86_REFUSAL_JT_NO_BOUND] = "no bound check before the jump table",
	[X86_REFUSAL_JT_UNKNOWN] = "indirect jump we cannot follow",
	[X86_REFUSAL_FR_NO_ENTRY] = "no entry point",
	[X86_REFUSAL_FR_ENTRY] = "the entry itself cannot take a jmp",
	[X86_REFUSAL_FR_LARGE] = "function larger than 16384 bytes",
	[X86_REFUSAL_FR_TABLE] = "has a jump table (its entries would lead "
		"back into the original)",
	[X86_REFUSAL_FR_ABS_TABLE] = "has an absolute jump table (its "
		"entries would lead back into the original)",
	[X86_REFUSAL_FR_TABLE_LEA] =
		"has a jump table whose base lea is not known",
	[X86_REFUSAL_FR_UNRESOLVED] = "unresolved indirect jump",
	[X86_REFUSAL_FR_CODE_ADDR] = "takes code addresses inside itself",
	[X86_REFUSAL_FR_DATA] = "data inside the function",
	[X86_REFUSAL_FR_COLD_BACK] = "has a cold part that jumps back into it",
	[X86_REFUSAL_FR_COLD_JUMP] = "a jump into another part of the "
		"function (.cold) would leave the copy",
	[X86_REFUSAL_FR_FAR_SLOT] =
		"a call through a rip-relative slot out of reach of the copy",
	[X86_REFUSAL_FR_CAPSTONE] =
		"an instruction capstone cannot decode (AVX-512?)",
	[X86_REFUSAL_FR_XBEGIN] =
		"xbegin (its abort address is relative to where it runs)",
	[X86_REFUSAL_FR_TABLE_BASE] =
		"a jump table's base is not loaded by lea d(%rip)",
	[X86_REFUSAL_FR_CALL_MIDDLE] = "a call into the middle of the function",
	[X86_REFUSAL_FR_TABLE_MIDDLE] =
		"a jump table entry into the middle of an instruction",
	[X86_REFUSAL_FR_JUMP_MIDDLE] = "a jump into the middle of an instruction",
	[X86_REFUSAL_FR_LAYOUT] = "the copy's layout changed while emitting",
	[X86_REFUSAL_FR_SIZE] = "the copy's size changed while emitting",
	[X86_REFUSAL_RELOC_LOOP] = "loop/jrcxz has no 32-bit form",
	[X86_REFUSAL_RELOC_NO_DISP] =
		"cannot locate the rip-relative displacement",
	[X86_REFUSAL_RELOC_FAR] =
		"rip-relative operand out of reach of the trampoline",
	[X86_REFUSAL_RELOC_RSP_CALL] =
		"an indirect call through the stack pointer cannot be moved",
	[X86_REFUSAL_RELOC_NO_MODRM] = "cannot find the call's ModRM byte",
	[X86_REFUSAL_RELOC_FAR_SLOT] = "call through a far rip-relative slot",
	[X86_REFUSAL_RELOC_UNDECODABLE] = "bytes do not decode as x86-64",
	[X86_REFUSAL_TRAMP_NSITES] = "bad number of points in one patch",
	[X86_REFUSAL_TRAMP_OUTSIDE] = "point outside its patch",
	[X86_REFUSAL_TRAMP_INSNS] = "too many instructions in patch",
	[X86_REFUSAL_TRAMP_CROSS] =
		"an instruction crosses the end of the patch",
	[X86_REFUSAL_TRAMP_CALL_MIDDLE] =
		"a call in the middle of the patched bytes",
	[X86_REFUSAL_TRAMP_CET] =
		"a call in the patch cannot be moved under a CET shadow stack",
	[X86_REFUSAL_TRAMP_BOUNDARY] = "point is not an instruction boundary",
	[X86_REFUSAL_TRAMP_SPACE] = "trampoline buffer too small",
};

static_assert(sizeof x86_refusal_table / sizeof x86_refusal_table[0] ==
	      X86_REFUSAL_N, "one sentence for every enum x86_refusal");

const char *x86_refusal_str(enum x86_refusal r)
{
	if ((unsigned)r >= X86_REFUSAL_N)
		return NULL;
	return x86_refusal_table[r];
}

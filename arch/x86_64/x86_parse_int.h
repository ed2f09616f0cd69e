/*
 * x86_parse_int.h - between the parser's sweep (x86_parse.c) and the
 * analysis of indirect jumps (x86_jumptable.c).  Private to arch/x86_64.
 */
#ifndef X86_PARSE_INT_H
#define X86_PARSE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "x86_decode_int.h"
#include "x86_parse.h"

enum x86_ij_kind {
	X86_IJ_TAIL,        /* leaves the function (GOT slot, pointer) */
	X86_IJ_TABLE,       /* a jump table, every entry known */
	X86_IJ_UNRESOLVED,  /* targets unknown */
};

/* What an indirect jmp does, with its table when it has one. */
struct x86_ij {
	enum x86_ij_kind kind;
	uint64_t table;          /* TABLE: image-relative start */
	size_t nentries;
	uint8_t entry_size;      /* 4 (relative to table) or 8 (absolute) */
	uint64_t *targets;       /* TABLE: nentries targets (malloc) */
	enum x86_refusal why;    /* UNRESOLVED: why, for diagnostics */
	/* TABLE, entry_size 4: the `lea tbl(%rip)` instructions that give
	 * the base the entry is loaded from and the base it is added to
	 * (often the same one), 0 when not known. */
	uint64_t lea_at[2];
};

/* Who writes each general register in a whole function (indexes:
 * rax rbx rcx rdx rsi rdi rbp rsp r8..r15). */
struct x86_reg_defs {
	uint8_t writers[16];   /* saturates at 255 */
	bool is_lea[16];       /* the last writer is lea sym(%rip) */
	uint64_t lea[16];      /* ... and sym */
	uint64_t lea_at[16];   /* ... and where that lea is */
};

/* The code being parsed, as the jump-table analysis needs it. */
struct x86_code {
	const uint8_t *bytes;
	size_t len;
	uint64_t addr;
	const struct x86_parse_ctx *ctx;  /* never NULL */
	/* After the sweep: registers defined before an analysis window
	 * (hoisted table bases) are looked up here; NULL during it. */
	const struct x86_reg_defs *defs;
};

int x86_jumptable_reg_defs(struct x86_decoder *d, const struct x86_code *c,
			 const uint32_t *offs, size_t n,
			 struct x86_reg_defs *out);

/* Analyse the indirect jmp at offs[n-1]; offs[0..n-2] are the offsets of
 * the instructions before it, in order (at most X86_WINDOW in all). */
int x86_jumptable_indirect_jump(struct x86_decoder *d, const struct x86_code *c,
		      const uint32_t *offs, size_t n, struct x86_ij *out);

#define PATCH_LEN 5


enum {
	PF_TARGET = 1,     /* `target` is meaningful */
	PF_EXIT = 2,       /* leaves the function */
	PF_TAIL_IND = 4,   /* JMP_IND judged a tail call */
	PF_UNRESOLVED = 8, /* JMP_IND with unknown targets */
	PF_TABLE = 16,     /* JMP_IND through a resolved table */
};

struct pinsn {
	uint32_t off;
	uint8_t len;
	uint8_t kind;
	uint8_t flags;
	uint64_t target;   /* absolute (as decoded) when PF_TARGET */
};

enum { M_START = 1, M_TARGET = 2, M_DATA = 4 };

struct pstate {
	struct x86_decoder *d;
	struct x86_code c;
	struct x86_func *f;
	struct pinsn *in;
	size_t n, cap;
	uint8_t *marks;
	uint64_t *taken;      /* lea'd code addresses */
	size_t ntaken, taken_cap;
	uint64_t *tabt;       /* jump-table targets */
	size_t ntabt, tabt_cap;
	size_t points_cap;    /* capacity of f->points */
	enum x86_refusal fatal; /* function-level reason, first one wins */
	uint64_t fatal_at;
};

static inline void set_fatal(struct pstate *s, enum x86_refusal why,
			     uint64_t at)
{
	if (s->fatal == X86_REFUSAL_NONE) {
		s->fatal = why;
		s->fatal_at = at;
	}
}

/* Pass 3 (x86_points.c): points, then the arrays of the result. */
int x86_points_make(struct pstate *s);
int x86_points_fill_out(struct pstate *s);

/* True when addr is inside the function or one of its other parts. */
bool x86_jumptable_code_inside(const struct x86_code *c, uint64_t addr);

#endif

/*
 * x86_funcreloc.c - the copy of a whole function with room at every
 * point (the layout is described in x86_funcreloc.h).
 */
#include "x86_funcreloc.h"
#include "sorted_u64.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "x86_decode.h"
#include "x86_emit.h"
#include "x86_parse.h"
#include "x86_reloc.h"

enum ikind {
	IK_PLAIN,       /* x86_reloc_insn: verbatim or rip-relative fixed */
	IK_JMP_IN,      /* jmp to an instruction of the function */
	IK_JCC_IN,
	IK_JMP_OUT,     /* tail call: jmp/jcc to the original target */
	IK_JCC_OUT,
	IK_CALL,        /* call rel32: a real call in the copy */
	IK_CALL_RIP,    /* call *d(%rip): the same slot, new displacement */
	IK_CALL_IND,    /* call through a register or memory: verbatim */
	IK_LEA_TABLE,   /* lea tbl(%rip): loads the copy's table instead */
};

struct iinfo {
	uint8_t len, kind, cc;
	uint8_t pre, post;      /* padding bytes before / after */
	bool post_int3;         /* after a ret or jmp: never executed */
	int disp_off;           /* IK_CALL_RIP, IK_LEA_TABLE: the disp32 */
	uint64_t target;        /* IK_LEA_TABLE: the table's index */
};

/* xbegin rel16/rel32 (c7 f8): a relative target x86_reloc_insn does not
 * know about. */
static bool is_xbegin(const uint8_t *b, size_t len)
{
	size_t p = 0;

	while (p < len && (b[p] == 0x66 || (b[p] & 0xf0) == 0x40))
		p++;
	return p + 1 < len && b[p] == 0xc7 && b[p + 1] == 0xf8;
}

enum x86_refusal x86_funcreloc_refusal(const struct x86_func *xf)
{
	if (xf->npoints == 0 || xf->points[0].kind != X86_PT_ENTRY)
		return X86_REFUSAL_FR_NO_ENTRY;
	if (!xf->points[0].ok)
		return X86_REFUSAL_FR_ENTRY;
	if (xf->size > X86_FR_MAX_SIZE)
		return X86_REFUSAL_FR_LARGE;
	if (xf->njtables != xf->njump_tables)
		return X86_REFUSAL_FR_TABLE;
	for (size_t i = 0; i < xf->njtables; i++) {
		if (xf->jtables[i].entry_size != 4)
			return X86_REFUSAL_FR_ABS_TABLE;
		if (xf->jtables[i].lea_at[0] == 0 ||
		    xf->jtables[i].lea_at[1] == 0)
			return X86_REFUSAL_FR_TABLE_LEA;
	}
	if (xf->unresolved_indirect_jump)
		return X86_REFUSAL_FR_UNRESOLVED;
	if (xf->code_address_taken)
		return X86_REFUSAL_FR_CODE_ADDR;
	if (xf->ndata > 0)
		return X86_REFUSAL_FR_DATA;
	if (xf->noutside_targets > 0)
		return X86_REFUSAL_FR_COLD_BACK;
	return X86_REFUSAL_NONE;
}

/* The jump table whose base `lea` is at a, or -1. */
static long table_lea_at(const struct x86_func *xf, uint64_t a)
{
	for (size_t i = 0; i < xf->njtables; i++)
		if (xf->jtables[i].lea_at[0] == a ||
		    xf->jtables[i].lea_at[1] == a)
			return (long)i;
	return -1;
}

/* Offset of the disp32 of `lea d(%rip),%r` (REX.W 8d, ModRM 00 rrr
 * 101) when it ends the instruction, or -1. */
static int rip_lea_disp(const uint8_t *b, size_t len)
{
	size_t p = 0;

	while (p < len && (b[p] & 0xf0) == 0x40)
		p++;
	if (p + 6 != len || b[p] != 0x8d || (b[p + 1] & 0xc7) != 0x05)
		return -1;
	return (int)p + 2;
}

static bool is_exit_at(const struct x86_func *xf, uint64_t a)
{
	for (size_t i = 0; i < xf->npoints; i++)
		if (xf->points[i].kind == X86_PT_EXIT && xf->points[i].addr == a)
			return true;
	return false;
}

/* The point kinds at instruction address a (relative), as flags. */
#define PT_F_ENTRY 1
#define PT_F_EXIT  2
#define PT_F_CALL  4
static unsigned point_flags(const struct x86_func *xf, uint64_t a)
{
	unsigned f = 0;

	for (size_t i = 0; i < xf->npoints; i++)
		if (xf->points[i].addr == a)
			f |= 1u << xf->points[i].kind;
	return f;
}

/* Offset of the disp32 of `call *d(%rip)` (ff /2, ModRM 00 010 101), or
 * -1 when the call is not rip-relative. */
static int rip_call_disp(const uint8_t *b, size_t len)
{
	size_t p = 0;

	while (p < len && (b[p] == 0x3e || b[p] == 0x2e || b[p] == 0xf2 ||
			   (b[p] & 0xf0) == 0x40))
		p++;
	if (p + 6 > len || b[p] != 0xff || (b[p + 1] & 0xc7) != 0x05 ||
	    (b[p + 1] & 0x38) != 0x10)
		return -1;
	return (int)p + 2;
}

static int classify(struct x86_reloc *r, struct x86_decoder *d,
		    const struct x86_func *xf, uint64_t rel,
		    const uint8_t *b, size_t avail, struct iinfo *ii,
		    struct x86_funcreloc *fr)
{
	struct x86_inst xi;
	bool inside;
	uint64_t t;
	unsigned cc = 0;

	memset(ii, 0, sizeof *ii);
	if (x86_decode_one(d, b, avail, rel, &xi) < 0)
		return fr->why = X86_REFUSAL_FR_CAPSTONE, fr->why_at = rel, -ENOTSUP;
	ii->len = xi.len;
	ii->kind = IK_PLAIN;
	if (is_xbegin(b, xi.len))
		return fr->why = X86_REFUSAL_FR_XBEGIN, fr->why_at = rel, -ENOTSUP;
	t = xi.target;
	inside = t >= xf->addr && t < xf->addr + xf->size;
	if (table_lea_at(xf, rel) >= 0) {
		ii->disp_off = rip_lea_disp(b, xi.len);
		if (ii->disp_off < 0)
			return fr->why = X86_REFUSAL_FR_TABLE_BASE,
			       fr->why_at = rel, -ENOTSUP;
		ii->kind = IK_LEA_TABLE;
		ii->target = (uint64_t)table_lea_at(xf, rel);
		return 0;
	}
	if (xi.is_jump && xi.has_target) {
		if (xi.is_cond &&
		    x86_reloc_insn_jcc(r, b, avail, rel, &cc, &t) == 0)
			return fr->why = X86_REFUSAL_RELOC_LOOP, fr->why_at = rel, -ENOTSUP;
		if (!inside && !is_exit_at(xf, rel))
			return fr->why = X86_REFUSAL_FR_COLD_JUMP, fr->why_at = rel, -ENOTSUP;
		ii->kind = xi.is_cond ? (inside ? IK_JCC_IN : IK_JCC_OUT) :
			   (inside ? IK_JMP_IN : IK_JMP_OUT);
		ii->cc = (uint8_t)cc;
		ii->target = t;
	} else if (xi.is_call && xi.has_target) {
		if (inside && t != xf->addr)  /* call 1f (thunks) */
			return fr->why = X86_REFUSAL_FR_CALL_MIDDLE,
			       fr->why_at = rel, -ENOTSUP;
		ii->kind = IK_CALL;
		ii->target = t;
	} else if (xi.is_call) {
		ii->disp_off = rip_call_disp(b, xi.len);
		ii->kind = ii->disp_off >= 0 ? IK_CALL_RIP : IK_CALL_IND;
		if (ii->disp_off >= 0) {
			int32_t disp;

			memcpy(&disp, b + ii->disp_off, 4);
			ii->target = rel + xi.len + (uint64_t)(int64_t)disp;
		}
	}
	ii->post_int3 = xi.is_ret || (xi.is_jump && !xi.is_cond);
	return 0;
}

/* Emitted size of instruction ii placed at `at` (absolute; targets of
 * external branches absolute via `base`). */
static size_t emit_size(const struct iinfo *ii, uint64_t at, uint64_t base)
{
	uint64_t t = ii->target + base;

	switch (ii->kind) {
	case IK_JMP_IN: return 5;
	case IK_JCC_IN: return 6;
	case IK_JMP_OUT: return x86_emit_rel32_fits(at + 5, t) ? 5 : 14;
	case IK_JCC_OUT: return x86_emit_rel32_fits(at + 6, t) ? 6 : 16;
	case IK_CALL: return x86_emit_rel32_fits(at + 5, t) ? 5 : 16;
	default: return ii->len;
	}
}

/* Executed padding that does nothing and is not a nop (the parser
 * treats nops after a ret or jmp as padding and would mark the next
 * instruction a branch target): mov %al,%al; mov %rax,%rax;
 * lea (%rsp),%rsp; lea 0(%rsp),%rsp.  At least `need` bytes. */
static void emit_filler(struct x86_buf *o, unsigned need)
{
	static const uint8_t f2[] = { 0x88, 0xc0 };
	static const uint8_t f3[] = { 0x48, 0x89, 0xc0 };
	static const uint8_t f4[] = { 0x48, 0x8d, 0x24, 0x24 };
	static const uint8_t f5[] = { 0x48, 0x8d, 0x64, 0x24, 0x00 };

	if (need == 0)
		return;
	if (need <= 2)
		x86_emit(o, f2, 2);
	else if (need == 3)
		x86_emit(o, f3, 3);
	else if (need == 4)
		x86_emit(o, f4, 4);
	else
		x86_emit(o, f5, 5);
}

static unsigned filler_len(unsigned need)
{
	return need == 0 ? 0 : need <= 2 ? 2 : need;
}

/* Pass 1: the padding of every instruction and every slot's address. */
static void layout(const struct x86_func *xf, uint64_t base,
		   struct iinfo *ii, struct x86_funcreloc *fr)
{
	uint64_t pos = fr->to;
	size_t entry = xf->points[0].addr == xf->insns[0] ? 0 : 1;

	for (size_t i = 0; i < fr->n; i++) {
		unsigned pf = point_flags(xf, xf->insns[i]);
		size_t e;

		fr->cfi[i] = pos;   /* fixed below for i > 0 */
		fr->slot[i] = pos;
		e = emit_size(&ii[i], pos, base);
		if ((pf & PT_F_CALL) && e < 5)
			ii[i].pre = (uint8_t)filler_len(5 - (unsigned)e);
		pos += ii[i].pre;
		fr->at[i] = pos;
		e = emit_size(&ii[i], pos, base);
		pos += e;
		if (i + 1 < fr->n)
			fr->cfi[i + 1] = pos;
		if (e < 5 && ii[i].post_int3 && (pf & PT_F_EXIT))
			ii[i].post = (uint8_t)(5 - e);
		else if (e < 5 && i == entry && !ii[i].post_int3)
			ii[i].post = (uint8_t)filler_len(5 - (unsigned)e);
		pos += ii[i].post;
	}
	fr->code_len = (size_t)(pos - fr->to);
	pos = (pos + 3) & ~(uint64_t)3;
	for (size_t k = 0; k < xf->njtables; k++)
		pos += 4 * xf->jtables[k].nentries;
	fr->len = (size_t)(pos - fr->to);
	if (fr->n > 0)
		fr->cfi[0] = fr->to;
}

/* Where the copy's table k starts. */
static uint64_t table_at(const struct x86_func *xf,
			 const struct x86_funcreloc *fr,
			 size_t k)
{
	uint64_t at = (fr->to + fr->code_len + 3) & ~(uint64_t)3;

	for (size_t i = 0; i < k; i++)
		at += 4 * xf->jtables[i].nentries;
	return at;
}

/* The copy's tables, after its code: int32 entries, each the slot of
 * the original entry's target relative to the table's start. */
static int emit_tables(const struct x86_func *xf, struct x86_buf *o,
		       struct x86_funcreloc *fr)
{
	while (x86_pc(o) & 3)
		x86_emit_u8(o, 0xcc);
	for (size_t k = 0; k < xf->njtables; k++) {
		const struct x86_jtable *t = &xf->jtables[k];
		uint64_t at = x86_pc(o);

		for (size_t e = 0; e < t->nentries; e++) {
			uint64_t s = x86_funcreloc_slot(fr, t->targets[e] - xf->addr +
						 fr->from);

			if (s == 0 || (int64_t)(s - at) != (int32_t)(s - at))
				return fr->why = X86_REFUSAL_FR_TABLE_MIDDLE,
				       fr->why_at = t->jmp_at, -ENOTSUP;
			x86_emit_u32(o, (uint32_t)(s - at));
		}
	}
	return 0;
}

static uint64_t slot_of(const struct x86_funcreloc *fr, uint64_t rel_from,
			uint64_t rel)
{
	return x86_funcreloc_slot(fr, rel - rel_from + fr->from);
}

/* Pass 2: one instruction into its slot. */
static int emit_one(struct x86_reloc *r, const struct x86_func *xf,
		    uint64_t base, const uint8_t *b, size_t avail,
		    const struct iinfo *ii, struct x86_buf *o,
		    struct x86_funcreloc *fr, uint64_t rel)
{
	uint64_t t = ii->target + base;
	struct x86_reloc_info info;
	uint8_t tmp[16];
	int32_t nd;
	int rc;

	if ((ii->kind == IK_JMP_IN || ii->kind == IK_JCC_IN) &&
	    slot_of(fr, xf->addr, ii->target) == 0)
		return fr->why = X86_REFUSAL_FR_JUMP_MIDDLE,
		       fr->why_at = rel, -ENOTSUP;
	switch (ii->kind) {
	case IK_JMP_IN:
		return x86_emit_jmp5(o, slot_of(fr, xf->addr, ii->target)) ?
		       0 : -ERANGE;
	case IK_JCC_IN:
		x86_emit_u8(o, 0x0f);
		x86_emit_u8(o, (uint8_t)(0x80 | ii->cc));
		x86_emit_u32(o, (uint32_t)(slot_of(fr, xf->addr, ii->target) -
					   (x86_pc(o) + 4)));
		return 0;
	case IK_JMP_OUT:
		x86_emit_jmp(o, t);
		return 0;
	case IK_JCC_OUT:
		x86_emit_jcc(o, ii->cc, t);
		return 0;
	case IK_CALL:
		if (x86_emit_rel32_fits(x86_pc(o) + 5, t)) {
			x86_emit_u8(o, 0xe8);
			x86_emit_u32(o, (uint32_t)(t - (x86_pc(o) + 4)));
		} else {        /* call *2(%rip); jmp +8; .quad t */
			static const uint8_t c[] = { 0xff, 0x15, 2, 0, 0, 0,
						     0xeb, 0x08 };
			x86_emit(o, c, sizeof c);
			x86_emit_u64(o, t);
		}
		return 0;
	case IK_CALL_RIP:
		if (!x86_emit_rel32_fits(x86_pc(o) + ii->len, t))
			return fr->why = X86_REFUSAL_FR_FAR_SLOT, fr->why_at = rel, -ENOTSUP;
		memcpy(tmp, b, ii->len);
		nd = (int32_t)(t - (x86_pc(o) + ii->len));
		memcpy(tmp + ii->disp_off, &nd, 4);
		x86_emit(o, tmp, ii->len);
		return 0;
	case IK_CALL_IND:
		x86_emit(o, b, ii->len);
		return 0;
	case IK_LEA_TABLE:
		memcpy(tmp, b, ii->len);
		nd = (int32_t)(table_at(xf, fr, ii->target) -
			       (x86_pc(o) + ii->len));
		memcpy(tmp + ii->disp_off, &nd, 4);
		x86_emit(o, tmp, ii->len);
		return 0;
	default:
		rc = x86_reloc_insn(r, b, avail, rel + base, o, &info);
		if (rc < 0)
			fr->why = info.why, fr->why_at = rel;
		return rc < 0 ? -ENOTSUP : 0;
	}
}

static int alloc_maps(struct x86_funcreloc *fr, size_t n)
{
	fr->n = n;
	fr->orig = calloc(n + 1, sizeof *fr->orig);
	fr->slot = calloc(n + 1, sizeof *fr->slot);
	fr->at = calloc(n + 1, sizeof *fr->at);
	fr->cfi = calloc(n + 1, sizeof *fr->cfi);
	return fr->orig && fr->slot && fr->at && fr->cfi ? 0 : -ENOMEM;
}

int x86_funcreloc_build(struct x86_reloc *r, struct x86_decoder *d,
		 const struct x86_func *xf, uint64_t base,
		 const uint8_t *code, uint64_t to, struct x86_funcreloc *fr)
{
	struct iinfo *ii;
	struct x86_buf o;
	int rc = 0;

	memset(fr, 0, sizeof *fr);
	fr->from = xf->addr + base;
	fr->size = xf->size;
	fr->to = to;
	if ((fr->why = x86_funcreloc_refusal(xf)) != X86_REFUSAL_NONE)
		return -ENOTSUP;
	ii = calloc(xf->ninsns + 1, sizeof *ii);
	if (ii == NULL || alloc_maps(fr, xf->ninsns) < 0) {
		free(ii);
		return -ENOMEM;
	}
	for (size_t i = 0; i < fr->n && rc == 0; i++) {
		uint64_t off = xf->insns[i] - xf->addr;

		fr->orig[i] = xf->insns[i] + base;
		rc = classify(r, d, xf, xf->insns[i], code + off,
			      xf->size - off, &ii[i], fr);
	}
	if (rc == 0) {
		layout(xf, base, ii, fr);
		fr->code = malloc(fr->len + 1);
		if (fr->code == NULL)
			rc = -ENOMEM;
	}
	if (rc == 0)
		x86_emit_buf_init(&o, fr->code, fr->len, to);
	for (size_t i = 0; i < fr->n && rc == 0; i++) {
		uint64_t off = xf->insns[i] - xf->addr;

		emit_filler(&o, ii[i].pre);
		rc = emit_one(r, xf, base, code + off, xf->size - off, &ii[i],
			      &o, fr, xf->insns[i]);
		if (rc == 0 && x86_pc(&o) != fr->at[i] +
		    emit_size(&ii[i], fr->at[i], base))
			fr->why = X86_REFUSAL_FR_LAYOUT,
			rc = -ENOTSUP;
		for (unsigned k = 0; ii[i].post_int3 && k < ii[i].post; k++)
			x86_emit_u8(&o, 0xcc);
		if (!ii[i].post_int3)
			emit_filler(&o, ii[i].post);
	}
	if (rc == 0)
		rc = emit_tables(xf, &o, fr);
	if (rc == 0 && (o.overflow || o.len != fr->len))
		fr->why = X86_REFUSAL_FR_SIZE, rc = -ENOTSUP;
	free(ii);
	return rc;
}

void x86_funcreloc_free(struct x86_funcreloc *fr)
{
	free(fr->code);
	free(fr->orig);
	free(fr->slot);
	free(fr->at);
	free(fr->cfi);
	memset(fr, 0, sizeof *fr);
}

int x86_funcreloc_read(void *arg, uint64_t addr, void *buf, size_t len)
{
	const struct x86_funcreloc *fr = arg;

	if (addr < fr->to || addr - fr->to > fr->len ||
	    len > fr->len - (addr - fr->to))
		return -EFAULT;
	memcpy(buf, fr->code + (addr - fr->to), len);
	return 0;
}

static long find(const struct x86_funcreloc *fr, uint64_t orig)
{
	return sorted_u64_find(fr->orig, fr->n, orig);
}

/* Column col of the original instruction at orig; the function's end
 * maps to the copy's. */
static uint64_t column(const struct x86_funcreloc *fr, uint64_t orig,
		       const uint64_t *col)
{
	long i = find(fr, orig);

	if (orig == fr->from + fr->size)
		return fr->to + fr->code_len;
	return i < 0 ? 0 : col[i];
}

uint64_t x86_funcreloc_slot(const struct x86_funcreloc *fr, uint64_t orig)
{
	return column(fr, orig, fr->slot);
}

uint64_t x86_funcreloc_at(const struct x86_funcreloc *fr, uint64_t orig)
{
	return column(fr, orig, fr->at);
}

uint64_t x86_funcreloc_cfi(const struct x86_funcreloc *fr, uint64_t orig)
{
	return column(fr, orig, fr->cfi);
}

uint64_t x86_funcreloc_orig(const struct x86_funcreloc *fr, uint64_t at)
{
	size_t i;

	if (fr->n == 0 || at < fr->to || at >= fr->to + fr->code_len)
		return 0;
	/* the last row starting at or before `at` */
	i = sorted_u64_lower(fr->cfi, fr->n, at + 1);
	return i == 0 ? 0 : fr->orig[i - 1];
}

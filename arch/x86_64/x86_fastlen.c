/*
 * x86_fastlen.c - length and control flow of the common x86-64
 * encodings from opcode tables, for the parser's sweep.
 *
 * Why: capstone 4 formats the mnemonic and operands of every instruction
 * even with detail off (most of its time goes to vsnprintf), and the
 * sweep needs only lengths, branch kinds and branch targets.
 *
 * Safety: this decoder answers only for encodings in its tables (the
 * one-byte map, and the 0F map without groups whose validity depends on
 * the r/m field); anything else (VEX, EVEX, 0F 38, 0F 3A, x87 register
 * forms, system groups) returns 0 and the caller asks capstone.  Every
 * table answer is checked against capstone the first time its encoding
 * class (map, opcode, mandatory prefix, register or memory form, ModRM
 * reg field) is seen by a decoder: classes where capstone disagrees on
 * the length, or finds the bytes invalid, are handed to capstone from
 * then on.  So what is invalid for capstone stays invalid here ("never
 * mis-decode silently").  tests/parse/test_fastlen.c compares both on
 * every instruction of libc, python3.11 and libLLVM-14.
 */
#include "x86_decode_int.h"

#include <stdlib.h>
#include <string.h>

#define F_M   0x01   /* a ModRM byte (and SIB, displacement) */
#define F_I8  0x02   /* an 8-bit immediate */
#define F_IZ  0x04   /* a 16- or 32-bit immediate (operand size) */
#define F_SP  0x40   /* decided in code below */
#define F_X   0x80   /* not here: ask capstone */

#define M F_M
#define I8 F_I8
#define IZ F_IZ
#define SP F_SP
#define X F_X
#define MI8 (F_M | F_I8)
#define MIZ (F_M | F_IZ)

static const uint8_t map1[256] = {
	/* 0x00 */ M, M, M, M, I8, IZ, X, X, M, M, M, M, I8, IZ, X, SP,
	/* 0x10 */ M, M, M, M, I8, IZ, X, X, M, M, M, M, I8, IZ, X, X,
	/* 0x20 */ M, M, M, M, I8, IZ, X, X, M, M, M, M, I8, IZ, X, X,
	/* 0x30 */ M, M, M, M, I8, IZ, X, X, M, M, M, M, I8, IZ, X, X,
	/* 0x40 */ X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X,
	/* 0x50 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	/* 0x60 */ X, X, X, M, X, X, X, X, IZ, MIZ, I8, MI8, 0, 0, 0, 0,
	/* 0x70 */ SP, SP, SP, SP, SP, SP, SP, SP, SP, SP, SP, SP, SP, SP, SP, SP,
	/* 0x80 */ MI8, MIZ, X, MI8, M, M, M, M, M, M, M, M, X, SP, X, SP,
	/* 0x90 */ SP, 0, 0, 0, 0, 0, 0, 0, 0, 0, X, 0, 0, 0, 0, 0,
	/* 0xa0 */ X, X, X, X, 0, 0, 0, 0, I8, IZ, 0, 0, 0, 0, 0, 0,
	/* 0xb0 */ I8, I8, I8, I8, I8, I8, I8, I8, SP, SP, SP, SP, SP, SP, SP, SP,
	/* 0xc0 */ MI8, MI8, X, SP, X, X, SP, SP, SP, 0, X, X, SP, I8, X, X,
	/* 0xd0 */ M, M, M, M, X, X, X, 0, SP, SP, SP, SP, SP, SP, SP, SP,
	/* 0xe0 */ SP, SP, SP, SP, I8, I8, I8, I8, SP, SP, X, SP, 0, 0, 0, 0,
	/* 0xf0 */ X, 0, X, X, SP, 0, SP, SP, 0, 0, 0, 0, 0, 0, M, SP,
};

static const uint8_t map2[256] = {
	/* 0x00 */ X, X, M, M, X, 0, 0, X, 0, 0, X, SP, X, M, X, X,
	/* 0x10 */ M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, SP,
	/* 0x20 */ X, X, X, X, X, X, X, X, M, M, M, M, M, M, M, M,
	/* 0x30 */ 0, 0, 0, 0, X, X, X, X, X, X, X, X, X, X, X, X,
	/* 0x40 */ M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,
	/* 0x50 */ M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,
	/* 0x60 */ M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,
	/* 0x70 */ MI8, MI8, MI8, MI8, M, M, M, 0, X, X, X, X, M, M, M, M,
	/* 0x80 */ SP, SP, SP, SP, SP, SP, SP, SP, SP, SP, SP, SP, SP, SP, SP, SP,
	/* 0x90 */ M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,
	/* 0xa0 */ 0, 0, 0, M, MI8, M, X, X, 0, 0, X, M, MI8, M, SP, M,
	/* 0xb0 */ M, M, M, M, M, M, M, M, M, M, MI8, M, M, M, M, M,
	/* 0xc0 */ M, M, MI8, M, MI8, MI8, MI8, X, 0, 0, 0, 0, 0, 0, 0, 0,
	/* 0xd0 */ M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,
	/* 0xe0 */ M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,
	/* 0xf0 */ M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,
};

#undef M
#undef I8
#undef IZ
#undef SP
#undef X
#undef MI8
#undef MIZ

/* What the prefixes said. */
struct pfx {
	size_t n;        /* bytes of prefixes, REX included */
	bool p66, p67, rex, rexw, rexb, lock;
	bool seg_after;  /* a segment prefix after 66/f2/f3 */
	uint8_t mand;    /* mandatory-prefix class: 0 none, 1 66, 2 f3, 3 f2 */
};

static bool read_prefixes(const uint8_t *b, size_t len, struct pfx *p)
{
	memset(p, 0, sizeof(*p));
	for (; p->n < len && p->n < 14; p->n++) {
		switch (b[p->n]) {
		case 0x66: p->p66 = true; continue;
		case 0x67: p->p67 = true; continue;
		case 0xf2: p->mand = 3; continue;
		case 0xf3: p->mand = 2; continue;
		case 0xf0: p->lock = true; continue;
		case 0x2e: case 0x36: case 0x3e: case 0x26:
		case 0x64: case 0x65:
			p->seg_after |= p->p66 || p->mand != 0;
			continue;
		default:
			break;
		}
		break;
	}
	if (p->mand == 0 && p->p66)
		p->mand = 1;
	if (p->n < len && (b[p->n] & 0xf0) == 0x40) {
		p->rex = true;
		p->rexw = b[p->n] & 0x08;
		p->rexb = b[p->n] & 0x01;
		p->n++;
	}
	return p->n < len;
}

size_t x86_fastlen_modrm_bytes(const uint8_t *m, size_t len)
{
	uint8_t mod, rm;
	size_t n = 1;

	if (len < 1)
		return 0;
	mod = m[0] >> 6;
	rm = m[0] & 7;
	if (mod != 3 && rm == 4) {
		if (len < 2)
			return 0;
		n = 2;
		if (mod == 0 && (m[1] & 7) == 5)
			n += 4;
	}
	if (mod == 0 && rm == 5)
		n += 4;
	else if (mod == 1)
		n += 1;
	else if (mod == 2)
		n += 4;
	return n <= len ? n : 0;
}

static int32_t rel_at(const uint8_t *b, size_t size)
{
	int32_t r;

	if (size == 1)
		return (int8_t)b[0];
	memcpy(&r, b, 4);
	return r;
}

/* A direct branch: kind, then rel8 or rel32 at the end. */
static size_t branch(const uint8_t *b, size_t at, size_t len, size_t rel,
		     uint8_t kind, bool p66, uint64_t addr,
		     struct x86_fast *out)
{
	size_t n = at + 1 + rel;

	if (n > len || p66)
		return 0;  /* 0x66 on a branch: capstone says BAD, keep it */
	out->kind = kind;
	out->has_target = true;
	out->target = addr + n + (uint64_t)(int64_t)rel_at(b + at + 1, rel);
	return n;
}

/* One-byte opcodes marked SP. */
static size_t special1(const uint8_t *b, size_t at, size_t len,
		       const struct pfx *p, uint64_t addr, struct x86_fast *out)
{
	uint8_t op = b[at], reg = at + 1 < len ? (b[at + 1] >> 3) & 7 : 0;
	size_t zs = p->p66 && !p->rexw ? 2 : 4;

	if (op >= 0x70 && op <= 0x7f)
		return branch(b, at, len, 1, PK_JCC, p->p66, addr, out);
	if (op >= 0xe0 && op <= 0xe3)
		return branch(b, at, len, 1, PK_JCC, p->p66, addr, out);
	if (op >= 0xb8 && op <= 0xbf)
		return at + 1 + (p->rexw ? 8 : zs);
	if (op >= 0xd8 && op <= 0xdf)  /* x87: register forms vary by r/m */
		return at + 1 < len && (b[at + 1] >> 6) != 3 ? 0x100 : 0;
	switch (op) {
	case 0x0f: return 0;  /* the 0F map: the caller */
	case 0x8d:  /* lea: only memory forms exist */
		if (at + 1 >= len || (b[at + 1] >> 6) == 3)
			return 0;
		out->lea_rip = (b[at + 1] & 0xc7) == 0x05;
		return 0x100;
	case 0x8f: return reg == 0 ? 0x100 : 0;  /* pop, or AMD XOP */
	case 0x90:
		out->kind = (p->rexb || p->mand == 2) ? PK_OTHER : PK_PAD;
		return at + 1;
	case 0xc3: out->kind = PK_RET; return p->p66 ? 0 : at + 1;
	case 0xc6: return reg == 0 ? 0x100 | F_I8 : 0;  /* mov; xabort: cs */
	case 0xc7: return reg == 0 ? 0x100 | F_IZ : 0;  /* mov; xbegin: cs */
	case 0xc8: return at + 4;  /* enter imm16, imm8 */
	case 0xcc: out->kind = PK_PAD; return at + 1;
	case 0xe8: return branch(b, at, len, 4, PK_CALL, p->p66 && !p->rexw,
				 addr, out);
	case 0xe9: return branch(b, at, len, 4, PK_JMP, p->p66 && !p->rexw,
				 addr, out);
	case 0xeb: return branch(b, at, len, 1, PK_JMP, p->p66, addr, out);
	case 0xf4: out->kind = PK_STOP; return at + 1;
	case 0xf6: return 0x100 | (reg < 2 ? F_I8 : 0);
	case 0xf7: return 0x100 | (reg < 2 ? F_IZ : 0);
	case 0xff:
		if (reg == 2 || reg == 4)
			out->kind = reg == 2 ? PK_CALL_IND : PK_JMP_IND;
		return reg == 3 || reg == 5 || reg == 7 ? 0 : 0x100;
	}
	return 0;
}

/* Two-byte (0F) opcodes marked SP. */
static size_t special2(const uint8_t *b, size_t at, size_t len,
		       const struct pfx *p, uint64_t addr, struct x86_fast *out)
{
	uint8_t op = b[at];

	if (op >= 0x80 && op <= 0x8f)
		return branch(b, at, len, 4, PK_JCC, p->p66 && !p->rexw, addr,
			      out);
	if (op == 0x0b) {
		out->kind = PK_STOP;
		return at + 1;
	}
	if (op == 0x1f) {
		out->kind = PK_PAD;
		return 0x100;
	}
	if (op == 0xae)  /* fences (register forms) vary by r/m */
		return at + 1 < len && (b[at + 1] >> 6) != 3 ? 0x100 : 0;
	return 0;
}

/* Length from the table flags once the opcode is at b[at]; 0x100 in a
 * special's answer means "ModRM plus the flags in the low byte". */
static size_t finish(const uint8_t *b, size_t at, size_t len, unsigned f,
		     const struct pfx *p)
{
	size_t n = at + 1, m;

	if (f & F_M) {
		if (n >= len ||
		    (m = x86_fastlen_modrm_bytes(b + n, len - n)) == 0)
			return 0;
		n += m;
	}
	if (f & F_I8)
		n += 1;
	if (f & F_IZ)
		n += p->p66 && !p->rexw ? 2 : 4;
	return n;
}

/* The encoding class of an instruction, for the capstone check. */
static unsigned enc_class(const uint8_t *b, size_t at, size_t len, bool two,
			  const struct pfx *p, bool modrm)
{
	unsigned mod3 = 0, reg = 0;

	if (modrm && at + 1 < len) {
		mod3 = (b[at + 1] >> 6) == 3;
		reg = (b[at + 1] >> 3) & 7;
	}
	return ((((((two ? 256u : 0u) + b[at]) * 4 + p->mand) * 2 + mod3) * 8 +
		 reg) * 2 + (p->rexw ? 1 : 0)) * 4 + (p->p66 ? 1 : 0) +
	       (p->rex ? 2 : 0);
}

static size_t table_len(const uint8_t *b, size_t len, uint64_t addr,
			const struct pfx *p, struct x86_fast *out,
			unsigned *cls)
{
	size_t at = p->n, r;
	bool two = false;
	unsigned f = map1[b[at]];

	if (b[at] == 0x0f) {
		if (++at >= len)
			return 0;
		two = true;
		f = map2[b[at]];
	}
	if (f & F_X)
		return 0;
	if (f & F_SP) {
		r = two ? special2(b, at, len, p, addr, out) :
			  special1(b, at, len, p, addr, out);
		if (r == 0)
			return 0;
		if (r < 0x100) {
			*cls = enc_class(b, at, len, two, p, false);
			return r;
		}
		f = F_M | (unsigned)(r & 0xff);
	}
	*cls = enc_class(b, at, len, two, p, (f & F_M) != 0);
	return finish(b, at, len, f, p);
}

enum { C_UNKNOWN, C_AGREES, C_CAPSTONE };

size_t x86_fastlen_decode(struct x86_decoder *d, const uint8_t *b, size_t len,
		       uint64_t addr, struct x86_fast *out)
{
	struct pfx p;
	unsigned cls = 0;
	size_t n;

	memset(out, 0, sizeof(*out));
	/* Left to capstone, rare in compiled code and where capstone's
	 * reading depends on prefix order: lock (valid on few memory
	 * forms), 0x67, 0x66 together with 0xf2/0xf3, and a segment
	 * prefix after those (capstone 4 rejects `f2 64 0f 7d c0`). */
	if (len == 0 || !read_prefixes(b, len, &p) || p.lock || p.p67 ||
	    (p.p66 && p.mand != 1) || p.seg_after)
		return 0;
	n = table_len(b, len, addr, &p, out, &cls);
	if (n == 0 || n > 15 || n > len)
		return 0;
	if (d->fast_class == NULL &&
	    (d->fast_class = calloc(X86_FAST_CLASSES, 1)) == NULL)
		return 0;
	if (d->fast_class[cls] == C_UNKNOWN) {
		const uint8_t *q = b;
		size_t left = len;
		uint64_t a = addr;
		bool ok = cs_disasm_iter(d->fast, &q, &left, &a, d->fast_insn) &&
			  d->fast_insn->size == n;

		d->fast_class[cls] = ok ? C_AGREES : C_CAPSTONE;
	}
	if (d->fast_class[cls] != C_AGREES)
		return 0;
	out->len = (uint8_t)n;
	return n;
}

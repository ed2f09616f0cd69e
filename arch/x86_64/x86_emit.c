/*
 * x86_emit.c - encodings used by the trampoline generator.  Only the
 * forms hunch needs; every one was checked against objdump.
 */
#include "x86_emit.h"

#include <string.h>

void x86_emit_buf_init(struct x86_buf *o, uint8_t *mem, size_t cap,
		       uint64_t addr)
{
	o->b = mem;
	o->len = 0;
	o->cap = cap;
	o->addr = addr;
	o->overflow = false;
}

void x86_emit(struct x86_buf *o, const void *bytes, size_t n)
{
	if (o->len + n > o->cap) {
		o->overflow = true;
		return;
	}
	memcpy(o->b + o->len, bytes, n);
	o->len += n;
}

void x86_emit_u8(struct x86_buf *o, uint8_t v)
{
	x86_emit(o, &v, 1);
}

void x86_emit_u32(struct x86_buf *o, uint32_t v)
{
	x86_emit(o, &v, 4);
}

void x86_emit_u64(struct x86_buf *o, uint64_t v)
{
	x86_emit(o, &v, 8);
}

bool x86_emit_rel32_fits(uint64_t end, uint64_t to)
{
	int64_t d = (int64_t)(to - end);

	return d >= INT32_MIN && d <= INT32_MAX;
}

void x86_emit_jmp5_bytes(uint8_t out[5], uint64_t at, uint64_t to)
{
	int32_t d = (int32_t)(to - (at + 5));

	out[0] = 0xe9;
	memcpy(out + 1, &d, 4);
}

bool x86_emit_jmp5(struct x86_buf *o, uint64_t to)
{
	uint8_t j[5];

	if (!x86_emit_rel32_fits(x86_pc(o) + 5, to))
		return false;
	x86_emit_jmp5_bytes(j, x86_pc(o), to);
	x86_emit(o, j, 5);
	return true;
}

void x86_emit_jmp(struct x86_buf *o, uint64_t to)
{
	static const uint8_t far[6] = { 0xff, 0x25, 0, 0, 0, 0 };

	if (x86_emit_jmp5(o, to))
		return;
	x86_emit(o, far, sizeof far);
	x86_emit_u64(o, to);
}

void x86_emit_jcc(struct x86_buf *o, unsigned cc, uint64_t to)
{
	cc &= 0xf;
	if (x86_emit_rel32_fits(x86_pc(o) + 6, to)) {
		x86_emit_u8(o, 0x0f);
		x86_emit_u8(o, (uint8_t)(0x80 | cc));
		x86_emit_u32(o, (uint32_t)(int32_t)(to - (x86_pc(o) + 4)));
		return;
	}
	/* j!cc over the 14-byte far jump */
	x86_emit_u8(o, (uint8_t)(0x70 | (cc ^ 1)));
	x86_emit_u8(o, 14);
	x86_emit_jmp(o, to);
}

size_t x86_emit_jcc_fwd(struct x86_buf *o, unsigned cc)
{
	x86_emit_u8(o, 0x0f);
	x86_emit_u8(o, (uint8_t)(0x80 | (cc & 0xf)));
	x86_emit_u32(o, 0);
	return o->len;
}

void x86_emit_fix_fwd(struct x86_buf *o, size_t pos)
{
	int32_t d = (int32_t)(o->len - pos);

	if (!o->overflow && pos >= 4 && pos <= o->len)
		memcpy(o->b + pos - 4, &d, 4);
}

static void rex(struct x86_buf *o, bool w, int reg, int base)
{
	uint8_t r = (uint8_t)(0x40 | (w ? 8 : 0) | ((reg & 8) ? 4 : 0) |
			      ((base & 8) ? 1 : 0));

	if (r != 0x40)
		x86_emit_u8(o, r);
}

void x86_emit_push(struct x86_buf *o, int reg)
{
	rex(o, false, 0, reg);
	x86_emit_u8(o, (uint8_t)(0x50 | (reg & 7)));
}

void x86_emit_pop(struct x86_buf *o, int reg)
{
	rex(o, false, 0, reg);
	x86_emit_u8(o, (uint8_t)(0x58 | (reg & 7)));
}

void x86_emit_mov_imm(struct x86_buf *o, int reg, uint64_t v)
{
	if (v <= UINT32_MAX) {          /* mov $imm32, %r32 zero-extends */
		rex(o, false, 0, reg);
		x86_emit_u8(o, (uint8_t)(0xb8 | (reg & 7)));
		x86_emit_u32(o, (uint32_t)v);
		return;
	}
	rex(o, true, 0, reg);
	x86_emit_u8(o, (uint8_t)(0xb8 | (reg & 7)));
	x86_emit_u64(o, v);
}

void x86_emit_mov_fs(struct x86_buf *o, int reg, int32_t off)
{
	/* 64 REX.W 8B modrm(00 reg 100) sib(00 100 101) disp32 */
	x86_emit_u8(o, 0x64);
	rex(o, true, reg, 0);
	x86_emit_u8(o, 0x8b);
	x86_emit_u8(o, (uint8_t)(0x04 | ((reg & 7) << 3)));
	x86_emit_u8(o, 0x25);
	x86_emit_u32(o, (uint32_t)off);
}

/* modrm + optional sib + disp32 for disp(%base) */
static void mem_operand(struct x86_buf *o, int reg, int base, int32_t disp)
{
	x86_emit_u8(o, (uint8_t)(0x80 | ((reg & 7) << 3) | (base & 7)));
	if ((base & 7) == X86_RSP)
		x86_emit_u8(o, 0x24);
	x86_emit_u32(o, (uint32_t)disp);
}

void x86_emit_lea_rsp(struct x86_buf *o, int32_t disp)
{
	rex(o, true, X86_RSP, X86_RSP);
	x86_emit_u8(o, 0x8d);
	mem_operand(o, X86_RSP, X86_RSP, disp);
}

void x86_emit_load(struct x86_buf *o, int reg, int base, int32_t disp)
{
	rex(o, true, reg, base);
	x86_emit_u8(o, 0x8b);
	mem_operand(o, reg, base, disp);
}

/*
 * x86_reloc.c - relocation of single instructions into trampolines.
 *
 * Capstone 4 does not say where the displacement of a rip-relative
 * operand sits inside the instruction, so it is found by trying: the
 * 4 bytes that hold it, changed by one, must move the decoded target by
 * exactly one with the same length.
 */
#include "x86_reloc.h"

#include <capstone/capstone.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct x86_reloc {
	csh cs;
	cs_insn *insn;
};

int x86_reloc_open(struct x86_reloc **out)
{
	struct x86_reloc *r = calloc(1, sizeof *r);

	if (r == NULL)
		return -ENOMEM;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &r->cs) != CS_ERR_OK) {
		free(r);
		return -EINVAL;
	}
	cs_option(r->cs, CS_OPT_DETAIL, CS_OPT_ON);
	r->insn = cs_malloc(r->cs);
	if (r->insn == NULL) {
		cs_close(&r->cs);
		free(r);
		return -ENOMEM;
	}
	*out = r;
	return 0;
}

void x86_reloc_close(struct x86_reloc *r)
{
	if (r == NULL)
		return;
	cs_free(r->insn, 1);
	cs_close(&r->cs);
	free(r);
}

static bool decode(struct x86_reloc *r, const uint8_t *code, size_t avail,
		   uint64_t from)
{
	const uint8_t *p = code;
	size_t n = avail > 15 ? 15 : avail;
	uint64_t a = from;

	return cs_disasm_iter(r->cs, &p, &n, &a, r->insn);
}

static const cs_x86_op *rip_operand(const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;

	for (int i = 0; i < x->op_count; i++)
		if (x->operands[i].type == X86_OP_MEM &&
		    x->operands[i].mem.base == X86_REG_RIP)
			return &x->operands[i];
	return NULL;
}

/* Offset of the rip-relative disp32 inside the instruction, or -1. */
static int find_disp(struct x86_reloc *r, const uint8_t *code, size_t len,
		     uint64_t from, int64_t disp)
{
	int32_t d32 = (int32_t)disp;
	uint8_t tmp[16];

	for (int off = (int)len - 4; off >= 1; off--) {
		int32_t v;
		const cs_x86_op *op;

		memcpy(&v, code + off, 4);
		if (v != d32)
			continue;
		memcpy(tmp, code, len);
		v = d32 + 1;
		memcpy(tmp + off, &v, 4);
		if (!decode(r, tmp, len, from) || r->insn->size != len)
			continue;
		op = rip_operand(r->insn);
		if (op != NULL && op->mem.disp == (int64_t)d32 + 1)
			return off;
	}
	return -1;
}

static int fail(struct x86_reloc_info *info, int code, enum x86_refusal why)
{
	info->why = why;
	return code;
}

/* Push a 64-bit return address without touching flags or registers. */
static void push_addr(struct x86_buf *o, uint64_t v)
{
	static const uint8_t movl_lo[3] = { 0xc7, 0x04, 0x24 };
	static const uint8_t movl_hi[4] = { 0xc7, 0x44, 0x24, 0x04 };

	if (v <= INT32_MAX) {           /* push $imm32 (sign-extended) */
		x86_emit_u8(o, 0x68);
		x86_emit_u32(o, (uint32_t)v);
		return;
	}
	x86_emit_lea_rsp(o, -8);
	x86_emit(o, movl_lo, 3);
	x86_emit_u32(o, (uint32_t)v);
	x86_emit(o, movl_hi, 4);
	x86_emit_u32(o, (uint32_t)(v >> 32));
}

static bool is_jcc(unsigned id)
{
	switch (id) {
	case X86_INS_JAE: case X86_INS_JA: case X86_INS_JBE: case X86_INS_JB:
	case X86_INS_JE: case X86_INS_JGE: case X86_INS_JG: case X86_INS_JLE:
	case X86_INS_JL: case X86_INS_JNE: case X86_INS_JNO: case X86_INS_JNP:
	case X86_INS_JNS: case X86_INS_JO: case X86_INS_JP: case X86_INS_JS:
		return true;
	default:
		return false;
	}
}

static int reloc_rip(struct x86_reloc *r, const uint8_t *code, uint8_t len,
		     uint64_t from, int64_t disp, struct x86_buf *o,
		     struct x86_reloc_info *info)
{
	uint64_t target = from + len + (uint64_t)disp;
	uint8_t tmp[16];
	int off = find_disp(r, code, len, from, disp);
	int32_t nd;

	if (off < 0)
		return fail(info, -ENOTSUP, X86_REFUSAL_RELOC_NO_DISP);
	if (!x86_emit_rel32_fits(x86_pc(o) + len, target))
		return fail(info, -ERANGE, X86_REFUSAL_RELOC_FAR);
	nd = (int32_t)(target - (x86_pc(o) + len));
	memcpy(tmp, code, len);
	memcpy(tmp + off, &nd, 4);
	x86_emit(o, tmp, len);
	return 0;
}

/* call *%reg / call *d(%reg,...) -> (return address pushed) jmp with the
 * same operand: the ModRM reg field /2 becomes /4.  An operand that
 * reads %rsp would see the pushed word: refused. */
static int indirect_call(const cs_insn *in, const uint8_t *code,
			 struct x86_buf *o, struct x86_reloc_info *info)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *op = &x->operands[0];
	uint8_t b[16];

	if (x->op_count != 1 ||
	    (op->type == X86_OP_REG && op->reg == X86_REG_RSP) ||
	    (op->type == X86_OP_MEM && (op->mem.base == X86_REG_RSP ||
					op->mem.index == X86_REG_RSP)) ||
	    (op->type != X86_OP_REG && op->type != X86_OP_MEM))
		return fail(info, -ENOTSUP, X86_REFUSAL_RELOC_RSP_CALL);
	memcpy(b, code, in->size);
	for (size_t i = 0; i + 1 < in->size; i++)
		if (b[i] == 0xff && b[i + 1] == x->modrm &&
		    (x->modrm & 0x38) == 0x10) {
			b[i + 1] = (uint8_t)((x->modrm & ~0x38) | 0x20);
			x86_emit(o, b, in->size);
			return 0;
		}
	return fail(info, -ENOTSUP, X86_REFUSAL_RELOC_NO_MODRM);
}

static int reloc_branch(struct x86_reloc *r, const uint8_t *code,
			uint64_t from, struct x86_buf *o,
			struct x86_reloc_info *info)
{
	const cs_insn *in = r->insn;
	const cs_x86 *x = &in->detail->x86;
	uint64_t next = from + in->size;
	const cs_x86_op *rip = rip_operand(in);

	if (in->id == X86_INS_CALL) {
		info->is_call = true;
		push_addr(o, next);
		if (x->op_count == 1 && x->operands[0].type == X86_OP_IMM) {
			x86_emit_jmp(o, (uint64_t)x->operands[0].imm);
			return 0;
		}
		if (rip != NULL) {   /* call *d(%rip) -> jmp *d'(%rip) */
			uint64_t slot = next + (uint64_t)rip->mem.disp;
			uint8_t j[6] = { 0xff, 0x25 };
			int32_t nd = (int32_t)(slot - (x86_pc(o) + 6));

			if (!x86_emit_rel32_fits(x86_pc(o) + 6, slot))
				return fail(info, -ERANGE,
					    X86_REFUSAL_RELOC_FAR_SLOT);
			memcpy(j + 2, &nd, 4);
			x86_emit(o, j, 6);
			return 0;
		}
		return indirect_call(in, code, o, info);
	}
	if (in->id == X86_INS_JMP && x->op_count == 1 &&
	    x->operands[0].type == X86_OP_IMM) {
		info->is_uncond_jmp = true;
		x86_emit_jmp(o, (uint64_t)x->operands[0].imm);
		return 0;
	}
	if (is_jcc(in->id) && x->op_count == 1 &&
	    x->operands[0].type == X86_OP_IMM) {
		unsigned cc = x->opcode[0] == 0x0f ? x->opcode[1] : x->opcode[0];

		x86_emit_jcc(o, cc & 0xf, (uint64_t)x->operands[0].imm);
		return 0;
	}
	(void)code;
	return 1;    /* not a relative branch */
}

int x86_reloc_insn(struct x86_reloc *r, const uint8_t *code, size_t avail,
		   uint64_t from, struct x86_buf *o,
		   struct x86_reloc_info *info)
{
	const cs_insn *in;
	const cs_x86_op *rip;
	uint8_t bytes[16];
	int rc;

	memset(info, 0, sizeof *info);
	if (!decode(r, code, avail, from))
		return fail(info, -EINVAL, X86_REFUSAL_RELOC_UNDECODABLE);
	in = r->insn;
	info->len = (uint8_t)in->size;
	memcpy(bytes, code, in->size);
	switch (in->id) {
	case X86_INS_LOOP: case X86_INS_LOOPE: case X86_INS_LOOPNE:
	case X86_INS_JRCXZ: case X86_INS_JECXZ:
		return fail(info, -ENOTSUP, X86_REFUSAL_RELOC_LOOP);
	case X86_INS_RET: case X86_INS_RETF:
		info->is_ret = true;
		break;
	case X86_INS_JMP:
		info->is_uncond_jmp = true;
		break;
	default:
		break;
	}
	rc = reloc_branch(r, bytes, from, o, info);
	if (rc <= 0)
		return rc;
	rip = rip_operand(in);
	if (rip != NULL)
		return reloc_rip(r, bytes, info->len, from, rip->mem.disp, o,
				 info);
	x86_emit(o, bytes, info->len);
	return 0;
}

size_t x86_reloc_insn_jcc(struct x86_reloc *r, const uint8_t *code,
			  size_t avail, uint64_t from, unsigned *cc,
			  uint64_t *target)
{
	const cs_x86 *x;

	if (!decode(r, code, avail, from) || !is_jcc(r->insn->id))
		return 0;
	x = &r->insn->detail->x86;
	if (x->op_count != 1 || x->operands[0].type != X86_OP_IMM)
		return 0;
	*cc = (x->opcode[0] == 0x0f ? x->opcode[1] : x->opcode[0]) & 0xf;
	*target = (uint64_t)x->operands[0].imm;
	return r->insn->size;
}

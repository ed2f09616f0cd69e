/* x86_decode.c - capstone-backed decoding (see x86_decode.h). */
#include "x86_decode.h"
#include "x86_decode_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int x86_decode_open(struct x86_decoder **out)
{
	struct x86_decoder *d = calloc(1, sizeof(*d));

	if (d == NULL)
		return -ENOMEM;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &d->handle) != CS_ERR_OK) {
		free(d);
		return -EINVAL;
	}
	cs_option(d->handle, CS_OPT_DETAIL, CS_OPT_ON);
	d->insn = cs_malloc(d->handle);
	if (d->insn == NULL) {
		cs_close(&d->handle);
		free(d);
		return -ENOMEM;
	}
	/* The parser's sweep needs only lengths and instruction ids; with
	 * detail off capstone decodes about a fifth faster. */
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &d->fast) != CS_ERR_OK) {
		x86_decode_close(d);
		return -EINVAL;
	}
	d->fast_insn = cs_malloc(d->fast);
	if (d->fast_insn == NULL) {
		x86_decode_close(d);
		return -ENOMEM;
	}
	*out = d;
	return 0;
}

void x86_decode_close(struct x86_decoder *d)
{
	if (d == NULL)
		return;
	for (size_t i = 0; i <= X86_WINDOW; i++)
		if (d->win[i] != NULL)
			cs_free(d->win[i], 1);
	if (d->insn != NULL)
		cs_free(d->insn, 1);
	if (d->fast_insn != NULL)
		cs_free(d->fast_insn, 1);
	if (d->fast)
		cs_close(&d->fast);
	cs_close(&d->handle);
	free(d->pins);
	free(d->marks);
	free(d->fast_class);
	free(d);
}

static bool insn_in_group(const cs_insn *in, uint8_t group)
{
	for (uint8_t i = 0; i < in->detail->groups_count; i++)
		if (in->detail->groups[i] == group)
			return true;
	return false;
}

/* Fill the branch and rip-relative facts of an instruction. */
static void describe_operands(const cs_insn *in, struct x86_inst *out)
{
	const cs_x86 *x = &in->detail->x86;

	for (uint8_t i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];

		if ((out->is_call || out->is_jump) && op->type == X86_OP_IMM) {
			out->has_target = true;
			out->target = (uint64_t)op->imm;
		}
		if (op->type == X86_OP_MEM && op->mem.base == X86_REG_RIP) {
			out->has_rip_imm = true;
			out->rip_target = in->address + in->size +
					  (uint64_t)op->mem.disp;
		}
		if (i == 0 && op->type == X86_OP_REG)
			out->dest_reg = op->reg;
	}
}

int x86_decode_one(struct x86_decoder *d, const uint8_t *buf, size_t len,
		   uint64_t addr, struct x86_inst *out)
{
	const uint8_t *code = buf;
	size_t size = len;
	uint64_t a = addr;
	cs_insn *in = d->insn;

	memset(out, 0, sizeof(*out));
	if (!cs_disasm_iter(d->handle, &code, &size, &a, in))
		return -EINVAL;
	out->addr = in->address;
	out->len = (uint8_t)in->size;
	out->is_call = insn_in_group(in, CS_GRP_CALL);
	out->is_ret = insn_in_group(in, CS_GRP_RET);
	out->is_jump = insn_in_group(in, CS_GRP_JUMP);
	out->is_cond = out->is_jump && in->id != X86_INS_JMP;
	describe_operands(in, out);
	/* Truncation is fine: the text is only for messages. */
	snprintf(out->text, sizeof(out->text), "%.15s %.46s", in->mnemonic,
		 in->op_str);
	return 0;
}

int x86_decode_find_main_ref(struct x86_decoder *d, const uint8_t *code,
		      size_t len, uint64_t start_addr, uint64_t *ref,
		      bool *is_load)
{
	struct x86_inst in;
	uint64_t rdi = 0;
	bool have_rdi = false, load = false;
	size_t off = 0;

	/* glibc's _start loads main into %rdi (lea main(%rip) or
	 * mov main@GOTPCREL(%rip) for PIE, mov $main for non-PIE) and then
	 * calls __libc_start_main. */
	while (off < len && x86_decode_one(d, code + off, len - off,
					   start_addr + off, &in) == 0) {
		const cs_x86 *x = &d->insn->detail->x86;

		if (in.dest_reg == X86_REG_RDI || in.dest_reg == X86_REG_EDI) {
			if (in.has_rip_imm && (d->insn->id == X86_INS_LEA ||
					       d->insn->id == X86_INS_MOV)) {
				rdi = in.rip_target;
				load = d->insn->id == X86_INS_MOV;
				have_rdi = true;
			} else if (x->op_count == 2 &&
				   x->operands[1].type == X86_OP_IMM) {
				rdi = (uint64_t)x->operands[1].imm;
				load = false;
				have_rdi = true;
			}
		}
		if (in.is_call) {
			if (!have_rdi)
				return -ENOENT;
			*ref = rdi;
			*is_load = load;
			return 0;
		}
		off += in.len;
	}
	return -ENOENT;
}

int x86_decode_find_main_from_start(struct x86_decoder *d, const uint8_t *code,
			     size_t len, uint64_t start_addr,
			     uint64_t *main_addr)
{
	uint64_t ref;
	bool load;

	/* Without the target's memory a GOT load cannot be resolved. */
	if (x86_decode_find_main_ref(d, code, len, start_addr, &ref, &load) !=
		    0 ||
	    load)
		return -ENOENT;
	*main_addr = ref;
	return 0;
}

unsigned x86_decode_reg_canon(unsigned reg)
{
	switch (reg) {
	case X86_REG_RAX: case X86_REG_EAX: case X86_REG_AX:
	case X86_REG_AL: case X86_REG_AH: return X86_REG_RAX;
	case X86_REG_RBX: case X86_REG_EBX: case X86_REG_BX:
	case X86_REG_BL: case X86_REG_BH: return X86_REG_RBX;
	case X86_REG_RCX: case X86_REG_ECX: case X86_REG_CX:
	case X86_REG_CL: case X86_REG_CH: return X86_REG_RCX;
	case X86_REG_RDX: case X86_REG_EDX: case X86_REG_DX:
	case X86_REG_DL: case X86_REG_DH: return X86_REG_RDX;
	case X86_REG_RSI: case X86_REG_ESI: case X86_REG_SI:
	case X86_REG_SIL: return X86_REG_RSI;
	case X86_REG_RDI: case X86_REG_EDI: case X86_REG_DI:
	case X86_REG_DIL: return X86_REG_RDI;
	case X86_REG_RBP: case X86_REG_EBP: case X86_REG_BP:
	case X86_REG_BPL: return X86_REG_RBP;
	case X86_REG_RSP: case X86_REG_ESP: case X86_REG_SP:
	case X86_REG_SPL: return X86_REG_RSP;
	case X86_REG_R8: case X86_REG_R8D: case X86_REG_R8W:
	case X86_REG_R8B: return X86_REG_R8;
	case X86_REG_R9: case X86_REG_R9D: case X86_REG_R9W:
	case X86_REG_R9B: return X86_REG_R9;
	case X86_REG_R10: case X86_REG_R10D: case X86_REG_R10W:
	case X86_REG_R10B: return X86_REG_R10;
	case X86_REG_R11: case X86_REG_R11D: case X86_REG_R11W:
	case X86_REG_R11B: return X86_REG_R11;
	case X86_REG_R12: case X86_REG_R12D: case X86_REG_R12W:
	case X86_REG_R12B: return X86_REG_R12;
	case X86_REG_R13: case X86_REG_R13D: case X86_REG_R13W:
	case X86_REG_R13B: return X86_REG_R13;
	case X86_REG_R14: case X86_REG_R14D: case X86_REG_R14W:
	case X86_REG_R14B: return X86_REG_R14;
	case X86_REG_R15: case X86_REG_R15D: case X86_REG_R15W:
	case X86_REG_R15B: return X86_REG_R15;
	case X86_REG_RIP: return X86_REG_RIP;
	default: return X86_REG_INVALID;
	}
}

/* VEX map 1 opcodes with an imm8 (pshufd and shifts by immediate,
 * cmpps, pinsrw, pextrw, shufps); map 3 always has one. */
static bool vex_imm8(unsigned map, uint8_t op)
{
	if (map == 3)
		return true;
	return map == 1 && ((op >= 0x70 && op <= 0x73) || op == 0xc2 ||
			    op == 0xc4 || op == 0xc5 || op == 0xc6);
}

size_t x86_decode_len_fallback(const uint8_t *b, size_t len)
{
	size_t i = 0, hdr, m;
	unsigned map;

	while (i < len && (b[i] == 0x67 || b[i] == 0x2e || b[i] == 0x3e ||
			   b[i] == 0x26 || b[i] == 0x36 || b[i] == 0x64 ||
			   b[i] == 0x65))
		i++;
	if (i + 3 <= len && b[i] == 0x0f && b[i + 1] == 0x01 &&
	    b[i + 2] >= 0xc0)
		return i + 3;  /* rdpkru, wrpkru and other 0f 01 /reg forms */
	if (i + 2 > len)
		return 0;
	if (b[i] == 0xc5) {
		map = 1;
		hdr = 2;
	} else if (b[i] == 0xc4 && i + 3 <= len) {
		map = b[i + 1] & 0x1f;
		hdr = 3;
	} else if (b[i] == 0x62 && i + 4 <= len) {
		map = b[i + 1] & 0x03;  /* EVEX: mm */
		hdr = 4;
	} else {
		return 0;
	}
	if (map < 1 || map > 3 || i + hdr + 1 > len)
		return 0;
	i += hdr;
	if (map == 1 && b[i] == 0x77)
		return i + 1;  /* vzeroupper, vzeroall: no ModRM */
	m = x86_fastlen_modrm_bytes(b + i + 1, len - i - 1);
	if (m == 0)
		return 0;
	i += 1 + m + (vex_imm8(map, b[i]) ? 1 : 0);
	return i <= len ? i : 0;
}

void x86_decode_set_fast(struct x86_decoder *d, bool on)
{
	d->no_fast = !on;
}

/* x86_decode.c - capstone-backed decoding (see x86_decode.h). */
#include "x86_decode.h"

#include <capstone/capstone.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct x86_decoder {
	csh handle;
	cs_insn *insn;   /* capstone's scratch instruction, reused */
};

int x86_decoder_open(struct x86_decoder **out)
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
	*out = d;
	return 0;
}

void x86_decoder_close(struct x86_decoder *d)
{
	if (d == NULL)
		return;
	cs_free(d->insn, 1);
	cs_close(&d->handle);
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

int x86_find_main_ref(struct x86_decoder *d, const uint8_t *code,
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

int x86_find_main_from_start(struct x86_decoder *d, const uint8_t *code,
			     size_t len, uint64_t start_addr,
			     uint64_t *main_addr)
{
	uint64_t ref;
	bool load;

	/* Without the target's memory a GOT load cannot be resolved. */
	if (x86_find_main_ref(d, code, len, start_addr, &ref, &load) != 0 ||
	    load)
		return -ENOENT;
	*main_addr = ref;
	return 0;
}

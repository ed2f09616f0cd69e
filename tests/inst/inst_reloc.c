/*
 * inst_reloc.c - unit tests of arch/x86_64 relocation and trampoline
 * generation, without a process: relocated bytes are decoded again with
 * capstone and must reach the same targets.
 */
#include "tap.h"
#include "x86_reloc.h"
#include "x86_tramp.h"

#include <capstone/capstone.h>
#include <errno.h>
#include <string.h>

static csh cs;

/* Decode the first instruction of buf at addr: its size and the
 * absolute target (branch immediate or rip-relative operand). */
static int target_of(const uint8_t *buf, size_t len, uint64_t addr,
		     uint64_t *target, unsigned *id)
{
	cs_insn *in;
	size_t n = cs_disasm(cs, buf, len, addr, 1, &in);
	int size;

	if (n != 1)
		return -1;
	*id = in->id;
	*target = 0;
	for (int i = 0; i < in->detail->x86.op_count; i++) {
		cs_x86_op *op = &in->detail->x86.operands[i];

		if (op->type == X86_OP_IMM && *target == 0)
			*target = (uint64_t)op->imm;
		if (op->type == X86_OP_MEM && op->mem.base == X86_REG_RIP) {
			*target = addr + in->size + (uint64_t)op->mem.disp;
			break;     /* an immediate after it is data */
		}
	}
	size = (int)in->size;
	cs_free(in, 1);
	return size;
}

static void check(struct x86_reloc *r, const char *name, const uint8_t *code,
		  size_t len, uint64_t from, uint64_t to, unsigned want_id,
		  uint64_t want_target)
{
	uint8_t out[64];
	struct x86_buf o;
	struct x86_reloc_info ri;
	uint64_t t;
	unsigned id;
	int rc;

	x86_emit_buf_init(&o, out, sizeof out, to);
	rc = x86_reloc_insn(r, code, len, from, &o, &ri);
	if (!tap_ok(rc == 0, "%s: relocated (%s)", name,
		    ri.why ? x86_refusal_str(ri.why) : ""))
		return;
	if (target_of(out, o.len, to, &t, &id) < 0) {
		tap_ok(0, "%s: output decodes", name);
		return;
	}
	if (o.len == 14 && out[0] == 0xff && out[1] == 0x25)
		memcpy(&t, out + 6, 8);    /* jmp *0(%rip): the slot */
	tap_ok(id == want_id && t == want_target, "%s: same target 0x%llx "
	       "(got 0x%llx, %zu bytes)", name,
	       (unsigned long long)want_target, (unsigned long long)t, o.len);
}

int main(void)
{
	struct x86_reloc *r;
	uint64_t A = 0x400000, B = 0x7f0000001000ull, near = A + 0x10000000;

	cs_open(CS_ARCH_X86, CS_MODE_64, &cs);
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	tap_ok(x86_reloc_open(&r) == 0, "capstone opened");
	{
		const uint8_t jne8[] = { 0x75, 0x10 };
		const uint8_t jmp8[] = { 0xeb, 0xf0 };
		const uint8_t jmp32[] = { 0xe9, 0, 1, 0, 0 };
		const uint8_t mov_rip[] = { 0x48, 0x8b, 0x05, 0, 0x10, 0, 0 };
		const uint8_t cmp_rip_imm[] = { 0x83, 0x3d, 0x10, 0, 0, 0, 5 };
		const uint8_t lea_rip[] = { 0x48, 0x8d, 0x3d, 0xf0, 0xff, 0xff,
					    0xff };

		check(r, "jne rel8 widened", jne8, 2, A, near, X86_INS_JNE,
		      A + 2 + 0x10);
		check(r, "jmp rel8 backwards", jmp8, 2, A, near, X86_INS_JMP,
		      A + 2 - 0x10);
		check(r, "jmp rel32", jmp32, 5, A, near, X86_INS_JMP,
		      A + 5 + 0x100);
		check(r, "mov rip-relative", mov_rip, 7, A, near, X86_INS_MOV,
		      A + 7 + 0x1000);
		check(r, "cmp rip-relative with immediate after disp",
		      cmp_rip_imm, 7, A, near, X86_INS_CMP, A + 7 + 0x10);
		check(r, "lea rip-relative negative", lea_rip, 7, A, near,
		      X86_INS_LEA, A + 7 - 0x10);
		check(r, "jmp beyond 2 GiB: absolute jump", jmp32, 5, A, B,
		      X86_INS_JMP, A + 5 + 0x100);
	}
	{
		/* call *%rax, call *0x10(%rbx), call *%r11: push + jmp */
		const uint8_t c_rax[] = { 0xff, 0xd0 };
		const uint8_t c_mem[] = { 0xff, 0x53, 0x10 };
		const uint8_t c_r11[] = { 0x41, 0xff, 0xd3 };
		const uint8_t c_rsp[] = { 0xff, 0x54, 0x24, 0x08 };
		const uint8_t *cs_[] = { c_rax, c_mem, c_r11 };
		const size_t lens[] = { 2, 3, 3 };
		const uint8_t j_rax[] = { 0xff, 0xe0 };
		const uint8_t j_mem[] = { 0xff, 0x63, 0x10 };
		const uint8_t j_r11[] = { 0x41, 0xff, 0xe3 };
		const uint8_t *js[] = { j_rax, j_mem, j_r11 };
		uint8_t out[64];
		struct x86_buf o;
		struct x86_reloc_info ri;

		for (int k = 0; k < 3; k++) {
			uint64_t t;
			unsigned id;
			int n;

			x86_emit_buf_init(&o, out, sizeof out, near);
			tap_ok(x86_reloc_insn(r, cs_[k], lens[k], A, &o, &ri) == 0,
			       "indirect call %d relocated", k);
			n = target_of(out, o.len, near, &t, &id);
			tap_ok(n > 0 && id == X86_INS_PUSH && t == A + lens[k] &&
			       o.len == (size_t)n + lens[k] &&
			       memcmp(out + n, js[k], lens[k]) == 0,
			       "indirect call %d: push the return address, "
			       "then jmp with the same operand", k);
		}
		x86_emit_buf_init(&o, out, sizeof out, near);
		tap_ok(x86_reloc_insn(r, c_rsp, 4, A, &o, &ri) == -ENOTSUP &&
		       ri.why == X86_REFUSAL_RELOC_RSP_CALL,
		       "call *8(%%rsp) refused: %s", x86_refusal_str(ri.why));
	}
	{
		const uint8_t mov_rip[] = { 0x48, 0x8b, 0x05, 0, 0x10, 0, 0 };
		const uint8_t loop8[] = { 0xe2, 0xfe };
		uint8_t out[64];
		struct x86_buf o;
		struct x86_reloc_info ri;

		x86_emit_buf_init(&o, out, sizeof out, B);
		tap_ok(x86_reloc_insn(r, mov_rip, 7, A, &o, &ri) == -ERANGE &&
		       ri.why == X86_REFUSAL_RELOC_FAR,
		       "rip-relative out of reach refused: %s",
		       x86_refusal_str(ri.why));
		x86_emit_buf_init(&o, out, sizeof out, near);
		tap_ok(x86_reloc_insn(r, loop8, 2, A, &o, &ri) == -ENOTSUP &&
		       ri.why == X86_REFUSAL_RELOC_LOOP,
		       "loop refused: %s", x86_refusal_str(ri.why));
	}
	{
		/* call rel32: push the original return address, jmp */
		const uint8_t call[] = { 0xe8, 0, 0x10, 0, 0 };
		uint8_t out[64];
		struct x86_buf o;
		struct x86_reloc_info ri;
		uint64_t t;
		unsigned id;
		int n;

		x86_emit_buf_init(&o, out, sizeof out, near);
		tap_ok(x86_reloc_insn(r, call, 5, A, &o, &ri) == 0 && ri.is_call,
		       "call relocated as push + jmp");
		n = target_of(out, o.len, near, &t, &id);
		tap_ok(n > 0 && id == X86_INS_PUSH && t == A + 5,
		       "pushes the original return address 0x%llx",
		       (unsigned long long)t);
		tap_ok(n > 0 && target_of(out + n, o.len - (size_t)n,
					  near + (uint64_t)n, &t, &id) > 0 &&
		       id == X86_INS_JMP && t == A + 5 + 0x1000,
		       "then jumps to the callee");
	}
	{
		/* base trampoline for `push %rbp; mov %rsp,%rbp; sub $16,%rsp` */
		const uint8_t code[] = { 0x55, 0x48, 0x89, 0xe5, 0x48, 0x83,
					 0xec, 0x10 };
		struct x86_tramp_env env = { .fs_block_off = -64,
					     .thunk_call = 0x1000,
					     .thunk_reg = 0x2000,
					     .wall_rdtsc = true };
		uint64_t site = A, at = near;
		uint8_t buf[1024];
		struct x86_base b;

		tap_eq(x86_tramp_base(r, &env, code, sizeof code, A, &site, 1,
				      at, buf, sizeof buf, &b), 0,
		       "base trampoline for an entry (%zu bytes)", b.len);
		tap_eq(b.ninsn, 3, "three instructions relocated");
		tap_eq(x86_tramp_map_pc(&b, A, &site, at, A + 1),
		       at + b.new_off[1], "a PC inside maps to its copy");
		tap_eq(x86_tramp_map_pc(&b, A, &site, at, A + 2), 0,
		       "a PC between instructions does not map");
		tap_eq(x86_tramp_map_pc(&b, A, &site, at, A),
		       at + b.site[0].pre_off, "a PC at the point maps to PRE");
	}
	{
		const uint8_t code[] = { 0xe8, 0, 0, 0, 0, 0x90 };
		struct x86_tramp_env env = { .fs_block_off = -64 };
		uint64_t site = A;
		uint8_t buf[1024];
		struct x86_base b;

		int rc = x86_tramp_base(r, &env, code, sizeof code, A, &site,
					1, near, buf, sizeof buf, &b);

		tap_ok(rc < 0 && b.why == X86_REFUSAL_TRAMP_CALL_MIDDLE,
		       "a call in the middle of a patch is refused (%d): %s",
		       rc, b.why ? x86_refusal_str(b.why) : "?");
	}
	x86_reloc_close(r);
	cs_close(&cs);
	return tap_done();
}

/*
 * x86_emit.h - a byte buffer that knows its run-time address, and the few
 * x86-64 encodings trampolines need (jumps, moves, pushes).
 *
 * The buffer never grows: trampolines are generated into a fixed local
 * buffer and copied into the target.  Writing past the end sets
 * `overflow` instead, which callers check once at the end.
 */
#ifndef X86_EMIT_H
#define X86_EMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct x86_buf {
	uint8_t *b;
	size_t len, cap;
	uint64_t addr;      /* run-time address of b[0] in the target */
	bool overflow;
};

void x86_emit_buf_init(struct x86_buf *o, uint8_t *mem, size_t cap,
		  uint64_t addr);
static inline uint64_t x86_pc(const struct x86_buf *o)
{
	return o->addr + o->len;
}

void x86_emit(struct x86_buf *o, const void *bytes, size_t n);
void x86_emit_u8(struct x86_buf *o, uint8_t v);
void x86_emit_u32(struct x86_buf *o, uint32_t v);
void x86_emit_u64(struct x86_buf *o, uint64_t v);

/* Can a rel32 at `end` (address after the instruction) reach `to`? */
bool x86_emit_rel32_fits(uint64_t end, uint64_t to);

/* jmp to `to`: rel32 when it fits, else `jmp *0(%rip); .quad to` (14
 * bytes, no register, works under shadow stacks). */
void x86_emit_jmp(struct x86_buf *o, uint64_t to);
/* Exactly 5 bytes `jmp rel32`; false (nothing written) if out of range. */
bool x86_emit_jmp5(struct x86_buf *o, uint64_t to);
/* jcc (cc = low nibble of 0x7X) to `to`: rel32 when it fits, else the
 * inverted short jcc over a far jmp. */
void x86_emit_jcc(struct x86_buf *o, unsigned cc, uint64_t to);
/* Encode `jmp rel32` at address `at` into 5 bytes. */
void x86_emit_jmp5_bytes(uint8_t out[5], uint64_t at, uint64_t to);

/* Forward near labels: emit a jcc rel32 with a zero
 * displacement, remember its position, and fix it later. */
size_t x86_emit_jcc_fwd(struct x86_buf *o, unsigned cc);
void x86_emit_fix_fwd(struct x86_buf *o, size_t pos);  /* to the current pc */

/* Registers by hardware number (rax=0 .. r15=15). */
enum { X86_RAX, X86_RCX, X86_RDX, X86_RBX, X86_RSP, X86_RBP, X86_RSI,
       X86_RDI, X86_R8, X86_R9, X86_R10, X86_R11, X86_R12, X86_R13,
       X86_R14, X86_R15 };

void x86_emit_push(struct x86_buf *o, int reg);
void x86_emit_pop(struct x86_buf *o, int reg);
/* mov $imm64, %reg (shorter forms when the value allows). */
void x86_emit_mov_imm(struct x86_buf *o, int reg, uint64_t v);
/* mov %fs:off, %reg */
void x86_emit_mov_fs(struct x86_buf *o, int reg, int32_t off);
/* lea disp(%rsp), %rsp (flags untouched) */
void x86_emit_lea_rsp(struct x86_buf *o, int32_t disp);
/* mov disp(%base), %reg, 64-bit */
void x86_emit_load(struct x86_buf *o, int reg, int base, int32_t disp);

#endif

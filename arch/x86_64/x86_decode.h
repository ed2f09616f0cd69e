/*
 * x86_decode.h - x86-64 instruction decoding, a thin layer over capstone.
 *
 * Everything that knows x86 encodings lives under arch/x86_64; the engine
 * asks questions in terms of addresses and byte buffers.
 */
#ifndef X86_DECODE_H
#define X86_DECODE_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

struct x86_decoder;

/* One decoded instruction, in the terms the engine needs. */
struct x86_inst {
	uint64_t addr;        /* address the bytes were decoded at */
	uint8_t len;          /* length in bytes */
	bool is_call;         /* call (direct or indirect) */
	bool is_ret;
	bool is_jump;         /* jmp or jcc */
	bool is_cond;         /* jcc */
	bool has_target;      /* direct branch/call with a known target */
	uint64_t target;      /* the direct target, if has_target */
	bool has_rip_imm;     /* lea/mov using rip-relative memory */
	uint64_t rip_target;  /* the effective address of that operand */
	int dest_reg;         /* for lea/mov: capstone register id, else 0 */
	char text[64];        /* mnemonic and operands, for messages */
};

int x86_decode_open(struct x86_decoder **out);
void x86_decode_close(struct x86_decoder *d);

/* The parser's sweep decodes common encodings from its own opcode
 * tables (checked against capstone, x86_fastlen.c) and everything else
 * with capstone.  Off: capstone alone (for comparisons). */
void x86_decode_set_fast(struct x86_decoder *d, bool on);

/* Decode one instruction at buf (len bytes available) as if at addr.
 * Returns 0, or -EINVAL when the bytes are not a valid instruction. */
int x86_decode_one(struct x86_decoder *d, const uint8_t *buf, size_t len,
		   uint64_t addr, struct x86_inst *out);

/* In the code of an ELF entry point (_start), find the address loaded
 * into %rdi before the call to __libc_start_main: that is main.  Returns
 * 0 and sets *main_addr, or -ENOENT. */
int x86_decode_find_main_from_start(struct x86_decoder *d, const uint8_t *code,
			     size_t len, uint64_t start_addr,
			     uint64_t *main_addr);

/* Like x86_decode_find_main_from_start, but also understands the PIE form
 * `mov main@GOTPCREL(%rip),%rdi` that linkers leave unrelaxed: then
 * *is_load is true and *ref is the address of the GOT slot that holds
 * main (valid once the dynamic linker has relocated it).  Otherwise
 * *ref is main itself.  Returns 0 or -ENOENT. */
/* The length of an instruction capstone 4 cannot decode but that is
 * certainly no control transfer: VEX and EVEX encodings (AVX-512BW's
 * kmovd/kmovq, vptestm*, vpcmpeqb with mask operands, which glibc's
 * string functions use) and the 0f 01 register forms (rdpkru, wrpkru).
 * 0 when the bytes are none of those. */
size_t x86_decode_len_fallback(const uint8_t *buf, size_t len);

int x86_decode_find_main_ref(struct x86_decoder *d, const uint8_t *code,
		      size_t len, uint64_t start_addr, uint64_t *ref,
		      bool *is_load);

#endif

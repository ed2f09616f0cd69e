/*
 * test_fastlen.c - the table decoder (arch/x86_64/x86_fastlen.c) against
 * capstone: on every instruction of real binaries (wherever the tables
 * answer, capstone must agree on the length), on random bytes, and end
 * to end: every function parsed with the tables and with capstone alone
 * gives identical results (instructions, targets, points, verdicts).
 *
 *   test-parse-fastlen FILE...
 */
#include <capstone/capstone.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eng_image.h"
#include "tap.h"
#include "x86_decode_int.h"
#include "x86_parse.h"

struct cmp {
	size_t insns, fast, len_bad, funcs, func_bad;
};

static int read_img(void *arg, uint64_t addr, void *buf, size_t len)
{
	return eng_image_read(arg, addr, buf, len);
}

/* Capstone's linear sweep; at each instruction, the tables' answer. */
static void per_insn(struct x86_decoder *d, csh h, cs_insn *in,
		     const uint8_t *code, size_t size, uint64_t addr,
		     struct cmp *c)
{
	const uint8_t *p = code;
	size_t left = size;
	uint64_t a = addr;

	while (left > 0) {
		const uint8_t *at = p;
		size_t l0 = left;
		uint64_t a0 = a;
		struct x86_fast fx;
		size_t n = x86_fastlen_decode(d, at, l0, a0, &fx);

		if (!cs_disasm_iter(h, &p, &left, &a, in))
			break;
		c->insns++;
		if (n == 0)
			continue;
		c->fast++;
		if (n != in->size && c->len_bad++ < 5)
			tap_diag("  +0x%llx: tables say %zu bytes, capstone %u "
				 "(%s %s)", (unsigned long long)a0, n, in->size,
				 in->mnemonic, in->op_str);
	}
}

static bool same_point(const struct x86_point *a, const struct x86_point *b)
{
	return a->kind == b->kind && a->addr == b->addr &&
	       a->insn_len == b->insn_len && a->tail_call == b->tail_call &&
	       a->indirect == b->indirect && a->target == b->target &&
	       a->patch_start == b->patch_start &&
	       a->patch_len == b->patch_len && a->ok == b->ok &&
	       a->why == b->why && a->why_at == b->why_at;
}

static bool same_func(const struct x86_func *a, const struct x86_func *b)
{
	if (a->ok != b->ok || a->why != b->why || a->why_at != b->why_at ||
	    a->ninsns != b->ninsns || a->ntargets != b->ntargets ||
	    a->npoints != b->npoints || a->has_jump_table != b->has_jump_table ||
	    a->unresolved_indirect_jump != b->unresolved_indirect_jump ||
	    memcmp(a->insns, b->insns, a->ninsns * sizeof(*a->insns)) != 0 ||
	    memcmp(a->targets, b->targets, a->ntargets * sizeof(uint64_t)) != 0)
		return false;
	for (size_t i = 0; i < a->npoints; i++)
		if (!same_point(&a->points[i], &b->points[i]))
			return false;
	return true;
}

static void one_file(const char *path)
{
	struct eng_image *img;
	struct hunch_err err = { 0 };
	struct x86_decoder *fast, *slow, *probe;
	struct cmp c = { 0 };
	struct x86_parse_ctx ctx = { .read = read_img };
	csh h;
	cs_insn *in;

	if (eng_image_open(path, &img, &err) < 0) {
		printf("ok %d - # SKIP %s\n", ++tap_n, err.msg);
		return;
	}
	ctx.arg = img;
	ctx.abs_base = eng_image_link_base(img);
	x86_decode_open(&fast);
	x86_decode_open(&slow);
	x86_decode_open(&probe);
	x86_decode_set_fast(slow, false);
	cs_open(CS_ARCH_X86, CS_MODE_64, &h);
	in = cs_malloc(h);
	for (size_t i = 0; i < eng_image_nfuncs(img); i++) {
		const struct eng_func *f = eng_image_func(img, i);
		uint8_t *code = malloc(f->size ? f->size : 1);
		struct x86_func a, b;

		if (eng_image_read(img, f->addr, code, f->size) != 0) {
			free(code);
			continue;
		}
		per_insn(probe, h, in, code, f->size, f->addr, &c);
		if (x86_parse_function(fast, code, f->size, f->addr, &ctx, &a) == 0 &&
		    x86_parse_function(slow, code, f->size, f->addr, &ctx, &b) == 0) {
			c.funcs++;
			if (!same_func(&a, &b) && c.func_bad++ < 5)
				tap_diag("  %s: differs with the tables", f->name);
			x86_parse_func_free(&a);
			x86_parse_func_free(&b);
		}
		free(code);
	}
	tap_eq(c.len_bad, 0, "%s: the tables agree with capstone on all %zu "
	       "instructions they decode", path, c.fast);
	tap_diag("%s: the tables decode %.1f%% of %zu instructions", path,
		 100.0 * (double)c.fast / (double)(c.insns ? c.insns : 1),
		 c.insns);
	tap_eq(c.func_bad, 0, "%s: %zu functions parse identically with and "
	       "without the tables", path, c.funcs);
	cs_free(in, 1);
	cs_close(&h);
	x86_decode_close(fast);
	x86_decode_close(slow);
	x86_decode_close(probe);
	eng_image_close(img);
}

#define ROUNDS 1000000

/* Random bytes, biased towards prefixes and the 0F map. */
static void random_bytes(void)
{
	struct x86_decoder *d;
	csh h;
	cs_insn *in;
	size_t answered = 0, bad = 0;
	unsigned seed = 12345;
	static const uint8_t lead[] = { 0x66, 0x67, 0xf2, 0xf3, 0x48, 0x41,
					0x0f, 0xf0, 0x2e, 0x4c };

	x86_decode_open(&d);
	cs_open(CS_ARCH_X86, CS_MODE_64, &h);
	in = cs_malloc(h);
	for (int k = 0; k < ROUNDS; k++) {
		uint8_t b[16];
		const uint8_t *p = b;
		size_t left = 15, n;
		uint64_t a = 0x1000;
		struct x86_fast fx;

		for (int j = 0; j < 16; j++)
			b[j] = (uint8_t)(rand_r(&seed) >> 7);
		for (int j = 0; j < (int)(rand_r(&seed) % 3); j++)
			b[j] = lead[rand_r(&seed) % sizeof(lead)];
		n = x86_fastlen_decode(d, b, 15, a, &fx);
		if (n == 0)
			continue;
		answered++;
		if ((!cs_disasm_iter(h, &p, &left, &a, in) || in->size != n) &&
		    bad++ < 5)
			tap_diag("  random %02x %02x %02x %02x %02x: tables %zu, "
				 "capstone %d", b[0], b[1], b[2], b[3], b[4], n,
				 p == b ? 0 : (int)in->size);
	}
	tap_eq(bad, 0, "random bytes: capstone agrees whenever the tables "
	       "answer (%zu of %d)", answered, ROUNDS);
	cs_free(in, 1);
	cs_close(&h);
	x86_decode_close(d);
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		one_file(argv[i]);
	random_bytes();
	return tap_done();
}

/*
 * su_parse.c - a STAND-IN for x86_parse_function, for these tests only
 * (the real parser is written elsewhere against x86_parse.h).  Linear
 * decode; a function with an indirect jump or undecodable bytes is
 * refused; entry borrows instructions after it, an exit (ret, or a jmp
 * or jcc out of the function) and a call site borrow instructions
 * before it, never a branch target (except the first byte) nor a call.
 */
#include "inst_util.h"

#include <capstone/capstone.h>
#include <stdlib.h>
#include <string.h>

#define MAXI 65536

static int cmp64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static bool is_target(const struct x86_func *f, uint64_t a)
{
	return bsearch(&a, f->targets, f->ntargets, sizeof a, cmp64) != NULL;
}

static void add_point(struct x86_func *f, enum x86_point_kind k, uint64_t a,
		      uint8_t len, uint64_t ps, unsigned pl, const char *why)
{
	struct x86_point *p = &f->points[f->npoints++];

	memset(p, 0, sizeof *p);
	p->kind = k;
	p->addr = a;
	p->insn_len = len;
	p->patch_start = ps;
	p->patch_len = (uint8_t)pl;
	p->ok = why == NULL;
	p->why = why;
}

/* Exit at insn i: borrow backwards until 5 bytes. */
static void exit_point(struct x86_func *f, size_t i, const uint8_t *lens,
		       const bool *bad, enum x86_point_kind kind)
{
	uint64_t end = f->insns[i] + lens[i];
	size_t k = i;

	while (end - f->insns[k] < 5) {
		if (k == 0 || bad[k - 1] ||
		    is_target(f, f->insns[k]))
			break;
		k--;
	}
	if (end - f->insns[k] < 5) {
		add_point(f, kind, f->insns[i], lens[i], f->insns[i],
			  lens[i], "point too small: neighbours are branch "
			  "targets or calls");
		return;
	}
	add_point(f, kind, f->insns[i], lens[i], f->insns[k],
		  (unsigned)(end - f->insns[k]), NULL);
}

int su_parse(const struct eng_image *img, const struct eng_func *fn,
	     struct x86_func *f)
{
	uint8_t *code = malloc(fn->size + 16);
	uint8_t *lens = malloc(MAXI);
	bool *bad = calloc(MAXI, 1);     /* call/ret/jmp: not borrowable */
	bool *exitk = calloc(MAXI, 1);   /* ret or jmp out of the function */
	bool *callk = calloc(MAXI, 1);   /* call */
	csh cs;
	cs_insn *in;
	size_t n = 0;
	const uint8_t *p;
	size_t left;
	uint64_t a;

	memset(f, 0, sizeof *f);
	f->addr = fn->addr;
	f->size = fn->size;
	f->insns = malloc(MAXI * sizeof *f->insns);
	f->targets = malloc(MAXI * sizeof *f->targets);
	f->points = malloc(4096 * sizeof *f->points);
	if (fn->size == 0 || fn->size > 60000 ||
	    eng_image_read(img, fn->addr, code, fn->size) < 0) {
		f->why = "no code";
		goto out;
	}
	cs_open(CS_ARCH_X86, CS_MODE_64, &cs);
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	in = cs_malloc(cs);
	p = code;
	left = fn->size;
	a = fn->addr;
	while (left > 0 && n < MAXI) {
		uint64_t at = a;
		cs_x86 *x;

		if (!cs_disasm_iter(cs, &p, &left, &a, in)) {
			f->why = "undecodable bytes";
			break;
		}
		f->insns[n] = at;
		lens[n] = (uint8_t)in->size;
		x = &in->detail->x86;
		if (cs_insn_group(cs, in, CS_GRP_CALL) ||
		    cs_insn_group(cs, in, CS_GRP_RET) ||
		    cs_insn_group(cs, in, CS_GRP_JUMP))
			bad[n] = true;
		if (cs_insn_group(cs, in, CS_GRP_RET))
			exitk[n] = true;
		if (cs_insn_group(cs, in, CS_GRP_CALL))
			callk[n] = true;
		if (cs_insn_group(cs, in, CS_GRP_JUMP)) {
			if (x->op_count == 1 && x->operands[0].type == X86_OP_IMM) {
				uint64_t t = (uint64_t)x->operands[0].imm;

				f->targets[f->ntargets++] = t;
				/* a jmp or jcc out: a (conditional) tail call */
				if (t < fn->addr || t >= fn->addr + fn->size)
					exitk[n] = true;
			} else {
				f->unresolved_indirect_jump = true;
			}
		}
		n++;
	}
	f->ninsns = n;
	qsort(f->targets, f->ntargets, sizeof *f->targets, cmp64);
	if (f->why == NULL && f->unresolved_indirect_jump)
		f->why = "indirect jump (stand-in parser does not read tables)";
	if (f->why == NULL) {
		size_t k = 0;
		uint64_t e = fn->addr + lens[0];
		const char *why = NULL;

		while (e - fn->addr < 5 && why == NULL) {
			if (bad[k] || k + 1 >= n || is_target(f, f->insns[k + 1]))
				why = "entry too small: a branch, call or "
				      "branch target follows";
			else {
				k++;
				e = f->insns[k] + lens[k];
			}
		}
		add_point(f, X86_PT_ENTRY, fn->addr, lens[0], fn->addr,
			  why ? lens[0] : (unsigned)(e - fn->addr), why);
		for (size_t i = 0; i < n && f->npoints < 4000; i++) {
			if (exitk[i])
				exit_point(f, i, lens, bad, X86_PT_EXIT);
			else if (callk[i])  /* call site: borrows before it */
				exit_point(f, i, lens, bad, X86_PT_CALL);
		}
	}
	cs_free(in, 1);
	cs_close(&cs);
out:
	free(code);
	free(lens);
	free(bad);
	free(exitk);
	free(callk);
	f->ok = f->why == NULL;
	return 0;
}

void su_free(struct x86_func *f)
{
	free(f->insns);
	free(f->targets);
	free(f->points);
	memset(f, 0, sizeof *f);
}

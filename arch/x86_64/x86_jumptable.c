/*
 * x86_jumptable.c - what an indirect jmp does: leave the function (a tail
 * call through a GOT slot or a function pointer), dispatch through a jump
 * table whose every entry we can read, or go somewhere we cannot know.
 *
 * The sweep (x86_parse.c) decodes without detail; only the few
 * instructions before an indirect jmp are decoded again with detail
 * here, so the price of operand analysis is paid where it is needed.
 *
 * The jump target is evaluated backwards over that straight-line window
 * into a small symbolic value: a constant (lea sym(%rip), mov $abs), a
 * register times a scale (lea 0(,%r,4) at -O0), a load from memory
 * (indexed or not), or table base + sign-extended 32-bit entry (the PIC
 * `lea tbl(%rip),%r; movslq (%r,%i,4),%s; add %r,%s; jmp *%s` form, and
 * gcc -O0's longer spelling of it).  The table's length comes from the
 * bound check `cmp $N, idx; ja default` before it, following the index
 * back through plain moves (and spills at -O0).
 *
 * Anything that feeds an indexed load into the target without such a
 * bound is unresolved: a table we cannot size is treated as unknown
 * targets, never as a tail call.
 */
#include "x86_parse_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct win {
	cs_insn **in;
	int n;
	csh h;
	const struct x86_code *c;
};

enum vkind {
	V_UNK,       /* defined outside the window, or by a call */
	V_SUSPECT,   /* computed in a way we do not model */
	V_CONST,     /* a known image-relative value */
	V_SCALED,    /* idx * scale */
	V_LOAD,      /* a load from memory */
	V_REL,       /* table + (int32)table[idx] */
};

struct val {
	enum vkind k;
	uint64_t c;          /* CONST: value; LOAD, REL: table start */
	bool tbl_known;      /* LOAD: c is meaningful */
	bool indexed;        /* LOAD: the address had an index register */
	uint8_t size;        /* LOAD: bytes loaded */
	bool sext;           /* LOAD: sign-extended to 64 bits */
	uint8_t scale;       /* LOAD, REL, SCALED: bytes per index step */
	unsigned idx;        /* canonical index register ... */
	int idx_at;          /* ... as read by this window instruction */
	/* CONST from `lea sym(%rip)`: that lea's address; LOAD, REL: the
	 * lea of the base loaded from; REL: [1] the lea of the base added. */
	uint64_t lea_at[2];
};

#define DEPTH_MAX 8

static const struct val unknown = { .k = V_UNK };
static const struct val suspect = { .k = V_SUSPECT };

bool x86_jumptable_code_inside(const struct x86_code *c, uint64_t addr)
{
	if (addr >= c->addr && addr - c->addr < c->len)
		return true;
	for (size_t i = 0; i < c->ctx->nalso_inside; i++)
		if (addr >= c->ctx->also_inside[i].start &&
		    addr < c->ctx->also_inside[i].end)
			return true;
	return false;
}

/* Does instruction i write canonical register reg? */
static bool writes(const struct win *w, int i, unsigned reg)
{
	cs_regs rr, ww;
	uint8_t nr = 0, nw = 0;

	if (cs_regs_access(w->h, w->in[i], rr, &nr, ww, &nw) != CS_ERR_OK)
		return true;  /* cannot tell: assume the worst */
	for (uint8_t k = 0; k < nw; k++)
		if (x86_decode_reg_canon(ww[k]) == reg)
			return true;
	return false;
}

/* The last instruction before `at` that writes reg: its index, -1 when
 * none in the window, -2 when a call came first (the value is then the
 * callee's: a return value or a clobbered register). */
static int find_def(const struct win *w, int at, unsigned reg)
{
	for (int i = at - 1; i >= 0; i--) {
		if (w->in[i]->id == X86_INS_CALL)
			return -2;
		if (writes(w, i, reg))
			return i;
	}
	return -1;
}

static struct val value(const struct win *w, int at, unsigned reg,
			int depth);

static int gpr_index(unsigned canon)
{
	static const unsigned gprs[16] = {
		X86_REG_RAX, X86_REG_RBX, X86_REG_RCX, X86_REG_RDX,
		X86_REG_RSI, X86_REG_RDI, X86_REG_RBP, X86_REG_RSP,
		X86_REG_R8, X86_REG_R9, X86_REG_R10, X86_REG_R11,
		X86_REG_R12, X86_REG_R13, X86_REG_R14, X86_REG_R15,
	};

	for (int k = 0; k < 16; k++)
		if (gprs[k] == canon)
			return k;
	return -1;
}

/* A register defined before the window: a table base that the compiler
 * hoisted out of a loop.  Trusted only when the whole function writes
 * the register exactly once, with `lea sym(%rip)`. */
static struct val hoisted(const struct x86_reg_defs *defs, unsigned reg)
{
	int k = gpr_index(reg);
	struct val v = { .k = V_CONST };

	if (k < 0 || defs->writers[k] != 1 || !defs->is_lea[k])
		return unknown;
	v.c = defs->lea[k];
	v.lea_at[0] = defs->lea_at[k];
	return v;
}

int x86_jumptable_reg_defs(struct x86_decoder *d, const struct x86_code *c,
			 const uint32_t *offs, size_t n,
			 struct x86_reg_defs *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < n; i++) {
		const uint8_t *p = c->bytes + offs[i];
		size_t left = c->len - offs[i];
		uint64_t a = c->addr + offs[i];
		cs_regs rr, ww;
		uint8_t nr = 0, nw = 0;
		const cs_x86 *x;

		if (!cs_disasm_iter(d->handle, &p, &left, &a, d->insn) ||
		    cs_regs_access(d->handle, d->insn, rr, &nr, ww, &nw) !=
		    CS_ERR_OK)
			return -EINVAL;
		x = &d->insn->detail->x86;
		for (uint8_t k = 0; k < nw; k++) {
			int g = gpr_index(x86_decode_reg_canon(ww[k]));

			if (g < 0 || out->writers[g] == 255)
				continue;
			out->writers[g]++;
			out->is_lea[g] = d->insn->id == X86_INS_LEA &&
				x->operands[1].mem.base == X86_REG_RIP &&
				x->operands[1].mem.index == X86_REG_INVALID;
			out->lea_at[g] = d->insn->address;
			out->lea[g] = d->insn->address + d->insn->size +
				      (uint64_t)x->operands[1].mem.disp;
		}
	}
	return 0;
}

static struct val derived(const struct win *w, int i, int depth);

static struct val lea_value(const struct win *w, int i, int depth)
{
	const cs_insn *in = w->in[i];
	const x86_op_mem *m = &in->detail->x86.operands[1].mem;
	struct val v = { .k = V_UNK };

	if (m->segment != X86_REG_INVALID)
		return suspect;
	if (m->base == X86_REG_RIP && m->index == X86_REG_INVALID) {
		v.k = V_CONST;
		v.c = in->address + in->size + (uint64_t)m->disp;
		v.lea_at[0] = in->address;
		return v;
	}
	if (m->base == X86_REG_INVALID && m->index != X86_REG_INVALID &&
	    m->disp == 0) {
		v.k = V_SCALED;
		v.idx = x86_decode_reg_canon(m->index);
		v.idx_at = i;
		v.scale = (uint8_t)m->scale;
		return v;
	}
	return derived(w, i, depth);
}

/* Which part of base + index*scale is the table and which the index. */
static void split_index(struct val *v, unsigned reg, int at, int scale,
			const struct val *scaled)
{
	if (scaled->k == V_SCALED && scale == 1) {
		v->idx = scaled->idx;
		v->idx_at = scaled->idx_at;
		v->scale = scaled->scale;
	} else {
		v->idx = reg;
		v->idx_at = at;
		v->scale = (uint8_t)scale;
	}
}

static struct val load_value(const struct win *w, int i, const x86_op_mem *m,
			     uint8_t size, bool sext, int depth)
{
	struct val v = { .k = V_LOAD, .size = size, .sext = sext };
	struct val b, x;
	unsigned base = x86_decode_reg_canon(m->base),
		 index = x86_decode_reg_canon(m->index);

	if (m->index == X86_REG_INVALID)
		return v;  /* a pointer: from a GOT slot, a struct, a vtable */
	if (m->segment != X86_REG_INVALID)
		return suspect;
	v.indexed = true;
	if (m->base == X86_REG_INVALID) {
		/* Non-PIC: the displacement is the table's link-time address. */
		v.tbl_known = true;
		v.c = (uint64_t)m->disp - w->c->ctx->abs_base;
		split_index(&v, index, i, m->scale, &unknown);
		return v;
	}
	b = value(w, i, base, depth + 1);
	x = value(w, i, index, depth + 1);
	if (b.k == V_CONST) {
		v.tbl_known = true;
		v.c = b.c + (uint64_t)m->disp;
		v.lea_at[0] = m->disp == 0 ? b.lea_at[0] : 0;
		split_index(&v, index, i, m->scale, &x);
	} else if (x.k == V_CONST && m->scale == 1) {
		v.tbl_known = true;
		v.c = x.c + (uint64_t)m->disp;
		v.lea_at[0] = m->disp == 0 ? x.lea_at[0] : 0;
		split_index(&v, base, i, 1, &b);
	}
	return v;
}

static bool is_entry_load(const struct val *v)
{
	return v->k == V_LOAD && v->indexed && v->tbl_known && v->size == 4 &&
	       v->sext && v->scale == 4;
}

/* Could this value be part of a jump-table computation? */
static bool tableish(const struct win *w, const struct val *v)
{
	return v->k == V_SUSPECT || v->k == V_REL || v->k == V_SCALED ||
	       (v->k == V_LOAD && v->indexed) ||
	       (v->k == V_CONST && x86_jumptable_code_inside(w->c, v->c));
}

/* A value computed by an instruction we do not model (ror, xor, and,
 * ...): a pointer if nothing it reads looks like a table, else suspect.
 * glibc's PTR_DEMANGLE (`ror $0x11,%rax; xor %fs:0x30,%rax; jmp *%rax`)
 * is a tail call; an index scaled by shifts and added to a code address
 * is not. */
static struct val derived(const struct win *w, int i, int depth)
{
	const cs_x86 *x = &w->in[i]->detail->x86;
	cs_regs rr, ww;
	uint8_t nr = 0, nw = 0;

	for (uint8_t k = 0; k < x->op_count; k++)
		if (x->operands[k].type == X86_OP_MEM &&
		    x->operands[k].mem.index != X86_REG_INVALID)
			return suspect;
	if (cs_regs_access(w->h, w->in[i], rr, &nr, ww, &nw) != CS_ERR_OK)
		return suspect;
	for (uint8_t k = 0; k < nr; k++) {
		unsigned r = x86_decode_reg_canon(rr[k]);
		struct val v;

		if (r == X86_REG_INVALID || r == X86_REG_RSP ||
		    r == X86_REG_RIP)
			continue;
		v = value(w, i, r, depth + 1);
		if (tableish(w, &v))
			return suspect;
	}
	return unknown;
}

static struct val add_values(const struct win *w, int i, struct val a,
			     struct val b, int depth)
{
	struct val r;

	if (a.k == V_LOAD && b.k == V_CONST) {
		r = a;
		a = b;
		b = r;
	}
	if (a.k == V_CONST && is_entry_load(&b) && b.c == a.c) {
		r = b;
		r.k = V_REL;
		r.lea_at[1] = a.lea_at[0];
		return r;
	}
	return derived(w, i, depth);
}

static struct val mov_value(const struct win *w, int i, int depth)
{
	const cs_insn *in = w->in[i];
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *src = &x->operands[1];
	struct val v;

	if (x->op_count != 2 || x->operands[0].type != X86_OP_REG)
		return derived(w, i, depth);
	if (src->type == X86_OP_IMM && in->id != X86_INS_MOVSXD) {
		v = (struct val){ .k = V_CONST };
		v.c = (uint64_t)src->imm - w->c->ctx->abs_base;
		return v;
	}
	if (src->type == X86_OP_MEM)
		return load_value(w, i, &src->mem, src->size,
				  in->id == X86_INS_MOVSXD, depth);
	if (src->type != X86_OP_REG || x86_decode_reg_canon(src->reg) ==
	    X86_REG_INVALID)
		return derived(w, i, depth);  /* movq %xmm0,%rax ... */
	v = value(w, i, x86_decode_reg_canon(src->reg), depth + 1);
	if (in->id == X86_INS_MOVSXD && v.k == V_LOAD && v.size == 4)
		v.sext = true;
	return v;
}

static struct val value(const struct win *w, int at, unsigned reg, int depth)
{
	const cs_insn *in;
	const cs_x86 *x;
	int i;

	if (depth > DEPTH_MAX || reg == X86_REG_INVALID)
		return suspect;
	i = find_def(w, at, reg);
	if (i == -1 && w->c->defs != NULL)
		return hoisted(w->c->defs, reg);
	if (i < 0)
		return unknown;
	in = w->in[i];
	x = &in->detail->x86;
	switch (in->id) {
	case X86_INS_LEA:
		return lea_value(w, i, depth);
	case X86_INS_MOV:
	case X86_INS_MOVSXD:
	case X86_INS_MOVABS:
		return mov_value(w, i, depth);
	case X86_INS_CDQE: {
		struct val v = value(w, i, X86_REG_RAX, depth + 1);

		if (v.k == V_LOAD && v.size == 4)
			v.sext = true;
		return v;
	}
	case X86_INS_ADD:
		if (x->op_count != 2 || x->operands[0].type != X86_OP_REG ||
		    x->operands[1].type != X86_OP_REG)
			return derived(w, i, depth);
		return add_values(w, i,
			value(w, i, x86_decode_reg_canon(x->operands[0].reg), depth + 1),
			value(w, i, x86_decode_reg_canon(x->operands[1].reg), depth + 1),
			depth);
	default:
		return derived(w, i, depth);
	}
}

/* Index aliases while walking back from a table load to its bound. */
struct aliases {
	unsigned regs[4];
	int nregs;
	bool has_mem;
	x86_op_mem mem;
};

static bool alias_op(const struct aliases *a, const cs_x86_op *op)
{
	if (op->type == X86_OP_REG) {
		for (int k = 0; k < a->nregs; k++)
			if (a->regs[k] == x86_decode_reg_canon(op->reg))
				return true;
		return false;
	}
	return op->type == X86_OP_MEM && a->has_mem &&
	       memcmp(&op->mem, &a->mem, sizeof(op->mem)) == 0;
}

/* Instruction i writes alias register k: follow a plain copy back to its
 * source (a register, or a stack slot at -O0).  False when the index is
 * changed some other way after the bound check. */
static bool follow_copy(const struct win *w, int i, struct aliases *a, int k)
{
	const cs_insn *in = w->in[i];
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *src = &x->operands[1];

	if ((in->id != X86_INS_MOV && in->id != X86_INS_MOVZX &&
	     in->id != X86_INS_MOVSXD && in->id != X86_INS_MOVSX) ||
	    x->op_count != 2)
		return false;
	if (src->type == X86_OP_REG) {
		a->regs[k] = x86_decode_reg_canon(src->reg);
		return a->regs[k] != X86_REG_INVALID;
	}
	if (src->type != X86_OP_MEM || a->has_mem)
		return false;
	a->has_mem = true;
	a->mem = src->mem;
	a->regs[k] = a->regs[--a->nregs];
	return true;
}

/* The instruction before i that last set the flags, skipping moves and
 * leas (which do not): a relocated copy puts filler such as `mov
 * %al,%al` after a short entry instruction, between cmp and ja
 * (x86_funcreloc.c). */
static int flags_from(const struct win *w, int i, const struct aliases *a)
{
	int j = i - 1;

	while (j > 0 && (w->in[j]->id == X86_INS_MOV ||
			 w->in[j]->id == X86_INS_LEA)) {
		for (int k = 0; k < a->nregs; k++)
			if (writes(w, j, a->regs[k]))
				return i - 1;   /* not mere filler */
		j--;
	}
	return j;
}

/* The number of entries from `cmp $N, idx; ja default` (N+1) or
 * `... jae` (N) before the table load; 0 when there is none. */
static size_t find_bound(const struct win *w, unsigned idx, int idx_at)
{
	struct aliases a = { .regs = { idx }, .nregs = 1 };

	for (int i = idx_at - 1; i >= 1; i--) {
		const cs_insn *in = w->in[i], *cmp = w->in[flags_from(w, i, &a)];
		const cs_x86 *cx = &cmp->detail->x86;

		if ((in->id == X86_INS_JA || in->id == X86_INS_JAE) &&
		    cmp->id == X86_INS_CMP && cx->op_count == 2 &&
		    cx->operands[1].type == X86_OP_IMM &&
		    alias_op(&a, &cx->operands[0])) {
			int64_t n = cx->operands[1].imm;

			if (n < 0 || n > 65535)
				return 0;
			return (size_t)(in->id == X86_INS_JA ? n + 1 : n);
		}
		for (int k = 0; k < a.nregs; k++)
			if (writes(w, i, a.regs[k]) && !follow_copy(w, i, &a, k))
				return 0;
		if (a.nregs == 0 && !a.has_mem)
			return 0;
	}
	return 0;
}

static int read_table(const struct x86_code *c, uint64_t at, void *buf,
		      size_t len)
{
	if (at >= c->addr && at - c->addr <= c->len &&
	    len <= c->len - (at - c->addr)) {
		memcpy(buf, c->bytes + (at - c->addr), len);
		return 0;
	}
	if (c->ctx->read == NULL)
		return -EFAULT;
	return c->ctx->read(c->ctx->arg, at, buf, len);
}

/* Read and check the entries; decides TABLE, TAIL or UNRESOLVED. */
static int table_entries(const struct x86_code *c, const struct val *v,
			 size_t n, struct x86_ij *out)
{
	uint8_t esz = v->k == V_REL ? 4 : 8;
	uint8_t *raw = malloc(n * esz);
	size_t inside = 0, zero = 0;

	out->targets = malloc(n * sizeof(*out->targets));
	if (raw == NULL || out->targets == NULL) {
		free(raw);
		return -ENOMEM;
	}
	if (read_table(c, v->c, raw, n * esz) != 0) {
		free(raw);
		out->why = X86_REFUSAL_JT_UNREADABLE;
		return 0;
	}
	for (size_t k = 0; k < n; k++) {
		uint64_t t;

		if (esz == 4) {
			int32_t e;

			memcpy(&e, raw + 4 * k, 4);
			t = v->c + (uint64_t)(int64_t)e;
		} else {
			memcpy(&t, raw + 8 * k, 8);
			zero += t == 0;
			t -= c->ctx->abs_base;
		}
		out->targets[k] = t;
		inside += x86_jumptable_code_inside(c, t);
	}
	free(raw);
	out->table = v->c;
	out->nentries = n;
	out->entry_size = esz;
	if (v->k == V_REL && v->lea_at[0] != 0 && v->lea_at[1] != 0) {
		out->lea_at[0] = v->lea_at[0];
		out->lea_at[1] = v->lea_at[1];
	}
	if (inside == n)
		out->kind = X86_IJ_TABLE;
	else if (inside == 0 && zero == 0 && esz == 8)
		out->kind = X86_IJ_TAIL;  /* a table of function pointers */
	else
		out->why = X86_REFUSAL_JT_OUTSIDE;
	return 0;
}

static int classify(const struct win *w, struct x86_ij *out)
{
	const cs_insn *j = w->in[w->n - 1];
	const cs_x86_op *op = &j->detail->x86.operands[0];
	struct val v;
	size_t n;

	if (j->detail->x86.op_count != 1)
		return 0;
	if (op->type == X86_OP_REG)
		v = value(w, w->n - 1, x86_decode_reg_canon(op->reg), 0);
	else if (op->type == X86_OP_MEM)
		v = load_value(w, w->n - 1, &op->mem, 8, false, 0);
	else
		return 0;
	if (v.k == V_UNK || (v.k == V_LOAD && !v.indexed)) {
		out->kind = X86_IJ_TAIL;
		return 0;
	}
	if (!(v.k == V_REL || (v.k == V_LOAD && v.tbl_known &&
			       v.size == 8 && v.scale == 8))) {
		out->why = X86_REFUSAL_JT_UNSIZED;
		return 0;
	}
	n = find_bound(w, v.idx, v.idx_at);
	if (n == 0) {
		out->why = X86_REFUSAL_JT_NO_BOUND;
		return 0;
	}
	return table_entries(w->c, &v, n, out);
}

int x86_jumptable_indirect_jump(struct x86_decoder *d, const struct x86_code *c,
		      const uint32_t *offs, size_t n, struct x86_ij *out)
{
	struct win w = { .in = d->win, .n = (int)n, .h = d->handle, .c = c };

	memset(out, 0, sizeof(*out));
	out->kind = X86_IJ_UNRESOLVED;
	out->why = X86_REFUSAL_JT_UNKNOWN;
	if (n == 0 || n > X86_WINDOW)
		return 0;
	for (size_t k = 0; k < n; k++) {
		const uint8_t *p = c->bytes + offs[k];
		size_t left = c->len - offs[k];
		uint64_t a = c->addr + offs[k];

		if (d->win[k] == NULL && (d->win[k] = cs_malloc(d->handle)) == NULL)
			return -ENOMEM;
		if (!cs_disasm_iter(d->handle, &p, &left, &a, d->win[k]))
			return 0;
	}
	return classify(&w, out);
}

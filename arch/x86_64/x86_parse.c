/*
 * x86_parse.c - one function's machine code into instrumentation points
 * (see x86_parse.h for the contract, arch/x86_64/README.md for the rules).
 *
 * Three passes over one function:
 * 1. sweep: linear decoding from the start to the end of the symbol with
 *    capstone's detail off (lengths and instruction ids only); branch
 *    targets are read from the bytes of the few branch encodings, and
 *    only indirect jmps are decoded again with detail
 *    (x86_jumptable.c).  Jump tables found inside the function are
 *    skipped as data.
 * 2. targets: direct targets, table entries, code addresses taken, the
 *    caller's extra targets, and the first instruction after every
 *    unconditional transfer; each must start an instruction, or the
 *    decoding cannot be trusted.
 * 3. points: entry, exits, call sites, each with its patch area
 *    (x86_points.c).
 *
 * Per-byte marks (instruction start, target, data) make every "is this a
 * target" question O(1); the marks and the instruction list live in the
 * decoder's scratch memory, reused from one function to the next.
 */
#include "x86_parse.h"
#include "x86_parse_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>


static int push_u64(uint64_t **v, size_t *n, size_t *cap, uint64_t x)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 16;
		uint64_t *p = realloc(*v, nc * sizeof(*p));

		if (p == NULL)
			return -ENOMEM;
		*v = p;
		*cap = nc;
	}
	(*v)[(*n)++] = x;
	return 0;
}

/* The opcode byte after legacy prefixes and REX; *p66 tells whether the
 * operand-size prefix was there (it changes branch lengths on AMD). */
static size_t opcode_at(const uint8_t *b, size_t len, bool *p66)
{
	size_t i = 0;

	*p66 = false;
	for (; i < len; i++) {  /* REX.W, below, cancels 0x66 */
		uint8_t x = b[i];

		if (x == 0x66)
			*p66 = true;
		else if (!(x == 0xf0 || x == 0xf2 || x == 0xf3 || x == 0x2e ||
			   x == 0x36 || x == 0x3e || x == 0x26 || x == 0x64 ||
			   x == 0x65 || x == 0x67))
			break;
	}
	if (i < len && (b[i] & 0xf0) == 0x40) {
		if (b[i] & 0x08)
			*p66 = false;
		i++;
	}
	return i;
}

static uint64_t rel_target(const uint8_t *b, uint8_t len, uint64_t a,
			   int rel_size)
{
	int64_t rel;

	if (rel_size == 1) {
		rel = (int8_t)b[len - 1];
	} else {
		int32_t r;

		memcpy(&r, b + len - 4, 4);
		rel = r;
	}
	return a + len + (uint64_t)rel;
}

static bool is_jcc(unsigned id)
{
	switch (id) {
	case X86_INS_JAE: case X86_INS_JA: case X86_INS_JBE: case X86_INS_JB:
	case X86_INS_JCXZ: case X86_INS_JECXZ: case X86_INS_JRCXZ:
	case X86_INS_JE: case X86_INS_JGE: case X86_INS_JG: case X86_INS_JLE:
	case X86_INS_JL: case X86_INS_JNE: case X86_INS_JNO: case X86_INS_JNP:
	case X86_INS_JNS: case X86_INS_JO: case X86_INS_JP: case X86_INS_JS:
	case X86_INS_LOOP: case X86_INS_LOOPE: case X86_INS_LOOPNE:
		return true;
	default:
		return false;
	}
}

/* A rip-relative lea: the address it computes may be code (a label
 * whose address is taken: computed goto, exception tables). */
static void note_lea(struct pstate *s, const uint8_t *b, uint8_t len,
		     uint64_t a)
{
	bool p66;
	size_t i = opcode_at(b, len, &p66);
	int32_t disp;
	uint64_t t;

	if (i + 6 > len || b[i] != 0x8d || (b[i + 1] & 0xc7) != 0x05)
		return;
	memcpy(&disp, b + i + 2, 4);
	t = a + len + (uint64_t)(int64_t)disp;
	if (t >= s->c.addr && t - s->c.addr < s->c.len)
		push_u64(&s->taken, &s->ntaken, &s->taken_cap, t);
}

/* Non-PIC code takes a label's address as an immediate (`mov $.L5,%eax`,
 * `movq $.L5,-8(%rbp)`, `push $.L5`): for a non-PIE executable, an
 * immediate that is an address inside the function is a code address
 * taken.  (A constant that happens to equal one only makes the parse
 * more careful.) */
static void note_imm(struct pstate *s, const uint8_t *b, uint8_t len,
		     uint64_t a)
{
	bool p66;
	size_t i = opcode_at(b, len, &p66);
	uint64_t v = 0;
	int32_t imm;

	(void)a;
	if (s->c.ctx->abs_base == 0 || p66 || i >= len || len < 5)
		return;
	if (!((b[i] >= 0xb8 && b[i] <= 0xbf) || b[i] == 0x68 ||
	      (b[i] == 0xc7 && i + 1 < len && ((b[i + 1] >> 3) & 7) == 0)))
		return;
	if (b[i] >= 0xb8 && b[i] <= 0xbf && len >= 8 && i > 0 &&
	    (b[i - 1] & 0xf8) == 0x48) {
		memcpy(&v, b + len - 8, 8);  /* movabs $imm64 */
	} else {
		memcpy(&imm, b + len - 4, 4);
		v = (uint64_t)(int64_t)imm;
		if (b[i] >= 0xb8 && b[i] <= 0xbf)
			v = (uint32_t)imm;  /* mov to a 32-bit register */
	}
	v -= s->c.ctx->abs_base;
	if (v >= s->c.addr && v - s->c.addr < s->c.len)
		push_u64(&s->taken, &s->ntaken, &s->taken_cap, v);
}

/* Kind and direct target of one instruction, from its id and bytes. */
static void classify(struct pstate *s, unsigned id, struct pinsn *p,
		     const uint8_t *b, uint64_t a)
{
	bool p66;
	size_t i = opcode_at(b, p->len, &p66);
	uint8_t op = i < p->len ? b[i] : 0;

	p->kind = PK_OTHER;
	if (is_jcc(id)) {
		p->kind = p66 ? PK_BAD : PK_JCC;
		p->flags = PF_TARGET;
		p->target = rel_target(b, p->len, a, op == 0x0f ? 4 : 1);
		return;
	}
	switch (id) {
	case X86_INS_JMP:
	case X86_INS_CALL:
		if (op == 0xff) {
			p->kind = id == X86_INS_JMP ? PK_JMP_IND : PK_CALL_IND;
		} else if (!p66 && (op == 0xe8 || op == 0xe9 || op == 0xeb)) {
			p->kind = id == X86_INS_JMP ? PK_JMP : PK_CALL;
			p->flags = PF_TARGET;
			p->target = rel_target(b, p->len, a, op == 0xeb ? 1 : 4);
		} else {
			p->kind = PK_BAD;
		}
		break;
	case X86_INS_XBEGIN:  /* its abort handler is a branch target */
		p->flags = PF_TARGET;
		p->target = rel_target(b, p->len, a, p66 ? 2 : 4);
		if (p66)
			p->kind = PK_BAD;
		break;
	case X86_INS_RET: p->kind = PK_RET; break;
	case X86_INS_NOP: case X86_INS_INT3: p->kind = PK_PAD; break;
	case X86_INS_UD2: case X86_INS_HLT: p->kind = PK_STOP; break;
	case X86_INS_LJMP: case X86_INS_LCALL: case X86_INS_RETF:
	case X86_INS_RETFQ: case X86_INS_IRET: case X86_INS_IRETD:
	case X86_INS_IRETQ: case X86_INS_SYSRET: case X86_INS_SYSEXIT:
		p->kind = PK_BAD;
		break;
	case X86_INS_LEA:
		note_lea(s, b, p->len, a);
		break;
	default:
		break;
	}
}

static bool is_barrier(uint8_t kind)
{
	return kind == PK_JMP || kind == PK_JMP_IND || kind == PK_RET ||
	       kind == PK_STOP;
}

static int push_insn(struct pstate *s, const struct pinsn *p)
{
	if (s->n == s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 256;
		struct pinsn *np = realloc(s->in, nc * sizeof(*np));

		if (np == NULL)
			return -ENOMEM;
		s->in = np;
		s->cap = nc;
	}
	s->in[s->n++] = *p;
	return 0;
}

/* Keep the table's facts for relocation (x86_func.jtables). */
static int keep_table(struct x86_func *f, uint64_t jmp_at,
		      const struct x86_ij *ij)
{
	struct x86_jtable *v = realloc(f->jtables,
				       (f->njtables + 1) * sizeof(*v));
	struct x86_jtable *t;

	if (v == NULL)
		return -ENOMEM;
	f->jtables = v;
	t = &v[f->njtables];
	*t = (struct x86_jtable){ .jmp_at = jmp_at, .table = ij->table,
				  .nentries = ij->nentries,
				  .entry_size = ij->entry_size,
				  .lea_at = { ij->lea_at[0], ij->lea_at[1] } };
	t->targets = malloc((ij->nentries ? ij->nentries : 1) *
			    sizeof(*t->targets));
	if (t->targets == NULL)
		return -ENOMEM;
	memcpy(t->targets, ij->targets, ij->nentries * sizeof(*t->targets));
	f->njtables++;
	return 0;
}

/* Record a table found by the jump at index ji: its entries become
 * targets, and if it lies inside the function its bytes are data. */
static int add_table(struct pstate *s, size_t ji, const struct x86_ij *ij)
{
	uint64_t ts = ij->table, te = ts + ij->nentries * ij->entry_size;
	struct x86_func *f = s->f;

	for (size_t k = 0; k < ij->nentries; k++)
		if (push_u64(&s->tabt, &s->ntabt, &s->tabt_cap,
			     ij->targets[k]) < 0)
			return -ENOMEM;
	f->has_jump_table = true;
	f->njump_tables++;
	if (keep_table(f, s->c.addr + s->in[ji].off, ij) < 0)
		return -ENOMEM;
	if (te <= s->c.addr || ts >= s->c.addr + s->c.len)
		return 0;
	if (ts < s->c.addr + s->in[ji].off + s->in[ji].len) {
		set_fatal(s, X86_REFUSAL_TABLE_BEFORE, ts);
		return 0;
	}
	if (te > s->c.addr + s->c.len)
		te = s->c.addr + s->c.len;
	{
		struct x86_range *r = realloc(f->data,
					      (f->ndata + 1) * sizeof(*r));

		if (r == NULL)
			return -ENOMEM;
		f->data = r;
		f->data[f->ndata++] = (struct x86_range){ ts, te };
	}
	memset(s->marks + (ts - s->c.addr), M_DATA, te - ts);
	return 0;
}

/* Analyse the indirect jmp at in[ji] over the straight-line code before
 * it (back to the last unconditional transfer).  late: after the sweep,
 * when a table inside the function can no longer be skipped. */
static int indirect_jump(struct pstate *s, size_t ji, bool late)
{
	uint32_t offs[X86_WINDOW];
	size_t from = ji, n;
	struct x86_ij ij;
	int rc;

	while (from > 0 && ji + 1 - from < X86_WINDOW &&
	       !is_barrier(s->in[from - 1].kind))
		from--;
	for (n = 0; from + n <= ji; n++)
		offs[n] = s->in[from + n].off;
	rc = x86_jumptable_indirect_jump(s->d, &s->c, offs, n, &ij);
	if (rc == 0 && late && ij.kind == X86_IJ_TABLE &&
	    ij.table < s->c.addr + s->c.len &&
	    ij.table + ij.nentries * ij.entry_size > s->c.addr)
		ij.kind = X86_IJ_UNRESOLVED;
	s->in[ji].flags &= (uint8_t)~(PF_UNRESOLVED | PF_TABLE |
				      PF_TAIL_IND | PF_EXIT);
	if (rc == 0 && ij.kind == X86_IJ_TABLE) {
		s->in[ji].flags |= PF_TABLE;
		rc = add_table(s, ji, &ij);
	} else if (rc == 0 && ij.kind == X86_IJ_TAIL) {
		s->in[ji].flags |= PF_TAIL_IND | PF_EXIT;
	} else if (rc == 0) {
		s->in[ji].flags |= PF_UNRESOLVED;
	}
	free(ij.targets);
	return rc;
}

/* Jumps the window could not resolve, again, knowing who writes each
 * register in the whole function: a table base hoisted out of a loop is
 * a register written once, by `lea tbl(%rip)`. */
static int retry_unresolved(struct pstate *s)
{
	struct x86_reg_defs defs;
	uint32_t *all;
	size_t i;
	int rc = 0;

	for (i = 0; i < s->n && !(s->in[i].flags & PF_UNRESOLVED); i++)
		;
	if (i == s->n || s->fatal != X86_REFUSAL_NONE)
		return 0;
	all = malloc(s->n * sizeof(*all));
	if (all == NULL)
		return -ENOMEM;
	for (i = 0; i < s->n; i++)
		all[i] = s->in[i].off;
	if (x86_jumptable_reg_defs(s->d, &s->c, all, s->n, &defs) == 0) {
		s->c.defs = &defs;
		for (i = 0; i < s->n && rc == 0; i++)
			if (s->in[i].flags & PF_UNRESOLVED)
				rc = indirect_jump(s, i, true);
		s->c.defs = NULL;
	}
	free(all);
	return rc;
}

/* Skip a data range starting at off; returns the offset after it. */
static size_t skip_data(struct pstate *s, size_t off)
{
	while (off < s->c.len && (s->marks[off] & M_DATA))
		off++;
	return off;
}

/* Decode the instruction at off: tables first, then capstone, then the
 * lengths capstone 4 lacks.  False when the bytes are no instruction. */
static bool decode_at(struct pstate *s, size_t off, struct pinsn *pi)
{
	struct x86_decoder *d = s->d;
	const uint8_t *p = s->c.bytes + off;
	size_t left = s->c.len - off;
	uint64_t a = s->c.addr + off;
	struct x86_fast fx;

	*pi = (struct pinsn){ .off = (uint32_t)off };
	if (!d->no_fast && x86_fastlen_decode(d, p, left, a, &fx) > 0) {
		pi->len = fx.len;
		pi->kind = fx.kind;
		if (fx.has_target) {
			pi->flags = PF_TARGET;
			pi->target = fx.target;
		}
		if (fx.lea_rip)
			note_lea(s, p, pi->len, a);
	} else if (cs_disasm_iter(d->fast, &p, &left, &a, d->fast_insn)) {
		pi->len = (uint8_t)d->fast_insn->size;
		classify(s, d->fast_insn->id, pi, s->c.bytes + off,
			 s->c.addr + off);
	} else {
		pi->len = (uint8_t)x86_decode_len_fallback(s->c.bytes + off,
						    s->c.len - off);
	}
	if (pi->len >= 5 && pi->kind == PK_OTHER)
		note_imm(s, s->c.bytes + off, pi->len, s->c.addr + off);
	return pi->len > 0;
}

static int sweep(struct pstate *s)
{
	size_t off = 0;
	int rc;

	while (off < s->c.len) {
		struct pinsn pi;

		if (s->marks[off] & M_DATA) {
			off = skip_data(s, off);
			continue;
		}
		if (!decode_at(s, off, &pi)) {
			set_fatal(s, X86_REFUSAL_UNDECODABLE, s->c.addr + off);
			return 0;
		}
		for (size_t k = 1; k < pi.len; k++)
			if (s->marks[off + k] & M_DATA)
				set_fatal(s, X86_REFUSAL_TABLE_OVERLAP,
					  s->c.addr + off);
		s->marks[off] |= M_START;
		if (push_insn(s, &pi) < 0)
			return -ENOMEM;
		if (pi.kind == PK_BAD)
			set_fatal(s, X86_REFUSAL_BAD_TRANSFER, s->c.addr + off);
		if (pi.kind == PK_JMP_IND &&
		    (rc = indirect_jump(s, s->n - 1, false)) < 0)
			return rc;
		off += pi.len;
	}
	return 0;
}

int x86_parse_direct_targets(struct x86_decoder *d, const uint8_t *code,
		       size_t len, uint64_t addr,
		       int (*fn)(void *arg, uint64_t from, uint64_t target),
		       void *arg)
{
	static const struct x86_parse_ctx no_ctx;
	struct x86_func scratch = { 0 };
	struct pstate s = { .d = d, .f = &scratch };
	struct pinsn pi;
	int rc = 0;

	s.c = (struct x86_code){ .bytes = code, .len = len, .addr = addr,
				 .ctx = &no_ctx };
	for (size_t off = 0; off < len && rc == 0; off += pi.len) {
		if (!decode_at(&s, off, &pi))
			break;
		if ((pi.flags & PF_TARGET) && pi.kind != PK_OTHER)
			rc = fn(arg, addr + off, pi.target);
	}
	free(s.taken);
	return rc;
}

static bool inside(const struct pstate *s, uint64_t a)
{
	return a >= s->c.addr && a - s->c.addr < s->c.len;
}

static void mark_target(struct pstate *s, uint64_t a)
{
	if (inside(s, a))
		s->marks[a - s->c.addr] |= M_TARGET;
}

/* glibc jumps over a lock prefix when single-threaded (`je 1f; lock;
 * 1: cmpxchg`): a target one byte into an instruction that starts with
 * 0xf0 is the same instruction without its prefix.  The target stays
 * marked, so no patch area can contain it. */
static bool skips_lock(const struct pstate *s, size_t off)
{
	return off > 0 && (s->marks[off - 1] & M_START) &&
	       s->c.bytes[off - 1] == 0xf0;
}

/* Pass 2: every known target, and whether each starts an instruction. */
/* A target in another part of this function (ctx.also_inside): that
 * part's parse must know it (x86_func.outside_targets). */
static int note_outside(struct pstate *s, uint64_t t)
{
	struct x86_func *f = s->f;
	uint64_t *v;

	if (inside(s, t) || !x86_jumptable_code_inside(&s->c, t))
		return 0;
	v = realloc(f->outside_targets,
		    (f->noutside_targets + 1) * sizeof(*v));
	if (v == NULL)
		return -ENOMEM;
	f->outside_targets = v;
	v[f->noutside_targets++] = t;
	return 0;
}

static int find_targets(struct pstate *s)
{
	const struct x86_parse_ctx *ctx = s->c.ctx;

	for (size_t i = 0; i < s->n; i++) {
		struct pinsn *p = &s->in[i];

		if (p->flags & PF_TARGET) {
			if (p->kind != PK_OTHER &&
			    !x86_jumptable_code_inside(&s->c, p->target))
				p->flags |= PF_EXIT;
			if (note_outside(s, p->target) < 0)
				return -ENOMEM;
			mark_target(s, p->target);
		}
		if (is_barrier(p->kind)) {
			size_t j = i + 1;

			while (j < s->n && s->in[j].kind == PK_PAD)
				j++;
			if (j < s->n)
				s->marks[s->in[j].off] |= M_TARGET;
		}
	}
	for (size_t k = 0; k < s->ntabt; k++) {
		if (note_outside(s, s->tabt[k]) < 0)
			return -ENOMEM;
		mark_target(s, s->tabt[k]);
	}
	for (size_t k = 0; k < ctx->nextra_targets; k++)
		mark_target(s, ctx->extra_targets[k]);
	for (size_t k = 0; k < s->ntaken; k++) {
		if (s->marks[s->taken[k] - s->c.addr] & M_DATA)
			continue;  /* the address of an embedded table */
		s->f->code_address_taken = true;
		mark_target(s, s->taken[k]);
	}
	for (size_t off = 0; off < s->c.len; off++)
		if ((s->marks[off] & (M_TARGET | M_START)) == M_TARGET &&
		    !skips_lock(s, off)) {
			set_fatal(s, X86_REFUSAL_MISALIGNED, s->c.addr + off);
			break;
		}
	return 0;
}

/* A computed goto stores code addresses somewhere; a jump through a
 * loaded pointer may then land inside, so it is no tail call. */
static void judge_indirect(struct pstate *s)
{
	for (size_t i = 0; i < s->n; i++) {
		struct pinsn *p = &s->in[i];

		if (s->f->code_address_taken && (p->flags & PF_TAIL_IND))
			p->flags = (uint8_t)((p->flags & ~(PF_TAIL_IND | PF_EXIT)) |
					     PF_UNRESOLVED);
		if (p->flags & PF_UNRESOLVED)
			s->f->unresolved_indirect_jump = true;
	}
}

int x86_parse_function(struct x86_decoder *d, const uint8_t *code,
		       size_t len, uint64_t addr,
		       const struct x86_parse_ctx *ctx, struct x86_func *out)
{
	static const struct x86_parse_ctx no_ctx;
	struct pstate s = { .d = d };
	int rc;

	memset(out, 0, sizeof(*out));
	out->addr = addr;
	out->size = len;
	if (len > UINT32_MAX)
		return -EFBIG;
	s.c = (struct x86_code){ .bytes = code, .len = len, .addr = addr,
				 .ctx = ctx ? ctx : &no_ctx };
	s.f = out;
	if (d->marks_cap < len + 1) {
		uint8_t *m = realloc(d->marks, len + 1);

		if (m == NULL)
			return -ENOMEM;
		d->marks = m;
		d->marks_cap = len + 1;
	}
	s.marks = d->marks;
	memset(s.marks, 0, len + 1);
	s.in = d->pins;
	s.cap = d->pins_cap;
	rc = sweep(&s);
	if (rc == 0)
		rc = retry_unresolved(&s);
	if (rc == 0)
		rc = find_targets(&s);
	if (rc == 0) {
		judge_indirect(&s);
		rc = x86_points_make(&s);
	}
	if (rc == 0)
		rc = x86_points_fill_out(&s);
	d->pins = s.in;
	d->pins_cap = s.cap;
	free(s.taken);
	free(s.tabt);
	if (rc < 0)
		x86_parse_func_free(out);
	return rc;
}

void x86_parse_func_free(struct x86_func *f)
{
	if (f == NULL)
		return;
	free(f->points);
	free(f->insns);
	free(f->targets);
	free(f->data);
	free(f->outside_targets);
	for (size_t i = 0; i < f->njtables; i++)
		free(f->jtables[i].targets);
	free(f->jtables);
	memset(f, 0, sizeof(*f));
}

const char *x86_parse_point_kind_name(enum x86_point_kind k)
{
	switch (k) {
	case X86_PT_ENTRY: return "entry";
	case X86_PT_EXIT: return "exit";
	case X86_PT_CALL: return "call";
	}
	return "?";
}

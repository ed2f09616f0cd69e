/*
 * x86_tramp.c - code generation for base and mini-trampolines.
 * Layout and register conventions: see x86_tramp.h.
 */
#include "x86_tramp.h"

#include <errno.h>
#include <string.h>

#include "hunch_abi.h"

/* Offsets of the base trampoline's save area from %rsp inside a mini. */
#define SAVE_FLAGS 0
#define SAVE_RDX 8
#define SAVE_RCX 16
#define SAVE_RAX 24

#define T_PROT1 0
#define T_PROT2 8
#define T_COUNT 16
#define T_START 24
#define T_TOTAL 32

#include <stddef.h>
_Static_assert(offsetof(struct hunch_timer, prot1) == T_PROT1, "abi");
_Static_assert(offsetof(struct hunch_timer, prot2) == T_PROT2, "abi");
_Static_assert(offsetof(struct hunch_timer, count) == T_COUNT, "abi");
_Static_assert(offsetof(struct hunch_timer, start) == T_START, "abi");
_Static_assert(offsetof(struct hunch_timer, total) == T_TOTAL, "abi");
_Static_assert(offsetof(struct hunch_block_hdr, guard) == 0, "abi");
_Static_assert(offsetof(struct hunch_block_hdr, obs_cost) == 8, "abi");

#define E(o, ...) do { static const uint8_t b_[] = { __VA_ARGS__ }; \
		x86_emit((o), b_, sizeof b_); } while (0)

/* op disp32(%rcx): REX.W, opcode bytes, modrm reg field */
static void op_rcx(struct x86_buf *o, uint8_t opc, int reg, int32_t disp)
{
	x86_emit_u8(o, 0x48);
	x86_emit_u8(o, opc);
	x86_emit_u8(o, (uint8_t)(0x81 | (reg << 3)));
	x86_emit_u32(o, (uint32_t)disp);
}

static void mov_rr(struct x86_buf *o, int dst, int src)
{
	x86_emit_u8(o, (uint8_t)(0x48 | ((src & 8) ? 4 : 0) |
				 ((dst & 8) ? 1 : 0)));
	x86_emit_u8(o, 0x89);
	x86_emit_u8(o, (uint8_t)(0xc0 | ((src & 7) << 3) | (dst & 7)));
}

/* movups %xmmN <-> N*16(%rsp) */
static void xmm_move(struct x86_buf *o, int n, bool store)
{
	if (n >= 8)
		x86_emit_u8(o, 0x44);
	x86_emit_u8(o, 0x0f);
	x86_emit_u8(o, store ? 0x11 : 0x10);
	x86_emit_u8(o, (uint8_t)(0x84 | ((n & 7) << 3)));
	x86_emit_u8(o, 0x24);
	x86_emit_u32(o, (uint32_t)(n * 16));
}

static const int call_saved[] = { X86_RSI, X86_RDI, X86_R8, X86_R9,
				   X86_R10, X86_R11, X86_RBP };
#define NCALL_SAVED (int)(sizeof call_saved / sizeof call_saved[0])

/* Call fn(arg) through the shared call thunk (x86_tramp_thunks), which
 * preserves every register but rax/rcx/rdx (saved by the base
 * trampoline) and all of xmm0-15, and returns with %rcx = the block. */
static void emit_call(struct x86_buf *o, const struct x86_tramp_env *env,
		      uint64_t fn, bool has_arg, uint64_t arg)
{
	x86_emit_mov_imm(o, X86_RAX, fn);
	if (has_arg)
		x86_emit_mov_imm(o, X86_RDX, arg);
	x86_emit_mov_imm(o, X86_RCX, env->thunk_call);
	E(o, 0xff, 0xd1);                           /* call *%rcx */
}

int x86_tramp_thunks(const struct x86_tramp_env *env, uint8_t *buf,
		     size_t cap, uint64_t at, size_t *call_off, size_t *reg_off)
{
	struct x86_buf o;

	x86_emit_buf_init(&o, buf, cap, at);
	*reg_off = o.len;                  /* REG: fn = hunchrt_block */
	x86_emit_mov_imm(&o, X86_RAX, env->fn_block);
	*call_off = o.len;                 /* CALL: rax = fn, rdx = arg */
	for (int i = 0; i < NCALL_SAVED; i++)
		x86_emit_push(&o, call_saved[i]);
	E(&o, 0x48, 0x89, 0xe5);                    /* mov %rsp,%rbp */
	E(&o, 0x48, 0x83, 0xe4, 0xf0);              /* and $-16,%rsp */
	E(&o, 0x48, 0x81, 0xec, 0x00, 0x01, 0, 0);  /* sub $256,%rsp */
	for (int n = 0; n < 16; n++)
		xmm_move(&o, n, true);
	E(&o, 0x48, 0x89, 0xd7);                    /* mov %rdx,%rdi */
	E(&o, 0xff, 0xd0);                          /* call *%rax */
	for (int n = 0; n < 16; n++)
		xmm_move(&o, n, false);
	E(&o, 0x48, 0x89, 0xec);                    /* mov %rbp,%rsp */
	for (int i = NCALL_SAVED - 1; i >= 0; i--)
		x86_emit_pop(&o, call_saved[i]);
	x86_emit_mov_fs(&o, X86_RCX, env->fs_block_off);
	E(&o, 0xc3);                                /* ret */
	if (o.overflow)
		return -ENOSPC;
	return (int)o.len;
}

/* The base trampoline's pre part: red zone skipped, then rax, rcx, rdx
 * and the flags (in rax) pushed (emit_pre). */
#define BASE_PRE_BYTES (128 + 4 * 8)

void x86_tramp_thunk_frame(uint64_t thunk_rbp, struct x86_thunk_frame *f)
{
	/* %rbp is pushed last, then `mov %rsp,%rbp` (x86_tramp_thunks) */
	f->saved_rbp_at = thunk_rbp;
	f->ra_at = thunk_rbp + 8 * NCALL_SAVED;
	f->site_sp = f->ra_at + 8 + BASE_PRE_BYTES;
}

bool x86_tramp_thunk_ret(const uint8_t before[2])
{
	return before[0] == 0xff && before[1] == 0xd0;   /* call *%rax */
}

static void emit_rdtsc_rax(struct x86_buf *o)
{
	E(o, 0x0f, 0x31);                 /* rdtsc */
	E(o, 0x48, 0xc1, 0xe2, 0x20);     /* shl $32,%rdx */
	E(o, 0x48, 0x09, 0xd0);           /* or %rdx,%rax */
}

/* The rtlib's timer protocol (devguide §1.9), inline. */
static void emit_wall_start(struct x86_buf *o, int32_t h)
{
	size_t j;

	op_rcx(o, 0xff, 0, h + T_PROT1);            /* incq prot1 */
	op_rcx(o, 0xff, 0, h + T_COUNT);            /* incq count */
	x86_emit_u8(o, 0x48);                       /* cmpq $1,count */
	x86_emit_u8(o, 0x83);
	x86_emit_u8(o, 0xb9);
	x86_emit_u32(o, (uint32_t)(h + T_COUNT));
	x86_emit_u8(o, 1);
	j = x86_emit_jcc_fwd(o, 0x5);               /* jne */
	emit_rdtsc_rax(o);
	op_rcx(o, 0x89, X86_RAX, h + T_START);      /* mov %rax,start */
	x86_emit_fix_fwd(o, j);
	op_rcx(o, 0xff, 0, h + T_PROT2);            /* incq prot2 */
}

static void emit_wall_stop(struct x86_buf *o, int32_t h)
{
	size_t j_none, j_nested;

	x86_emit_u8(o, 0x48);                       /* cmpq $0,count */
	x86_emit_u8(o, 0x83);
	x86_emit_u8(o, 0xb9);
	x86_emit_u32(o, (uint32_t)(h + T_COUNT));
	x86_emit_u8(o, 0);
	j_none = x86_emit_jcc_fwd(o, 0xe);          /* jle: stop w/o start */
	op_rcx(o, 0xff, 0, h + T_PROT1);
	op_rcx(o, 0xff, 1, h + T_COUNT);            /* decq count */
	j_nested = x86_emit_jcc_fwd(o, 0x5);        /* jne: still nested */
	emit_rdtsc_rax(o);
	op_rcx(o, 0x2b, X86_RAX, h + T_START);      /* sub start,%rax */
	op_rcx(o, 0x01, X86_RAX, h + T_TOTAL);      /* add %rax,total */
	x86_emit_fix_fwd(o, j_nested);
	op_rcx(o, 0xff, 0, h + T_PROT2);
	x86_emit_fix_fwd(o, j_none);
}

static int emit_expr(struct x86_buf *o, const struct x86_expr *e, int depth);

static int emit_binary(struct x86_buf *o, const struct x86_expr *e, int depth)
{
	static const uint8_t setcc[] = { [X86_EX_EQ] = 0x94, [X86_EX_NE] = 0x95,
					 [X86_EX_LT] = 0x9c, [X86_EX_GT] = 0x9f };

	if (e->l == NULL || e->r == NULL)
		return -EINVAL;
	if (emit_expr(o, e->l, depth) < 0)
		return -EINVAL;
	x86_emit_push(o, X86_RAX);
	if (emit_expr(o, e->r, depth + 8) < 0)
		return -EINVAL;
	E(o, 0x48, 0x89, 0xc2);               /* mov %rax,%rdx */
	x86_emit_pop(o, X86_RAX);
	switch (e->kind) {
	case X86_EX_ADD: E(o, 0x48, 0x01, 0xd0); return 0;
	case X86_EX_SUB: E(o, 0x48, 0x29, 0xd0); return 0;
	case X86_EX_AND: E(o, 0x48, 0x21, 0xd0); return 0;
	default:
		break;
	}
	E(o, 0x48, 0x39, 0xd0);               /* cmp %rdx,%rax */
	x86_emit_u8(o, 0x0f);
	x86_emit_u8(o, setcc[e->kind]);
	x86_emit_u8(o, 0xc0);                 /* setcc %al */
	E(o, 0x0f, 0xb6, 0xc0);               /* movzbl %al,%eax */
	return 0;
}

static int emit_expr(struct x86_buf *o, const struct x86_expr *e, int depth)
{
	static const int argreg[6] = { X86_RDI, X86_RSI, -SAVE_RDX,
				       -SAVE_RCX, X86_R8, X86_R9 };

	if (e == NULL)
		return -EINVAL;
	switch (e->kind) {
	case X86_EX_CONST:
		x86_emit_mov_imm(o, X86_RAX, (uint64_t)e->v);
		return 0;
	case X86_EX_VAR:
		x86_emit_load(o, X86_RAX, X86_RCX, (int32_t)e->handle);
		return 0;
	case X86_EX_ARG:
		if (e->arg < 0 || e->arg > 5)
			return -EINVAL;
		if (argreg[e->arg] > 0)
			mov_rr(o, X86_RAX, argreg[e->arg]);
		else
			x86_emit_load(o, X86_RAX, X86_RSP,
				      depth - argreg[e->arg]);
		return 0;
	case X86_EX_RET:
		x86_emit_load(o, X86_RAX, X86_RSP, depth + SAVE_RAX);
		return 0;
	case X86_EX_SP:
		/* lea disp32(%rsp),%rax: above the base's pushes and the
		 * red zone it skipped (minis keep %rsp where it left it) */
		E(o, 0x48, 0x8d, 0x84);
		x86_emit_u8(o, 0x24);
		x86_emit_u32(o, (uint32_t)(BASE_PRE_BYTES + depth));
		return 0;
	case X86_EX_ADD: case X86_EX_SUB: case X86_EX_AND:
	case X86_EX_EQ: case X86_EX_NE: case X86_EX_LT: case X86_EX_GT:
		return emit_binary(o, e, depth);
	}
	return -EINVAL;
}

static bool fits32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

static int emit_counter(struct x86_buf *o, const struct x86_snip *s)
{
	int32_t h = (int32_t)s->handle;
	bool add = s->kind == X86_SN_ADD;

	if (s->value == NULL && fits32(s->delta)) {
		op_rcx(o, add ? 0x81 : 0xc7, 0, h);
		x86_emit_u32(o, (uint32_t)(int32_t)s->delta);
		return 0;
	}
	if (s->value == NULL)
		x86_emit_mov_imm(o, X86_RAX, (uint64_t)s->delta);
	else if (emit_expr(o, s->value, 0) < 0)
		return -EINVAL;
	op_rcx(o, add ? 0x01 : 0x89, X86_RAX, h);
	return 0;
}

static int emit_snips(struct x86_buf *o, const struct x86_tramp_env *env,
		      const struct x86_snip *s, size_t n);

static int emit_snip(struct x86_buf *o, const struct x86_tramp_env *env,
		     const struct x86_snip *s)
{
	size_t j;

	if (s->handle >= (1u << 30))
		return -EINVAL;
	switch (s->kind) {
	case X86_SN_ADD: case X86_SN_SET:
		return emit_counter(o, s);
	case X86_SN_WALL_START:
		if (!env->wall_rdtsc)
			emit_call(o, env, env->fn_wall_start, true, s->handle);
		else
			emit_wall_start(o, (int32_t)s->handle);
		return 0;
	case X86_SN_WALL_STOP:
		if (!env->wall_rdtsc)
			emit_call(o, env, env->fn_wall_stop, true, s->handle);
		else
			emit_wall_stop(o, (int32_t)s->handle);
		return 0;
	case X86_SN_CPU_START:
		emit_call(o, env, env->fn_cpu_start, true, s->handle);
		return 0;
	case X86_SN_CPU_STOP:
		emit_call(o, env, env->fn_cpu_stop, true, s->handle);
		return 0;
	case X86_SN_IF:
		if (emit_expr(o, s->cond, 0) < 0)
			return -EINVAL;
		E(o, 0x48, 0x85, 0xc0);           /* test %rax,%rax */
		j = x86_emit_jcc_fwd(o, 0x4);      /* jz */
		if (emit_snips(o, env, s->body, s->nbody) < 0)
			return -EINVAL;
		x86_emit_fix_fwd(o, j);
		return 0;
	}
	return -EINVAL;
}

static int emit_snips(struct x86_buf *o, const struct x86_tramp_env *env,
		      const struct x86_snip *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (emit_snip(o, env, &s[i]) < 0)
			return -EINVAL;
	return 0;
}

int x86_tramp_snip_code(const struct x86_tramp_env *env,
			const struct x86_snip *s, size_t n, uint8_t *buf,
			size_t cap)
{
	struct x86_buf o;

	x86_emit_buf_init(&o, buf, cap, 0);
	if (emit_snips(&o, env, s, n) < 0)
		return -EINVAL;
	if (o.overflow)
		return -ENOSPC;
	return (int)o.len;
}

static bool snip_calls(const struct x86_tramp_env *env,
		       const struct x86_snip *s)
{
	switch (s->kind) {
	case X86_SN_CPU_START: case X86_SN_CPU_STOP:
		return true;
	case X86_SN_WALL_START: case X86_SN_WALL_STOP:
		return !env->wall_rdtsc;
	case X86_SN_IF:
		return x86_tramp_snip_calls(env, s->body, s->nbody);
	default:
		return false;
	}
}

bool x86_tramp_snip_calls(const struct x86_tramp_env *env,
			  const struct x86_snip *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (snip_calls(env, &s[i]))
			return true;
	return false;
}

/* ---- base trampoline ---- */

struct base_labels {
	size_t j_slow, j_guard, j_out_slow, slow_back;
	size_t chk;
};

static void emit_pre(struct x86_buf *o, const struct x86_tramp_env *env,
		     struct x86_site *b, struct base_labels *L)
{
	b->pre_off = o->len;
	x86_emit_lea_rsp(o, -128);
	E(o, 0x50, 0x51, 0x52);               /* push rax, rcx, rdx */
	E(o, 0x9f, 0x0f, 0x90, 0xc0, 0x50);   /* lahf; seto %al; push rax */
	x86_emit_mov_fs(o, X86_RCX, env->fs_block_off);
	E(o, 0x48, 0x85, 0xc9);               /* test %rcx,%rcx */
	L->j_slow = x86_emit_jcc_fwd(o, 0x4); /* jz SLOW */
	L->chk = o->len;
	E(o, 0x48, 0x83, 0x39, 0x00);         /* cmpq $0,guard(%rcx) */
	L->j_guard = x86_emit_jcc_fwd(o, 0x5);/* jne OUT */
	E(o, 0x48, 0xc7, 0x01, 1, 0, 0, 0);   /* movq $1,guard(%rcx) */
	b->slot_off = o->len;
	E(o, 0xe9, 0, 0, 0, 0);               /* jmp BACK until a mini links */
	b->back_off = o->len;
	x86_emit_mov_fs(o, X86_RCX, env->fs_block_off);
	E(o, 0x48, 0x81, 0x41, 0x08);         /* addq $COST,obs_cost(%rcx) */
	b->cost_off = o->len;
	x86_emit_u32(o, 0);
	E(o, 0x48, 0xc7, 0x01, 0, 0, 0, 0);   /* movq $0,guard(%rcx) */
	x86_emit_fix_fwd(o, L->j_guard);           /* OUT: */
	L->slow_back = o->len;
	E(o, 0x58, 0x04, 0x7f, 0x9e);         /* pop rax; add $0x7f,%al; sahf */
	E(o, 0x5a, 0x59, 0x58);               /* pop rdx, rcx, rax */
	x86_emit_lea_rsp(o, 128);
}

/* SLOW: register the thread through the rtlib, then back to CHK. */
static void emit_slow(struct x86_buf *o, const struct x86_tramp_env *env,
		      struct base_labels *L)
{
	int32_t d;

	x86_emit_fix_fwd(o, L->j_slow);
	x86_emit_mov_imm(o, X86_RCX, env->thunk_reg);
	E(o, 0xff, 0xd1);                     /* call *%rcx: registers */
	E(o, 0x48, 0x85, 0xc9);               /* test %rcx,%rcx */
	x86_emit_u8(o, 0x0f);                 /* jz OUT */
	x86_emit_u8(o, 0x84);
	d = (int32_t)(L->slow_back - (o->len + 4));
	x86_emit_u32(o, (uint32_t)d);
	x86_emit_u8(o, 0xe9);                 /* jmp CHK */
	d = (int32_t)(L->chk - (o->len + 4));
	x86_emit_u32(o, (uint32_t)d);
}

/* An exit that is a conditional jump out of the function (a conditional
 * tail call): its snippets must run only when the jump is taken, so
 *     j!cc NOT_TAKEN; PRE; jmp target; NOT_TAKEN: (what follows)
 * and a thread stopped on the jcc resumes at the j!cc (pre_off).
 * Returns the jcc's length, or 0 when the site is not a jcc. */
static size_t cond_site(struct x86_reloc *r, const struct x86_tramp_env *env,
			const uint8_t *code, size_t avail, uint64_t from,
			struct x86_buf *o, struct x86_site *site,
			struct base_labels *L)
{
	unsigned cc;
	uint64_t target;
	size_t len = x86_reloc_insn_jcc(r, code, avail, from, &cc, &target);
	size_t start = o->len, skip;

	if (len == 0)
		return 0;
	skip = x86_emit_jcc_fwd(o, cc ^ 1);
	emit_pre(o, env, site, L);
	x86_emit_jmp(o, target);
	x86_emit_fix_fwd(o, skip);
	site->pre_off = start;
	return len;
}

static int fail(struct x86_base *b, int code, enum x86_refusal why)
{
	b->why = why;
	return code;
}

int x86_tramp_base(struct x86_reloc *r, const struct x86_tramp_env *env,
		   const uint8_t *orig, size_t plen, uint64_t pstart,
		   const uint64_t *sites, size_t nsites, uint64_t at,
		   uint8_t *buf, size_t cap, struct x86_base *b)
{
	struct x86_buf o;
	struct base_labels L[X86_TRAMP_MAX_SITES];
	size_t off = 0;
	bool pre_done = false, dead = false;

	memset(b, 0, sizeof *b);
	x86_emit_buf_init(&o, buf, cap, at);
	if (nsites == 0 || nsites > X86_TRAMP_MAX_SITES)
		return fail(b, -EINVAL, X86_REFUSAL_TRAMP_NSITES);
	for (size_t i = 0; i < nsites; i++)
		if (sites[i] < pstart || sites[i] >= pstart + plen ||
		    (i > 0 && sites[i] <= sites[i - 1]))
			return fail(b, -EINVAL, X86_REFUSAL_TRAMP_OUTSIDE);
	while (off < plen) {
		struct x86_reloc_info ri;
		int rc;

		if (b->ninsn == X86_TRAMP_MAX_INSNS)
			return fail(b, -ENOTSUP, X86_REFUSAL_TRAMP_INSNS);
		if (b->nsite < nsites && pstart + off == sites[b->nsite]) {
			size_t n = cond_site(r, env, orig + off, plen - off,
					     pstart + off, &o, &b->site[b->nsite],
					     &L[b->nsite]);

			if (n > 0) {        /* the jcc is handled */
				b->orig_off[b->ninsn] = (uint8_t)off;
				b->new_off[b->ninsn++] =
					(uint16_t)b->site[b->nsite].pre_off;
				b->nsite++;
				pre_done = true;
				off += n;
				continue;
			}
			emit_pre(&o, env, &b->site[b->nsite], &L[b->nsite]);
			b->nsite++;
			pre_done = true;
		}
		b->orig_off[b->ninsn] = (uint8_t)off;
		b->new_off[b->ninsn++] = (uint16_t)o.len;
		if (dead) {        /* padding after ret/jmp: never runs */
			x86_emit_u8(&o, 0xcc);
			off++;
			continue;
		}
		rc = x86_reloc_insn(r, orig + off, plen - off, pstart + off,
				    &o, &ri);
		if (rc < 0)
			return fail(b, rc, ri.why);
		if (off + ri.len > plen)
			return fail(b, -EINVAL, X86_REFUSAL_TRAMP_CROSS);
		if (ri.is_call && off + ri.len != plen)
			return fail(b, -ENOTSUP,
				    X86_REFUSAL_TRAMP_CALL_MIDDLE);
		if (ri.is_call && env->shadow_stack)
			return fail(b, -ENOTSUP, X86_REFUSAL_TRAMP_CET);
		if ((ri.is_ret || ri.is_uncond_jmp || ri.is_call) && pre_done)
			dead = true;
		off += ri.len;
	}
	if (!pre_done || b->nsite != nsites)
		return fail(b, -EINVAL, X86_REFUSAL_TRAMP_BOUNDARY);
	x86_emit_jmp(&o, pstart + plen);
	for (size_t i = 0; i < nsites; i++)
		emit_slow(&o, env, &L[i]);
	if (o.overflow)
		return fail(b, -ENOSPC, X86_REFUSAL_TRAMP_SPACE);
	for (size_t i = 0; i < nsites; i++) {
		struct x86_site *st = &b->site[i];
		int32_t slot = (int32_t)(st->back_off - (st->slot_off + 5));

		memcpy(buf + st->slot_off + 1, &slot, 4);
	}
	b->len = o.len;
	return 0;
}

uint64_t x86_tramp_map_pc(const struct x86_base *b, uint64_t pstart,
			  const uint64_t *sites, uint64_t at, uint64_t pc)
{
	for (size_t i = 0; i < b->nsite; i++)
		if (pc == sites[i])
			return at + b->site[i].pre_off;
	for (size_t i = 0; i < b->ninsn; i++)
		if (pstart + b->orig_off[i] == pc)
			return at + b->new_off[i];
	return 0;
}

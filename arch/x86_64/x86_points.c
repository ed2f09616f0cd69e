/*
 * x86_points.c - pass 3 of the parser (x86_parse.c): the points of a
 * decoded function, each with the bytes a 5-byte jmp would replace, by
 * the borrowing rules of x86_parse.h, and the function's verdict.
 */
#include "x86_parse.h"
#include "x86_parse_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static bool is_tgt(const struct pstate *s, size_t i)
{
	return s->marks[s->in[i].off] & M_TARGET;
}

static bool is_call(const struct pinsn *p)
{
	return p->kind == PK_CALL || p->kind == PK_CALL_IND;
}

static bool adjacent(const struct pstate *s, size_t a, size_t b)
{
	return s->in[a].off + s->in[a].len == s->in[b].off;
}

/* The instructions a patch would replace: in[first..last]. */
struct area {
	size_t first, last;
	uint32_t len;
	uint32_t tail;          /* of len, padding after the function */
	enum x86_refusal why;
	uint64_t why_at;
};

static bool area_fail(struct area *a, enum x86_refusal why, uint64_t at)
{
	a->why = why;
	a->why_at = at;
	return false;
}

/* The final word on an area: no known target in any byte after its
 * first (targets inside instructions included). */
static bool area_clean(const struct pstate *s, struct area *a)
{
	uint32_t start = s->in[a->first].off;

	for (uint32_t k = start + 1; k < start + a->len; k++)
		if (s->marks[k] & M_TARGET)
			return area_fail(a, X86_REFUSAL_TARGET, s->c.addr + k);
	return true;
}

/* Length of the padding instruction at b (int3, nop, or the nopw/nopl
 * forms assemblers align with, `66 66 2e 0f 1f 84 00 ...` included),
 * 0 for anything else or when it does not fit in max bytes.  Matched
 * by hand: the fast decoder leaves prefixed forms to capstone, and only
 * these few encodings are padding here. */
static size_t pad_insn_len(const uint8_t *b, size_t max)
{
	size_t i = 0, len;
	uint8_t modrm, mod, rm;

	if (max > 0 && b[0] == 0xcc)
		return 1;
	while (i < max && i < 8 && b[i] == 0x66)
		i++;
	if (i < max && b[i] == 0x90)
		return i + 1;
	if (i < max && b[i] == 0x2e)
		i++;
	if (i + 2 >= max || b[i] != 0x0f || b[i + 1] != 0x1f)
		return 0;
	modrm = b[i + 2];
	mod = modrm >> 6;
	rm = modrm & 7;
	if (mod == 3 || ((modrm >> 3) & 7) != 0)
		return 0;
	len = i + 3 + (rm == 4) + (mod == 1 ? 1 : mod == 2 ? 4 : 0) +
	      (mod == 0 && rm == 5 ? 4 : 0);
	return len <= max ? len : 0;
}

/* Bytes of padding right after the function's end, which belong to no
 * function (x86_parse_ctx.tail_max), whole instructions, until 4: all
 * a jump can need. */
static uint32_t tail_padding(const struct pstate *s)
{
	const uint8_t *b = s->c.bytes + s->c.len;
	uint32_t max = s->c.ctx->tail_max, n = 0;
	size_t len;

	while (n < PATCH_LEN - 1 && n < max) {
		len = pad_insn_len(b + n, max - n);
		if (len == 0)
			break;
		n += (uint32_t)len;
	}
	return n;
}

/* An area that reaches the function's end after a ret or jmp (which
 * never falls through) may go on into the padding after the end: the
 * trampoline copies those bytes as dead code, and nothing runs them. */
static bool borrow_tail(const struct pstate *s, struct area *a)
{
	const struct pinsn *last = &s->in[a->last];
	uint32_t pad;

	if (last->off + last->len != s->c.len ||
	    (last->kind != PK_RET && last->kind != PK_JMP &&
	     last->kind != PK_JMP_IND))
		return area_fail(a, X86_REFUSAL_AT_END, 0);
	pad = tail_padding(s);
	if (a->len + pad < PATCH_LEN)
		return area_fail(a, X86_REFUSAL_AT_END, 0);
	if (!area_clean(s, a))
		return false;
	a->tail = PATCH_LEN - a->len;
	a->len = PATCH_LEN;
	return true;
}

/* Borrow the instructions after in[i] until 5 bytes; pad_only: only
 * nop/int3 padding (after a ret or jmp, which never falls through). */
static bool borrow_after(const struct pstate *s, size_t i, bool pad_only,
			 struct area *a)
{
	size_t j = i;

	*a = (struct area){ .first = i, .last = i, .len = s->in[i].len };
	while (a->len < PATCH_LEN) {
		if (++j >= s->n)
			return borrow_tail(s, a);
		if (!adjacent(s, j - 1, j))
			return area_fail(a, X86_REFUSAL_DATA, s->c.addr + s->in[j].off);
		if (pad_only && s->in[j].kind != PK_PAD)
			return area_fail(a, X86_REFUSAL_AT_END, 0);
		if (is_tgt(s, j))
			return area_fail(a, X86_REFUSAL_TARGET,
					 s->c.addr + s->in[j].off);
		if (is_call(&s->in[j - 1]))
			return area_fail(a, X86_REFUSAL_CALL_INSIDE,
					 s->c.addr + s->in[j - 1].off);
		a->len += s->in[j].len;
		a->last = j;
	}
	return area_clean(s, a);
}

/* Borrow the instructions before in[i] (which stays last). */
static bool borrow_before(const struct pstate *s, size_t i, struct area *a)
{
	size_t j = i;

	*a = (struct area){ .first = i, .last = i, .len = s->in[i].len };
	while (a->len < PATCH_LEN) {
		if (is_tgt(s, j))
			return area_fail(a, X86_REFUSAL_TARGET,
					 s->c.addr + s->in[j].off);
		if (j == 0)
			return area_fail(a, X86_REFUSAL_AT_START, 0);
		if (!adjacent(s, j - 1, j))
			return area_fail(a, X86_REFUSAL_DATA, s->c.addr + s->in[j].off);
		j--;
		if (is_call(&s->in[j]))
			return area_fail(a, X86_REFUSAL_CALL_INSIDE, s->c.addr + s->in[j].off);
		a->len += s->in[j].len;
		a->first = j;
	}
	return area_clean(s, a);
}

static bool is_endbr64(const struct pstate *s)
{
	static const uint8_t endbr[4] = { 0xf3, 0x0f, 0x1e, 0xfa };

	return s->n > 1 && s->in[0].len == 4 &&
	       memcmp(s->c.bytes, endbr, 4) == 0;
}

static int add_point(struct pstate *s, size_t i, enum x86_point_kind k,
		     const struct area *a, bool found)
{
	struct x86_func *f = s->f;
	const struct pinsn *p = &s->in[i];
	struct x86_point *pt, *np;

	if (f->npoints == s->points_cap) {
		size_t nc = s->points_cap ? 2 * s->points_cap : 8;

		np = realloc(f->points, nc * sizeof(*np));
		if (np == NULL)
			return -ENOMEM;
		f->points = np;
		s->points_cap = nc;
	}
	pt = &f->points[f->npoints++];
	*pt = (struct x86_point){ .kind = k, .addr = s->c.addr + p->off,
				  .insn_len = p->len, .ok = found,
				  .why = found ? X86_REFUSAL_NONE : a->why,
				  .why_at = found ? 0 : a->why_at };
	pt->indirect = p->kind == PK_CALL_IND || p->kind == PK_JMP_IND;
	pt->tail_call = k == X86_PT_EXIT && p->kind != PK_RET;
	pt->cond = p->kind == PK_JCC;
	if (p->flags & PF_TARGET)
		pt->target = p->target;
	pt->patch_start = s->c.addr + s->in[a->first].off;
	pt->patch_len = (uint8_t)(a->len > 255 ? 255 : a->len);
	pt->patch_ninsns = (uint8_t)(a->last - a->first + 1);
	pt->patch_tail = (uint8_t)a->tail;
	pt->start_is_target = is_tgt(s, a->first);
	if (found && f->unresolved_indirect_jump && a->last != a->first) {
		/* Unknown targets may land on any interior boundary. */
		pt->ok = false;
		pt->why = X86_REFUSAL_UNRESOLVED;
	}
	if (s->fatal != X86_REFUSAL_NONE) {
		pt->ok = false;
		pt->why = s->fatal;
		pt->why_at = s->fatal_at;
	}
	return 0;
}

/* An exit: borrow before it, or (ret, jmp) the padding after it. */
static int exit_point(struct pstate *s, size_t i)
{
	struct area a, pad;
	bool found = borrow_before(s, i, &a);

	if (!found && s->in[i].kind != PK_JCC &&
	    borrow_after(s, i, true, &pad)) {
		a = pad;
		found = true;
	}
	return add_point(s, i, X86_PT_EXIT, &a, found);
}

static int entry_point(struct pstate *s)
{
	size_t i = 0;
	struct area a;
	bool found;

	if (is_endbr64(s)) {
		s->f->endbr = true;
		i = 1;
	}
	found = borrow_after(s, i, false, &a);
	if (add_point(s, i, X86_PT_ENTRY, &a, found) < 0)
		return -ENOMEM;
	s->f->points[0].after_endbr = i == 1;
	return 0;
}

/* Points come in address order and an area holds its point and at most
 * 255 bytes, so a point 255 bytes past p's area cannot overlap it. */
static void mark_overlaps(struct x86_func *f)
{
	for (size_t i = 0; i < f->npoints; i++) {
		struct x86_point *p = &f->points[i];

		for (size_t j = i + 1; j < f->npoints; j++) {
			struct x86_point *q = &f->points[j];

			if (q->addr >= p->patch_start + p->patch_len + 255)
				break;
			if (q->patch_start < p->patch_start + p->patch_len &&
			    p->patch_start < q->patch_start + q->patch_len)
				p->overlaps = q->overlaps = true;
		}
	}
}

/* Pass 3: the points, then the function's verdict. */
int x86_points_make(struct pstate *s)
{
	struct x86_func *f = s->f;
	int rc = 0;

	if (s->c.len == 0)
		set_fatal(s, X86_REFUSAL_EMPTY, 0);
	else if (s->c.len + tail_padding(s) < PATCH_LEN)
		set_fatal(s, X86_REFUSAL_SMALL, 0);
	if (s->n == 0)
		return 0;
	if (entry_point(s) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < s->n && rc == 0; i++) {
		const struct pinsn *p = &s->in[i];
		struct area a;
		bool found;

		if (is_call(p)) {
			found = borrow_before(s, i, &a);
			rc = add_point(s, i, X86_PT_CALL, &a, found);
		} else if (p->kind == PK_RET || (p->flags & PF_EXIT)) {
			rc = exit_point(s, i);
		}
	}
	mark_overlaps(f);
	return rc;
}

int x86_points_fill_out(struct pstate *s)
{
	struct x86_func *f = s->f;
	size_t nt = 0;

	f->insns = malloc((s->n ? s->n : 1) * sizeof(*f->insns));
	if (f->insns == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < s->n; i++)
		f->insns[i] = s->c.addr + s->in[i].off;
	f->ninsns = s->n;
	for (size_t off = 0; off < s->c.len; off++)
		nt += (s->marks[off] & M_TARGET) != 0;
	f->targets = malloc((nt ? nt : 1) * sizeof(*f->targets));
	if (f->targets == NULL)
		return -ENOMEM;
	for (size_t off = 0; off < s->c.len; off++)
		if (s->marks[off] & M_TARGET)
			f->targets[f->ntargets++] = s->c.addr + off;
	f->ok = s->fatal == X86_REFUSAL_NONE && f->npoints > 0;
	f->why = s->fatal;
	f->why_at = s->fatal_at;
	for (size_t i = 0; i < f->npoints && f->ok; i++)
		if (!f->points[i].ok) {
			f->ok = false;
			f->why = f->points[i].why ? f->points[i].why :
				 X86_REFUSAL_A_POINT;
			f->why_at = f->points[i].why_at;
		}
	return 0;
}

/*
 * eng_funcreloc_post.c - after-call points (MDL's placement "after" a
 * call site; devguide §1.8 "postInsn").
 *
 * In place, a call site's patch is relocated into a base trampoline as
 * "push the original return address; jmp callee", so the callee returns
 * into the program's own code and nothing runs after it.  In a relocated
 * copy calls are real calls that return into the copy: the instruction
 * at the return address is an ordinary place for a patch, and the copy
 * has room everywhere.  So an after-call point is a point of the copy
 * whose patch starts at the call's return address, borrowing whole
 * instructions after it (never across a branch target, never past a
 * call: a return address may not be strictly inside a patch).  Its
 * snippets run each time the callee returns normally; a callee that
 * leaves by longjmp or an exception past the call site does not run
 * them, as no code after the call runs.
 *
 * Asking for one relocates the function even when its points have room
 * (every point of a relocated function lives in the copy), which is
 * refused while another point of its original body is instrumented in
 * place or has a request queued there: request the after-call point
 * first, or remove the others.
 */
#include "eng_funcreloc_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eng_inst_int.h"
#include "sorted_u64.h"

static bool is_target(const struct x86_func *cf, uint64_t a)
{
	return sorted_u64_find(cf->targets, cf->ntargets, a) >= 0;
}

/* Index of the instruction starting at a in the copy, or -1. */
static long insn_index(const struct x86_func *cf, uint64_t a)
{
	return sorted_u64_find(cf->insns, cf->ninsns, a);
}

static bool is_call_at(const struct x86_func *cf, uint64_t a)
{
	for (size_t i = 0; i < cf->npoints; i++)
		if (cf->points[i].kind == X86_PT_CALL && cf->points[i].addr == a)
			return true;
	return false;
}

/* The patch after the call at copy address `call`: whole instructions
 * from the return address, at least 5 bytes.  0 and *out, or *why. */
static int patch_after(const struct fr_func *f, uint64_t call,
		       struct eng_inst_point *out, enum eng_refusal *why)
{
	const struct x86_func *cf = &f->cf;
	long k = insn_index(cf, call);
	uint64_t end = f->copy + f->fr.code_len, ret, at;

	if (k < 0 || (size_t)k + 1 >= cf->ninsns)
		return *why = ENG_REFUSAL_POST_NO_NEXT, 1;
	ret = at = cf->insns[k + 1];
	memset(out, 0, sizeof *out);
	out->addr = out->patch_start = ret;
	for (size_t i = (size_t)k + 1; at - ret < 5; i++) {
		uint64_t next = i + 1 < cf->ninsns ? cf->insns[i + 1] : end;

		if (i >= cf->ninsns || next > end)
			return *why = ENG_REFUSAL_POST_ENDS, 1;
		if (at != ret && is_target(cf, at))
			return *why = ENG_REFUSAL_POST_TARGET, 1;
		if (at != ret && is_call_at(cf, cf->insns[i - 1]))
			return *why = ENG_REFUSAL_POST_CALL, 1;
		if (at == ret)
			out->insn_len = (uint8_t)(next - at);
		at = next;
	}
	for (size_t d = 0; d < cf->ndata; d++)
		if (cf->data[d].start < at && cf->data[d].end > ret)
			return *why = ENG_REFUSAL_POST_DATA, 1;
	out->patch_len = (uint8_t)(at - ret);
	return 0;
}

int eng_funcreloc_post_call(struct eng_inst *in,
			     const struct eng_inst_point *call,
			     struct eng_inst_point *out, enum eng_refusal *why,
			     struct hunch_err *err)
{
	struct fr_func *f;
	int rc = 0;

	*why = ENG_REFUSAL_NONE;
	if (in->fr == NULL || in->fr->nimg == 0)
		return *why = ENG_REFUSAL_POST_OFF, 0;
	f = eng_funcreloc_find(in->fr, call->addr);
	if (f != NULL && f->state == FR_COPY && !eng_funcreloc_loaded(in, f))
		return *why = ENG_REFUSAL_UNLOADED, 0;
	if (f == NULL || f->state == FR_NOT_NEEDED) {
		f = eng_funcreloc_consider(in, call->addr, true, &rc, err);
		if (rc < 0)
			return rc;
		if (f == NULL)
			return *why = ENG_REFUSAL_POST_IN_PLACE, 0;
	}
	if (f->state != FR_COPY)
		return *why = f->why ? f->why : ENG_REFUSAL_POST_NOT_RELOCATED,
		       0;
	rc = patch_after(f, x86_funcreloc_at(&f->fr, call->addr), out, why);
	return rc == 0 ? 1 : 0;
}

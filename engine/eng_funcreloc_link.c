/*
 * eng_funcreloc_link.c - the commit side of whole-function relocation:
 * leading the original entry to the copy when the copy gets its first
 * request, and back when its last one goes (eng_funcreloc.h).
 */
#include "eng_funcreloc_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eng_codemem.h"
#include "eng_inst_int.h"
#include "eng_proc.h"
#include "eng_shm.h"
#include "hunch_abi.h"
#include "eng_maps.h"

/* Copies sorted by address, to find the function a copy address is in. */
struct cidx {
	uint64_t lo, hi;
	struct fr_func *f;
};

static int cidx_cmp(const void *a, const void *b)
{
	const struct cidx *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static struct cidx *cidx_build(struct eng_funcreloc *r, size_t *n)
{
	struct cidx *c = malloc((r->nf + 1) * sizeof *c);

	*n = 0;
	if (c == NULL)
		return NULL;
	for (size_t i = 0; i < r->nf; i++) {
		r->f[i].live = false;
		if (r->f[i].state == FR_COPY)
			c[(*n)++] = (struct cidx){ r->f[i].copy,
				r->f[i].copy + r->f[i].fr.len, &r->f[i] };
	}
	qsort(c, *n, sizeof *c, cidx_cmp);
	return c;
}

static struct fr_func *cidx_find(const struct cidx *c, size_t n, uint64_t a)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (c[mid].hi <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && c[lo].lo <= a ? c[lo].f : NULL;
}

int eng_funcreloc_link_mark_live(struct eng_inst *in, bool pending)
{
	size_t n;
	struct cidx *c = cidx_build(in->fr, &n);

	if (c == NULL)
		return -ENOMEM;
	for (size_t k = 0; n > 0 && k < in->npts; k++) {
		const struct ipoint *ip = &in->pts[k];
		struct fr_func *f;

		if (ip->active && !ip->dead &&
		    eng_inst_commit_point_minis(ip) > 0 &&
		    (f = cidx_find(c, n, ip->pt.patch_start)) != NULL)
			f->live = true;
	}
	for (size_t q = 0; pending && n > 0 && q < in->nqueue; q++) {
		const struct request *rq = eng_inst_req_get(in, in->queue[q]);
		struct fr_func *f;

		if (rq != NULL && rq->state == ENG_REQ_PENDING &&
		    (f = cidx_find(c, n, rq->site)) != NULL)
			f->live = true;
	}
	free(c);
	return 0;
}

bool eng_funcreloc_link_in_unwinder(struct eng_inst *in,
				    const struct inst_threads *th)
{
	struct eng_maps_line l;
	struct eng_maps m;
	bool busy = false;

	if (eng_maps_open(&m, eng_proc_pid(in->p)) < 0)
		return true;
	while (!busy && eng_maps_next(&m, &l)) {
		if (strstr(l.path, "/libgcc_s.so") == NULL ||
		    !eng_maps_is_code(&l))
			continue;
		busy = eng_inst_threads_pc_in(th, l.lo, l.hi) ||
		       eng_inst_threads_word_in(th, l.lo, l.hi);
	}
	eng_maps_close(&m);
	return busy;
}

/* Call the rtlib's fn(list, k) on the first thread, with the k unwind
 * table addresses of the copies in fs[] chosen by `want`, copied into
 * trampoline memory near fs[0]'s copy for the call.  0 and *ret, or
 * <0 error. */
size_t eng_funcreloc_link_count(struct fr_func **fs, size_t n,
		bool (*want)(const struct fr_func *))
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		k += want(fs[i]);
	return k;
}

int eng_funcreloc_link_call_frames(struct eng_inst *in,
				   const struct inst_threads *th, uint64_t fn,
				   struct fr_func **fs, size_t n,
				   bool (*want)(const struct fr_func *),
				   size_t k, uint64_t *ret,
				   struct hunch_err *err)
{
	uint64_t args[2], *list, at = 0;
	int rc;

	if ((list = malloc(k * sizeof *list)) == NULL)
		return hunch_err_set(err, -ENOMEM, "out of memory");
	k = 0;
	for (size_t i = 0; i < n; i++)
		if (want(fs[i]))
			list[k++] = fs[i]->eh;
	rc = eng_codemem_alloc(in->mem, fs[0]->copy, k * sizeof *list, &at,
			       err);
	if (rc == 0)
		rc = eng_codemem_write(in->mem, at, list, k * sizeof *list,
				       err);
	if (rc == 0)
		rc = eng_codemem_flush(in->mem, &in->st.writes, err);
	args[0] = at;
	args[1] = k;
	if (rc == 0)
		rc = eng_infcall(in->p, th->t[0].tid, fn, args, 2, ret, err);
	free(list);
	if (at != 0)
		eng_codemem_free(in->mem, at, k * sizeof *list);
	return rc;
}

static bool to_register(const struct fr_func *f)
{
	return f->eh != 0 && !f->eh_done;
}

/* Register the FDEs of the copies in fs[0..n) that need it, with ONE
 * inferior call of the rtlib (rt_frames.c) on an array of their
 * addresses: an inferior call returns to address 0, so if hunch is
 * killed during one the thread faults; one per commit keeps that window
 * as small as the engine's other inferior calls.  0 done, 1 not now
 * (*why), <0 error. */
static int register_frames(struct eng_inst *in, struct inst_threads *th,
			   struct fr_func **fs, size_t n, enum eng_refusal *why,
			   struct hunch_err *err)
{
	uint64_t fn = eng_shm_entry(in->shm, HUNCH_RT_ENTRY_FRAMES_REGISTER);
	size_t k = eng_funcreloc_link_count(fs, n, to_register);
	uint64_t ret = 0;
	int rc;

	if (k == 0)
		return 0;
	if (fn == 0)
		return *why = ENG_REFUSAL_LINK_NO_RT, 1;
	if (eng_funcreloc_link_in_unwinder(in, th))
		return *why = ENG_REFUSAL_LINK_UNWINDER, 1;
	rc = eng_funcreloc_link_call_frames(in, th, fn, fs, n, to_register, k,
					    &ret, err);
	if (rc < 0)
		return rc;
	if (ret != k)
		return *why = ENG_REFUSAL_LINK_TABLE_FULL, 1;
	for (size_t i = 0; i < n; i++)
		if (fs[i]->eh != 0 && !fs[i]->eh_done) {
			fs[i]->eh_done = true;
			in->fr->frames++;
		}
	return 0;
}

/* Threads stopped inside the original entry's patch bytes go to the
 * same instruction in the copy.  1 when one is between instructions. */
static int move_pcs(struct eng_inst *in, struct inst_threads *th,
		    struct fr_func *f, struct hunch_err *err)
{
	uint64_t s = f->epatch, e = f->epatch + f->eplen;
	int rc;

	for (size_t i = 0; i < th->n; i++) {
		uint64_t pc = th->t[i].regs.rip;

		if (pc > s && pc < e && x86_funcreloc_slot(&f->fr, pc) == 0)
			return 1;
	}
	for (size_t i = 0; i < th->n; i++) {
		struct inst_thread *t = &th->t[i];

		if (t->regs.rip <= s || t->regs.rip >= e)
			continue;
		t->regs.rip = x86_funcreloc_slot(&f->fr, t->regs.rip);
		t->regs_changed = true;
		if ((rc = eng_regs_set(in->p, t->tid, &t->regs, err)) < 0)
			return rc;
		in->st.pcs_moved++;
	}
	return 0;
}

/* Can the original entry be patched now?  0 yes, 1 not now (*why),
 * <0 error. */
static int can_link(struct eng_inst *in, const struct inst_threads *th,
		    struct fr_func *f, enum eng_refusal *why,
		    struct hunch_err *err)
{
	uint64_t rb = eng_proc_r_brk(in->p);
	int rc;

	if (eng_inst_threads_word_in(th, f->epatch + 1, f->epatch + f->eplen))
		return *why = ENG_REFUSAL_LINK_STACK, 1;
	if (rb >= f->epatch && rb < f->epatch + f->eplen)
		return *why = ENG_REFUSAL_LINK_R_BRK, 1;
	if ((rc = eng_mem_read(in->p, f->epatch, f->eorig, f->eplen, err)) < 0)
		return rc;
	if (f->eorig[0] == 0xcc)
		return *why = ENG_REFUSAL_LINK_INT3, 1;
	for (size_t i = 0; i < th->n; i++) {
		uint64_t pc = th->t[i].regs.rip;

		if (pc > f->epatch && pc < f->epatch + f->eplen &&
		    x86_funcreloc_slot(&f->fr, pc) == 0)
			return *why = ENG_REFUSAL_LINK_THREAD, 1;
	}
	return 0;
}

/* Lead the original entry to the copy (everything checked, the copy
 * and its unwind info in place). */
static int link_one(struct eng_inst *in, struct inst_threads *th,
		    struct fr_func *f, struct hunch_err *err)
{
	uint8_t p[32];
	int rc;

	if ((rc = move_pcs(in, th, f, err)) != 0)
		return rc < 0 ? rc : -EPROTO;
	memset(p, 0xcc, sizeof p);
	x86_emit_jmp5_bytes(p, f->epatch, f->ejump);
	if ((rc = eng_inst_commit_wmem(in, f->epatch, p, f->eplen, err)) < 0)
		return rc;
	f->patched = true;
	return 0;
}

/* The copy cannot be linked in this commit: its queued requests fail
 * with the reason, as a patch refused in place would (the caller may
 * ask again). */
static int fail_pending(struct eng_inst *in, const struct fr_func *f,
			enum eng_refusal why)
{
	int n = 0;

	for (size_t q = 0; q < in->nqueue; q++) {
		struct request *rq = eng_inst_req_get(in, in->queue[q]);

		if (rq != NULL && rq->state == ENG_REQ_PENDING &&
		    rq->site >= f->copy && rq->site < f->copy + f->fr.len) {
			rq->why = why;
			eng_inst_commit_req_release(rq, ENG_REQ_FAILED);
			n++;
		}
	}
	return n;
}

/* The functions whose copies get their first request now, checked. */
static int to_link(struct eng_inst *in, struct inst_threads *th,
		   struct fr_func **fs, size_t *n, int *failed,
		   struct hunch_err *err)
{
	struct eng_funcreloc *r = in->fr;
	enum eng_refusal why = ENG_REFUSAL_NONE;
	int rc;

	*n = 0;
	for (size_t i = 0; i < r->nf; i++) {
		struct fr_func *f = &r->f[i];

		if (f->state != FR_COPY || !f->live || f->patched)
			continue;
		if (!eng_funcreloc_loaded(in,
					  f)) { /* unloaded, never dropped */
			f->state = FR_REFUSED;
			f->why = ENG_REFUSAL_UNLOADED;
			continue;
		}
		if ((rc = can_link(in, th, f, &why, err)) < 0)
			return rc;
		if (rc > 0)
			*failed += fail_pending(in, f, why);
		else
			fs[(*n)++] = f;
	}
	return 0;
}

int eng_funcreloc_link_before(struct eng_inst *in, struct inst_threads *th,
			 int *failed, struct hunch_err *err)
{
	struct eng_funcreloc *r = in->fr;
	enum eng_refusal why = ENG_REFUSAL_NONE;
	struct fr_func **fs;
	size_t n = 0;
	int rc;

	if (r == NULL || r->nf == 0)
		return 0;
	if (eng_funcreloc_link_mark_live(in, true) < 0 ||
	    (fs = malloc(r->nf * sizeof *fs)) == NULL)
		return hunch_err_set(err, -ENOMEM, "out of memory");
	rc = to_link(in, th, fs, &n, failed, err);
	/* the copies (and their unwind info) before anything leads there */
	if (rc == 0 && n > 0)
		rc = eng_codemem_flush(in->mem, &in->st.writes, err);
	if (rc == 0 && n > 0)
		rc = register_frames(in, th, fs, n, &why, err);
	if (rc > 0) {           /* not now: those needing it wait */
		size_t k = 0;

		for (size_t i = 0; i < n; i++) {
			if (fs[i]->eh != 0 && !fs[i]->eh_done)
				*failed += fail_pending(in, fs[i], why);
			else
				fs[k++] = fs[i];
		}
		n = k;
		rc = 0;
	}
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = link_one(in, th, fs[i], err);
	free(fs);
	return rc;
}

/* The original entry's bytes come back when the copy has no request
 * left.  No thread can be inside the 5-byte jmp; the copy stays until
 * no thread runs in it (eng_funcreloc_free_reclaim, at the end of this
 * commit or a later one). */
int eng_funcreloc_link_after(struct eng_inst *in, struct inst_threads *th,
			struct hunch_err *err)
{
	struct eng_funcreloc *r = in->fr;
	int rc;

	(void)th;
	if (r == NULL || r->nf == 0)
		return 0;
	if (eng_funcreloc_link_mark_live(in, false) < 0)
		return hunch_err_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < r->nf; i++) {
		struct fr_func *f = &r->f[i];

		if (!f->patched || f->live)
			continue;
		f->patched = false;
		if (!eng_funcreloc_loaded(in,
					  f)) { /* nothing of it to restore */
			f->state = FR_REFUSED;
			f->why = ENG_REFUSAL_UNLOADED;
			continue;
		}
		if ((rc = eng_inst_commit_wmem(in, f->epatch, f->eorig,
					       f->eplen, err)) < 0)
			return rc;
	}
	return 0;
}

/*
 * eng_funcreloc_free.c - giving relocated copies back ("free
 * trampoline memory only when no thread can be executing it").
 *
 * When a copy's last request goes, eng_funcreloc_link_after puts the original
 * entry's bytes back: from then on nothing new enters the copy, but
 * threads may still run in it, or wait in a callee that returns into it
 * (a read() called from the copy).  At the end of every commit (every
 * thread stopped) eng_funcreloc_free_reclaim looks at each such copy: its
 * code is the copy and the kept base trampolines of its points (they
 * jump back into it).  When no thread's PC and no word of any stack
 * points into that code, and no removed mini is still waiting to be
 * freed (a thread in one would come back through a base), the copy's
 * unwind info is deregistered (one inferior call for every copy freed
 * in the commit, rtlib/rt_frames.c), its memory, its .eh_frame and its
 * points' bases go back to eng_codemem, and its points are forgotten;
 * the next request into the function builds a new copy.
 *
 * Stack words are the commit's (eng_inst_threads.c: %rsp up to 512 KiB
 * above it), plus here every word beyond those 512 KiB up to the end of
 * the stack's mapping: a return address into a copy can sit under any
 * depth of recursion.  Any word that looks like an address inside the
 * copy counts as a frame (stale words too): conservative, it can only
 * delay the free.  Not seen: a thread running on a stack other than the
 * one %rsp is in (sigaltstack handlers, swapcontext coroutines) whose
 * other stack holds a frame of the copy.
 *
 * eng_funcreloc_free_compact, at the start of the next commit, drops the
 * forgotten points from eng_inst's table once they are many, so that a
 * storm of relocating, freeing and relocating again does not grow it.
 */
#include "eng_funcreloc_int.h"
#include "sorted_u64.h"

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

#define SCANNED (512u << 10)     /* stack read by eng_inst_threads_read */
#define DEEP_MAX (64u << 20)     /* read at most this far beyond it */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Stack words the commit did not read: beyond 512 KiB above %rsp. */
struct deep {
	uint64_t *w;
	size_t n;
};

static int deep_read(struct eng_inst *in, const struct inst_threads *th,
		     struct deep *d)
{
	struct inst_range *maps = NULL;
	size_t nr = eng_inst_threads_read_maps(eng_proc_pid(in->p), &maps),
	       cap = 0;

	memset(d, 0, sizeof *d);
	for (size_t i = 0; i < th->n; i++) {
		uint64_t from = th->t[i].regs.rsp + SCANNED, end, len;

		end = eng_inst_threads_map_end(maps, nr, th->t[i].regs.rsp);
		if (end <= from)
			continue;
		len = (end - from > DEEP_MAX ? DEEP_MAX : end - from) & ~7ull;
		if (eng_inst_grow((void **)&d->w, &cap, d->n + len / 8,
			      sizeof *d->w) < 0) {
			free(maps);
			return -ENOMEM;
		}
		if (eng_mem_read(in->p, from, d->w + d->n, len, NULL) == 0)
			d->n += len / 8;
	}
	free(maps);
	qsort(d->w, d->n, sizeof *d->w, cmp_u64);
	return 0;
}

static bool deep_in(const struct deep *d, uint64_t lo, uint64_t hi)
{
	size_t a = sorted_u64_lower(d->w, d->n, lo);

	return a < d->n && d->w[a] < hi;
}

static bool code_busy(const struct inst_threads *th, const struct deep *d,
		      uint64_t lo, uint64_t hi)
{
	return eng_inst_threads_pc_in(th, lo, hi) ||
	       eng_inst_threads_word_in(th, lo, hi) || deep_in(d, lo, hi);
}

static bool in_copy(const struct fr_func *f, uint64_t a)
{
	return a >= f->copy && a < f->copy + f->alloc;
}

/* May f's copy go?  Not linked, no request (f->live from
 * eng_funcreloc_link_mark_live), none of its points in use, no thread in
 * it or its points' bases. */
static bool can_free(struct eng_inst *in, const struct fr_func *f,
		     const struct inst_threads *th, const struct deep *d)
{
	if (f->state != FR_COPY || f->patched || f->live || f->copy == 0)
		return false;
	if (code_busy(th, d, f->copy, f->copy + f->alloc))
		return false;
	for (size_t k = 0; k < in->npts; k++) {
		const struct ipoint *ip = &in->pts[k];

		if (ip->dead || !in_copy(f, ip->pt.patch_start))
			continue;
		if (ip->active || ip->patched)
			return false;
		if (ip->base != 0 &&
		    code_busy(th, d, ip->base, ip->base + ip->base_len))
			return false;
	}
	return true;
}

static bool registered(const struct fr_func *f)
{
	return f->eh_done;
}

/* One inferior call deregisters the unwind info of every copy in fs[]
 * that has some.  0 done, 1 not now, <0 error. */
static int deregister(struct eng_inst *in, struct inst_threads *th,
		      struct fr_func **fs, size_t n, struct hunch_err *err)
{
	uint64_t fn = eng_shm_entry(in->shm, HUNCH_RT_ENTRY_FRAMES_DEREGISTER);
	size_t k = eng_funcreloc_link_count(fs, n, registered);
	uint64_t ret = 0;
	int rc;

	if (k == 0)
		return 0;
	if (fn == 0 || eng_funcreloc_link_in_unwinder(in, th))
		return 1;       /* older rtlib: such copies stay */
	rc = eng_funcreloc_link_call_frames(in, th, fn, fs, n, registered, k,
					    &ret, err);
	if (rc < 0)
		return rc;
	if (ret != k)
		return hunch_err_set(err, -EPROTO,
				     "the runtime library of pid %d "
				     "deregistered %" PRIu64
				     " of %zu unwind tables",
				     (int)eng_proc_pid(in->p), ret, k);
	for (size_t i = 0; i < n; i++)
		if (fs[i]->eh_done) {
			fs[i]->eh_done = false;
			in->fr->frames--;
		}
	return 0;
}

/* Give f's memory back and forget its points (they were at addresses
 * the memory's next user will have). */
static void release(struct eng_inst *in, struct fr_func *f)
{
	for (size_t k = 0; k < in->npts; k++) {
		struct ipoint *ip = &in->pts[k];

		if (ip->dead || !in_copy(f, ip->pt.patch_start))
			continue;
		if (ip->base != 0)
			eng_codemem_free(in->mem, ip->base, ip->base_len);
		for (size_t s = 0; s < X86_TRAMP_MAX_SITES; s++)
			ip->ch[s].n = 0;
		ip->base = 0;
		ip->nsite = ip->nksite = 0;
		ip->dead = true;
		in->fr->dead_points++;
	}
	eng_codemem_free(in->mem, f->copy, f->alloc);
	if (f->eh != 0)
		eng_codemem_free(in->mem, f->eh, f->ehlen);
	x86_funcreloc_free(&f->fr);
	x86_parse_func_free(&f->cf);
	f->copy = f->eh = 0;
	f->state = FR_FREED;
	in->fr->freed++;
}

/* Drop the FR_FREED entries: the next request decides afresh. */
static void forget_freed(struct eng_funcreloc *r)
{
	size_t k = 0;

	for (size_t i = 0; i < r->nf; i++)
		if (r->f[i].state != FR_FREED)
			r->f[k++] = r->f[i];
	r->nf = k;
}

int eng_funcreloc_free_reclaim(struct eng_inst *in, struct inst_threads *th,
			  struct hunch_err *err)
{
	struct eng_funcreloc *r = in->fr;
	struct fr_func **fs = NULL;
	struct deep d = { 0 };
	size_t n = 0;
	int rc = 0;

	if (r == NULL || !eng_funcreloc_free_waiting(in))
		return 0;
	r->checks++;
	if (in->npf > 0) {      /* a thread may be in a removed mini */
		for (size_t i = 0; i < r->nf; i++)
			r->busy += r->f[i].state == FR_COPY && !r->f[i].patched;
		return 0;
	}
	if (eng_funcreloc_link_mark_live(in, true) < 0 ||
	    deep_read(in, th, &d) < 0 ||
	    (fs = malloc(r->nf * sizeof *fs)) == NULL) {
		free(d.w);
		return hunch_err_set(err, -ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < r->nf; i++)
		if (can_free(in, &r->f[i], th, &d))
			fs[n++] = &r->f[i];
		else if (r->f[i].state == FR_COPY && !r->f[i].patched)
			r->busy++;
	free(d.w);
	if (n > 0)
		rc = deregister(in, th, fs, n, err);
	if (rc > 0) {           /* the unwinder is busy: copies without
				 * unwind info can go all the same */
		size_t k = 0;

		for (size_t i = 0; i < n; i++)
			if (!fs[i]->eh_done)
				fs[k++] = fs[i];
		r->busy += n - k;
		n = k;
		rc = 0;
	}
	for (size_t i = 0; rc == 0 && i < n; i++)
		release(in, fs[i]);
	free(fs);
	forget_freed(r);
	return rc;
}

bool eng_funcreloc_free_waiting(const struct eng_inst *in)
{
	for (size_t i = 0; in->fr != NULL && i < in->fr->nf; i++)
		if (in->fr->f[i].state == FR_COPY && !in->fr->f[i].patched)
			return true;
	return false;
}

/* Drop dead points from eng_inst's table (requests refer to points by
 * index: live ones are renumbered; only released requests refer to dead
 * ones) and rebuild its byte map. */
int eng_funcreloc_free_compact(struct eng_inst *in, struct hunch_err *err)
{
	struct eng_funcreloc *r = in->fr;
	uint32_t *to;
	size_t k = 0;

	if (r == NULL || r->dead_points < 1024 ||
	    r->dead_points * 2 < in->npts)
		return 0;
	if ((to = malloc((in->npts + 1) * sizeof *to)) == NULL)
		return 0;       /* another time */
	for (size_t i = 0; i < in->npts; i++) {
		if (in->pts[i].dead) {
			for (size_t s = 0; s < X86_TRAMP_MAX_SITES; s++)
				free(in->pts[i].ch[s].id);
			to[i] = 0;
			continue;
		}
		to[i] = (uint32_t)k;
		in->pts[k++] = in->pts[i];
	}
	for (size_t i = 0; i < in->nreq; i++)
		in->req[i].point = in->req[i].point < in->npts ?
				   to[in->req[i].point] : 0;
	free(to);
	in->npts = k;
	r->dead_points = 0;
	r->compactions++;
	if (eng_inst_rehash(in) < 0)
		return hunch_err_set(err, -ENOMEM, "out of memory");
	return 0;
}

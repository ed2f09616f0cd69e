/*
 * eng_funcreloc.c - deciding, building and (un)linking relocated
 * functions (the protocol is in eng_funcreloc.h).
 */
#include "eng_funcreloc_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eng_codemem.h"
#include "eng_inst_int.h"
#include "eng_points.h"
#include "eng_proc.h"
#include "eng_shm.h"
#include "hunch_abi.h"
#include "x86_decode.h"
#include "x86_parse.h"

struct fr_func *eng_funcreloc_find(const struct eng_funcreloc *r, uint64_t a)
{
	size_t lo = 0, hi = r->nf;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (r->f[mid].hi <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->nf && r->f[lo].lo <= a ? &r->f[lo] : NULL;
}

static struct fr_func *insert_func(struct eng_funcreloc *r, uint64_t lo,
				   uint64_t hi)
{
	size_t i = 0;

	if (eng_inst_grow((void **)&r->f, &r->capf, r->nf + 1, sizeof *r->f) <
	    0)
		return NULL;
	while (i < r->nf && r->f[i].lo < lo)
		i++;
	memmove(&r->f[i + 1], &r->f[i], (r->nf - i) * sizeof *r->f);
	memset(&r->f[i], 0, sizeof r->f[i]);
	r->f[i].lo = lo;
	r->f[i].hi = hi;
	r->nf++;
	return &r->f[i];
}

int eng_funcreloc_image(struct eng_inst *in, struct eng_points_cache *pc,
			struct eng_image *img, uint64_t base,
			struct hunch_err *err)
{
	struct eng_funcreloc *r = in->fr;
	struct fr_img *ni, *m;
	size_t nf = eng_image_nfuncs(img);

	if (r == NULL) {
		r = in->fr = calloc(1, sizeof *r);
		if (r == NULL || x86_decode_open(&r->dec) < 0)
			return hunch_err_set(err, -ENOMEM,
					  "cannot open the decoder");
	}
	ni = realloc(r->img, (r->nimg + 1) * sizeof *r->img);
	if (ni == NULL)
		return hunch_err_set(err, -ENOMEM, "out of memory");
	r->img = ni;
	m = &r->img[r->nimg];
	memset(m, 0, sizeof *m);
	m->img = img;
	m->pc = pc;
	m->base = base;
	m->bias = base - eng_image_link_base(img);
	m->lo = UINT64_MAX;
	for (size_t i = 0; i < nf; i++) {
		const struct eng_func *f = eng_image_func(img, i);

		if (base + f->addr < m->lo)
			m->lo = base + f->addr;
		if (base + f->addr + f->size > m->hi)
			m->hi = base + f->addr + f->size;
	}
	if (eng_funcreloc_cfi_elf_open(&m->elf, eng_image_path(img)) < 0)
		return hunch_err_set(err, -EIO, "%s: cannot read its unwind "
				  "sections", eng_image_path(img));
	r->nimg++;
	return 0;
}

int eng_funcreloc_module(struct eng_inst *in, const char *path,
			 uint64_t bias, struct hunch_err *err)
{
	struct eng_points_cache *pc = NULL;
	struct eng_image *img = NULL;
	int rc;

	for (size_t i = 0; in->fr != NULL && i < in->fr->nimg; i++)
		if (in->fr->img[i].bias == bias &&
		    strcmp(eng_image_path(in->fr->img[i].img), path) == 0)
			return 0;       /* already on */
	if ((rc = eng_image_open(path, &img, err)) < 0)
		return rc;
	if ((rc = eng_points_cache_new(&pc, err)) < 0 ||
	    (rc = eng_funcreloc_image(in, pc, img, bias +
				      eng_image_link_base(img), err)) < 0) {
		eng_points_cache_free(pc);
		eng_image_close(img);
		return rc;
	}
	in->fr->img[in->fr->nimg - 1].owned = true;
	return 0;
}

static void img_close(struct fr_img *m)
{
	eng_funcreloc_cfi_elf_close(&m->elf);
	if (!m->owned)
		return;
	eng_points_cache_free(m->pc);
	eng_image_close(m->img);
}

static const char *base_name(const char *p)
{
	const char *b = strrchr(p, '/');

	return b ? b + 1 : p;
}

/* Is the module still mapped at that bias?  (A library unloaded without
 * eng_inst_drop_range must not be mistaken for whatever is mapped
 * there next.) */
static bool still_loaded(const struct eng_proc *p, const struct fr_img *m)
{
	const char *name = base_name(eng_image_path(m->img));

	for (size_t i = 0; i < eng_solib_nmodules(p); i++) {
		const struct eng_module *em = eng_solib_module(p, i);

		if (em->bias == m->bias && strcmp(base_name(em->path),
						  name) == 0)
			return true;
	}
	return false;
}

static struct fr_img *img_of(const struct eng_inst *in, uint64_t a)
{
	struct eng_funcreloc *r = in->fr;

	for (size_t i = 0; i < r->nimg; i++)
		if (a >= r->img[i].lo && a < r->img[i].hi)
			return still_loaded(in->p,
					    &r->img[i]) ? &r->img[i] : NULL;
	return NULL;
}

bool eng_funcreloc_loaded(const struct eng_inst *in, const struct fr_func *f)
{
	return img_of(in, f->lo) != NULL;
}

/* Is any patch of the original body in use (or, with queued, has a
 * request queued there)?  Then its points are instrumented in place and
 * relocation would leave them behind. */
static bool body_busy(const struct eng_inst *in, uint64_t lo, uint64_t hi,
		      bool queued)
{
	for (size_t k = 0; k < in->npts; k++) {
		const struct ipoint *ip = &in->pts[k];

		if ((ip->active || ip->patched) && !ip->dead &&
		    ip->pt.patch_start < hi &&
		    ip->pt.patch_start + ip->pt.patch_len > lo)
			return true;
	}
	for (size_t q = 0; queued && q < in->nqueue; q++) {
		const struct request *rq = eng_inst_req_get(in, in->queue[q]);

		if (rq != NULL && rq->state == ENG_REQ_PENDING &&
		    rq->site >= lo && rq->site < hi)
			return true;
	}
	return false;
}

static int refuse(struct fr_func *f, enum eng_refusal why)
{
	f->state = FR_REFUSED;
	f->why = why;
	return 0;
}

/* Memory for the copy, near the original (stops the program for the
 * allocation's possible inferior call of mmap). */
static int alloc_near(struct eng_inst *in, uint64_t near, size_t len,
		      uint64_t *at, struct hunch_err *err)
{
	bool was_stopped = eng_proc_stopped(in->p);
	int rc;

	if (!was_stopped && (rc = eng_ptrace_stop_all(in->p, err)) < 0)
		return rc;
	rc = eng_codemem_alloc(in->mem, near, len, at, err);
	if (!was_stopped)
		eng_ptrace_resume_all(in->p, NULL);
	return rc;
}

/* Lay the copy out at its final address (sizes depend on it only for
 * branches out of reach, so twice is enough). */
static int place_copy(struct eng_inst *in, struct eng_funcreloc *r,
		      struct fr_func *f, const struct x86_func *xf,
		      uint64_t base, const uint8_t *code,
		      struct hunch_err *err)
{
	size_t want;
	int rc;

	rc = x86_funcreloc_build(in->reloc, r->dec, xf, base, code, f->lo,
				 &f->fr);
	for (int round = 0; rc == 0 && round < 3; round++) {
		want = f->fr.len + 32;
		x86_funcreloc_free(&f->fr);
		if ((rc = alloc_near(in, f->lo, want, &f->copy, err)) < 0)
			return rc;
		rc = x86_funcreloc_build(in->reloc, r->dec, xf, base, code,
					 f->copy,
				  &f->fr);
		if (rc == 0 && f->fr.len <= want) {
			f->alloc = want;
			return 0;
		}
		eng_codemem_free(in->mem, f->copy, want);
		f->copy = 0;
	}
	if (rc == -ENOMEM)
		return hunch_err_set(err, rc, "out of memory");
	return refuse(f, f->fr.why ? eng_refusal_of_x86(f->fr.why) :
		      ENG_REFUSAL_FR_NO_FIT), 1;
}

/* Parse the copy: every point must take a jmp now. */
static int parse_copy(struct eng_funcreloc *r, struct fr_func *f)
{
	struct x86_parse_ctx ctx = { .read = x86_funcreloc_read, .arg = &f->fr };

	if (x86_parse_function(r->dec, f->fr.code, f->fr.code_len, f->copy,
			       &ctx, &f->cf) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < f->cf.npoints; i++)
		if (!f->cf.points[i].ok)
			return refuse(f, ENG_REFUSAL_FR_COPY_POINT), 1;
	return f->cf.npoints == 0 ?
		(refuse(f, ENG_REFUSAL_FR_COPY_NO_POINTS), 1) : 0;
}

/* Unwind info for the copy, written next to it. */
static int place_cfi(struct eng_inst *in, struct fr_img *m,
		     struct fr_func *f, const struct x86_func *xf,
		     struct hunch_err *err)
{
	uint8_t *blob = NULL;
	size_t len = 0;
	enum eng_refusal why = ENG_REFUSAL_NONE;
	int rc;

	rc = eng_funcreloc_cfi_build(&m->elf,
				     xf->addr + eng_image_link_base(m->img),
				     m->bias, &f->fr, &blob, &len, &why);
	if (rc == 1)
		return 0;       /* no CFI in the original either */
	if (rc == -ENOMEM)
		return hunch_err_set(err, rc, "out of memory");
	if (rc < 0)
		return refuse(f, why), 1;
	rc = alloc_near(in, f->copy, len, &f->eh, err);
	f->ehlen = len;
	if (rc == 0)
		rc = eng_codemem_write(in->mem, f->eh, blob, len, err);
	free(blob);
	return rc;
}

static int build(struct eng_inst *in, struct eng_funcreloc *r,
		 struct fr_img *m, struct fr_func *f,
		 const struct x86_func *xf, struct hunch_err *err)
{
	uint8_t *code = malloc(xf->size + 1);
	int rc;

	if (code == NULL)
		return hunch_err_set(err, -ENOMEM, "out of memory");
	if (eng_image_read(m->img, xf->addr, code, xf->size) < 0) {
		free(code);
		return refuse(f, ENG_REFUSAL_FR_NO_BYTES);
	}
	rc = place_copy(in, r, f, xf, m->base, code, err);
	free(code);
	if (rc == 0 && (rc = parse_copy(r, f)) < 0)
		return hunch_err_set(err, rc, "out of memory");
	if (rc == 0)
		rc = place_cfi(in, m, f, xf, err);
	if (rc == 0)
		rc = eng_codemem_write(in->mem, f->copy, f->fr.code, f->fr.len,
				       err);
	if (rc != 0) {          /* refused: the memory was never reachable */
		if (f->copy != 0)
			eng_codemem_free(in->mem, f->copy, f->alloc);
		if (f->eh != 0)
			eng_codemem_free(in->mem, f->eh, f->ehlen);
		f->copy = f->eh = 0;
		return rc < 0 ? rc : 0;
	}
	f->epatch = m->base + xf->points[0].patch_start;
	f->eplen = xf->points[0].patch_len;
	f->ejump = x86_funcreloc_slot(&f->fr, m->base + xf->points[0].addr);
	f->state = FR_COPY;
	r->built++;
	return 0;
}

/* Refuse f, or build its copy (0, or <0 on error). */
static int decide(struct eng_inst *in, struct fr_img *m,
		  const struct eng_func *ef, struct fr_func *f,
		  const struct x86_func *xf, struct hunch_err *err)
{
	enum x86_refusal why;

	if ((why = x86_funcreloc_refusal(xf)) != X86_REFUSAL_NONE)
		return refuse(f, eng_refusal_of_x86(why));
	/* glibc >= 2.41's cancellation handler checks that the PC is
	 * inside this function's own code */
	if (strcmp(ef->name, "__syscall_cancel_arch") == 0)
		return refuse(f, ENG_REFUSAL_FR_GLIBC_PC);
	/* a copy of the unwinder's own code could hold the lock that
	 * registering copies takes, out of in_unwinder's sight */
	if (strstr(eng_image_path(m->img), "/libgcc_s.so") != NULL)
		return refuse(f, ENG_REFUSAL_FR_LIBGCC);
	return build(in, in->fr, m, f, xf, err);
}

/* First request into a function: does it need a copy (or, with force,
 * will it have one anyway), can it have one? */
struct fr_func *eng_funcreloc_consider(struct eng_inst *in, uint64_t a,
				       bool force, int *rc,
				       struct hunch_err *err)
{
	struct eng_funcreloc *r = in->fr;
	struct fr_img *m = img_of(in, a);
	const struct eng_func *ef;
	const struct x86_func *xf;
	struct fr_func *f;

	*rc = 0;
	if (m == NULL || (ef = eng_image_func_at(m->img, a - m->base)) == NULL)
		return NULL;
	if ((xf = eng_points_of(m->pc, m->img, ef, err)) == NULL) {
		*rc = -ENOMEM;
		return NULL;
	}
	/* a function decided FR_NOT_NEEDED may have in-place requests
	 * queued: forcing it then would patch its entry twice */
	if (body_busy(in, m->base + xf->addr, m->base + xf->addr + xf->size,
		      force))
		return NULL;    /* decided again later */
	if ((f = eng_funcreloc_find(r, a)) == NULL) /* force: FR_NOT_NEEDED */
		f = insert_func(r, m->base + xf->addr,
				m->base + xf->addr + xf->size);
	if (f == NULL) {
		*rc = hunch_err_set(err, -ENOMEM, "out of memory");
		return NULL;
	}
	if (xf->npoints == 0 || (xf->ok && !force)) {
		f->state = FR_NOT_NEEDED;
		return f;
	}
	*rc = decide(in, m, ef, f, xf, err);
	if (*rc < 0)
		return NULL;
	/* forced (after-call) but not relocatable: its points keep their
	 * place; the reason stays in f->why for the caller */
	if (force && xf->ok && f->state == FR_REFUSED)
		f->state = FR_NOT_NEEDED;
	return f;
}

/* The copy's point for an original one: same instruction (or its slot,
 * for an instruction with padding before it); the entry is the entry. */
static int map_point(const struct fr_func *f, const struct eng_inst_point *pt,
		     struct eng_inst_point *out, struct hunch_err *err)
{
	uint64_t at = x86_funcreloc_at(&f->fr, pt->addr);
	uint64_t slot = x86_funcreloc_slot(&f->fr, pt->addr);

	for (size_t i = 0; at != 0 && i < f->cf.npoints; i++) {
		const struct x86_point *cp = &f->cf.points[i];

		if (cp->addr == at || cp->addr == slot || (i == 0 &&
		    (pt->addr == f->epatch || pt->addr == f->lo))) {
			eng_inst_point_from(cp, 0, out);
			return 1;
		}
	}
	return hunch_err_set(err, -ENOENT, "point 0x%" PRIx64 " has no "
			  "counterpart in the relocated copy of its function "
			  "at 0x%" PRIx64, pt->addr, f->lo);
}

int eng_funcreloc_route(struct eng_inst *in, const struct eng_inst_point *pt,
			struct eng_inst_point *out, struct hunch_err *err)
{
	struct fr_func *f;
	int rc = 0;

	if (in->fr == NULL || in->fr->nimg == 0)
		return 0;
	f = eng_funcreloc_find(in->fr, pt->addr);
	if (f != NULL && !eng_funcreloc_loaded(in, f))
		return 0;       /* its library is gone (no drop_range) */
	if (f == NULL &&
	    (f = eng_funcreloc_consider(in, pt->addr, false, &rc, err)) == NULL)
		return rc;
	if (f->state != FR_COPY)
		return 0;
	return map_point(f, pt, out, err);
}

int eng_funcreloc_copy_range(const struct eng_inst *in, uint64_t lo,
			     uint64_t hi, uint64_t *clo, uint64_t *chi)
{
	struct fr_func *f = in->fr ? eng_funcreloc_find(in->fr, lo) : NULL;

	if (f == NULL || f->state != FR_COPY || f->lo != lo || f->hi != hi ||
	    !f->patched)
		return 0;
	*clo = f->copy;
	*chi = f->copy + f->fr.len;
	return 1;
}

void eng_funcreloc_stats(const struct eng_inst *in,
			 struct eng_funcreloc_stats *st)
{
	memset(st, 0, sizeof *st);
	for (size_t i = 0; in->fr != NULL && i < in->fr->nf; i++) {
		const struct fr_func *f = &in->fr->f[i];

		st->relocated += f->state == FR_COPY;
		st->refused += f->state == FR_REFUSED;
		st->live += f->patched;
		st->waiting += f->state == FR_COPY && !f->patched;
	}
	if (in->fr == NULL)
		return;
	st->frames = in->fr->frames;
	st->built = in->fr->built;
	st->freed = in->fr->freed;
	st->checks = in->fr->checks;
	st->busy = in->fr->busy;
}

uint64_t eng_funcreloc_unwind_pc(const struct eng_inst *in, uint64_t pc,
				 bool ra)
{
	uint64_t at = ra ? pc - 1 : pc;

	for (size_t i = 0; in->fr != NULL && i < in->fr->nf; i++) {
		const struct fr_func *f = &in->fr->f[i];

		if (f->state == FR_COPY && at >= f->copy &&
		    at < f->copy + f->fr.code_len)
			return x86_funcreloc_orig(&f->fr, at);
	}
	return 0;
}

bool eng_funcreloc_in_copy_of(const struct eng_inst *in, uint64_t a,
			      uint64_t lo, uint64_t hi)
{
	for (size_t i = 0; in->fr != NULL && i < in->fr->nf; i++) {
		const struct fr_func *f = &in->fr->f[i];

		if (f->state == FR_COPY && f->lo >= lo && f->lo < hi &&
		    a >= f->copy && a < f->copy + f->fr.len)
			return true;
	}
	return false;
}

void eng_funcreloc_drop(struct eng_inst *in, uint64_t lo, uint64_t hi)
{
	struct eng_funcreloc *r = in->fr;
	size_t k = 0;

	if (r == NULL)
		return;
	for (size_t i = 0; i < r->nf; i++) {
		struct fr_func *f = &r->f[i];

		if (f->lo >= lo && f->lo < hi) {
			/* its copy stays mapped, unreachable (and its unwind
			 * info registered: harmless) */
			x86_funcreloc_free(&f->fr);
			x86_parse_func_free(&f->cf);
			continue;
		}
		r->f[k++] = *f;
	}
	r->nf = k;
	k = 0;
	for (size_t i = 0; i < r->nimg; i++) {
		if (r->img[i].lo >= lo && r->img[i].lo < hi) {
			img_close(&r->img[i]);
			continue;
		}
		r->img[k++] = r->img[i];
	}
	r->nimg = k;
}

void eng_funcreloc_free(struct eng_inst *in)
{
	struct eng_funcreloc *r = in->fr;

	if (r == NULL)
		return;
	for (size_t i = 0; i < r->nf; i++) {
		x86_funcreloc_free(&r->f[i].fr);
		x86_parse_func_free(&r->f[i].cf);
	}
	for (size_t i = 0; i < r->nimg; i++)
		img_close(&r->img[i]);
	free(r->img);
	free(r->f);
	if (r->dec != NULL)
		x86_decode_close(r->dec);
	free(r);
	in->fr = NULL;
}

/*
 * src_live_points.c - the report behind `hunch points`: every function's
 * instrumentation points in a program file and whether each can be
 * patched (format in arch/x86_64/README.md, "hunch points").  It reads
 * the engine's symbols and points cache, so it lives on the consultant's
 * side of the seam with the other src_live files; tui/cli_points.c only
 * parses the command line.
 */
#include "src_live_points.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eng_funcreloc.h"
#include "eng_points.h"
#include "eng_image.h"

/* How a function would be instrumented (the engine's order of
 * fallbacks, DESIGN §6): every point a jmp in place; else the whole
 * function relocated so that every point is a jmp in the copy; else
 * traps (int3) at the points too small for a jmp; else nothing. */
enum place { PL_INPLACE, PL_RELOC, PL_TRAP, PL_NONE, PL_N };
static const char *const place_name[PL_N] = {
	"in place", "relocated", "traps", "none"
};

struct points_run {
	struct eng_image *img;
	struct eng_points_cache *cache;
	struct eng_funcreloc_checker *fr;
	enum src_points_mode mode;
	uint8_t *bytes;               /* scratch for patch bytes */
	size_t nfuncs, nok, npoints, npoints_ok;
	size_t nplace[PL_N];
};

static void print_why(enum x86_refusal why, uint64_t at)
{
	const char *s = x86_refusal_str(why);

	printf("refused: %s", s ? s : "unknown");
	if (at != 0)
		printf(" (at +0x%llx)", (unsigned long long)at);
}

static void print_target(const struct points_run *r, uint64_t t)
{
	const struct eng_func *f = eng_image_func_at(r->img, t);

	if (f != NULL && f->addr == t)
		printf(" to %s", f->name);
	else
		printf(" to +0x%llx", (unsigned long long)t);
}

static void print_detail(const struct points_run *r, const struct x86_point *p)
{
	if (p->kind == X86_PT_ENTRY) {
		if (p->after_endbr)
			printf(" after-endbr64");
		return;
	}
	if (p->kind == X86_PT_EXIT)
		printf(" %s", !p->tail_call ? "ret" : p->indirect ?
		       "tail-indirect" : p->cond ? "tail-cond" : "tail");
	if (p->indirect)
		printf(p->kind == X86_PT_CALL ? " indirect" : "");
	else if (p->kind == X86_PT_CALL || p->tail_call)
		print_target(r, p->target);
}

static void print_point(const struct points_run *r, const struct x86_point *p)
{
	uint8_t b[256];

	printf("  point %s +0x%llx len %u", x86_parse_point_kind_name(p->kind),
	       (unsigned long long)p->addr, p->insn_len);
	print_detail(r, p);
	printf(" patch +0x%llx+%u [", (unsigned long long)p->patch_start,
	       p->patch_len);
	if (eng_image_read(r->img, p->patch_start, b, p->patch_len) == 0)
		for (unsigned i = 0; i < p->patch_len; i++)
			printf(i ? " %02x" : "%02x", b[i]);
	printf("] ");
	if (p->ok)
		printf("ok");
	else
		print_why(p->why, p->why_at);
	printf("\n");
}

static bool has_entry(const struct x86_func *xf)
{
	for (size_t i = 0; i < xf->npoints; i++)
		if (xf->points[i].kind == X86_PT_ENTRY)
			return true;
	return false;
}

/* The place of f, with *why: why it is not relocated (PL_TRAP) or why
 * nothing can be patched (PL_NONE).  Why a jmp in place is not enough
 * is the parser's verdict, printed before. */
static enum place place_of(struct points_run *r, const struct eng_func *f,
			   const struct x86_func *xf, enum eng_refusal *why)
{
	enum eng_funcreloc_verdict v;

	*why = ENG_REFUSAL_NONE;
	if (xf->ok)
		return PL_INPLACE;
	if (xf->npoints == 0 || !has_entry(xf))
		return *why = xf->why ? eng_refusal_of_x86(xf->why) :
			eng_refusal_of_x86(X86_REFUSAL_FR_NO_ENTRY), PL_NONE;
	v = eng_funcreloc_check(r->fr, r->cache, r->img, f, why);
	if (v == ENG_FUNCRELOC_RELOCATED)
		return *why = ENG_REFUSAL_NONE, PL_RELOC;
	return v == ENG_FUNCRELOC_IN_PLACE ? PL_INPLACE : PL_TRAP;
}

static void print_place(enum place pl, enum eng_refusal why)
{
	const char *s = eng_refusal_str(why);

	printf("; %s", place_name[pl]);
	if (pl == PL_TRAP)
		printf(" (not relocated: %s)", s ? s : "unknown");
	else if (pl == PL_NONE)
		printf(" (%s)", s);
}

static int show_func(struct points_run *r, const struct eng_func *f,
		     bool points)
{
	struct hunch_err err = { 0 };
	const struct x86_func *xf = eng_points_of(r->cache, r->img, f, &err);
	enum eng_refusal why;
	enum place pl;

	if (xf == NULL) {
		fprintf(stderr, "hunch points: %s\n", err.msg);
		return -1;
	}
	pl = place_of(r, f, xf, &why);
	r->nplace[pl]++;
	r->nfuncs++;
	r->nok += xf->ok;
	r->npoints += xf->npoints;
	for (size_t i = 0; i < xf->npoints; i++)
		r->npoints_ok += xf->points[i].ok;
	if (r->mode == SRC_POINTS_REFUSED && xf->ok)
		return 0;
	printf("function %s +0x%llx size %llu ", f->name,
	       (unsigned long long)f->addr, (unsigned long long)f->size);
	if (xf->ok)
		printf("ok");
	else
		print_why(xf->why, xf->why_at);
	print_place(pl, why);
	printf("\n");
	for (size_t i = 0; points && i < xf->npoints; i++)
		print_point(r, &xf->points[i]);
	return 0;
}

static int show_named(struct points_run *r, char *const *names, int nnames)
{
	int rc = 0;

	for (int i = 0; i < nnames; i++) {
		const struct eng_func *f = eng_sym_lazy_func_by_name(r->img, names[i]);

		if (f == NULL) {
			fprintf(stderr, "hunch points: no function '%s' in %s\n",
				names[i], eng_image_path(r->img));
			rc = 1;
		} else if (show_func(r, f, true) < 0) {
			return -EIO;
		}
	}
	return rc;
}

static void print_shares(const struct points_run *r)
{
	double n = r->nfuncs ? (double)r->nfuncs : 1.0;

	printf("shares %s:", eng_image_path(r->img));
	for (int p = 0; p < PL_N; p++)
		printf("%s %zu %s (%.1f%%)", p ? "," : "", r->nplace[p],
		       place_name[p], 100.0 * (double)r->nplace[p] / n);
	printf("\n");
}

int src_live_points(const char *program, char *const *names, int nnames,
		    enum src_points_mode mode, struct hunch_err *err)
{
	struct points_run r = { .mode = mode };
	int rc = 0;

	if (eng_image_open(program, &r.img, err) < 0 ||
	    eng_points_cache_new(&r.cache, err) < 0) {
		eng_image_close(r.img);
		return err ? err->code : -EINVAL;
	}
	if (eng_funcreloc_check_new(&r.fr) < 0) {
		eng_points_cache_free(r.cache);
		eng_image_close(r.img);
		return hunch_err_set(err, -ENOMEM, "out of memory for the "
				  "relocation checker");
	}
	if (nnames > 0) {
		rc = show_named(&r, names, nnames);
	} else {
		for (size_t i = 0; i < eng_image_nfuncs(r.img); i++)
			if (show_func(&r, eng_image_func(r.img, i),
				      r.mode != SRC_POINTS_SUMMARY) < 0) {
				rc = -EIO;
				break;
			}
	}
	printf("summary %s: %zu functions, %zu ok (%.1f%%), %zu refused; "
	       "%zu points, %zu ok\n", eng_image_path(r.img), r.nfuncs, r.nok,
	       r.nfuncs ? 100.0 * (double)r.nok / (double)r.nfuncs : 0.0,
	       r.nfuncs - r.nok, r.npoints, r.npoints_ok);
	print_shares(&r);
	eng_funcreloc_check_free(r.fr);
	eng_points_cache_free(r.cache);
	eng_image_close(r.img);
	return rc;
}

/*
 * cli_points.c - `hunch points`: the instrumentation points of a
 * program's functions and whether each can be patched, and why not.
 *
 *   hunch points [--all|--refused] PROGRAM [FUNCTION...]
 *
 * A diagnostic over one file, with no process: it reads the engine's
 * symbols and points cache directly (the one command that does; the
 * consultant has no use for patch areas).  Output, one record a line,
 * stable for grep and tests (arch/x86_64/README.md, "hunch points"):
 *
 *   function NAME +0xADDR size N ok
 *   function NAME +0xADDR size N refused: WHY[ (at +0xADDR)]
 *     point KIND +0xADDR len N [DETAIL] patch +0xSTART+N [BYTES] ok
 *     point KIND +0xADDR len N [DETAIL] patch +0xSTART+N [BYTES] refused: WHY[ (at +0xADDR)]
 *   summary FILE: N functions, N ok (P%), N refused; N points, N ok
 *
 * KIND is entry, exit or call; DETAIL is `after-endbr64` (entry), `ret`,
 * `tail`, `tail-cond` or `tail-indirect` with `to TARGET` (exit), `to
 * NAME`, `to +0xADDR` or `indirect` (call).  Addresses are
 * image-relative.
 */
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eng_points.h"
#include "eng_symbols.h"

enum points_mode { PM_SUMMARY, PM_ALL, PM_REFUSED };

struct points_run {
	struct eng_image *img;
	struct eng_points_cache *cache;
	enum points_mode mode;
	uint8_t *bytes;               /* scratch for patch bytes */
	size_t nfuncs, nok, npoints, npoints_ok;
};

static void print_why(const char *why, uint64_t at)
{
	printf("refused: %s", why ? why : "unknown");
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

	printf("  point %s +0x%llx len %u", x86_point_kind_name(p->kind),
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

static int show_func(struct points_run *r, const struct eng_func *f,
		     bool points)
{
	struct hunch_err err = { 0 };
	const struct x86_func *xf = eng_points_of(r->cache, r->img, f, &err);

	if (xf == NULL) {
		fprintf(stderr, "hunch points: %s\n", err.msg);
		return -1;
	}
	r->nfuncs++;
	r->nok += xf->ok;
	r->npoints += xf->npoints;
	for (size_t i = 0; i < xf->npoints; i++)
		r->npoints_ok += xf->points[i].ok;
	if (r->mode == PM_REFUSED && xf->ok)
		return 0;
	printf("function %s +0x%llx size %llu ", f->name,
	       (unsigned long long)f->addr, (unsigned long long)f->size);
	if (xf->ok)
		printf("ok");
	else
		print_why(xf->why, xf->why_at);
	printf("\n");
	for (size_t i = 0; points && i < xf->npoints; i++)
		print_point(r, &xf->points[i]);
	return 0;
}

static int parse_points_args(int argc, char **argv, enum points_mode *mode)
{
	static const struct option longopts[] = {
		{ "all", no_argument, NULL, 'a' },
		{ "refused", no_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*mode = PM_SUMMARY;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+ar", longopts, NULL)) != -1) {
		if (c == 'a')
			*mode = PM_ALL;
		else if (c == 'r')
			*mode = PM_REFUSED;
		else
			return -1;
	}
	if (optind >= argc) {
		fprintf(stderr, "hunch points: name a program file\n");
		return -1;
	}
	return optind;
}

static int show_named(struct points_run *r, int argc, char **argv, int first)
{
	int rc = HUNCH_EXIT_OK;

	for (int i = first; i < argc; i++) {
		const struct eng_func *f = eng_image_func_by_name(r->img, argv[i]);

		if (f == NULL) {
			fprintf(stderr, "hunch points: no function '%s' in %s\n",
				argv[i], eng_image_path(r->img));
			rc = HUNCH_EXIT_USAGE;
		} else if (show_func(r, f, true) < 0) {
			return HUNCH_EXIT_TARGET;
		}
	}
	return rc;
}

int cli_points(int argc, char **argv)
{
	struct points_run r = { 0 };
	struct hunch_err err = { 0 };
	int first = parse_points_args(argc, argv, &r.mode), rc = HUNCH_EXIT_OK;

	if (first < 0)
		return HUNCH_EXIT_USAGE;
	if (eng_image_open(argv[first], &r.img, &err) < 0 ||
	    eng_points_cache_new(&r.cache, &err) < 0) {
		fprintf(stderr, "hunch: %s\n", err.msg);
		eng_image_close(r.img);
		return HUNCH_EXIT_TARGET;
	}
	if (first + 1 < argc) {
		rc = show_named(&r, argc, argv, first + 1);
	} else {
		for (size_t i = 0; i < eng_image_nfuncs(r.img); i++)
			if (show_func(&r, eng_image_func(r.img, i),
				      r.mode != PM_SUMMARY) < 0) {
				rc = HUNCH_EXIT_TARGET;
				break;
			}
	}
	printf("summary %s: %zu functions, %zu ok (%.1f%%), %zu refused; "
	       "%zu points, %zu ok\n", eng_image_path(r.img), r.nfuncs, r.nok,
	       r.nfuncs ? 100.0 * (double)r.nok / (double)r.nfuncs : 0.0,
	       r.nfuncs - r.nok, r.npoints, r.npoints_ok);
	eng_points_cache_free(r.cache);
	eng_image_close(r.img);
	return rc;
}

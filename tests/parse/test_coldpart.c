/*
 * test_coldpart.c - gcc cold parts without a symbol (engine/eng_points.c,
 * eng_coldpart.c).  A stripped file keeps no `foo.cold`: the jumps from
 * foo into it must still be internal jumps, not exits.
 *
 *   test-parse-coldpart COLDPART COLDPART-STRIPPED [PYTHON3.11]
 *
 * COLDPART (coldpart.c, -O2 -rdynamic) has cp_work and cp_work.cold;
 * its stripped copy has only cp_work (dynamic symbol).  The stripped
 * cp_work must parse to exactly the exits of the unstripped one, none
 * into the cold part's range.  Debian's stripped python3.11: no exit of
 * _PyEval_EvalFrameDefault lands in its nameless cold part (the unwind
 * range 0x430f05-0x43455e, CFA rsp+352 at its start), where 278
 * conditional jumps used to count as exits.
 */
#include <stdio.h>
#include <string.h>

#include "eng_points.h"
#include "eng_image.h"
#include "tap.h"

struct summary {
	size_t exits, into;   /* exits; exits whose target is in [lo, hi) */
	bool ok;
};

static struct summary summarize(struct eng_points_cache *pc,
				struct eng_image *img, const char *name,
				uint64_t lo, uint64_t hi)
{
	const struct eng_func *f = eng_sym_lazy_func_by_name(img, name);
	const struct x86_func *xf = f ? eng_points_of(pc, img, f, NULL) : NULL;
	struct summary s = { 0 };

	if (xf == NULL)
		return s;
	s.ok = true;
	for (size_t i = 0; i < xf->npoints; i++) {
		const struct x86_point *p = &xf->points[i];

		if (p->kind != X86_PT_EXIT)
			continue;
		s.exits++;
		if (p->target >= lo && p->target < hi)
			s.into++;
	}
	return s;
}

static void check_target(const char *full, const char *stripped)
{
	struct eng_points_cache *pc = NULL, *pc2 = NULL;
	struct eng_image *a = NULL, *b = NULL;
	struct hunch_err err = { 0 };
	const struct eng_func *cold;
	struct summary sa, sb;
	uint64_t lo, hi;

	if (!tap_ok(eng_image_open(full, &a, &err) == 0 &&
		    eng_image_open_flags(stripped, ENG_IMAGE_NO_DEBUG_FILE,
					 &b, &err) == 0 &&
		    eng_points_cache_new(&pc, &err) == 0 &&
		    eng_points_cache_new(&pc2, &err) == 0,
		    "coldpart: opened both files %s", err.msg))
		goto out;
	cold = eng_sym_lazy_func_by_name(a, "cp_work.cold");
	if (!tap_ok(cold != NULL && cold->size > 0,
		    "coldpart: gcc split cp_work into cp_work.cold"))
		goto out;
	lo = cold->addr;
	hi = cold->addr + cold->size;
	tap_ok(eng_image_func_at(b, lo) == NULL &&
	       eng_sym_lazy_func_by_name(b, "cp_work.cold") == NULL &&
	       eng_sym_lazy_func_by_name(b, "cp_work") != NULL,
	       "coldpart: the stripped copy has cp_work, no symbol at the cold "
	       "part +0x%llx", (unsigned long long)lo);
	sa = summarize(pc, a, "cp_work", lo, hi);
	sb = summarize(pc2, b, "cp_work", lo, hi);
	tap_ok(sa.ok && sa.exits == 1 && sa.into == 0,
	       "coldpart: cp_work with symbols: %zu exit (want 1), %zu into "
	       "the cold part (want 0)", sa.exits, sa.into);
	tap_ok(sb.ok && sb.exits == sa.exits && sb.into == 0,
	       "coldpart: stripped cp_work: %zu exit (want %zu), %zu into the "
	       "nameless cold part (want 0)", sb.exits, sa.exits, sb.into);
out:
	eng_points_cache_free(pc);
	eng_points_cache_free(pc2);
	if (a)
		eng_image_close(a);
	if (b)
		eng_image_close(b);
}

/* python3.11 is not PIE: image-relative = link address - 0x400000. */
static void check_python(const char *path)
{
	struct eng_points_cache *pc = NULL;
	struct eng_image *img = NULL;
	struct hunch_err err = { 0 };
	struct summary s;

	if (!tap_ok(eng_image_open_flags(path, ENG_IMAGE_NO_DEBUG_FILE, &img,
					 &err) == 0 &&
		    eng_points_cache_new(&pc, &err) == 0,
		    "%s: opened %s", path, err.msg))
		goto out;
	s = summarize(pc, img, "_PyEval_EvalFrameDefault",
		      0x430f05 - eng_image_link_base(img),
		      0x43455e - eng_image_link_base(img));
	tap_ok(s.ok && s.into == 0 && s.exits == 1,
	       "%s: _PyEval_EvalFrameDefault: %zu exits (want 1, its ret), "
	       "%zu into the nameless cold part 0x430f05-0x43455e (want 0)",
	       path, s.exits, s.into);
out:
	eng_points_cache_free(pc);
	if (img)
		eng_image_close(img);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: test-parse-coldpart COLDPART "
			"COLDPART-STRIPPED [PYTHON3.11]\n");
		return 2;
	}
	check_target(argv[1], argv[2]);
	if (argc > 3)
		check_python(argv[3]);
	return tap_done();
}

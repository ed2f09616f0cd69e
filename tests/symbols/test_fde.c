/*
 * test_fde.c - functions of stripped code, found from the unwind table
 * (engine/eng_sym_fde.c): a stripped build of a fixture against its
 * unstripped build, Debian's stripped python3.11, gzip and zstd, and
 * `hunch where` on a stripped program.
 *
 * Independent answers: readelf (sections, FDEs and their first rows,
 * symbols) through fde_util.h, objdump for the operand _start loads into
 * %rdi, and the unstripped build's own symbols.
 */
#include "fde_util.h"

#include "eng_coldpart.h"

#include <inttypes.h>
#include <unistd.h>

static struct eng_image *open_ok(const char *kind, const char *path)
{
	struct hunch_err err = { 0 };
	struct eng_image *img = NULL;

	if (!tap_ok(eng_image_open(path, &img, &err) == 0 && img != NULL,
		    "%s: opens %s", kind, base(path)))
		tap_diag("  %s", err.msg);
	return img;
}

static const struct fde_ent *fde_at(const struct fde_ent *f, size_t n,
				    uint64_t lo)
{
	size_t a = 0, b = n;

	while (a < b) {
		size_t m = a + (b - a) / 2;

		if (f[m].lo < lo)
			a = m + 1;
		else
			b = m;
	}
	return a < n && f[a].lo == lo ? &f[a] : NULL;
}

/* Distinct code addresses among readelf's symbols. */
static size_t distinct_funcs(const struct nm_ent *v, size_t n)
{
	size_t k = 0;
	uint64_t prev = UINT64_MAX;

	for (size_t i = 0; i < n; i++)
		if (nm_is_func(v[i].type) && v[i].addr != prev) {
			prev = v[i].addr;
			k++;
		}
	return k;
}

/* What the stripped file S must hold: its .dynsym functions and one
 * function per FDE start no symbol covers (fde_util.h), exactly; every
 * FDE-only function named "<module>+0x<offset>" (or main, at `main_at`),
 * found again by that name. */
static void check_functions(struct eng_image *s, const char *kind,
			    const char *path, const struct fde_ent *f,
			    size_t nf, uint64_t main_at)
{
	uint64_t lb = eng_image_link_base(s), *starts;
	struct nm_ent *dyn;
	size_t ndyn = parse_readelf(path, true, &dyn), nx, bad = 0, bad_name = 0;
	size_t nfde = 0, bad_lookup = 0;
	char want[512];

	qsort(dyn, ndyn, sizeof(*dyn), cmp_ent_addr);
	nx = fde_only_starts(f, nf, dyn, ndyn, &starts);
	tap_eq(eng_image_nfuncs(s), distinct_funcs(dyn, ndyn) + nx,
	       "%s: %zu functions: %zu .dynsym addresses and %zu from the "
	       "unwind table", kind, distinct_funcs(dyn, ndyn) + nx,
	       distinct_funcs(dyn, ndyn), nx);
	for (size_t i = 0; i < nx; i++) {
		const struct eng_func *g = eng_image_func_at(s, starts[i] - lb);
		const struct fde_ent *e = fde_at(f, nf, starts[i]);

		if (g == NULL || g->addr != starts[i] - lb || !g->from_fde ||
		    g->size != e->hi - e->lo) {
			if (bad++ < 5)
				tap_diag("  FDE %#" PRIx64 ": %s", starts[i],
					 g ? g->name : "no function");
			continue;
		}
		if (starts[i] == main_at)
			snprintf(want, sizeof(want), "main");
		else
			snprintf(want, sizeof(want), "%s+0x%" PRIx64,
				 base(path), starts[i] - lb);
		if (strcmp(g->name, want) != 0 && bad_name++ < 5)
			tap_diag("  %s named %s", want, g->name);
		if (eng_sym_lazy_func_by_name(s, want) != g)
			bad_lookup++;
	}
	for (size_t i = 0; i < eng_image_nfuncs(s); i++)
		nfde += eng_image_func(s, i)->from_fde;
	tap_ok(bad == 0 && nfde == nx, "%s: each of the %zu FDE-only starts "
	       "is a function of the FDE's size, and no other function is "
	       "FDE-only (%zu)", kind, nx, nfde);
	tap_ok(bad_name == 0, "%s: each is named <module>+0x<offset>, main "
	       "excepted", kind);
	tap_ok(bad_lookup == 0, "%s: each is found by that name", kind);
	free(starts);
	free(dyn);
}

/* The unstripped build's functions that have an FDE, and its main, are
 * in the stripped build at the same addresses with the same sizes. */
static void check_against_full(struct eng_image *u, struct eng_image *s,
			       const char *kind, const struct fde_ent *f,
			       size_t nf)
{
	uint64_t lb = eng_image_link_base(u);
	size_t checked = 0, bad = 0, want = 0;

	for (size_t i = 0; i < nf; i++)
		want += !f[i].cold;
	for (size_t i = 0; i < eng_image_nfuncs(u); i++) {
		const struct eng_func *a = eng_image_func(u, i), *b;
		const struct fde_ent *e = fde_at(f, nf, a->addr + lb);

		if (e == NULL || e->cold)
			continue;
		checked++;
		b = eng_image_func_at(s, a->addr);
		if ((b == NULL || b->addr != a->addr || b->size != a->size) &&
		    bad++ < 5)
			tap_diag("  %s at %#" PRIx64 ": %s", a->name, a->addr,
				 b ? b->name : "missing");
	}
	tap_ok(bad == 0 && checked == want, "%s: all %zu functions of the "
	       "unstripped build that start an FDE are in the stripped build "
	       "at their address with their size (%zu of %zu FDEs checked)",
	       kind, checked, checked, want);
}

static void check_main(struct eng_image *u, struct eng_image *s,
		       const char *kind, const char *path)
{
	const struct eng_func *mu = eng_sym_lazy_func_by_name(u, "main");
	const struct eng_func *ms = eng_sym_lazy_func_by_name(s, "main");
	uint64_t od = objdump_main(path) - eng_image_link_base(s);

	tap_ok(mu && ms && ms->addr == mu->addr && ms->size == mu->size &&
	       ms->from_fde, "%s: main found from _start at the unstripped "
	       "main's address %#" PRIx64 ", with its size", kind,
	       mu ? mu->addr : 0);
	tap_ok(ms && ms->addr == od && strcmp(ms->name, "main") == 0,
	       "%s: and at the address objdump shows _start loading into "
	       "%%rdi", kind);
}

/* hunch where lists exactly the stripped image's functions under
 * /Code/<module>/<unknown>/. */
static void check_where(struct eng_image *s, const char *kind,
			const char *hunch, const char *path)
{
	char *out = run_capture("'%s' where '%s'", hunch, path);
	char prefix[512];
	size_t n = eng_image_nfuncs(s), k = 0, lp;
	const char **got = malloc((n + 64) * sizeof(*got));
	const char **want = malloc((n + 1) * sizeof(*want));

	snprintf(prefix, sizeof(prefix), "/Code/%s/<unknown>/", base(path));
	lp = strlen(prefix);
	for (char *l = strtok(out, "\n"); l; l = strtok(NULL, "\n"))
		if (strncmp(l, prefix, lp) == 0 && k < n + 64)
			got[k++] = l + lp;
	for (size_t i = 0; i < n; i++)
		want[i] = eng_sym_lazy_display_name(s, eng_image_func(s, i));
	check_names(join_sorted(got, k), join_sorted(want, n), kind,
		    "hunch where lists every function under <unknown>");
	free(got);
	free(want);
	free(out);
}

/* gcc's cold part keeps no function of its own once stripped, and is
 * still a cold part to eng_coldpart (which eng_points pairs with its
 * parent). */
static void check_cold(struct eng_image *u, struct eng_image *s,
		       const char *kind, const char *cold,
		       const struct fde_ent *f, size_t nf)
{
	const struct eng_func *c = eng_sym_lazy_func_by_name(u, cold);
	struct eng_coldpart *cp = NULL;
	uint64_t lo = 0, hi = 0;
	size_t ncold = 0;

	for (size_t i = 0; i < nf; i++)
		ncold += f[i].cold;
	tap_eq(ncold, 1, "%s: readelf shows one FDE that begins inside a "
	       "frame", kind);
	if (!tap_ok(c != NULL, "%s: the unstripped build has %s", kind, cold))
		return;
	tap_ok(eng_image_func_at(s, c->addr) == NULL &&
	       eng_image_func_at(s, c->addr + c->size - 1) == NULL,
	       "%s: in the stripped build no function covers %s", kind, cold);
	tap_ok(eng_coldpart_open(s, &cp) == 0 && cp != NULL &&
	       eng_coldpart_at(cp, c->addr, &lo, &hi) == 1 &&
	       lo == c->addr && hi == c->addr + c->size,
	       "%s: eng_coldpart still sees %s's range as a cold part", kind,
	       cold);
	eng_coldpart_close(cp);
}

/* A symbol without a size takes its FDE's (8 bytes), where the address
 * order alone would run it over the 24 bytes after it. */
static void check_sizeless(const char *kind, const char *path)
{
	struct hunch_err err = { 0 };
	struct eng_image *img = NULL, *nofde = NULL;
	const struct eng_func *f, *g;
	struct nm_ent *v;
	size_t n = parse_readelf(path, false, &v);
	uint64_t a = nm_addr(v, n, "sc_asm_nosize");

	free(v);
	if (eng_image_open(path, &img, &err) < 0 ||
	    eng_image_open_flags(path, ENG_IMAGE_NO_FDE, &nofde, &err) < 0) {
		tap_ok(0, "%s: opens: %s", kind, err.msg);
		goto out;
	}
	f = eng_sym_lazy_func_by_name(img, "sc_asm_nosize");
	g = eng_sym_lazy_func_by_name(nofde, "sc_asm_nosize");
	tap_ok(a != 0 && f && f->addr + eng_image_link_base(img) == a &&
	       f->size == 8 && !f->from_fde, "%s: size-0 symbol "
	       "sc_asm_nosize has its FDE's size, 8 (got %lu)", kind,
	       f ? (unsigned long)f->size : 0UL);
	tap_ok(g && g->size >= 8 + 24, "%s: without the unwind table it runs "
	       "up to the next function (%lu bytes)", kind,
	       g ? (unsigned long)g->size : 0UL);
out:
	eng_image_close(img);
	eng_image_close(nofde);
}

static void test_pair(const char *kind, const char *full,
		      const char *stripped, const char *hunch,
		      const char *cold)
{
	struct eng_image *u = open_ok(kind, full), *s = open_ok(kind, stripped);
	struct fde_ent *f, *f2;
	size_t nf, nf2;
	const struct eng_func *m;

	if (u == NULL || s == NULL)
		goto out;
	tap_eq(eng_image_stripped(s), true, "%s: stripped flag", kind);
	nf = readelf_fdes(full, &f);
	nf2 = readelf_fdes(stripped, &f2);
	tap_ok(nf == nf2 && nf > 0 && memcmp(f, f2, nf * sizeof(*f)) == 0,
	       "%s: both builds have the same %zu FDEs", kind, nf);
	m = eng_sym_lazy_func_by_name(u, "main");
	check_functions(s, kind, stripped, f, nf,
			m ? m->addr + eng_image_link_base(u) : 0);
	check_against_full(u, s, kind, f, nf);
	check_main(u, s, kind, stripped);
	if (cold != NULL) {
		check_cold(u, s, kind, cold, f, nf);
		check_sizeless(kind, full);
	}
	check_where(s, kind, hunch, stripped);
	free(f);
	free(f2);
out:
	eng_image_close(u);
	eng_image_close(s);
}

/* gcc -fno-asynchronous-unwind-tables -g: the program's own functions
 * have FDEs in .debug_frame only (crt code keeps .eh_frame).  Read with
 * the symbols ignored, every FDE is a function, and each has the
 * address and size of the symbol the full read gives it. */
static void test_debug_frame(const char *kind, const char *path)
{
	struct hunch_err err = { 0 };
	struct eng_image *u = open_ok(kind, path), *f = NULL;
	struct fde_ent *v;
	size_t nf = readelf_fdes(path, &v), ncold = 0, bad = 0, dbg = 0;
	char *sec = run_capture("readelf -SW '%s'", path);
	static const char *const mine[] = { "sf_add", "sf_mul", "sf_loop",
		"sf_recurse", "sf_indirect", "sf_static_helper", NULL };

	tap_ok(strstr(sec, ".debug_frame") != NULL, "%s: has .debug_frame",
	       kind);
	free(sec);
	if (u == NULL || !tap_ok(eng_image_open_flags(path,
			ENG_IMAGE_FDE_ONLY | ENG_IMAGE_NO_DEBUG_FILE, &f,
			&err) == 0, "%s: opens with the symbols ignored", kind))
		goto out;
	for (size_t i = 0; i < nf; i++)
		ncold += v[i].cold;
	tap_eq(eng_image_nfuncs(f), nf - ncold, "%s: one function per FDE of "
	       ".eh_frame and .debug_frame (%zu)", kind, nf - ncold);
	for (size_t i = 0; i < eng_image_nfuncs(f); i++) {
		const struct eng_func *a = eng_image_func(f, i);
		const struct eng_func *b = eng_image_func_at(u, a->addr);

		if ((b == NULL || b->addr != a->addr || b->size != a->size) &&
		    bad++ < 5)
			tap_diag("  %s: %s", a->name, b ? b->name : "no symbol");
	}
	tap_eq(bad, 0, "%s: each has its symbol's address and size", kind);
	for (size_t i = 0; mine[i]; i++) {
		const struct eng_func *b =
			eng_sym_lazy_func_by_name(u, mine[i]);

		dbg += b && eng_image_func_at(f, b->addr) != NULL &&
		       eng_image_func_at(f, b->addr)->addr == b->addr;
	}
	tap_eq(dbg, 6, "%s: the six C functions (FDEs in .debug_frame only) "
	       "are among them", kind);
out:
	free(v);
	eng_image_close(f);
	eng_image_close(u);
}

/* A stripped Debian program: .dynsym functions keep their names, the
 * rest come from the unwind table, main from _start. */
static void test_debian(const char *path, const char *dynfunc)
{
	struct hunch_err err = { 0 };
	struct eng_image *img = NULL;
	const struct eng_func *m, *d;
	struct fde_ent *f;
	size_t nf;
	uint64_t om;

	if (access(path, R_OK) != 0) {
		tap_ok(1, "%s is not installed # SKIP", path);
		return;
	}
	if (!tap_ok(eng_image_open_flags(path, ENG_IMAGE_NO_DEBUG_FILE, &img,
					 &err) == 0, "opens %s", path)) {
		tap_diag("  %s", err.msg);
		return;
	}
	nf = readelf_fdes(path, &f);
	om = objdump_main(path);
	check_functions(img, base(path), path, f, nf, om);
	m = eng_sym_lazy_func_by_name(img, "main");
	tap_ok(om != 0 && m && m->from_fde &&
	       m->addr == om - eng_image_link_base(img),
	       "%s: main found from _start at %#" PRIx64 " (objdump)",
	       base(path), om);
	if (dynfunc != NULL) {
		d = eng_sym_lazy_func_by_name(img, dynfunc);
		tap_ok(d && strcmp(d->name, dynfunc) == 0 && d->from_dynsym &&
		       !d->from_fde, "%s: %s is still named from .dynsym",
		       base(path), dynfunc);
	}
	free(f);
	eng_image_close(img);
}

int main(int argc, char **argv)
{
	const char *hunch = fixture(argc, argv, "hunch");

	test_pair("c-O2-pie", fixture(argc, argv, "c-O2-pie"),
		  fixture(argc, argv, "c-O2-pie-strip-all"), hunch, NULL);
	test_pair("c-O2-nopie", fixture(argc, argv, "c-O2-nopie"),
		  fixture(argc, argv, "c-O2-nopie-strip-all"), hunch, NULL);
	test_pair("cold", fixture(argc, argv, "cold"),
		  fixture(argc, argv, "cold-strip-all"), hunch,
		  "sc_work.cold");
	test_pair("c-nohdr", fixture(argc, argv, "c-nohdr"),
		  fixture(argc, argv, "c-nohdr-strip-all"), hunch, NULL);
	test_debug_frame("c-debug-frame", fixture(argc, argv,
						  "c-debug-frame"));
	test_debian("/usr/bin/python3.11", "_PyEval_EvalFrameDefault");
	test_debian("/usr/bin/gzip", NULL);
	test_debian("/usr/bin/zstd", NULL);
	return tap_done();
}

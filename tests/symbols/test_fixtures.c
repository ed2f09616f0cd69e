/*
 * test_fixtures.c - the symbol reader against fixtures whose functions
 * and data are known: every optimisation level, PIE and non-PIE, a
 * stripped copy, C++ and a shared library.  binutils (nm, readelf) give
 * the independent answers for sizes, addresses and entry points.
 */
#include "fde_util.h"

#include <errno.h>

static const char *const c_funcs[] = {
	"sf_add", "sf_mul", "sf_static_helper", "sf_loop", "sf_recurse",
	"sf_indirect", "main", NULL };
static const char *const c_exported[] = {
	"_start", "sf_add", "sf_mul", "sf_loop", "sf_recurse", "sf_indirect", "main",
	"sf_asm_nosize", "sf_asm_oversize", "sf_asm_after", NULL };
static const char *const asm_funcs[] = {
	"sf_asm_nosize", "sf_asm_oversize", "sf_asm_after", NULL };
static const char *const cpp_funcs[] = {
	"sfx::add(int, int)", "sfx::add(double, double)",
	"sfx::Counter::bump(int)", "sfx::Counter::get() const",
	"int sfx::twice<int>(int)", "sfx_c_entry", "main", NULL };
static const char *const lib_funcs[] = {
	"sfl_static", "sfl_hidden", "sfl_one", "sfl_two", NULL };
static const char *const lib_exported[] = { "sfl_one", "sfl_two", NULL };

static struct eng_image *open_ok(const char *kind, const char *path)
{
	struct hunch_err err = { 0 };
	struct eng_image *img = NULL;
	int r = eng_image_open(path, &img, &err);

	if (!tap_ok(r == 0 && img != NULL, "%s: opens %s", kind, base(path)))
		tap_diag("  %s", err.msg);
	return img;
}

/* Display names of the functions whose source file's basename is src. */
static char *funcs_from(struct eng_image *img, const char *src)
{
	size_t n = eng_image_nfuncs(img), k = 0;
	const char **v = malloc((n + 1) * sizeof(*v));
	char *s;

	for (size_t i = 0; i < n; i++) {
		const struct eng_func *f = eng_image_func(img, i);
		const char *b = eng_sym_lazy_source_basename(img, f);

		if (b && strcmp(b, src) == 0)
			v[k++] = eng_sym_lazy_display_name(img, f);
	}
	s = join_sorted(v, k);
	free(v);
	return s;
}

/* nm -S agrees too: every sized code symbol nm prints (aliases and weak
 * ones included) has our size, except the hand-made wrong asm sizes. */
static void check_vs_nm_sizes(struct eng_image *img, const char *kind,
			      const char *path, bool dynamic)
{
	char *out = run_capture("nm %s -S --defined-only '%s'",
				dynamic ? "-D" : "", path);
	uint64_t lb = eng_image_link_base(img);
	size_t n, checked = 0, bad = 0;
	struct nm_ent *v;

	n = parse_nm(out, &v);
	for (size_t i = 0; i < n; i++) {
		const struct eng_func *f;

		if (!nm_is_func(v[i].type) || !v[i].has_size ||
		    strncmp(v[i].name, "sf_asm_", 7) == 0)
			continue;
		f = eng_image_func_at(img, v[i].addr - lb);
		checked++;
		if ((f == NULL || f->size != v[i].size) && bad++ < 5)
			tap_diag("  %s: nm -S says %lu", v[i].name,
				 (unsigned long)v[i].size);
	}
	tap_ok(bad == 0 && checked > 0, "%s: all %zu sized functions in "
	       "nm -S have nm's size", kind, checked);
	free(v);
	free(out);
}

/* Every function readelf lists is found at its address, with its ELF
 * size when it has one (the hand-made wrong sizes in symfix_asm.S excepted: those
 * are checked in check_clamps), and one function per distinct address. */
static void check_vs_readelf(struct eng_image *img, const char *kind,
			const char *path, bool dynamic)
{
	uint64_t lb = eng_image_link_base(img), prev = UINT64_MAX;
	size_t n, bad_addr = 0, bad_size = 0, sized = 0, distinct = 0, extra;
	struct nm_ent *v;

	n = parse_readelf(path, dynamic, &v);
	qsort(v, n, sizeof(*v), cmp_ent_addr);
	for (size_t i = 0; i < n; i++) {
		const struct eng_func *f;

		if (!nm_is_func(v[i].type))
			continue;
		if (v[i].addr != prev)
			distinct++;
		prev = v[i].addr;
		f = eng_image_func_at(img, v[i].addr - lb);
		if (f == NULL || f->addr != v[i].addr - lb) {
			if (bad_addr++ < 5)
				tap_diag("  %s at %#lx: not found", v[i].name,
					 (unsigned long)v[i].addr);
			continue;
		}
		if (!v[i].has_size || strncmp(v[i].name, "sf_asm_", 7) == 0)
			continue;
		sized++;
		if (f->size != v[i].size && bad_size++ < 5)
			tap_diag("  %s: size %lu, readelf says %lu", v[i].name,
				 (unsigned long)f->size,
				 (unsigned long)v[i].size);
	}
	tap_ok(bad_addr == 0, "%s: every function readelf lists is at its address",
	       kind);
	tap_ok(bad_size == 0 && sized > 0,
	       "%s: sizes of all %zu sized functions match readelf", kind, sized);
	check_vs_nm_sizes(img, kind, path, dynamic);
	extra = fde_only_count(path, dynamic);
	tap_eq(eng_image_nfuncs(img), distinct + extra,
	       "%s: one function per distinct symbol address (%zu) and per "
	       "FDE no symbol covers (%zu)", kind, distinct, extra);
	free(v);
}

/* func_at finds each function from its first, middle and last byte and
 * not from the byte after it. */
static void check_func_at(struct eng_image *img, const char *kind,
			  const char *const *names)
{
	int bad = 0;

	for (size_t i = 0; names[i]; i++) {
		const struct eng_func *f = eng_sym_lazy_func_by_name(img,
								  names[i]);

		if (f == NULL || f->size == 0) {
			tap_diag("  %s: no function %s", kind, names[i]);
			bad++;
			continue;
		}
		if (eng_image_func_at(img, f->addr) != f ||
		    eng_image_func_at(img, f->addr + f->size / 2) != f ||
		    eng_image_func_at(img, f->addr + f->size - 1) != f ||
		    eng_image_func_at(img, f->addr + f->size) == f) {
			tap_diag("  %s: func_at wrong inside %s", kind,
				 names[i]);
			bad++;
		}
	}
	tap_ok(bad == 0, "%s: func_at inside every expected function", kind);
}

/* symfix_asm.S: no .size, and a .size of 4096 that runs over the next
 * function; both end where the next function starts. */
static void check_clamps(struct eng_image *img, const char *kind)
{
	const struct eng_func *a =
		eng_sym_lazy_func_by_name(img, "sf_asm_nosize");
	const struct eng_func *b = eng_sym_lazy_func_by_name(img,
							  "sf_asm_oversize");
	const struct eng_func *c =
		eng_sym_lazy_func_by_name(img, "sf_asm_after");
	static const unsigned char want[8] = { 0x90, 0x90, 0xb8, 0x2a, 0, 0, 0,
					       0xc3 };
	unsigned char got[8] = { 0 };

	if (!tap_ok(a && b && c, "%s: the hand-written asm functions exist",
		    kind))
		return;
	tap_eq(a->size, b->addr - a->addr, "%s: size-0 symbol extends to the "
	       "next function", kind);
	tap_eq(b->size, c->addr - b->addr, "%s: oversized symbol is clamped "
	       "to the next function", kind);
	tap_ok(eng_image_read(img, a->addr, got, sizeof(got)) == 0 &&
	       memcmp(got, want, sizeof(want)) == 0,
	       "%s: eng_image_read returns sf_asm_nosize's bytes", kind);
}

/* Data symbols found from an address inside them; .bss is not in the
 * file, so reading it fails. */
static void check_data(struct eng_image *img, const char *kind,
		       const char *path, const char *global, uint64_t gsize,
		       const char *local, uint64_t lsize)
{
	char *out = run_capture("nm --defined-only '%s'", path);
	uint64_t lb = eng_image_link_base(img);
	struct nm_ent *v;
	size_t n = parse_nm(out, &v);
	uint64_t ga = nm_addr(v, n, global) - lb, la = nm_addr(v, n, local) - lb;
	const struct eng_datasym *d = eng_image_data_at(img, ga + gsize / 2);
	const struct eng_datasym *l = eng_image_data_at(img, la + lsize - 1);
	char buf[4];

	tap_ok(d && strcmp(d->name, global) == 0 && d->addr == ga &&
	       d->size == gsize && d->global,
	       "%s: data_at inside %s names it (%lu bytes, global)", kind,
	       global, (unsigned long)gsize);
	tap_ok(l && strcmp(l->name, local) == 0 && l->addr == la &&
	       l->size == lsize && !l->global,
	       "%s: data_at inside static %s names it", kind, local);
	tap_ok(eng_image_data_at(img, ga + gsize) != d,
	       "%s: data_at just past %s is not %s", kind, global, global);
	tap_eq(eng_image_read(img, ga, buf, sizeof(buf)), -EFAULT,
	       "%s: reading .bss (%s) is refused", kind, global);
	free(v);
	free(out);
}

static void check_header(struct eng_image *img, const char *kind,
			 const char *path, bool pie, bool stripped, bool dwarf)
{
	uint64_t lb = pie ? 0 : 0x400000;
	const struct eng_func *e;

	tap_eq(eng_image_is_pie(img), pie, "%s: PIE flag", kind);
	tap_eq(eng_image_link_base(img), lb, "%s: link base %#lx", kind,
	       (unsigned long)lb);
	tap_eq(eng_image_stripped(img), stripped, "%s: stripped flag", kind);
	tap_eq(eng_image_has_dwarf(img), dwarf, "%s: DWARF flag", kind);
	tap_eq(eng_image_entry(img), readelf_entry(path) - lb,
	       "%s: entry is readelf's e_entry minus the link base", kind);
	e = eng_image_func_at(img, eng_image_entry(img));
	tap_ok(e && strcmp(e->name, "_start") == 0 &&
	       e->addr == eng_image_entry(img), "%s: the entry is _start", kind);
}

/* The source path is kept as the compiler gave it. */
static void check_source_path(struct eng_image *img, const char *kind,
			      const char *func, const char *suffix)
{
	const struct eng_func *f = eng_sym_lazy_func_by_name(img, func);
	const char *s = f ? eng_sym_lazy_source_file(img, f) : NULL;
	size_t ls = s ? strlen(s) : 0, lx = strlen(suffix);

	if (!tap_ok(s && ls >= lx && strcmp(s + ls - lx, suffix) == 0,
		    "%s: %s comes from .../%s", kind, func, suffix))
		tap_diag("  source: %s", s ? s : "(none)");
}

static void test_c(const char *kind, const char *path, bool pie)
{
	struct eng_image *img = open_ok(kind, path);

	if (img == NULL)
		return;
	check_header(img, kind, path, pie, false, true);
	check_names(funcs_from(img, "symfix.c"), join_list(c_funcs), kind,
		    "functions whose source is symfix.c are exactly the "
		    "program's");
	check_names(funcs_from(img, "symfix_asm.S"), join_list(asm_funcs), kind,
		    "functions whose source is symfix_asm.S are exactly the "
		    "asm ones");
	check_source_path(img, kind, "sf_loop",
			  "tests/symbols/fixtures/symfix.c");
	check_vs_readelf(img, kind, path, false);
	check_func_at(img, kind, c_funcs);
	check_clamps(img, kind);
	check_data(img, kind, path, "sf_table", 256, "sf_static_buf", 256);
	eng_image_close(img);
}

/* The functions the unwind table adds to a stripped file, as
 * fde_util.h computes them from readelf: "<module>+0x<offset>", or main
 * at the address _start loads (objdump). */
static size_t fde_names(const char *path, uint64_t lb, const char **v)
{
	struct nm_ent *dyn;
	size_t nd = parse_readelf(path, true, &dyn), nf, n;
	struct fde_ent *f;
	uint64_t *starts, m = objdump_main(path);

	qsort(dyn, nd, sizeof(*dyn), cmp_ent_addr);
	nf = readelf_fdes(path, &f);
	n = fde_only_starts(f, nf, dyn, nd, &starts);
	for (size_t i = 0; i < n; i++) {
		char b[256];

		snprintf(b, sizeof(b), "%s+0x%lx", base(path),
			 (unsigned long)(starts[i] - lb));
		v[i] = starts[i] == m ? "main" : strdup(b);
	}
	free(starts);
	free(f);
	free(dyn);
	return n;
}

/* A stripped image has exactly its exported functions (`must`), from
 * .dynsym, and the functions of its unwind table no symbol covers
 * (named "<module>+0x<offset>"); none has a source file. */
static void test_stripped(const char *kind, const char *path, bool pie,
			  const char *const *must, const char *must_not)
{
	struct eng_image *img = open_ok(kind, path);
	size_t n, nm = 0, nx, with_src = 0, neither = 0;
	const char **want;

	if (img == NULL)
		return;
	n = eng_image_nfuncs(img);
	tap_eq(eng_image_stripped(img), true, "%s: stripped flag", kind);
	tap_eq(eng_image_has_dwarf(img), false, "%s: no DWARF", kind);
	tap_eq(eng_image_is_pie(img), pie, "%s: PIE flag", kind);
	for (size_t i = 0; i < n; i++) {
		const struct eng_func *f = eng_image_func(img, i);

		with_src += eng_sym_lazy_source_file(img, f) != NULL;
		if (f->from_dynsym == f->from_fde)
			neither++;
	}
	tap_eq(with_src, 0, "%s: no function has a source file", kind);
	tap_eq(neither, 0, "%s: every function came from .dynsym or from "
	       "the unwind table alone", kind);
	while (must[nm])
		nm++;
	want = malloc((nm + n + 1) * sizeof(*want));
	memcpy(want, must, nm * sizeof(*want));
	nx = fde_names(path, eng_image_link_base(img), want + nm);
	{
		const char **v = malloc((n + 1) * sizeof(*v));

		for (size_t i = 0; i < n; i++)
			v[i] = eng_image_func(img, i)->name;
		check_names(join_sorted(v, n), join_sorted(want, nm + nx),
			    kind, "functions are exactly the exported ones and "
			    "the unwind table's others");
		free(v);
	}
	free(want);   /* the strdup'd names are left to the process end */
	for (size_t i = 0; must[i]; i++)
		if (!tap_ok(eng_sym_lazy_func_by_name(img, must[i]) != NULL,
			    "%s: exported %s found by name", kind, must[i]))
			break;
	tap_ok(eng_sym_lazy_func_by_name(img, must_not) == NULL,
	       "%s: static %s is not found by its name", kind, must_not);
	check_vs_readelf(img, kind, path, true);
	eng_image_close(img);
}

static void test_cpp(const char *kind, const char *path)
{
	struct eng_image *img = open_ok(kind, path);
	const struct eng_func *f;

	if (img == NULL)
		return;
	check_names(funcs_from(img, "symfix_cpp.cc"), join_list(cpp_funcs), kind,
		    "C++ functions of symfix_cpp.cc, demangled, are exactly "
		    "the source's");
	f = eng_sym_lazy_func_by_name(img, "_ZN3sfx7Counter4bumpEi");
	tap_ok(f && strcmp(f->name, "_ZN3sfx7Counter4bumpEi") == 0,
	       "%s: raw name stays mangled", kind);
	tap_ok(f && eng_sym_lazy_display_name(img, f) ==
	       eng_sym_lazy_display_name(img, f), "%s: display name is cached",
	       kind);
	f = eng_sym_lazy_func_by_name(img, "sfx_c_entry");
	tap_ok(f && eng_sym_lazy_display_name(img, f) == f->name,
	       "%s: a C name is displayed as is", kind);
	check_vs_readelf(img, kind, path, false);
	eng_image_close(img);
}

static void test_lib(const char *kind, const char *path)
{
	struct eng_image *img = open_ok(kind, path);

	if (img == NULL)
		return;
	tap_eq(eng_image_is_pie(img), true, "%s: a shared object is ET_DYN",
	       kind);
	tap_eq(eng_image_link_base(img), 0, "%s: link base 0", kind);
	check_names(funcs_from(img, "symfix_lib.c"), join_list(lib_funcs), kind,
		    "functions of symfix_lib.c, static and hidden included");
	check_vs_readelf(img, kind, path, false);
	check_func_at(img, kind, lib_funcs);
	check_data(img, kind, path, "sfl_counter", 4, "sfl_private", 64);
	eng_image_close(img);
}

int main(int argc, char **argv)
{
	static const struct { const char *kind; bool pie; } cv[] = {
		{ "c-O0-pie", true }, { "c-O0-nopie", false },
		{ "c-O2-pie", true }, { "c-O2-nopie", false },
		{ "c-export", true },
	};

	for (size_t i = 0; i < sizeof(cv) / sizeof(cv[0]); i++) {
		tap_diag("%s", cv[i].kind);
		test_c(cv[i].kind, fixture(argc, argv, cv[i].kind), cv[i].pie);
	}
	tap_diag("c-stripped");
	test_stripped("c-stripped", fixture(argc, argv, "c-stripped"), true,
		      c_exported, "sf_static_helper");
	tap_diag("lib-stripped");
	test_stripped("lib-stripped", fixture(argc, argv, "lib-stripped"),
		      true, lib_exported, "sfl_static");
	test_cpp("cpp-O0", fixture(argc, argv, "cpp-O0"));
	test_cpp("cpp-O2", fixture(argc, argv, "cpp-O2"));
	test_lib("lib", fixture(argc, argv, "lib"));
	return tap_done();
}

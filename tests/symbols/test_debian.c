/*
 * test_debian.c - the symbol reader on Debian's own stripped binaries:
 * libc, python3.11 and libLLVM-14 (skipped when a package is missing).
 *
 * The libLLVM count rule: one function per distinct address among the
 * lines of `nm -D --defined-only` whose type is T, t, W, w or i (global,
 * local, weak and indirect code symbols; aliases share an address).
 * readelf's FUNC/IFUNC entries give the same number and are checked too.
 */
#include "fde_util.h"

#include <time.h>
#include <unistd.h>

#define LIBDIR "/usr/lib/x86_64-linux-gnu/"

static struct eng_image *open_or_skip(const char *path)
{
	struct hunch_err err = { 0 };
	struct eng_image *img = NULL;

	if (access(path, R_OK) != 0) {
		tap_ok(1, "%s is not installed # SKIP", path);
		return NULL;
	}
	if (!tap_ok(eng_image_open(path, &img, &err) == 0, "opens %s", path))
		tap_diag("  %s", err.msg);
	return img;
}

/* The name resolves, and func_at finds it again from inside. */
static void has_func(struct eng_image *img, const char *name)
{
	const struct eng_func *f = eng_sym_lazy_func_by_name(img, name);

	tap_ok(f && f->size > 0 && eng_image_func_at(img, f->addr + f->size / 2)
	       == f, "%s has %s (%lu bytes)", eng_image_name(img), name,
	       f ? (unsigned long)f->size : 0UL);
}

static size_t count_cmd(const char *cmd)
{
	char *out = run_capture("%s", cmd);
	size_t n = strtoul(out, NULL, 10);

	free(out);
	return n;
}

/* dev.sh installs libc6-dbg: its separate debug file adds libc's local
 * functions and source files (without it, libc is .dynsym only, and the
 * where axis could not name glibc's lock-waiting internals). */
static void test_libc_debug(struct eng_image *img)
{
	const struct eng_func *f = eng_sym_lazy_func_by_name(img, "malloc");
	const char *src = f ? eng_sym_lazy_source_basename(img, f) : NULL;

	if (!tap_ok(eng_image_debug_file(img) != NULL, "libc's debug file "
		    "is found by build-id (package libc6-dbg)"))
		return;
	tap_diag("debug file: %s", eng_image_debug_file(img));
	tap_ok(eng_image_has_dwarf(img), "libc has DWARF through its debug "
	       "file");
	has_func(img, "start_thread");
	has_func(img, "_int_malloc");
	has_func(img, "__lll_lock_wait");
	if (!tap_ok(src && strcmp(src, "malloc.c") == 0, "malloc comes from "
		    "malloc.c"))
		tap_diag("  source: %s", src ? src : "(none)");
	f = eng_sym_lazy_func_by_name(img, "pthread_mutex_lock");
	tap_ok(f && strcmp(f->name, "pthread_mutex_lock") == 0,
	       "a plain name beats .symtab's pthread_mutex_lock@@GLIBC_2.2.5");
}

/* Without the debug file: exactly the distinct .dynsym code addresses,
 * and the FDEs no symbol covers (fde_util.h). */
static void test_libc_dynsym_only(const char *path)
{
	struct hunch_err err = { 0 };
	struct eng_image *img = NULL;
	size_t n, dyn = 0, fde = 0, ndyn, nx;
	char cmd[512];

	if (eng_image_open_flags(path, ENG_IMAGE_NO_DEBUG_FILE, &img,
				 &err) < 0) {
		tap_ok(0, "opens libc.so.6 without its debug file: %s",
		       err.msg);
		return;
	}
	n = eng_image_nfuncs(img);
	for (size_t i = 0; i < n; i++) {
		dyn += eng_image_func(img, i)->from_dynsym;
		fde += eng_image_func(img, i)->from_fde;
	}
	snprintf(cmd, sizeof(cmd), "readelf -W --dyn-syms '%s' | awk "
		 "'($4 == \"FUNC\" || $4 == \"IFUNC\") && $7 != \"UND\" "
		 "{print $2}' | sort -u | wc -l", path);
	ndyn = count_cmd(cmd);
	nx = fde_only_count(path, true);
	tap_eq(n, ndyn + nx, "libc.so.6 without its debug file: one function "
	       "per .dynsym code address (%zu) and per FDE no symbol covers "
	       "(%zu)", ndyn, nx);
	tap_ok(dyn == ndyn && fde == nx, "and %zu of them from .dynsym, %zu "
	       "from the unwind table alone", dyn, fde);
	tap_ok(eng_image_debug_file(img) == NULL && !eng_image_has_dwarf(img),
	       "and no debug file, no DWARF");
	eng_image_close(img);
}

static void test_libc(void)
{
	const char *path = LIBDIR "libc.so.6";
	struct eng_image *img = open_or_skip(path);
	const struct eng_func *w;

	if (img == NULL)
		return;
	tap_ok(eng_image_stripped(img) && eng_image_is_pie(img),
	       "libc.so.6 is stripped and ET_DYN");
	has_func(img, "malloc");
	has_func(img, "pthread_mutex_lock");
	has_func(img, "write");
	/* write, __write and __libc_write are one function: the display
	 * name is the one without underscores. */
	w = eng_sym_lazy_func_by_name(img, "__write");
	tap_ok(w && w == eng_sym_lazy_func_by_name(img, "write") &&
	       strcmp(w->name, "write") == 0, "aliases of write fold into "
	       "'write'");
	test_libc_debug(img);
	eng_image_close(img);
	test_libc_dynsym_only(path);
}

static void test_python(void)
{
	struct eng_image *img = open_or_skip("/usr/bin/python3.11");

	if (img == NULL)
		return;
	tap_ok(eng_image_stripped(img), "python3.11 is stripped");
	has_func(img, "Py_Initialize");
	has_func(img, "PyObject_GetAttr");
	eng_image_close(img);
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static void test_llvm(void)
{
	const char *path = LIBDIR "libLLVM-14.so.1";
	double t0 = now();
	struct eng_image *img = open_or_skip(path);
	size_t n, by_nm, by_readelf, mangled = 0, named = 0, nx;
	const struct eng_func *f;
	char cmd[512];

	if (img == NULL)
		return;
	n = eng_image_nfuncs(img);
	for (size_t i = 0; i < n; i++) {
		f = eng_image_func(img, i);
		if (f->from_fde)
			continue;
		named++;
		mangled +=
			strcmp(eng_sym_lazy_display_name(img, f), f->name) != 0;
	}
	tap_diag("open + %zu display names: %.1f ms", named,
		 (now() - t0) * 1e3);
	snprintf(cmd, sizeof(cmd), "nm -D --defined-only '%s' | awk "
		 "'$2 ~ /^[TtWwi]$/ {print $1}' | sort -u | wc -l", path);
	by_nm = count_cmd(cmd);
	snprintf(cmd, sizeof(cmd), "readelf -W --dyn-syms '%s' | awk "
		 "'($4 == \"FUNC\" || $4 == \"IFUNC\") && $7 != \"UND\" "
		 "{print $2}' | sort -u | wc -l", path);
	by_readelf = count_cmd(cmd);
	nx = fde_only_count(path, true);
	tap_eq(named, by_nm, "libLLVM-14: %zu functions named by symbols, as "
	       "many as nm's distinct code addresses", named);
	tap_eq(named, by_readelf, "libLLVM-14: and as readelf's FUNC/IFUNC "
	       "addresses");
	tap_eq(n, named + nx, "libLLVM-14: and %zu more from FDEs no symbol "
	       "covers", nx);
	tap_ok(mangled > named / 2, "libLLVM-14: %zu of %zu symbol names "
	       "demangled", mangled, named);
	f = eng_sym_lazy_func_by_name(img, "_ZN4llvm11raw_ostream5writeEPKcm");
	tap_ok(f && strcmp(eng_sym_lazy_display_name(img, f),
			   "llvm::raw_ostream::write(char const*, unsigned "
			   "long)") == 0, "libLLVM-14: llvm::raw_ostream::write "
	       "demangled");
	eng_image_close(img);
}

int main(void)
{
	test_libc();
	test_python();
	test_llvm();
	return tap_done();
}

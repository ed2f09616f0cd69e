/*
 * test_separate.c - debug symbols shipped apart from a stripped program:
 * MiniDebugInfo (.gnu_debugdata, Fedora's recipe in fixtures/mkdebug.sh)
 * and .gnu_debuglink (a file made by objcopy --only-keep-debug, found
 * beside the program and in its .debug/ folder, refused when its CRC32
 * does not match).  The functions must be exactly those readelf lists in
 * the unstripped build, at the same addresses.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sym_util.h"

/* "name@0xaddr" of every defined function readelf lists in the
 * unstripped build (both tables; one name per address there). */
static char *want_funcs(const char *full)
{
	struct nm_ent *v;
	size_t n = parse_readelf(full, false, &v), k = 0;
	const char **names = calloc(n + 1, sizeof(*names));
	char *s;

	for (size_t i = 0; i < n; i++) {
		bool dup = false;

		if (v[i].type != 'F')
			continue;
		for (size_t j = 0; j < k; j++)
			dup |= strncmp(names[j], v[i].name,
				       strlen(v[i].name)) == 0 &&
			       names[j][strlen(v[i].name)] == '@';
		if (dup)   /* .dynsym and .symtab both list it */
			continue;
		if (asprintf((char **)&names[k], "%s@0x%llx", v[i].name,
			     (unsigned long long)v[i].addr) < 0)
			exit(2);
		k++;
	}
	s = join_sorted(names, k);
	for (size_t i = 0; i < k; i++)
		free((char *)names[i]);
	free(names);
	free(v);
	return s;
}

static char *got_funcs(struct eng_image *img)
{
	size_t n = eng_image_nfuncs(img);
	const char **names = calloc(n + 1, sizeof(*names));
	char *s;

	for (size_t i = 0; i < n; i++) {
		const struct eng_func *f = eng_image_func(img, i);

		if (asprintf((char **)&names[i], "%s@0x%llx", f->name,
			     (unsigned long long)(f->addr +
						  eng_image_link_base(img))) < 0)
			exit(2);
	}
	s = join_sorted(names, n);
	for (size_t i = 0; i < n; i++)
		free((char *)names[i]);
	free(names);
	return s;
}

/* Functions named by symfix.c's own symbols ("sf_..."): a stripped
 * copy may still list unwind-table functions ("<module>+0x...") and
 * main found from _start, but none of these. */
static size_t nsf(const struct eng_image *img)
{
	size_t n = 0;

	for (size_t i = 0; i < eng_image_nfuncs(img); i++)
		n += strncmp(eng_image_func(img, i)->name, "sf_", 3) == 0;
	return n;
}

static struct eng_image *open_img(const char *path, unsigned flags)
{
	struct hunch_err err = { 0 };
	struct eng_image *img = NULL;

	if (eng_image_open_flags(path, flags, &img, &err) < 0)
		tap_diag("open %s: %s", path, err.msg);
	return img;
}

static void test_mini(const char *full, const char *mini)
{
	struct eng_image *img = open_img(mini, 0);
	const struct eng_func *f;
	uint64_t want_addr;
	struct nm_ent *v;
	size_t n, nsrc = 0;

	if (!tap_ok(img != NULL, "mini: the MiniDebugInfo build opens")) {
		tap_diag("skipping the MiniDebugInfo checks");
		return;
	}
	tap_ok(eng_sym_debug_source(img) == ENG_DEBUG_MINI &&
	       strcmp(eng_image_debug_file(img), mini) == 0,
	       "mini: symbols from .gnu_debugdata (got %s, %s)",
	       eng_sym_debug_source_name(eng_sym_debug_source(img)),
	       eng_image_debug_file(img) ? eng_image_debug_file(img) : "none");
	tap_ok(eng_image_stripped(img), "mini: the file itself is stripped");
	check_names(got_funcs(img), want_funcs(full), "mini",
		    "every function of the unstripped build, same addresses");
	n = parse_readelf(full, false, &v);
	want_addr = nm_addr(v, n, "sf_static_helper");
	free(v);
	f = eng_sym_lazy_func_by_name(img, "sf_static_helper");
	tap_ok(f != NULL && f->addr + eng_image_link_base(img) == want_addr &&
	       !f->global, "mini: static sf_static_helper at 0x%llx, local",
	       (unsigned long long)want_addr);
	for (size_t i = 0; i < eng_image_nfuncs(img); i++)
		nsrc += eng_sym_lazy_source_file(img, eng_image_func(img, i)) != NULL;
	tap_ok(!eng_image_has_dwarf(img) && nsrc == 0,
	       "mini: no DWARF, so no source files (%zu)", nsrc);
	eng_image_close(img);

	img = open_img(mini, ENG_IMAGE_NO_DEBUG_FILE);
	tap_ok(img != NULL && nsf(img) == 0,
	       "mini: without .gnu_debugdata the stripped file names no sf_ "
	       "function (%zu)", img ? nsf(img) : (size_t)-1);
	eng_image_close(img);
}

static void copy_file(const char *from, const char *to)
{
	char *out = run_capture("cp '%s' '%s' && echo ok", from, to);

	if (strcmp(out, "ok\n") != 0) {
		fprintf(stderr, "cannot copy %s to %s\n", from, to);
		exit(2);
	}
	free(out);
}

/* Open the linked copy and check where its symbols came from. */
static void check_linked(const char *prog, const char *full,
			 enum eng_debug_source want_src, const char *want_dbg,
			 const char *what)
{
	struct eng_image *img = open_img(prog, 0);
	const struct eng_func *f;
	const char *dbg = img ? eng_image_debug_file(img) : NULL;

	if (!tap_ok(img != NULL, "linked, %s: opens", what))
		return;
	tap_ok(eng_sym_debug_source(img) == want_src &&
	       (want_dbg == NULL ? dbg == NULL :
		dbg != NULL && strcmp(dbg, want_dbg) == 0),
	       "linked, %s: symbols from %s %s (got %s %s)", what,
	       eng_sym_debug_source_name(want_src), want_dbg ? want_dbg : "",
	       eng_sym_debug_source_name(eng_sym_debug_source(img)),
	       dbg ? dbg : "");
	if (want_src == ENG_DEBUG_NONE) {
		tap_eq(nsf(img), 0, "linked, %s: no sf_ function named", what);
	} else {
		char kind[64];

		snprintf(kind, sizeof(kind), "linked, %s", what);
		check_names(got_funcs(img), want_funcs(full), kind,
			    "every function of the unstripped build, same "
			    "addresses");
		f = eng_sym_lazy_func_by_name(img, "sf_static_helper");
		tap_ok(f != NULL &&
		       strcmp(eng_sym_lazy_source_basename(img, f), "symfix.c")
		       == 0, "linked, %s: sf_static_helper is in symfix.c "
		       "(DWARF of the debug file)", what);
	}
	eng_image_close(img);
}

static void test_linked(const char *full, const char *linked,
			const char *debug)
{
	char dir[] = "/tmp/hunch-debuglink-XXXXXX";
	char prog[128], beside[128], sub[128], subdbg[256];
	FILE *fp;

	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		exit(2);
	}
	snprintf(prog, sizeof(prog), "%s/symfix-linked", dir);
	snprintf(beside, sizeof(beside), "%s/symfix-linked.debug", dir);
	snprintf(sub, sizeof(sub), "%s/.debug", dir);
	snprintf(subdbg, sizeof(subdbg), "%s/symfix-linked.debug", sub);
	copy_file(linked, prog);
	check_linked(prog, full, ENG_DEBUG_NONE, NULL, "no debug file");
	copy_file(debug, beside);
	check_linked(prog, full, ENG_DEBUG_LINK, beside, "file beside it");
	if (mkdir(sub, 0755) < 0 || rename(beside, subdbg) < 0) {
		perror(sub);
		exit(2);
	}
	check_linked(prog, full, ENG_DEBUG_LINK, subdbg, "in .debug/");
	/* one byte appended: libelf reads the same ELF file with the same
	 * build-id, but the CRC32 of the whole file no longer matches */
	fp = fopen(subdbg, "ab");
	if (fp == NULL || fputc(0x5a, fp) == EOF || fclose(fp) != 0) {
		perror(subdbg);
		exit(2);
	}
	check_linked(prog, full, ENG_DEBUG_NONE, NULL, "CRC32 mismatch");
	free(run_capture("rm -rf '%s'", dir));
}

int main(int argc, char **argv)
{
	const char *full = fixture(argc, argv, "full");

	/* a debuginfod in the environment must not answer for us */
	unsetenv("DEBUGINFOD_URLS");
	test_mini(full, fixture(argc, argv, "mini"));
	test_linked(full, fixture(argc, argv, "linked"),
		    fixture(argc, argv, "linked-debug"));
	return tap_done();
}

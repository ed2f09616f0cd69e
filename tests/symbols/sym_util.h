/*
 * sym_util.h - helpers shared by the symbol tests: finding fixtures on
 * the command line, running binutils for independent answers (nm,
 * readelf), and comparing name sets.  Header-only: each test is one .c.
 */
#ifndef SYM_UTIL_H
#define SYM_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eng_image.h"
#include "tap.h"

/* meson passes "kind path kind path ...". */
static inline const char *fixture(int argc, char **argv, const char *kind)
{
	for (int i = 1; i + 1 < argc; i += 2)
		if (strcmp(argv[i], kind) == 0)
			return argv[i + 1];
	fprintf(stderr, "no fixture '%s' on the command line\n", kind);
	exit(2);
}

/* Whole stdout of a shell command, NUL-terminated (never NULL). */
__attribute__((format(printf, 1, 2)))
static inline char *run_capture(const char *fmt, ...)
{
	char cmd[4096];
	size_t n = 0, cap = 1 << 16;
	char *buf = malloc(cap);
	va_list ap;
	FILE *p;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	p = popen(cmd, "r");
	if (p == NULL || buf == NULL) {
		perror(cmd);
		exit(2);
	}
	for (size_t r; (r = fread(buf + n, 1, cap - n - 1, p)) > 0;) {
		n += r;
		if (cap - n < 2) {
			cap *= 2;
			buf = realloc(buf, cap);
			if (buf == NULL)
				exit(2);
		}
	}
	buf[n] = '\0';
	pclose(p);
	return buf;
}

/* One line of `nm -S --defined-only`. */
struct nm_ent {
	uint64_t addr, size;
	bool has_size;
	char type;
	char name[512];
};

/* Parse nm output (with or without -S); returns the count, *out malloc'd. */
static inline size_t parse_nm(char *text, struct nm_ent **out)
{
	size_t n = 0, cap = 1024;
	struct nm_ent *v = malloc(cap * sizeof(*v));

	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		char a[32], b[32], c[512], d[512];
		int k = sscanf(line, "%31s %31s %511s %511s", a, b, c, d);
		struct nm_ent e = { 0 };

		if (k == 4 && strlen(b) > 1) {
			e.addr = strtoull(a, NULL, 16);
			e.size = strtoull(b, NULL, 16);
			e.has_size = true;
			e.type = c[0];
			snprintf(e.name, sizeof(e.name), "%s", d);
		} else if (k >= 3 && strlen(b) == 1) {
			e.addr = strtoull(a, NULL, 16);
			e.type = b[0];
			snprintf(e.name, sizeof(e.name), "%s", c);
		} else {
			continue;
		}
		if (n == cap)
			v = realloc(v, (cap *= 2) * sizeof(*v));
		v[n++] = e;
	}
	*out = v;
	return n;
}

/* Defined FUNC/IFUNC ('F') and OBJECT ('O') symbols as `readelf -sW`
 * prints them (both tables, or only .dynsym with dynamic), in the same
 * form as nm entries; "name@VER" loses its version.  readelf, unlike nm,
 * tells a function from a weak untyped symbol such as data_start. */
static inline size_t parse_readelf(const char *path, bool dynamic,
				   struct nm_ent **out)
{
	char *text = run_capture("readelf -W %s '%s'",
				 dynamic ? "--dyn-syms" : "--syms", path);
	size_t n = 0, cap = 1024;
	struct nm_ent *v = malloc(cap * sizeof(*v));

	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		char num[32], val[32], size[32], type[32], bind[32], vis[32];
		char ndx[32], name[512];
		struct nm_ent e = { 0 };
		char *at;

		if (sscanf(line, "%31s %31s %31s %31s %31s %31s %31s %511s", num,
			   val, size, type, bind, vis, ndx, name) != 8 ||
		    num[strlen(num) - 1] != ':' || !strcmp(ndx, "UND") ||
		    !strcmp(ndx, "ABS"))
			continue;
		if (!strcmp(type, "FUNC") || !strcmp(type, "IFUNC"))
			e.type = 'F';
		else if (!strcmp(type, "OBJECT"))
			e.type = 'O';
		else
			continue;
		e.addr = strtoull(val, NULL, 16);
		e.size = strtoull(size, NULL, 0);
		e.has_size = e.size != 0;
		if ((at = strchr(name, '@')) != NULL)
			*at = '\0';
		snprintf(e.name, sizeof(e.name), "%s", name);
		if (n == cap)
			v = realloc(v, (cap *= 2) * sizeof(*v));
		v[n++] = e;
	}
	free(text);
	*out = v;
	return n;
}

static inline int cmp_ent_addr(const void *pa, const void *pb)
{
	const struct nm_ent *a = pa, *b = pb;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

static inline bool nm_is_func(char t)
{
	return t == 'F' || t == 'T' || t == 't' || t == 'W' || t == 'w' || t == 'i';
}

/* Address of a named symbol in nm output, or 0. */
static inline uint64_t nm_addr(const struct nm_ent *v, size_t n,
			       const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i].name, name) == 0)
			return v[i].addr;
	return 0;
}

static inline int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sort a list of names and join them with ", " for comparison and for
 * a readable diagnostic. */
static inline char *join_sorted(const char **names, size_t n)
{
	size_t len = 1;
	char *s;

	qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++)
		len += strlen(names[i]) + 2;
	s = calloc(1, len);
	for (size_t i = 0; i < n; i++) {
		if (i)
			strcat(s, ", ");
		strcat(s, names[i]);
	}
	return s;
}

/* Check two sorted-joined name lists are equal, with a diagnostic. */
static inline void check_names(char *got, char *want, const char *kind,
			       const char *what)
{
	if (!tap_ok(strcmp(got, want) == 0, "%s: %s", kind, what)) {
		tap_diag("  got:  %s", got);
		tap_diag("  want: %s", want);
	}
	free(got);
	free(want);
}

static inline char *join_list(const char *const *list)
{
	size_t n = 0;
	const char **v;
	char *s;

	while (list[n])
		n++;
	v = malloc((n + 1) * sizeof(*v));
	memcpy(v, list, n * sizeof(*v));
	s = join_sorted(v, n);
	free(v);
	return s;
}

/* e_entry as readelf prints it. */
static inline uint64_t readelf_entry(const char *path)
{
	char *out = run_capture("readelf -h '%s'", path);
	char *p = strstr(out, "Entry point address:");
	uint64_t e = p ? strtoull(p + strlen("Entry point address:"), NULL,
				  16) : 0;

	free(out);
	return e;
}

static inline const char *base(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path;
}

#endif

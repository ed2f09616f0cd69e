/*
 * fde_util.h - the independent answer for functions found from unwind
 * tables: binutils' readelf reads the sections (-SW), the FDEs and their
 * first rows (--debug-dump=frames-interp) and the symbols, and the rules
 * of engine/README.md "Symbols" are applied to that output here:
 *
 * - an FDE is a function when it lies in an executable section other
 *   than the PLT's (.plt, .plt.got, .plt.sec, .iplt) and, in .text, its
 *   first row's CFA is rsp+8 (otherwise it is a cold part: it begins
 *   inside its function's frame; a CFA expression, "exp", counts as a
 *   function, as the engine cannot read it either);
 * - a function FDE adds a function when no symbol starts at its start
 *   and no sized symbol covers its start.
 *
 * Header-only, with sym_util.h.  Addresses are link-time (as readelf
 * prints them).
 */
#ifndef FDE_UTIL_H
#define FDE_UTIL_H

#include "sym_util.h"

struct fde_ent {
	uint64_t lo, hi;
	bool cold;
};

struct rd_sec {
	uint64_t lo, hi;
	bool plt, text;
};

/* Executable sections from readelf -SW. */
static inline size_t rd_exec_sections(const char *path, struct rd_sec *out,
				      size_t max)
{
	char *text = run_capture("readelf -SW '%s'", path);
	size_t n = 0;

	for (char *l = strtok(text, "\n"); l && n < max; l = strtok(NULL, "\n")) {
		char name[128], type[64], flg[16], es[16];
		unsigned long long addr, off, size;
		char *rb = strchr(l, ']');

		if (strchr(l, '[') == NULL || rb == NULL ||
		    sscanf(rb + 1, "%127s %63s %llx %llx %llx %15s %15s", name,
			   type, &addr, &off, &size, es, flg) != 7 ||
		    strchr(flg, 'X') == NULL || !strcmp(type, "NOBITS"))
			continue;
		out[n++] = (struct rd_sec){ addr, addr + size,
			!strncmp(name, ".plt", 4) || !strcmp(name, ".iplt"),
			!strcmp(name, ".text") };
	}
	free(text);
	return n;
}

/* The CFA column of a row line "LOC CFA ...", or NULL if not a row. */
static inline bool rd_row(const char *l, uint64_t *loc, char *cfa, size_t cl)
{
	char a[64], b[64];

	if (sscanf(l, "%63s %63s", a, b) != 2 || strlen(a) != 16 ||
	    strspn(a, "0123456789abcdef") != 16)
		return false;
	*loc = strtoull(a, NULL, 16);
	snprintf(cfa, cl, "%.31s", b);
	return true;
}

static inline bool cfa_is_entry(const char *cfa)
{
	return !strcmp(cfa, "rsp+8") || !strcmp(cfa, "exp");
}

/* Every FDE of .eh_frame (and .debug_frame) that lies in an executable
 * section other than the PLT's, sorted by start, one per start; `cold`
 * as the header says.  *out malloc'd. */
static inline size_t readelf_fdes(const char *path, struct fde_ent **out)
{
	char *text = run_capture("readelf -W --debug-dump=frames-interp '%s'",
				 path);
	struct rd_sec xs[64];
	size_t nxs = rd_exec_sections(path, xs, 64), n = 0, cap = 1024;
	struct fde_ent *v = malloc(cap * sizeof(*v));
	struct { unsigned long off; char cfa[32]; } cies[256];
	size_t ncies = 0;
	long cur = -1;          /* FDE whose first row is awaited */
	bool in_cie = false;
	char *save = NULL;

	for (char *l = strtok_r(text, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save)) {
		unsigned long off, cie;
		unsigned long long lo, hi;
		uint64_t loc;
		char cfa[32];
		const char *p;

		if (strncmp(l, "Contents of the ", 16) == 0) {
			ncies = 0;   /* each section has its own offsets */
			cur = -1;
			in_cie = false;
		} else if (strstr(l, " CIE") && sscanf(l, "%lx", &off) == 1 &&
		    ncies < 256) {
			cies[ncies].off = off;
			snprintf(cies[ncies++].cfa, 32, "rsp+8");
			in_cie = true;
			cur = -1;
		} else if ((p = strstr(l, " FDE cie=")) != NULL &&
			   sscanf(p, " FDE cie=%lx pc=%llx..%llx", &cie, &lo,
				  &hi) == 3) {
			in_cie = false;
			if (n == cap)
				v = realloc(v, (cap *= 2) * sizeof(*v));
			v[n] = (struct fde_ent){ lo, hi, false };
			for (size_t i = 0; i < ncies; i++)
				if (cies[i].off == cie)
					v[n].cold = !cfa_is_entry(cies[i].cfa);
			cur = (long)n++;
		} else if (rd_row(l, &loc, cfa, sizeof(cfa))) {
			if (in_cie) {
				snprintf(cies[ncies - 1].cfa, 32, "%.31s", cfa);
				in_cie = false;
			} else if (cur >= 0 && loc == v[cur].lo) {
				v[cur].cold = !cfa_is_entry(cfa);
			}
			cur = -1;
		}
	}
	free(text);
	/* keep the ones in executable, non-PLT sections; cold only counts
	 * in .text */
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		const struct rd_sec *x = NULL;

		for (size_t j = 0; j < nxs; j++)
			if (v[i].lo >= xs[j].lo && v[i].lo < xs[j].hi)
				x = &xs[j];
		if (x == NULL || x->plt || v[i].hi > x->hi ||
		    v[i].hi <= v[i].lo)
			continue;
		if (!x->text)
			v[i].cold = false;
		v[k++] = v[i];
	}
	for (size_t i = 1; i < k; i++)   /* insertion sort: nearly sorted */
		for (size_t j = i; j > 0 && v[j - 1].lo > v[j].lo; j--) {
			struct fde_ent t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	n = 0;
	for (size_t i = 0; i < k; i++)
		if (n == 0 || v[i].lo != v[n - 1].lo)
			v[n++] = v[i];
	*out = v;
	return n;
}

/* Starts of the function FDEs that no function symbol of `syms`
 * (parse_readelf output, sorted by address) starts, and that the
 * nearest function symbol below (its largest size among aliases) does
 * not cover: the functions the unwind table adds.  *out malloc'd,
 * sorted. */
static inline size_t fde_only_starts(const struct fde_ent *f, size_t nf,
				     const struct nm_ent *syms, size_t ns,
				     uint64_t **out)
{
	uint64_t *v = malloc((nf + 1) * sizeof(*v));
	size_t n = 0, j = 0;
	uint64_t below = 0, bsize = 0;   /* nearest symbol start below */
	bool have_below = false;

	for (size_t i = 0; i < nf; i++) {
		bool at = false;

		for (; j < ns && syms[j].addr < f[i].lo; j++) {
			if (!nm_is_func(syms[j].type))
				continue;
			if (!have_below || syms[j].addr != below)
				bsize = 0;
			have_below = true;
			below = syms[j].addr;
			if (syms[j].size > bsize)
				bsize = syms[j].size;
		}
		for (size_t b = j; !at && b < ns && syms[b].addr == f[i].lo;
		     b++)
			at = nm_is_func(syms[b].type);
		if (f[i].cold || at ||
		    (have_below && f[i].lo - below < bsize))
			continue;
		v[n++] = f[i].lo;
	}
	*out = v;
	return n;
}

/* The number of functions the unwind table adds to a file whose symbol
 * tables are read as `dynamic` says (parse_readelf). */
static inline size_t fde_only_count(const char *path, bool dynamic)
{
	struct nm_ent *syms;
	size_t ns = parse_readelf(path, dynamic, &syms), nf, n;
	struct fde_ent *f;
	uint64_t *starts;

	qsort(syms, ns, sizeof(*syms), cmp_ent_addr);
	nf = readelf_fdes(path, &f);
	n = fde_only_starts(f, nf, syms, ns, &starts);
	free(starts);
	free(f);
	free(syms);
	return n;
}

/* main's address from the entry function's code as objdump prints it:
 * the operand loaded into %rdi ("lea ... # <addr>" or "mov $<addr>").
 * 0 when objdump shows neither before the first call. */
static inline uint64_t objdump_main(const char *path)
{
	uint64_t e = readelf_entry(path), m = 0;
	char *text = run_capture("objdump -d --no-show-raw-insn "
				 "--start-address=%#llx --stop-address=%#llx "
				 "'%s'", (unsigned long long)e,
				 (unsigned long long)e + 64, path);

	for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n")) {
		char *p;

		if (strstr(l, "call"))
			break;
		if (!strstr(l, ",%rdi"))
			continue;
		if (strstr(l, "lea") && (p = strchr(l, '#')) != NULL)
			m = strtoull(p + 1, NULL, 16);
		else if (strstr(l, "mov") && (p = strstr(l, "$0x")) != NULL)
			m = strtoull(p + 1, NULL, 16);
	}
	free(text);
	return m;
}

#endif

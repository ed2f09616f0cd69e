/*
 * eng_sym_lazy.c - the parts of an image computed on first request:
 * demangled display names, the DWARF address -> compile unit map, and
 * lookups by name.  Opening an image never pays for these.
 */
#include "eng_sym_int.h"

#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* From the C++ runtime (libstdc++), which hunch links anyway. */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len,
		     int *status);

#define ARENA_CHUNK (64 * 1024)

void eng_sym_lazy_free(struct eng_image *img)
{
	struct eng_arena_chunk *c = img->arena, *next;

	for (; c != NULL; c = next) {
		next = c->next;
		free(c);
	}
	img->arena = NULL;
	free(img->display);
	free(img->dmbuf);
	free(img->cus);
	if (img->dw)
		dwarf_end(img->dw);
}

static size_t func_index(const struct eng_image *img, const struct eng_func *f)
{
	return (size_t)(f - img->funcs);
}

/* ---- display names ------------------------------------------------------ */

static const char *arena_dup(struct eng_image *img, const char *s)
{
	size_t n = strlen(s) + 1;
	struct eng_arena_chunk *c = img->arena;

	if (c == NULL || c->cap - c->used < n) {
		size_t cap = n > ARENA_CHUNK ? n : ARENA_CHUNK;

		c = malloc(sizeof(*c) + cap);
		if (c == NULL)
			return NULL;
		c->used = 0;
		c->cap = cap;
		c->next = img->arena;
		img->arena = c;
	}
	memcpy(c->data + c->used, s, n);
	c->used += n;
	return c->data + c->used - n;
}

/* __cxa_demangle reuses (and may grow) one scratch buffer; the result is
 * copied into the arena, so there is no malloc per name. */
static const char *demangle(struct eng_image *img, const char *name)
{
	int status = 0;
	char *out;

	if (name[0] != '_' || name[1] != 'Z')
		return name;
	if (img->dmbuf == NULL) {
		img->dmlen = 256;
		img->dmbuf = malloc(img->dmlen);
		if (img->dmbuf == NULL)
			return name;
	}
	out = __cxa_demangle(name, img->dmbuf, &img->dmlen, &status);
	if (out == NULL || status != 0)
		return name;
	img->dmbuf = out;
	out = (char *)arena_dup(img, out);
	return out ? out : name;
}

const char *eng_sym_lazy_display_name(struct eng_image *img,
				  const struct eng_func *f)
{
	size_t i = func_index(img, f);

	if (i >= img->nfuncs)
		return f->name;
	if (img->display == NULL) {
		img->display = calloc(img->nfuncs, sizeof(*img->display));
		if (img->display == NULL)
			return f->name;
	}
	if (img->display[i] == NULL)
		img->display[i] = demangle(img, f->name);
	return img->display[i];
}

/* ---- source files from DWARF ------------------------------------------ */

static int push_cu(struct eng_image *img, size_t *cap, uint64_t lo,
		   uint64_t hi, const char *name)
{
	if (img->ncus == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		void *p = realloc(img->cus, ncap * sizeof(*img->cus));

		if (p == NULL)
			return -ENOMEM;
		img->cus = p;
		*cap = ncap;
	}
	img->cus[img->ncus++] = (struct eng_cu_range){ lo, hi, name };
	return 0;
}

static int cmp_cu(const void *pa, const void *pb)
{
	const struct eng_cu_range *a = pa, *b = pb;

	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return 0;
}

/* The address ranges of every compile unit, from the CU DIE itself
 * (DW_AT_low_pc/high_pc or DW_AT_ranges), which unlike .debug_aranges is
 * always there.  Ranges starting at 0 are code the linker discarded. */
static void build_cu_map(struct eng_image *img)
{
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	uint8_t unit_type;
	size_t cap = 0;

	img->cus_built = true;
	img->dw = dwarf_begin_elf(img->dbg_elf ? img->dbg_elf : img->elf,
				 DWARF_C_READ, NULL);
	if (img->dw == NULL)
		return;
	while (dwarf_get_units(img->dw, cu, &cu, NULL, &unit_type, &cudie,
			       NULL) == 0) {
		Dwarf_Addr base, lo, hi;
		const char *name;
		ptrdiff_t off = 0;

		if (unit_type != DW_UT_compile && unit_type != DW_UT_skeleton)
			continue;
		name = dwarf_diename(&cudie);
		if (name == NULL)
			continue;
		while ((off = dwarf_ranges(&cudie, off, &base, &lo, &hi)) > 0)
			if (lo != 0 && hi > lo &&
			    push_cu(img, &cap, lo, hi, name) < 0)
				return;
	}
	if (img->ncus > 0)
		qsort(img->cus, img->ncus, sizeof(*img->cus), cmp_cu);
}

const char *eng_sym_lazy_source_file(struct eng_image *img,
				 const struct eng_func *f)
{
	uint64_t a = f->addr + img->link_base;
	size_t lo = 0, hi;

	if (!img->has_dwarf)
		return NULL;
	if (!img->cus_built)
		build_cu_map(img);
	/* Last range starting at or below a. */
	hi = img->ncus;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (img->cus[mid].lo <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || a >= img->cus[lo - 1].hi)
		return NULL;
	return img->cus[lo - 1].name;
}

const char *eng_sym_lazy_source_basename(struct eng_image *img,
				     const struct eng_func *f)
{
	const char *s = eng_sym_lazy_source_file(img, f), *slash;

	if (s == NULL)
		return NULL;
	slash = strrchr(s, '/');
	return slash ? slash + 1 : s;
}

/* ---- lookup by name ------------------------------------------------------ */

/* Functions no symbol names (eng_sym_fde.c): main found from _start,
 * and "<module>+0x<offset>", whose name says where it is. */
static const struct eng_func *fde_by_name(const struct eng_image *img,
					  const char *name)
{
	size_t ln = strlen(img->name);
	const struct eng_func *f;
	char *end;
	uint64_t a;

	if (img->main_fde < img->nfuncs && strcmp(name, "main") == 0)
		return &img->funcs[img->main_fde];
	if (img->nfde_funcs == 0 || strncmp(name, img->name, ln) != 0 ||
	    strncmp(name + ln, "+0x", 3) != 0)
		return NULL;
	a = strtoull(name + ln + 3, &end, 16);
	if (*end != '\0')
		return NULL;
	f = eng_image_func_at(img, a);
	return f != NULL && f->addr == a && f->from_fde &&
	       strcmp(f->name, name) == 0 ? f : NULL;
}

/* A linear scan over every function symbol, aliases included (so "write"
 * finds libc's write even though its display name may be another alias).
 * The default version of a versioned name wins over name@OLD.  About
 * 50 us on libLLVM's 35,000 symbols: cheap for the handful of names the
 * engine asks for, and it keeps open() free of a sort by name. */
const struct eng_func *eng_sym_lazy_func_by_name(const struct eng_image *img,
					      const char *name)
{
	const struct eng_sym_cand *best = NULL;

	for (size_t i = 0; i < img->nfcands; i++) {
		const struct eng_sym_cand *c = &img->fcands[i];

		if (c->name[0] != name[0] || strcmp(c->name, name) != 0)
			continue;
		if (best == NULL || (best->hidden_ver && !c->hidden_ver))
			best = c;
	}
	return best ? eng_image_func_at(img, best->addr) : fde_by_name(img,
									  name);
}

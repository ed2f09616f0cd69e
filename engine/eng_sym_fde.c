/*
 * eng_sym_fde.c - functions of an image from its unwind tables, so that
 * stripped code has functions too (eng_image.c calls this while
 * opening an image; see eng_sym_int.h).
 *
 * Every function gcc and clang emit for x86-64 has an FDE in .eh_frame
 * (and .debug_frame when asked for): its range is the function's start
 * and size.  The fast way in is .eh_frame_hdr's binary-search table,
 * already sorted by start, each entry pointing at its FDE; without it
 * the FDEs are walked with libdw's dwarf_next_cfi.  CIEs (a handful per
 * file) are read with dwarf_next_cfi and cached.
 *
 * Two kinds of FDE are no function: the PLT's (.plt, .plt.got, .plt.sec,
 * .iplt: entries the linker made, not code anyone wrote) and gcc's cold
 * parts (`foo.cold`, split out of foo).  A cold part is told apart as
 * eng_coldpart.c does: its first row's CFA is not rsp+8 (it begins inside
 * its function's frame).  Those ranges stay without a function, so
 * eng_points pairs them with the function that jumps into them, as
 * before.
 *
 * Functions no symbol starts are named `<module>+0x<offset>`, the offset
 * image-relative (eng_sym_fde_name); the entry function of a glibc
 * program loads main's address for __libc_start_main, and that function
 * is named `main` when no symbol names it (eng_sym_fde_main).
 */
#include "eng_sym_int.h"

#include "x86_decode.h"

#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAX_XSECS 32    /* executable sections remembered */
#define MAX_CIES 64     /* CIEs cached; more are read again each time */

struct xsec {
	uint64_t lo, hi;  /* link-time */
	bool plt, text;
};

struct cie_info {
	Dwarf_Off off;
	uint8_t enc;      /* DW_EH_PE_* of initial_location */
	bool z;           /* FDEs carry an augmentation length */
	uint64_t cfa_reg; /* CIE's initial CFA: cfa_reg + cfa_off */
	int64_t cfa_off, daf;
};

struct fde_scan {
	const struct eng_image *img;
	const unsigned char *ident;
	struct xsec xs[MAX_XSECS];
	size_t nxs;
	Elf_Data *eh, *hdr, *dbg;
	uint64_t eh_addr, hdr_addr;
	struct cie_info cies[MAX_CIES];
	size_t ncies;
	struct eng_sym_range *v;
	size_t n, cap;
	bool sorted;      /* v is in start order so far */
};

/* ---- reading encoded values ------------------------------------------- */

static uint64_t uleb(const uint8_t **pp, const uint8_t *end)
{
	const uint8_t *p = *pp;
	uint64_t v = 0;
	unsigned sh = 0;

	while (p < end) {
		uint8_t b = *p++;

		if (sh < 64)
			v |= (uint64_t)(b & 0x7f) << sh;
		sh += 7;
		if (!(b & 0x80))
			break;
	}
	*pp = p;
	return v;
}

static int64_t sleb(const uint8_t **pp, const uint8_t *end)
{
	const uint8_t *p = *pp;
	uint64_t v = 0;
	unsigned sh = 0;
	uint8_t b = 0;

	while (p < end) {
		b = *p++;
		if (sh < 64)
			v |= (uint64_t)(b & 0x7f) << sh;
		sh += 7;
		if (!(b & 0x80))
			break;
	}
	if (sh < 64 && (b & 0x40))
		v |= ~0ULL << sh;
	*pp = p;
	return (int64_t)v;
}

/* A DW_EH_PE_* value at *pp; `at` is the field's link-time address (for
 * pcrel).  False when the encoding is one we do not read. */
static bool read_enc(const uint8_t **pp, const uint8_t *end, uint8_t enc,
		     uint64_t at, uint64_t *out)
{
	const uint8_t *p = *pp;
	uint64_t v;
	size_t n;

	switch (enc & 0x0f) {
	case DW_EH_PE_absptr: case DW_EH_PE_udata8: case DW_EH_PE_sdata8:
		n = 8; break;
	case DW_EH_PE_udata4: case DW_EH_PE_sdata4: n = 4; break;
	case DW_EH_PE_udata2: case DW_EH_PE_sdata2: n = 2; break;
	case DW_EH_PE_uleb128:
		*out = uleb(pp, end);
		return (enc & 0x70) == 0;
	default: return false;
	}
	if ((size_t)(end - p) < n)
		return false;
	if (n == 8) {
		memcpy(&v, p, 8);
	} else if (n == 4) {
		uint32_t u;

		memcpy(&u, p, 4);
		v = (enc & 0x0f) == DW_EH_PE_sdata4 ? (uint64_t)(int64_t)(int32_t)u
						    : u;
	} else {
		uint16_t u;

		memcpy(&u, p, 2);
		v = (enc & 0x0f) == DW_EH_PE_sdata2 ? (uint64_t)(int64_t)(int16_t)u
						    : u;
	}
	*pp = p + n;
	switch (enc & 0x70) {
	case DW_EH_PE_absptr: break;
	case DW_EH_PE_pcrel: v += at; break;
	default: return false;
	}
	*out = v;
	return true;
}

/* ---- the first row's CFA ------------------------------------------------ */

/* Run CFA instructions up to the first advance (the first row) and leave
 * the CFA there in *reg + *off.  Unknown opcodes end the run: what was
 * read decides, as "unreadable" counts as an ordinary function in
 * eng_coldpart.c too. */
static void first_row(const uint8_t *p, const uint8_t *end, int64_t daf,
		      uint64_t *reg, int64_t *off)
{
	while (p < end) {
		uint8_t op = *p++;

		switch (op >> 6) {
		case 1: return;                      /* advance_loc */
		case 2: uleb(&p, end); continue;     /* offset */
		case 3: continue;                    /* restore */
		}
		switch (op) {
		case DW_CFA_nop: case DW_CFA_remember_state:
		case DW_CFA_restore_state:
			break;
		case DW_CFA_def_cfa:
			*reg = uleb(&p, end);
			*off = (int64_t)uleb(&p, end);
			break;
		case DW_CFA_def_cfa_sf:
			*reg = uleb(&p, end);
			*off = sleb(&p, end) * daf;
			break;
		case DW_CFA_def_cfa_register: *reg = uleb(&p, end); break;
		case DW_CFA_def_cfa_offset: *off = (int64_t)uleb(&p, end); break;
		case DW_CFA_def_cfa_offset_sf: *off = sleb(&p, end) * daf; break;
		case DW_CFA_restore_extended: case DW_CFA_undefined:
		case DW_CFA_same_value: case DW_CFA_GNU_args_size:
			uleb(&p, end);
			break;
		case DW_CFA_offset_extended: case DW_CFA_register:
		case DW_CFA_val_offset: case DW_CFA_GNU_negative_offset_extended:
			uleb(&p, end);
			uleb(&p, end);
			break;
		case DW_CFA_offset_extended_sf: case DW_CFA_val_offset_sf:
			uleb(&p, end);
			sleb(&p, end);
			break;
		case DW_CFA_expression: case DW_CFA_val_expression:
			uleb(&p, end);
			p += uleb(&p, end);
			break;
		case DW_CFA_def_cfa_expression:
			/* A signal trampoline's: unreadable here, so an
			 * ordinary function, as eng_coldpart.c judges it. */
			*reg = 7;
			*off = 8;
			return;
		default:   /* advances, set_loc, unknown */
			return;
		}
	}
}

/* ---- CIEs ----------------------------------------------------------------- */

/* Bytes taken by a value of encoding enc at p (uleb/sleb read), or 0. */
static size_t enc_skip(uint8_t enc, const uint8_t *p, const uint8_t *end)
{
	const uint8_t *q = p;

	switch (enc & 0x0f) {
	case DW_EH_PE_absptr: case DW_EH_PE_udata8: case DW_EH_PE_sdata8:
		return 8;
	case DW_EH_PE_udata4: case DW_EH_PE_sdata4: return 4;
	case DW_EH_PE_udata2: case DW_EH_PE_sdata2: return 2;
	case DW_EH_PE_uleb128: case DW_EH_PE_sleb128:
		uleb(&q, end);
		return (size_t)(q - p);
	default: return 0;
	}
}

/* The FDE pointer encoding from a CIE's augmentation ("zR", "zPLR"...).
 * .debug_frame CIEs carry none: their addresses are absolute. */
static bool cie_encoding(const Dwarf_CIE *c, bool eh, uint8_t *enc, bool *z)
{
	const char *a = c->augmentation;
	const uint8_t *p = c->augmentation_data;
	const uint8_t *end = p ? p + c->augmentation_data_size : NULL;

	*enc = DW_EH_PE_absptr;
	*z = a[0] == 'z';
	if (!eh || !*z)
		return a[0] == '\0';
	for (a++; *a; a++) {
		size_t n;

		if (*a == 'S' || *a == 'B')
			continue;
		if (p == NULL || p >= end)
			return false;
		switch (*a) {
		case 'R': *enc = *p++; break;
		case 'L': p++; break;
		case 'P':
			n = enc_skip(p[0], p + 1, end);
			if (n == 0)
				return false;
			p += 1 + n;
			break;
		default: return false;
		}
	}
	return true;
}

static const struct cie_info *get_cie(struct fde_scan *s, Elf_Data *d,
				      bool eh, Dwarf_Off off,
				      struct cie_info *tmp)
{
	Dwarf_CFI_Entry e;
	Dwarf_Off next;

	for (size_t i = 0; i < s->ncies; i++)
		if (s->cies[i].off == off)
			return &s->cies[i];
	if (dwarf_next_cfi(s->ident, d, eh, off, &next, &e) != 0 ||
	    !dwarf_cfi_cie_p(&e) ||
	    !cie_encoding(&e.cie, eh, &tmp->enc, &tmp->z))
		return NULL;
	tmp->off = off;
	tmp->daf = e.cie.data_alignment_factor;
	tmp->cfa_reg = 7;   /* a CIE that sets no CFA: assume rsp+8 */
	tmp->cfa_off = 8;
	first_row(e.cie.initial_instructions, e.cie.initial_instructions_end,
		  tmp->daf, &tmp->cfa_reg, &tmp->cfa_off);
	if (s->ncies < MAX_CIES) {
		s->cies[s->ncies] = *tmp;
		return &s->cies[s->ncies++];
	}
	return tmp;
}

/* ---- FDEs ---------------------------------------------------------------- */

static const struct xsec *xsec_of(const struct fde_scan *s, uint64_t a)
{
	for (size_t i = 0; i < s->nxs; i++)
		if (a >= s->xs[i].lo && a < s->xs[i].hi)
			return &s->xs[i];
	return NULL;
}

static int push_range(struct fde_scan *s, uint64_t lo, uint64_t hi)
{
	uint64_t lb = s->img->link_base;

	if (s->n == s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 1024;
		void *p = realloc(s->v, ncap * sizeof(*s->v));

		if (p == NULL)
			return -ENOMEM;
		s->v = p;
		s->cap = ncap;
	}
	if (s->n > 0 && s->v[s->n - 1].lo >= lo - lb)
		s->sorted = false;
	s->v[s->n++] = (struct eng_sym_range){ lo - lb, hi - lb };
	return 0;
}

/* One FDE whose initial_location starts at p (in section data d at
 * link-time address `base`), with its CIE: keep it when it is a
 * function.  `want` (when not 0) is what .eh_frame_hdr says it starts. */
static int take_fde(struct fde_scan *s, const struct cie_info *c,
		    Elf_Data *d, uint64_t base, const uint8_t *p,
		    const uint8_t *end, uint64_t want)
{
	const uint8_t *b = d->d_buf;
	uint64_t lo, len, reg = c->cfa_reg;
	int64_t off = c->cfa_off;
	const struct xsec *x;

	if (!read_enc(&p, end, c->enc, base + (uint64_t)(p - b), &lo) ||
	    !read_enc(&p, end, c->enc & 0x0f, 0, &len) || len == 0 ||
	    (want != 0 && lo != want))
		return 0;
	x = xsec_of(s, lo);
	if (x == NULL || x->plt || lo + len > x->hi)
		return 0;
	if (x->text) {
		if (c->z) {
			uint64_t alen = uleb(&p, end);

			p = alen <= (uint64_t)(end - p) ? p + alen : end;
		}
		first_row(p, end, c->daf, &reg, &off);
		if (reg != 7 || off != 8)
			return 0;   /* a cold part (or odd code): no function */
	}
	return push_range(s, lo, lo + len);
}

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* The FDE at offset `off` of .eh_frame, as the hdr table points to it. */
static int hdr_fde(struct fde_scan *s, uint64_t off, uint64_t want)
{
	const uint8_t *b = s->eh->d_buf;
	size_t sz = s->eh->d_size;
	struct cie_info tmp;
	const struct cie_info *c;
	uint32_t len, cptr;

	if (off + 8 > sz)
		return 0;
	len = rd32(b + off);
	cptr = rd32(b + off + 4);
	if (len == 0xffffffffu || len < 4 || len > sz - off - 4 || cptr == 0 ||
	    cptr > off + 4)
		return 0;
	c = get_cie(s, s->eh, true, off + 4 - cptr, &tmp);
	if (c == NULL)
		return 0;
	return take_fde(s, c, s->eh, s->eh_addr, b + off + 8,
			b + off + 4 + len, want);
}

/* .eh_frame_hdr in the form every linker writes: version 1, a pcrel
 * sdata4 eh_frame_ptr, udata4 count, datarel sdata4 table.  Returns 1
 * when it was read, 0 when it is absent or in another form. */
static int read_hdr(struct fde_scan *s, int *rc)
{
	const uint8_t *h;
	size_t n;

	*rc = 0;
	if (s->hdr == NULL || s->eh == NULL || s->hdr->d_size < 12)
		return 0;
	h = s->hdr->d_buf;
	if (h[0] != 1 || h[2] != DW_EH_PE_udata4 ||
	    h[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4))
		return 0;
	n = rd32(h + 8);
	if (n > (s->hdr->d_size - 12) / 8)
		return 0;
	for (size_t i = 0; i < n && *rc == 0; i++) {
		uint64_t loc = s->hdr_addr + (uint64_t)(int64_t)(int32_t)
			       rd32(h + 12 + i * 8);
		uint64_t fde = s->hdr_addr + (uint64_t)(int64_t)(int32_t)
			       rd32(h + 16 + i * 8);

		if (fde >= s->eh_addr)
			*rc = hdr_fde(s, fde - s->eh_addr, loc);
	}
	return 1;
}

/* Every FDE of a section, in file order (.eh_frame without a hdr, or
 * .debug_frame). */
static int walk(struct fde_scan *s, Elf_Data *d, bool eh, uint64_t base)
{
	Dwarf_Off off = 0, next;
	Dwarf_CFI_Entry e;
	int rc = 0;

	while (rc == 0 && dwarf_next_cfi(s->ident, d, eh, off, &next, &e) == 0) {
		struct cie_info tmp;
		const struct cie_info *c;

		if (!dwarf_cfi_cie_p(&e) &&
		    (c = get_cie(s, d, eh, e.fde.CIE_pointer, &tmp)) != NULL)
			rc = take_fde(s, c, d, base, e.fde.start, e.fde.end, 0);
		if (next == (Dwarf_Off)-1 || next <= off)
			break;
		off = next;
	}
	return rc;
}

static void find_sections(struct fde_scan *s, Elf *elf)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		Elf64_Shdr *sh = elf64_getshdr(scn);
		const char *nm;

		if (sh == NULL || sh->sh_type == SHT_NOBITS ||
		    (nm = elf_strptr(elf, shstrndx, sh->sh_name)) == NULL)
			continue;
		if ((sh->sh_flags & SHF_EXECINSTR) && s->nxs < MAX_XSECS) {
			s->xs[s->nxs++] = (struct xsec){
				sh->sh_addr, sh->sh_addr + sh->sh_size,
				!strncmp(nm, ".plt", 4) || !strcmp(nm, ".iplt"),
				!strcmp(nm, ".text") };
		} else if (!strcmp(nm, ".eh_frame")) {
			s->eh = elf_getdata(scn, NULL);
			s->eh_addr = sh->sh_addr;
		} else if (!strcmp(nm, ".eh_frame_hdr")) {
			s->hdr = elf_getdata(scn, NULL);
			s->hdr_addr = sh->sh_addr;
		} else if (!strcmp(nm, ".debug_frame")) {
			s->dbg = elf_getdata(scn, NULL);
		}
	}
	if (s->eh && s->eh->d_buf == NULL)
		s->eh = NULL;
	if (s->hdr && s->hdr->d_buf == NULL)
		s->hdr = NULL;
	if (s->dbg && s->dbg->d_buf == NULL)
		s->dbg = NULL;
}

static int cmp_range(const void *pa, const void *pb)
{
	const struct eng_sym_range *a = pa, *b = pb;

	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return a->hi < b->hi ? 1 : a->hi > b->hi ? -1 : 0;
}

int eng_sym_fde_ranges(const struct eng_image *img,
		       struct eng_sym_range **out, size_t *nout)
{
	struct fde_scan s = { .img = img, .sorted = true };
	size_t k = 0;
	int rc = 0;

	*out = NULL;
	*nout = 0;
	s.ident = (const unsigned char *)elf_getident(img->elf, NULL);
	find_sections(&s, img->elf);
	if (s.ident == NULL)
		return 0;
	if (!read_hdr(&s, &rc) && rc == 0 && s.eh != NULL)
		rc = walk(&s, s.eh, true, s.eh_addr);
	s.ncies = 0;   /* .debug_frame's CIEs live at other offsets */
	if (rc == 0 && s.dbg != NULL)
		rc = walk(&s, s.dbg, false, 0);
	if (rc < 0) {
		free(s.v);
		return rc;
	}
	if (!s.sorted && s.n > 1)
		qsort(s.v, s.n, sizeof(*s.v), cmp_range);
	for (size_t i = 0; i < s.n; i++)   /* one range per start */
		if (k == 0 || s.v[i].lo != s.v[k - 1].lo)
			s.v[k++] = s.v[i];
	*out = s.v;
	*nout = k;
	return 0;
}

/* ---- merging into the function table ----------------------------------- */

static void push_func(struct eng_func *v, uint32_t *sh, size_t *k,
		      const struct eng_func *f, uint32_t shndx)
{
	v[*k] = *f;
	sh[(*k)++] = shndx;
}

/* Symbols come first: an FDE that starts where a symbol starts only
 * gives a size-0 symbol its size; one that starts inside a symbol's
 * (sized) range is that function's business.  Every other FDE is a
 * function of its own, named later. */
int eng_sym_fde_merge(struct eng_image *img, const struct eng_sym_range *r,
		      size_t n, uint32_t **shndx)
{
	size_t nf = img->nfuncs, i = 0, k = 0;
	struct eng_func *v = calloc(nf + n + 1, sizeof(*v));
	uint32_t *sh = calloc(nf + n + 1, sizeof(*sh));
	const struct eng_func *sym = NULL;   /* last symbol function copied */

	if (v == NULL || sh == NULL) {
		free(v);
		free(sh);
		return -ENOMEM;
	}
	for (size_t j = 0; j < n; j++) {
		for (; i < nf && img->funcs[i].addr < r[j].lo; i++) {
			push_func(v, sh, &k, &img->funcs[i], (*shndx)[i]);
			sym = &img->funcs[i];
		}
		if (i < nf && img->funcs[i].addr == r[j].lo) {
			if (img->funcs[i].size == 0)
				img->funcs[i].size = r[j].hi - r[j].lo;
			continue;
		}
		if (sym != NULL && sym->size != 0 &&
		    r[j].lo - sym->addr < sym->size)
			continue;
		push_func(v, sh, &k, &(struct eng_func){
			.addr = r[j].lo, .size = r[j].hi - r[j].lo,
			.from_fde = true }, 0);
		img->nfde_funcs++;
	}
	for (; i < nf; i++)
		push_func(v, sh, &k, &img->funcs[i], (*shndx)[i]);
	free(img->funcs);
	free(*shndx);
	img->funcs = v;
	*shndx = sh;
	img->nfuncs = k;
	return 0;
}

/* "0x<hex>" without leading zeros at p, NUL-terminated; its length.
 * (snprintf took 40% of the time of naming libLLVM's 61,000.) */
static size_t put_hex(char *p, uint64_t v)
{
	static const char dig[] = "0123456789abcdef";
	char tmp[16];
	size_t n = 0;

	do {
		tmp[n++] = dig[v & 15];
		v >>= 4;
	} while (v != 0);
	p[0] = '0';
	p[1] = 'x';
	for (size_t i = 0; i < n; i++)
		p[2 + i] = tmp[n - 1 - i];
	p[2 + n] = '\0';
	return 2 + n;
}

/* "<module>+0x<offset>" for every function no symbol starts, the offset
 * image-relative; all names in one allocation. */
int eng_sym_fde_name(struct eng_image *img)
{
	size_t ln = strlen(img->name), each = ln + sizeof("+0x") + 16;
	size_t used = 0;
	char *buf;

	if (img->nfde_funcs == 0)
		return 0;
	buf = malloc(img->nfde_funcs * each);
	if (buf == NULL)
		return -ENOMEM;
	img->fde_names = buf;
	for (size_t i = 0; i < img->nfuncs; i++) {
		struct eng_func *f = &img->funcs[i];
		char *p = buf + used;

		if (!f->from_fde || used + each > img->nfde_funcs * each)
			continue;
		memcpy(p, img->name, ln);
		p[ln] = '+';
		used += ln + 1 + put_hex(p + ln + 1, f->addr) + 1;
		f->name = p;
	}
	return 0;
}

/* ---- main, from _start ------------------------------------------------ */

/* glibc's _start begins `xor %ebp,%ebp` (after endbr64 with CET); other
 * entry functions (libc.so.6's own, musl's) are not asked for main. */
static bool glibc_start(const uint8_t *c)
{
	static const uint8_t endbr[4] = { 0xf3, 0x0f, 0x1e, 0xfa };

	if (memcmp(c, endbr, 4) == 0)
		c += 4;
	return c[0] == 0x31 && c[1] == 0xed;
}

/* The value ld.so stores in a GOT slot: an R_X86_64_RELATIVE addend, or
 * the slot's own contents.  0 when unknown. */
static uint64_t got_value(const struct eng_image *img, uint64_t slot)
{
	Elf_Scn *scn = NULL;
	uint64_t v = 0;

	while ((scn = elf_nextscn(img->elf, scn)) != NULL) {
		Elf64_Shdr *sh = elf64_getshdr(scn);
		Elf_Data *d;
		const Elf64_Rela *ra;

		if (sh == NULL || sh->sh_type != SHT_RELA ||
		    (d = elf_getdata(scn, NULL)) == NULL || d->d_buf == NULL)
			continue;
		ra = d->d_buf;
		for (size_t i = 0; i < d->d_size / sizeof(*ra); i++)
			if (ra[i].r_offset == slot &&
			    ELF64_R_TYPE(ra[i].r_info) == R_X86_64_RELATIVE)
				return (uint64_t)ra[i].r_addend;
	}
	if (eng_image_read(img, slot - img->link_base, &v, 8) != 0)
		return 0;
	return v;
}

/* Link-time address of main from the entry function's code, or 0. */
static uint64_t main_from_start(const struct eng_image *img)
{
	struct x86_decoder *d;
	uint8_t code[96];
	uint64_t at = img->entry + img->link_base, ref = 0;
	bool load = false;

	if (img->entry == 0 ||
	    eng_image_read(img, img->entry, code, sizeof(code)) != 0 ||
	    !glibc_start(code) || x86_decode_open(&d) < 0)
		return 0;
	if (x86_decode_find_main_ref(d, code, sizeof(code), at, &ref, &load) !=
	    0)
		ref = 0;
	x86_decode_close(d);
	return load && ref != 0 ? got_value(img, ref) : ref;
}

static bool has_symbol(const struct eng_image *img, const char *name)
{
	for (size_t i = 0; i < img->nfcands; i++)
		if (img->fcands[i].name[0] == name[0] &&
		    strcmp(img->fcands[i].name, name) == 0)
			return true;
	return false;
}

/* A function at `a` that nothing covers (main without an FDE): it ends
 * where the next function starts. */
static int insert_main(struct eng_image *img, uint64_t a)
{
	ptrdiff_t i = -1;
	struct eng_func *v = realloc(img->funcs,
				     (img->nfuncs + 1) * sizeof(*v));

	if (v == NULL)
		return -ENOMEM;
	img->funcs = v;
	while (i + 1 < (ptrdiff_t)img->nfuncs && v[i + 1].addr < a)
		i++;
	memmove(&v[i + 2], &v[i + 1], (img->nfuncs - (size_t)(i + 1)) *
		sizeof(*v));
	v[i + 1] = (struct eng_func){ .addr = a, .name = "main",
				      .from_fde = true };
	if ((size_t)(i + 2) <= img->nfuncs)
		v[i + 1].size = v[i + 2].addr - a;
	img->nfuncs++;
	img->main_fde = (size_t)(i + 1);
	return 0;
}

int eng_sym_fde_main(struct eng_image *img)
{
	uint64_t link = main_from_start(img), a;
	const struct eng_func *f;

	if (link == 0 || link < img->link_base || has_symbol(img, "main"))
		return 0;
	a = link - img->link_base;
	f = eng_image_func_at(img, a);
	if (f != NULL && f->addr == a) {
		if (!f->from_fde)
			return 0;   /* a symbol names it */
		img->funcs[f - img->funcs].name = "main";
		img->main_fde = (size_t)(f - img->funcs);
		return 0;
	}
	if (f != NULL)
		return 0;   /* inside another function: not believable */
	return insert_main(img, a);
}

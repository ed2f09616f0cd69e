/*
 * eng_image.c - opening an ELF image and indexing its symbol tables
 * (see eng_image.h).  DWARF source files, demangled names and the
 * by-name index are lazy and live in eng_sym_lazy.c.
 *
 * Speed matters here: a 48 MB shared object with 35,000 dynamic symbols
 * must open in a fraction of nm's time.  So the file is mapped by libelf
 * (ELF_C_READ_MMAP), symbols are read straight from the section data as
 * Elf64_Sym (we only accept native little-endian ELF64), names point into
 * the mapped string tables, and the only allocations are a few arrays.
 */
#include "eng_sym_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ENG_PAGE 4096ULL

/* Section extents by index, for clamping function sizes. */
struct sec_ext {
	uint64_t addr, end;
};

/* Everything open() needs while reading the tables; freed at its end. */
struct sym_scan {
	struct sec_ext *secs;    /* main file's sections, then the debug
				  * file's: a symbol's shndx is offset */
	size_t nsecs;
	size_t shoff;            /* offset of the file being read */
	struct eng_sym_cand *d;  /* data candidates */
	size_t nd, capd;
	size_t capf;
	bool no_symtabs;         /* neither .symtab nor .dynsym anywhere */
	unsigned flags;          /* ENG_IMAGE_* */
};

/* ---- opening and checking the file ---------------------------------- */

static int open_file(struct eng_image *img, struct hunch_err *err)
{
	struct stat st;

	img->fd = open(img->path, O_RDONLY | O_CLOEXEC);
	if (img->fd < 0)
		return hunch_err_set(err, -errno,
				  "cannot open %s: %s; check the path and that "
				  "you may read the file", img->path,
				  strerror(errno));
	if (fstat(img->fd, &st) < 0)
		return hunch_err_set(err, -errno, "cannot stat %s: %s",
				  img->path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return hunch_err_set(err, -EINVAL,
				  "%s is not a regular file; give hunch an "
				  "x86-64 executable or shared object",
				  img->path);
	img->elf = elf_begin(img->fd, ELF_C_READ_MMAP, NULL);
	if (img->elf == NULL || elf_kind(img->elf) != ELF_K_ELF)
		return hunch_err_set(err, -ENOEXEC,
				  "%s is not an ELF file; give hunch an x86-64 "
				  "executable or shared object", img->path);
	img->raw = (const unsigned char *)elf_rawfile(img->elf,
						      &img->rawsize);
	return 0;
}

static const char *machine_name(int m)
{
	switch (m) {
	case EM_386: return "i386";
	case EM_ARM: return "32-bit ARM";
	case EM_AARCH64: return "aarch64";
	case EM_RISCV: return "RISC-V";
	case EM_PPC64: return "ppc64";
	case EM_S390: return "s390";
	default: return "a non-x86-64 machine";
	}
}

/* hunch patches x86-64 code only: say what the file is instead. */
static int check_header(struct eng_image *img, struct hunch_err *err)
{
	const unsigned char *id = (const unsigned char *)elf_getident(img->elf,
								      NULL);
	Elf64_Ehdr *eh;

	if (id != NULL && id[EI_CLASS] == ELFCLASS32) {
		Elf32_Ehdr *e32 = elf32_getehdr(img->elf);

		return hunch_err_set(err, -ENOEXEC,
				  "%s is a 32-bit ELF file (%s); hunch only "
				  "handles 64-bit x86-64 programs: rebuild it "
				  "for x86-64", img->path,
				  e32 ? machine_name(e32->e_machine) : "?");
	}
	if (id == NULL || id[EI_CLASS] != ELFCLASS64 ||
	    id[EI_DATA] != ELFDATA2LSB)
		return hunch_err_set(err, -ENOEXEC,
				  "%s is a big-endian or damaged ELF file; "
				  "hunch only handles x86-64 programs",
				  img->path);
	eh = elf64_getehdr(img->elf);
	if (eh == NULL)
		return hunch_err_set(err, -ENOEXEC,
				  "%s has a damaged ELF header (%s)", img->path,
				  elf_errmsg(-1));
	if (eh->e_machine != EM_X86_64)
		return hunch_err_set(err, -ENOEXEC,
				  "%s is an ELF file for %s (e_machine %d); "
				  "hunch only handles x86-64 programs: rebuild "
				  "it for x86-64", img->path,
				  machine_name(eh->e_machine), eh->e_machine);
	if (eh->e_type != ET_EXEC && eh->e_type != ET_DYN)
		return hunch_err_set(err, -ENOEXEC,
				  "%s is an ELF %s, not a program or shared "
				  "object; link it first", img->path,
				  eh->e_type == ET_REL ? "relocatable object"
				  : eh->e_type == ET_CORE ? "core file"
				  : "file of unknown type");
	img->pie = eh->e_type == ET_DYN;
	return 0;
}

/* Relative 0 is the lowest PT_LOAD page for executables, and the ELF's
 * own zero for ET_DYN (the loader adds the bias to st_value). */
static void read_layout(struct eng_image *img)
{
	Elf64_Ehdr *eh = elf64_getehdr(img->elf);
	Elf64_Phdr *ph = elf64_getphdr(img->elf);
	size_t n = 0;
	uint64_t lo = UINT64_MAX, hi = 0;

	if (ph != NULL && elf_getphdrnum(img->elf, &n) == 0)
		for (size_t i = 0; i < n; i++) {
			if (ph[i].p_type != PT_LOAD)
				continue;
			if (ph[i].p_vaddr < lo)
				lo = ph[i].p_vaddr;
			if (ph[i].p_vaddr + ph[i].p_memsz > hi)
				hi = ph[i].p_vaddr + ph[i].p_memsz;
		}
	img->link_base = img->pie || lo == UINT64_MAX ? 0 : lo & ~(ENG_PAGE - 1);
	img->entry = eh->e_entry ? eh->e_entry - img->link_base : 0;
	img->span = hi > img->link_base ? hi - img->link_base : 0;
}

/* ---- reading symbol tables ------------------------------------------ */

static int push(struct eng_sym_cand **v, size_t *n, size_t *cap,
		const struct eng_sym_cand *c)
{
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 1024;
		void *p = realloc(*v, ncap * sizeof(**v));

		if (p == NULL)
			return -ENOMEM;
		*v = p;
		*cap = ncap;
	}
	(*v)[(*n)++] = *c;
	return 0;
}

/* Find .gnu.version (one Elf64_Half per .dynsym entry), or NULL. */
static const Elf64_Half *find_versym(Elf *elf, size_t nsyms)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		Elf64_Shdr *sh = elf64_getshdr(scn);
		Elf_Data *d;

		if (sh == NULL || sh->sh_type != SHT_GNU_versym)
			continue;
		d = elf_getdata(scn, NULL);
		if (d && d->d_size >= nsyms * sizeof(Elf64_Half))
			return d->d_buf;
	}
	return NULL;
}

/* Keep one symbol if it is a defined function or data object. */
static int keep_sym(struct eng_image *img, struct sym_scan *s,
		    const Elf64_Sym *sym, const char *name, bool dyn,
		    bool hidden)
{
	int type = ELF64_ST_TYPE(sym->st_info);
	struct eng_sym_cand c;

	if (sym->st_shndx == SHN_UNDEF || sym->st_shndx >= SHN_LORESERVE ||
	    sym->st_value == 0 || name[0] == '\0')
		return 0;
	if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_OBJECT)
		return 0;
	c.addr = sym->st_value - img->link_base;
	c.size = sym->st_size;
	c.name = name;
	c.shndx = sym->st_shndx + s->shoff;
	c.bind = ELF64_ST_BIND(sym->st_info);
	c.dyn = dyn;
	c.hidden_ver = hidden;
	if (type == STT_OBJECT)
		return push(&s->d, &s->nd, &s->capd, &c);
	return push(&img->fcands, &img->nfcands, &s->capf, &c);
}

static int read_table(struct eng_image *img, struct sym_scan *s, Elf *elf,
		      Elf_Scn *scn, const Elf64_Shdr *sh)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	Elf_Data *sd = elf_getdata(elf_getscn(elf, sh->sh_link), NULL);
	bool dyn = sh->sh_type == SHT_DYNSYM;
	const Elf64_Half *ver;
	const Elf64_Sym *syms;
	const char *str;
	size_t n, strsz;

	if (d == NULL || sd == NULL || d->d_buf == NULL || sd->d_buf == NULL ||
	    sh->sh_entsize != sizeof(Elf64_Sym))
		return 0;   /* damaged or NOBITS: use the other table */
	syms = d->d_buf;
	n = d->d_size / sizeof(Elf64_Sym);
	str = sd->d_buf;
	strsz = sd->d_size;
	ver = dyn ? find_versym(elf, n) : NULL;
	for (size_t i = 1; i < n; i++) {
		bool hidden = ver && (ver[i] & 0x8000);
		const char *at;
		int r;

		if (syms[i].st_name >= strsz)
			continue;
		/* .symtab spells versions in the name: "f@@V" is the
		 * default, "f@V" an old one. */
		if (!dyn && (at = strchr(str + syms[i].st_name, '@')) != NULL)
			hidden = at[1] != '@';
		r = keep_sym(img, s, &syms[i], str + syms[i].st_name, dyn,
			     hidden);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Section extents of one file, appended to s->secs; sets s->shoff. */
static int add_sections(struct sym_scan *s, Elf *elf)
{
	size_t nsec;
	Elf_Scn *scn = NULL;
	void *p;

	if (elf_getshdrnum(elf, &nsec) < 0)
		return -ENOEXEC;
	p = realloc(s->secs, (s->nsecs + nsec + 1) * sizeof(*s->secs));
	if (p == NULL)
		return -ENOMEM;
	s->secs = p;
	s->shoff = s->nsecs;
	memset(s->secs + s->nsecs, 0, (nsec + 1) * sizeof(*s->secs));
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		Elf64_Shdr *sh = elf64_getshdr(scn);
		size_t i = elf_ndxscn(scn);

		if (sh != NULL && i < nsec)
			s->secs[s->nsecs + i] = (struct sec_ext){
				sh->sh_addr, sh->sh_addr + sh->sh_size };
	}
	s->nsecs += nsec;
	return 0;
}

/* One pass over a file's section headers: its symbol tables (only
 * .symtab in a separate debug file) and whether it has DWARF. */
static int scan_elf(struct eng_image *img, struct sym_scan *s, Elf *elf,
		    bool debug_file, bool *have_symtab, bool *have_dynsym)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	int r;

	if (elf_getshdrstrndx(elf, &shstrndx) < 0)
		return -ENOEXEC;
	r = add_sections(s, elf);
	while (r == 0 && (scn = elf_nextscn(elf, scn)) != NULL) {
		Elf64_Shdr *sh = elf64_getshdr(scn);
		const char *nm;

		if (sh == NULL)
			continue;
		nm = elf_strptr(elf, shstrndx, sh->sh_name);
		if (nm && sh->sh_type != SHT_NOBITS &&
		    (!strcmp(nm, ".debug_info") || !strcmp(nm, ".zdebug_info")))
			img->has_dwarf = true;
		if (sh->sh_type == SHT_SYMTAB) {
			*have_symtab = true;
			if (!(s->flags & ENG_IMAGE_FDE_ONLY))
				r = read_table(img, s, elf, scn, sh);
		} else if (sh->sh_type == SHT_DYNSYM && !debug_file) {
			*have_dynsym = true;
			if (!(s->flags & ENG_IMAGE_FDE_ONLY))
				r = read_table(img, s, elf, scn, sh);
		}
	}
	return r;
}

/* Both symbol tables of the file, then (when the file itself has no
 * DWARF) the .symtab of its separate debug file, if one is installed:
 * that gives a stripped libc its local functions and source files. */
static int scan_sections(struct eng_image *img, struct sym_scan *s,
			 unsigned flags, struct hunch_err *err)
{
	bool have_symtab = false, have_dynsym = false, dbg_symtab = false;
	int r = scan_elf(img, s, img->elf, false, &have_symtab, &have_dynsym);

	if (r == -ENOMEM)
		return hunch_err_set(err, r,
				     "out of memory reading the symbols "
				     "of %s",
				     img->path);
	if (r < 0)
		return hunch_err_set(err, r, "%s has damaged section headers "
				  "(%s)", img->path, elf_errmsg(-1));
	img->stripped = !have_symtab;
	if (!img->has_dwarf && !(flags & ENG_IMAGE_NO_DEBUG_FILE) &&
	    eng_sym_debug_open(img) == 0 &&
	    scan_elf(img, s, img->dbg_elf, true, &dbg_symtab, &dbg_symtab) < 0)
		return hunch_err_set(err, -ENOMEM, "out of memory reading the "
				  "symbols of %s", img->dbg_path);
	s->no_symtabs = !have_symtab && !have_dynsym && !dbg_symtab;
	return 0;
}

/* ---- folding aliases and fixing sizes ------------------------------- */

static int leading_underscores(const char *s)
{
	int n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/* Among symbols at one address, the best display name sorts first:
 * global over local, a plain name over a versioned "name@@VER" (as a
 * .symtab spells it), default version over name@OLD, fewer leading
 * underscores ("write" over "__write"), GLOBAL over WEAK, shorter
 * ("__lll_lock_wait" over "__GI___lll_lock_wait"), .symtab over .dynsym,
 * then by name so that the choice is deterministic. */
static int cmp_pref(const struct eng_sym_cand *a, const struct eng_sym_cand *b)
{
	int ga = a->bind != STB_LOCAL, gb = b->bind != STB_LOCAL;
	int va = strchr(a->name, '@') != NULL, vb = strchr(b->name, '@') != NULL;
	int ua, ub;
	size_t la, lb;

	if (ga != gb)
		return gb - ga;
	if (va != vb)
		return va - vb;
	if (a->hidden_ver != b->hidden_ver)
		return a->hidden_ver - b->hidden_ver;
	ua = leading_underscores(a->name);
	ub = leading_underscores(b->name);
	if (ua != ub)
		return ua - ub;
	if ((a->bind == STB_GLOBAL) != (b->bind == STB_GLOBAL))
		return a->bind == STB_GLOBAL ? -1 : 1;
	la = strlen(a->name);
	lb = strlen(b->name);
	if (la != lb)
		return la < lb ? -1 : 1;
	if (a->dyn != b->dyn)
		return a->dyn - b->dyn;
	return strcmp(a->name, b->name);
}

static int cmp_cand(const void *pa, const void *pb)
{
	const struct eng_sym_cand *a = pa, *b = pb;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return cmp_pref(a, b);
}

/* End of the section a candidate lives in (relative), or UINT64_MAX. */
static uint64_t sec_end(const struct eng_image *img, const struct sym_scan *s,
			uint32_t shndx)
{
	if (shndx >= s->nsecs || s->secs[shndx].end == 0)
		return UINT64_MAX;
	return s->secs[shndx].end - img->link_base;
}

/* Functions from the unwind table that no symbol covers (stripped
 * code), and FDE sizes for size-0 symbols (eng_sym_fde.c). */
static int add_fde_funcs(struct eng_image *img, uint32_t **shndx)
{
	struct eng_sym_range *r;
	size_t n;
	int rc = eng_sym_fde_ranges(img, &r, &n);

	if (rc == 0 && n > 0)
		rc = eng_sym_fde_merge(img, r, n, shndx);
	free(r);
	return rc;
}

static int fold_funcs(struct eng_image *img, const struct sym_scan *s)
{
	const struct eng_sym_cand *c = img->fcands;
	size_t n = img->nfcands, k = 0;
	uint32_t *shndx;

	if (n > 0)
		qsort(img->fcands, n, sizeof(*c), cmp_cand);
	img->funcs = calloc(n ? n : 1, sizeof(*img->funcs));
	shndx = calloc(n ? n : 1, sizeof(*shndx));
	if (img->funcs == NULL || shndx == NULL) {
		free(shndx);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		struct eng_func *f = k > 0 ? &img->funcs[k - 1] : NULL;

		if (f != NULL && f->addr == c[i].addr) {
			if (c[i].size > f->size)
				f->size = c[i].size;
			f->from_dynsym &= c[i].dyn;
			continue;
		}
		img->funcs[k] = (struct eng_func){
			.addr = c[i].addr, .size = c[i].size, .name = c[i].name,
			.global = c[i].bind != STB_LOCAL,
			.from_dynsym = c[i].dyn };
		shndx[k++] = c[i].shndx;
	}
	img->nfuncs = k;
	if (!(s->flags & ENG_IMAGE_NO_FDE) && add_fde_funcs(img, &shndx) < 0) {
		free(shndx);
		return -ENOMEM;
	}
	k = img->nfuncs;
	/* Sizes: a zero size, or one that runs into the next function, ends
	 * at the next function or at the end of the section. */
	for (size_t i = 0; i < k; i++) {
		struct eng_func *f = &img->funcs[i];
		uint64_t lim = sec_end(img, s, shndx[i]);

		if (i + 1 < k && img->funcs[i + 1].addr < lim)
			lim = img->funcs[i + 1].addr;
		if (lim != UINT64_MAX && lim > f->addr &&
		    (f->size == 0 || f->addr + f->size > lim))
			f->size = lim - f->addr;
	}
	free(shndx);
	return 0;
}

static int fold_data(struct eng_image *img, struct sym_scan *s)
{
	size_t k = 0;

	if (s->nd > 0)
		qsort(s->d, s->nd, sizeof(*s->d), cmp_cand);
	img->data = calloc(s->nd ? s->nd : 1, sizeof(*img->data));
	if (img->data == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < s->nd; i++) {
		const struct eng_sym_cand *c = &s->d[i];

		if (k > 0 && img->data[k - 1].addr == c->addr) {
			if (c->size > img->data[k - 1].size)
				img->data[k - 1].size = c->size;
			continue;
		}
		img->data[k++] = (struct eng_datasym){
			.addr = c->addr, .size = c->size, .name = c->name,
			.global = c->bind != STB_LOCAL };
	}
	img->ndata = k;
	return 0;
}

/* ---- open / close ----------------------------------------------------- */

static int index_symbols(struct eng_image *img, unsigned flags,
			 struct hunch_err *err)
{
	struct sym_scan s = { .flags = flags };
	int r = scan_sections(img, &s, flags, err);

	if (r == 0 && (fold_funcs(img, &s) < 0 || fold_data(img, &s) < 0 ||
		       eng_sym_fde_name(img) < 0 || eng_sym_fde_main(img) < 0))
		r = hunch_err_set(err, -ENOMEM, "out of memory indexing the "
			       "symbols of %s", img->path);
	if (r == 0 && (s.no_symtabs || (flags & ENG_IMAGE_FDE_ONLY)) &&
	    img->nfuncs == 0)
		r = hunch_err_set(err, -ENOENT,
			       "%s has no symbol table (neither .symtab nor "
			       ".dynsym) and no unwind table (.eh_frame), so "
			       "hunch cannot find its code; rebuild it "
			       "without stripping, or link it with "
			       "-Wl,--export-dynamic", img->path);
	free(s.secs);
	free(s.d);
	return r;
}

int eng_image_open(const char *path, struct eng_image **out,
		   struct hunch_err *err)
{
	return eng_image_open_flags(path, 0, out, err);
}

int eng_image_open_flags(const char *path, unsigned flags,
			 struct eng_image **out, struct hunch_err *err)
{
	struct eng_image *img = calloc(1, sizeof(*img));
	const char *slash;
	int r;

	*out = NULL;
	if (img == NULL || (img->path = strdup(path)) == NULL) {
		free(img);
		return hunch_err_set(err, -ENOMEM, "out of memory opening %s",
				  path);
	}
	img->fd = -1;
	img->dbg_fd = -1;
	img->main_fde = SIZE_MAX;
	slash = strrchr(img->path, '/');
	img->name = slash ? slash + 1 : img->path;
	elf_version(EV_CURRENT);
	r = open_file(img, err);
	if (r == 0)
		r = check_header(img, err);
	if (r == 0) {
		read_layout(img);
		r = index_symbols(img, flags, err);
	}
	if (r < 0) {
		eng_image_close(img);
		return r;
	}
	*out = img;
	return 0;
}

void eng_image_close(struct eng_image *img)
{
	if (img == NULL)
		return;
	eng_sym_lazy_free(img);
	eng_sym_debug_close(img);
	free(img->funcs);
	free(img->data);
	free(img->fcands);
	free(img->fde_names);
	if (img->elf)
		elf_end(img->elf);
	if (img->fd >= 0)
		close(img->fd);
	free(img->path);
	free(img);
}

/* ---- accessors and lookups -------------------------------------------- */

const char *eng_image_path(const struct eng_image *img) { return img->path; }
const char *eng_image_name(const struct eng_image *img) { return img->name; }
bool eng_image_is_pie(const struct eng_image *img) { return img->pie; }
uint64_t eng_image_link_base(const struct eng_image *img)
{
	return img->link_base;
}
uint64_t eng_image_entry(const struct eng_image *img) { return img->entry; }
uint64_t eng_image_span(const struct eng_image *img) { return img->span; }
bool eng_image_has_dwarf(const struct eng_image *img)
{
	return img->has_dwarf;
}
bool eng_image_stripped(const struct eng_image *img) { return img->stripped; }
const char *eng_image_debug_file(const struct eng_image *img)
{
	return img->dbg_path;
}
size_t eng_image_nfuncs(const struct eng_image *img) { return img->nfuncs; }

const struct eng_func *eng_image_func(const struct eng_image *img, size_t i)
{
	return i < img->nfuncs ? &img->funcs[i] : NULL;
}

/* Index of the last entry with start <= addr in an array sorted by
 * address, or -1.  `stride` lets funcs and data share it. */
static ptrdiff_t last_at_or_below(const void *base, size_t n, size_t stride,
				  uint64_t addr)
{
	size_t lo = 0, hi = n;   /* answer in [lo-1, hi) */

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t a = *(const uint64_t *)((const char *)base +
						 mid * stride);

		if (a <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (ptrdiff_t)lo - 1;
}

const struct eng_func *eng_image_func_at(const struct eng_image *img,
					 uint64_t addr)
{
	ptrdiff_t i = last_at_or_below(img->funcs, img->nfuncs,
				       sizeof(*img->funcs), addr);

	if (i < 0)
		return NULL;
	if (addr - img->funcs[i].addr < img->funcs[i].size ||
	    addr == img->funcs[i].addr)
		return &img->funcs[i];
	return NULL;
}

size_t eng_image_ndata(const struct eng_image *img) { return img->ndata; }

const struct eng_datasym *eng_image_data(const struct eng_image *img,
					 size_t i)
{
	return i < img->ndata ? &img->data[i] : NULL;
}

const struct eng_datasym *eng_image_data_at(const struct eng_image *img,
					    uint64_t addr)
{
	ptrdiff_t i = last_at_or_below(img->data, img->ndata,
				       sizeof(*img->data), addr);

	/* Walk back a little: a small object may follow a large one that
	 * still covers addr (rare, but a few steps are cheap). */
	for (ptrdiff_t j = i; j >= 0 && j > i - 4; j--) {
		const struct eng_datasym *d = &img->data[j];

		if (addr - d->addr < d->size || addr == d->addr)
			return d;
	}
	return NULL;
}

int eng_image_read(const struct eng_image *img, uint64_t addr, void *buf,
		   size_t len)
{
	Elf64_Phdr *ph = elf64_getphdr(img->elf);
	uint64_t va = addr + img->link_base;
	size_t n = 0;

	if (ph == NULL || elf_getphdrnum(img->elf, &n) < 0)
		return -EFAULT;
	for (size_t i = 0; i < n; i++) {
		const Elf64_Phdr *p = &ph[i];

		if (p->p_type != PT_LOAD || va < p->p_vaddr ||
		    va - p->p_vaddr > p->p_filesz ||
		    len > p->p_filesz - (va - p->p_vaddr))
			continue;
		if (p->p_offset + (va - p->p_vaddr) + len > img->rawsize)
			return -EFAULT;
		memcpy(buf, img->raw + p->p_offset + (va - p->p_vaddr), len);
		return 0;
	}
	return -EFAULT;
}

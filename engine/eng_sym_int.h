/*
 * eng_sym_int.h - the inside of an eng_image, shared by the files that
 * implement eng_image.h (eng_image.c: ELF tables and lookups;
 * eng_sym_lazy.c: DWARF source files, demangling, the name index;
 * eng_sym_debug.c and eng_sym_minidebug.c: where the debug symbols of a
 * stripped file come from).
 * Nothing outside those files includes this.
 */
#ifndef ENG_SYM_INT_H
#define ENG_SYM_INT_H

#include <gelf.h>
#include <elfutils/libdw.h>

#include "eng_image.h"

/* One symbol table entry we kept, before aliases are folded.  Kept after
 * open as the raw material of the by-name index. */
struct eng_sym_cand {
	uint64_t addr;          /* image-relative */
	uint64_t size;
	const char *name;
	uint32_t shndx;
	uint8_t bind;           /* STB_* */
	bool dyn;               /* from .dynsym */
	bool hidden_ver;        /* .dynsym name@VER (not the default) */
};

/* Append-only string storage: pointers stay valid until the image closes,
 * and there is one allocation per 64 KiB, not one per string. */
struct eng_arena_chunk {
	struct eng_arena_chunk *next;
	size_t used, cap;
	char data[];
};

struct eng_cu_range {
	uint64_t lo, hi;        /* link-time addresses, [lo, hi) */
	const char *name;       /* DW_AT_name of the compile unit */
};

struct eng_image {
	char *path;
	const char *name;       /* basename, points into path */
	int fd;
	Elf *elf;
	const unsigned char *raw;  /* whole file, mapped by libelf */
	size_t rawsize;
	bool pie, stripped, has_dwarf;
	/* Separate debug file (build-id, .gnu_debuglink, debuginfod) or
	 * the decompressed MiniDebugInfo, used for its .symtab and DWARF
	 * when the file has no DWARF (eng_sym_debug.c). */
	char *dbg_path;
	int dbg_fd;
	Elf *dbg_elf;
	void *dbg_mem;          /* MiniDebugInfo's ELF image, owned */
	enum eng_debug_source dbg_source;
	bool dbg_pending;       /* a debuginfod fetch was under way */
	char build_id[129];     /* lowercase hex, "" if none */
	uint64_t link_base, entry;
	uint64_t span;   /* relative end of the highest PT_LOAD */

	struct eng_func *funcs;
	size_t nfuncs;
	struct eng_datasym *data;
	size_t ndata;

	/* Functions found from the unwind table only (eng_sym_fde.c): their
	 * "<module>+0x<off>" names, and main's index when it was found from
	 * _start (SIZE_MAX when not). */
	size_t nfde_funcs;
	char *fde_names;
	size_t main_fde;

	/* Every function symbol (aliases too), for the by-name index. */
	struct eng_sym_cand *fcands;
	size_t nfcands;
	bool fcands_by_name;    /* fcands sorted by name yet? */

	/* Lazy parts (eng_sym_lazy.c). */
	const char **display;   /* per function; NULL = not computed yet */
	struct eng_arena_chunk *arena;
	char *dmbuf;            /* __cxa_demangle scratch, reused */
	size_t dmlen;
	Dwarf *dw;
	struct eng_cu_range *cus;
	size_t ncus;
	bool cus_built;
};

/* eng_sym_debug.c: 0 and img->dbg_* set, or -ENOENT (and maybe a
 * debuginfod fetch started, img->dbg_pending). */
int eng_sym_debug_open(struct eng_image *img);
void eng_sym_debug_close(struct eng_image *img);

/* eng_sym_minidebug.c: .gnu_debugdata into img->dbg_*, or -ENOENT. */
int eng_sym_minidebug_open(struct eng_image *img);

/* eng_sym_lazy.c */
void eng_sym_lazy_free(struct eng_image *img);

/* eng_sym_fde.c: function ranges [lo, hi) from .eh_frame (through
 * .eh_frame_hdr when there is one) and .debug_frame, image-relative,
 * sorted, one per start, PLT entries and cold parts left out. */
struct eng_sym_range {
	uint64_t lo, hi;
};
int eng_sym_fde_ranges(const struct eng_image *img,
		       struct eng_sym_range **out, size_t *n);
/* Add the ranges no symbol covers to img->funcs (symbols only, sorted,
 * sizes as the symbols gave them); shndx parallels funcs and is grown
 * with it (0 for the new ones).  Size-0 symbols take their FDE's size. */
int eng_sym_fde_merge(struct eng_image *img, const struct eng_sym_range *r,
		      size_t n, uint32_t **shndx);
/* Name the functions the merge added "<module>+0x<offset>". */
int eng_sym_fde_name(struct eng_image *img);
/* Name main from the entry function's code when no symbol does. */
int eng_sym_fde_main(struct eng_image *img);

#endif

/*
 * eng_image.h - what hunch knows about a program's code and data,
 * read from ELF files with libelf and libdw.
 *
 * One `eng_image` per file (the executable or a shared object), shared by
 * every process that maps that file.  All addresses inside an image are
 * relative to the image: the link-time virtual address (st_value) minus
 * the image's lowest PT_LOAD p_vaddr rounded down to a page, so that
 * "runtime address = load base + relative address" for PIE, shared objects
 * and non-PIE executables alike (for non-PIE the load base is that lowest
 * p_vaddr).
 *
 * Reading is lazy: opening an image reads the symbol tables only; source
 * files (DWARF) and demangled names are computed on first request.
 */
#ifndef ENG_IMAGE_H
#define ENG_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hunch_err.h"

struct eng_image;

struct eng_func {
	uint64_t addr;          /* image-relative start */
	uint64_t size;          /* bytes; corrected by address order */
	const char *name;       /* raw symbol name (mangled for C++) */
	bool global;            /* STB_GLOBAL or STB_WEAK */
	bool from_dynsym;       /* seen only in .dynsym */
	bool from_fde;          /* no symbol starts here: found from the
				 * unwind table ("<module>+0x<off>"), or
				 * main found from _start */
};

struct eng_datasym {
	uint64_t addr;          /* image-relative */
	uint64_t size;
	const char *name;
	bool global;
};

/* Open and index the symbol tables of an ELF file.  Errors name the file:
 * missing, not ELF, not x86-64, no symbols at all. */
int eng_image_open(const char *path, struct eng_image **out,
		   struct hunch_err *err);
void eng_image_close(struct eng_image *img);

/* eng_image_open with options.  By default a file without DWARF gets
 * the symbols of a separate debug file, found in this order: by build-id
 * (/usr/lib/debug/.build-id/<xx>/<rest>.debug, from Debian's -dbg and
 * -dbgsym packages), by its .gnu_debuglink name (CRC checked) beside the
 * file, in its .debug/ folder and under /usr/lib/debug/<its folder>/,
 * in debuginfod's cache when DEBUGINFOD_URLS is set; else its own
 * MiniDebugInfo (.gnu_debugdata).  Its .symtab adds local functions and
 * its DWARF gives source files.  With DEBUGINFOD_URLS set and no local
 * debug file, a background fetch starts (eng_sym_debuginfod.h) and the
 * open returns at once without it. */
#define ENG_IMAGE_NO_DEBUG_FILE 0x1u   /* read only the file's own
					* .symtab and .dynsym */
int eng_image_open_flags(const char *path, unsigned flags,
			 struct eng_image **out, struct hunch_err *err);

/* More options of eng_image_open_flags: functions from the symbol tables
 * only (none from the unwind table), or from the unwind table only, as
 * if the file had no symbol tables (for comparisons and benchmarks). */
#define ENG_IMAGE_NO_FDE 0x2u
#define ENG_IMAGE_FDE_ONLY 0x4u

const char *eng_image_path(const struct eng_image *img);
/* The module name shown in the where axis: the file's basename. */
const char *eng_image_name(const struct eng_image *img);
bool eng_image_is_pie(const struct eng_image *img);  /* ET_DYN */
/* Link-time address that "relative 0" corresponds to (0 for ET_DYN). */
uint64_t eng_image_link_base(const struct eng_image *img);
/* Image-relative ELF entry point (e_entry), 0 if none. */
uint64_t eng_image_entry(const struct eng_image *img);
/* Image-relative end of the loaded segments: relative addresses in
 * [0, span) are the file's code and data (.bss included) once mapped. */
uint64_t eng_image_span(const struct eng_image *img);
bool eng_image_has_dwarf(const struct eng_image *img);
bool eng_image_stripped(const struct eng_image *img);  /* no .symtab */
/* Path of the separate debug file that was read (for MiniDebugInfo the
 * file itself), or NULL. */
const char *eng_image_debug_file(const struct eng_image *img);
/* Where the extra symbols came from (eng_sym_debug.c). */
enum eng_debug_source {
	ENG_DEBUG_NONE,         /* the file's own tables only */
	ENG_DEBUG_BUILD_ID,     /* /usr/lib/debug/.build-id/xx/rest.debug */
	ENG_DEBUG_LINK,         /* .gnu_debuglink name, CRC checked */
	ENG_DEBUG_DEBUGINFOD,   /* debuginfod's cache */
	ENG_DEBUG_MINI,         /* .gnu_debugdata (MiniDebugInfo) */
};
enum eng_debug_source eng_sym_debug_source(const struct eng_image *img);
const char *eng_sym_debug_source_name(enum eng_debug_source s);
/* A debuginfod fetch for this file was under way when it was opened
 * (eng_sym_debuginfod.h) and has since put the debug file in the cache:
 * opening the file again gives it its full names. */
bool eng_sym_debug_arrived(const struct eng_image *img);

/* Functions, sorted by address, one entry per address (aliases folded:
 * the global name wins over a local one). */
size_t eng_image_nfuncs(const struct eng_image *img);
const struct eng_func *eng_image_func(const struct eng_image *img, size_t i);
/* The function containing an image-relative address, or NULL. */
const struct eng_func *eng_image_func_at(const struct eng_image *img,
					 uint64_t addr);
const struct eng_func *eng_sym_lazy_func_by_name(const struct eng_image *img,
					      const char *name);

/* Demangled name for display (same as raw name for C); computed lazily
 * and cached.  Never NULL. */
const char *eng_sym_lazy_display_name(struct eng_image *img,
				  const struct eng_func *f);
/* Source file of the compile unit that holds this function, from DWARF,
 * or NULL when there is none (no debug info, or code from a CU-less
 * object).  Lazily builds an address -> CU map on first call. */
const char *eng_sym_lazy_source_file(struct eng_image *img,
				 const struct eng_func *f);
/* The same without its directories ("x.c" for "../src/x.c"), for display. */
const char *eng_sym_lazy_source_basename(struct eng_image *img,
				     const struct eng_func *f);

/* Data symbols (STT_OBJECT, STT_TLS excluded), sorted by address. */
size_t eng_image_ndata(const struct eng_image *img);
const struct eng_datasym *eng_image_data(const struct eng_image *img,
					 size_t i);
/* The data symbol whose [addr, addr+size) contains `addr`, or NULL. */
const struct eng_datasym *eng_image_data_at(const struct eng_image *img,
					    uint64_t addr);

/* Read `len` bytes of the file's contents at an image-relative address
 * (from the PT_LOAD segments); returns 0 or -EFAULT if not file-backed. */
int eng_image_read(const struct eng_image *img, uint64_t addr, void *buf,
		   size_t len);

#endif

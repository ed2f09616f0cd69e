/*
 * eng_funcreloc_int.h - private to eng_funcreloc.c and
 * eng_funcreloc_cfi.c.
 */
#ifndef ENG_FUNCRELOC_INT_H
#define ENG_FUNCRELOC_INT_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eng_funcreloc.h"
#include "eng_refusal.h"
#include "x86_funcreloc.h"
#include "x86_parse.h"

/* The unwind sections of one file, read with libelf. */
struct fr_elf {
	int fd;
	Elf *elf;
	unsigned char ident[EI_NIDENT];
	Elf_Data *eh;            /* .eh_frame, NULL without .eh_frame_hdr */
	uint64_t eh_addr;        /* link-time address of .eh_frame */
	const uint8_t *hdr;      /* .eh_frame_hdr */
	size_t hdr_len;
	uint64_t hdr_addr;
};

int eng_funcreloc_cfi_elf_open(struct fr_elf *e, const char *path);
void eng_funcreloc_cfi_elf_close(struct fr_elf *e);

/* .eh_frame bytes (CIE, FDE, 0 terminator) for the copy of the function
 * at link-time address `link` (runtime = link + bias).  0: *out
 * malloc'd; 1: the original has no FDE (nothing to register: the copy
 * unwinds as the original does); -ENOTSUP with *why; -ENOMEM. */
int eng_funcreloc_cfi_build(const struct fr_elf *e, uint64_t link,
			    uint64_t bias, const struct x86_funcreloc *fr,
			    uint8_t **out, size_t *outlen,
			    enum eng_refusal *why);

struct fr_img {
	struct eng_image *img;
	struct eng_points_cache *pc;
	uint64_t base, bias;     /* runtime = base + rel = bias + link */
	uint64_t lo, hi;         /* runtime range of its functions */
	struct fr_elf elf;
	bool owned;              /* img and pc opened here (module API) */
};

/* FR_FREED: the copy was given back (eng_funcreloc_free.c); the entry
 * is dropped at the end of that commit. */
enum fr_state { FR_NOT_NEEDED, FR_REFUSED, FR_COPY, FR_FREED };

struct fr_func {
	uint64_t lo, hi;         /* the original function, runtime */
	enum fr_state state;
	enum eng_refusal why;    /* FR_REFUSED */
	struct x86_funcreloc fr;        /* the copy and its maps */
	struct x86_func cf;      /* the copy, parsed (runtime addresses) */
	uint64_t copy;
	size_t alloc;
	uint64_t eh;             /* its .eh_frame in the target, or 0 */
	size_t ehlen;
	bool eh_done;            /* registered */
	uint64_t epatch;         /* the original entry's patch */
	uint8_t eplen;
	uint8_t eorig[32];
	uint64_t ejump;          /* where the entry jmp leads */
	bool patched;
	bool live;               /* scratch: the copy has requests */
};

struct eng_funcreloc {
	struct fr_img *img;
	size_t nimg;
	struct fr_func *f;       /* sorted by lo */
	size_t nf, capf;
	struct x86_decoder *dec;
	size_t frames;           /* FDEs registered now */
	size_t built, freed;     /* copies built, given back */
	size_t checks, busy;     /* reclaim passes; copies kept by one */
	size_t dead_points;      /* forgotten points not compacted yet */
	size_t compactions;
};

/* How many of fs[0..n) `want` picks. */
size_t eng_funcreloc_link_count(struct fr_func **fs, size_t n,
		bool (*want)(const struct fr_func *));
/* Is f's module still mapped where it was? */
bool eng_funcreloc_loaded(const struct eng_inst *in, const struct fr_func *f);
/* The relocated function holding original address a, or NULL. */
struct fr_func *eng_funcreloc_find(const struct eng_funcreloc *r, uint64_t a);
/* Decide on the function holding a (absolute address) at its first
 * request, building its copy when it needs one, or with force (an
 * after-call point) even if it does not: NULL when its file is not on
 * or its body is instrumented in place (*rc 0), or on error (*rc < 0). */
struct fr_func *eng_funcreloc_consider(struct eng_inst *in, uint64_t a,
				       bool force, int *rc,
				       struct hunch_err *err);
/* Set f->live on the functions whose copy has requests: active patches
 * with minis and, with pending, requests queued for insertion. */
int eng_funcreloc_link_mark_live(struct eng_inst *in, bool pending);
struct inst_threads;
/* Is any thread in libgcc_s's code, or has a return address there?  It
 * may hold the unwinder's object lock, which (de)registering takes. */
bool eng_funcreloc_link_in_unwinder(struct eng_inst *in,
				    const struct inst_threads *th);
/* Call the rtlib's fn(list, k) with the unwind tables (f->eh) of the k
 * copies in fs[] that `want` picks (register or deregister them all in
 * one inferior call).  0 with *ret, or <0 error. */
int eng_funcreloc_link_call_frames(struct eng_inst *in,
				   const struct inst_threads *th, uint64_t fn,
				   struct fr_func **fs, size_t n,
				   bool (*want)(const struct fr_func *),
				   size_t k, uint64_t *ret,
				   struct hunch_err *err);

#endif

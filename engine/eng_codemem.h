/*
 * eng_codemem.h - trampoline memory inside the target, within ±2 GiB of
 * the code it serves (so a 5-byte `jmp rel32` reaches it).
 *
 * Regions of 1 MiB are mapped by an inferior call of the target's own
 * `mmap` (MAP_FIXED_NOREPLACE into a hole found in /proc/<pid>/maps,
 * read+exec only: hunch writes through /proc/<pid>/mem, the program
 * cannot scribble on its trampolines), then carved in 32-byte units.
 * Regions are never unmapped: a trampoline must stay valid even if hunch
 * is killed.  Freed units are reused (exact-size lists up to 4 KiB,
 * first fit above); the caller frees only code no thread can be
 * executing (eng_inst and eng_funcreloc_free.c defer that).
 */
#ifndef ENG_CODEMEM_H
#define ENG_CODEMEM_H

#include <stddef.h>
#include <stdint.h>

#include "hunch_err.h"

struct eng_proc;
struct eng_codemem;

int eng_codemem_create(struct eng_proc *p, struct eng_codemem **out,
		       struct hunch_err *err);
void eng_codemem_destroy(struct eng_codemem *m);

/* `len` bytes within ±2 GiB - 16 MiB of `near`.  May make an inferior
 * call: every thread must be stopped.  -ENOMEM with a message when no
 * hole is in reach. */
int eng_codemem_alloc(struct eng_codemem *m, uint64_t near, size_t len,
		      uint64_t *addr, struct hunch_err *err);
void eng_codemem_free(struct eng_codemem *m, uint64_t addr, size_t len);

/* Trampoline memory is written through a local copy: writes land there
 * and eng_codemem_flush sends each region's changed span in one write
 * per page (thousands of small pwrites to /proc/<pid>/mem cost ~5 us
 * each; eng_mem_write cuts at pages so that a SIGKILLed hunch leaves
 * whole pages written).  Flush before anything in the program's code can
 * lead to it. */
int eng_codemem_write(struct eng_codemem *m, uint64_t addr, const void *buf,
		      size_t len, struct hunch_err *err);
int eng_codemem_flush(struct eng_codemem *m, uint64_t *writes,
		      struct hunch_err *err);
/* A write made straight to the target (a patch inside a relocated copy,
 * which must be written at once): the shadow takes it too, so that a
 * later flush of a span around it does not put the old bytes back. */
void eng_codemem_sync(struct eng_codemem *m, uint64_t addr, const void *buf,
		      size_t len);

/* Is addr inside any region (generated code)? */
int eng_codemem_contains(const struct eng_codemem *m, uint64_t addr);
/* Bytes in use. */
size_t eng_codemem_used(const struct eng_codemem *m);

/* Each flushed range is also handed to fn, each region mapped to map
 * (the children mirrored, eng_inst_mirror.c). */
void eng_codemem_set_tee(struct eng_codemem *m,
			 void (*fn)(void *, uint64_t, const void *, size_t),
			 void (*map)(void *, uint64_t, size_t), void *ctx);

#endif

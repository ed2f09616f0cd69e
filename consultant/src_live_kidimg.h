/*
 * src_live_kidimg.h - the images of followed child processes that have
 * exec'ed another program (an MPI launcher's ranks): the hint sampler of
 * such a child resolves its stacks with the files its own
 * /proc/PID/maps names, not with the program's images (internal to the
 * live source).  Images are opened once per file for every child (the
 * ranks of a job share them), when an address first falls in one.
 */
#ifndef SRC_LIVE_KIDIMG_H
#define SRC_LIVE_KIDIMG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pc_source.h"

struct eng_image;
struct src_live_kidimg;        /* every child's maps, the images they share */
struct src_live_kidimg_proc;   /* one child's */

struct src_live_kidimg *src_live_kidimg_new(void);
void src_live_kidimg_free(struct src_live_kidimg *k);
/* The resolver of child pid (made on first use; NULL only when out of
 * memory): pass it as the arg of src_live_kidimg_image_at. */
struct src_live_kidimg_proc *src_live_kidimg_proc(struct src_live_kidimg *k, pid_t pid);
/* An src_live_hint_image_fn: the image mapped at addr in the child, and its base
 * (runtime address of image-relative 0), or NULL. */
struct eng_image *src_live_kidimg_image_at(void *proc, uint64_t addr, uint64_t *base);

/* Is the file at path one of the program's own modules (already in the
 * where axis)? */
typedef bool (*src_live_kidimg_known_fn)(void *arg, const char *path);
typedef void (*src_live_kidimg_emit_fn)(void *arg, const struct pc_discovery *d);
/* One function discovery per function of each file mapped in the child
 * that no child reported before and `known` does not claim: the /Code
 * of a program the child exec'ed (an MPI rank's). */
void src_live_kidimg_report(struct src_live_kidimg_proc *p, src_live_kidimg_known_fn known, void *karg,
		 src_live_kidimg_emit_fn emit, void *arg);
/* The children with their own images, by index. */
size_t src_live_kidimg_nprocs(const struct src_live_kidimg *k);
pid_t src_live_kidimg_pid(const struct src_live_kidimg *k, size_t i);
/* The files src_live_kidimg_report put in the where axis, as call-graph modules
 * (src_live_cg.h), at most max; how many (out NULL: how many
 * there are). */
struct src_live_cg_module;
size_t src_live_kidimg_modules(const struct src_live_kidimg *k, struct src_live_cg_module *out,
		    size_t max);

#endif

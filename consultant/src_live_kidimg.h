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

#include <stdint.h>
#include <sys/types.h>

struct eng_image;
struct slki;        /* every child's maps, the images they share */
struct slki_proc;   /* one child's */

struct slki *slki_new(void);
void slki_free(struct slki *k);
/* The resolver of child pid (made on first use; NULL only when out of
 * memory): pass it as the arg of slki_image_at. */
struct slki_proc *slki_proc(struct slki *k, pid_t pid);
/* An slh_image_fn: the image mapped at addr in the child, and its base
 * (runtime address of image-relative 0), or NULL. */
struct eng_image *slki_image_at(void *proc, uint64_t addr, uint64_t *base);

#endif

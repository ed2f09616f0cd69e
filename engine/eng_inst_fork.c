/*
 * eng_inst_fork.c - a forked child's copy of the program gets its own
 * bytes back (see eng_inst.h, eng_inst_fork_restore).
 *
 * The child inherits every jmp and int3 hunch patched into the parent.
 * Its runtime library is inert (the snippets count nothing) and its
 * trampolines are a private copy the parent's later commits never
 * touch, so an inherited patch would only cost without measuring; it
 * is removed instead, while the child is stopped before its first
 * instruction.  A thread of the child that returns into a relocated
 * function's copy (fork called below it) runs that copy to its end,
 * skipping its snippets, as the child's code after detach does.
 */
#include "eng_inst_int.h"
#include "eng_funcreloc_int.h"
#include "eng_proc.h"

size_t eng_inst_fork_restore(struct eng_inst *in, pid_t child)
{
	size_t n = 0;

	for (size_t i = 0; i < in->npts; i++) {
		const struct ipoint *ip = &in->pts[i];

		if (ip->patched && !ip->dead &&
		    eng_fork_write(child, ip->pt.patch_start, ip->orig,
				   ip->pt.patch_len) == 0)
			n++;
	}
	for (size_t i = 0; in->fr != NULL && i < in->fr->nf; i++) {
		const struct fr_func *f = &in->fr->f[i];

		if (f->patched && fr_loaded(in, f) &&
		    eng_fork_write(child, f->epatch, f->eorig, f->eplen) == 0)
			n++;
	}
	return n;
}

/*
 * eng_inst_fork.c - a forked child's copy of the program gets its own
 * bytes back (see eng_inst.h, eng_inst_fork_restore), now or, for a
 * child that keeps its instrumentation live in a segment of its own
 * (eng_fork_shm.h), later: eng_inst_fork_patches lists what it
 * inherited.
 *
 * The child inherits every jmp and int3 hunch patched into the parent.
 * Without a segment of its own its runtime library is inert (the snippets count nothing) and its
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
#include "eng_fork_patch.h"

#include <stdlib.h>
#include <string.h>

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

		if (f->patched && eng_funcreloc_loaded(in, f) &&
		    eng_fork_write(child, f->epatch, f->eorig, f->eplen) == 0)
			n++;
	}
	return n;
}

/* The patches a child inherits at this moment, for its restore later
 * (eng_fork_patch.h): *out is malloc'ed, the count returned. */
size_t eng_inst_fork_patches(struct eng_inst *in, struct eng_fork_patch **out)
{
	size_t cap = in->npts + (in->fr != NULL ? in->fr->nf : 0), n = 0;
	struct eng_fork_patch *p = calloc(cap ? cap : 1, sizeof(*p));

	*out = p;
	if (p == NULL)
		return 0;
	for (size_t i = 0; i < in->npts; i++) {
		const struct ipoint *ip = &in->pts[i];

		if (!ip->patched || ip->dead)
			continue;
		p[n].addr = ip->pt.patch_start;
		p[n].len = ip->pt.patch_len;
		memcpy(p[n++].orig, ip->orig, ip->pt.patch_len);
	}
	for (size_t i = 0; in->fr != NULL && i < in->fr->nf; i++) {
		const struct fr_func *f = &in->fr->f[i];

		if (!f->patched || !eng_funcreloc_loaded(in, f))
			continue;
		p[n].addr = f->epatch;
		p[n].len = f->eplen;
		memcpy(p[n++].orig, f->eorig, f->eplen);
	}
	return n;
}

/*
 * eng_pyframes_snap.c - the memory under a thread's top interpreter
 * frame, copied in one process_vm_readv, for the walk (see
 * eng_pyframes.c).
 *
 * CPython 3.11 pushes a call's frame on the thread's data stack, just
 * above its caller's: a thread's frames are a few KiB of adjacent
 * memory below its current frame.  Read one frame at a time, a walk of
 * 40 frames takes 40 system calls and tens of microseconds, and a
 * thread that calls and returns every 100 ns has changed its stack many
 * times over before the walk ends.  One copy of the pages under the top
 * frame takes a microsecond or two: the frames in it were read almost
 * at once.  Frames outside it (a generator's, in the heap; an older
 * data stack chunk) are read one by one as before.
 */
#include "eng_pyframes_int.h"

#include <errno.h>
#include <string.h>
#include <sys/uio.h>

#define PAGE 4096ull

/* Copy [hi - pages * PAGE (page aligned), hi) as far down as the
 * memory is mapped.  The remote pieces go from the top page down, so
 * that the copy stops at the first unmapped page below the stack
 * (a partial transfer never splits a piece). */
void eng_pyframes_snap_take(struct eng_pyframes *pf, uint64_t top)
{
	struct eng_pyf_snap *s = &pf->snap;
	struct iovec local[ENG_PYF_SNAP_PAGES], remote[ENG_PYF_SNAP_PAGES];
	uint64_t hi = top + ENG_PYF_FRAME_BYTES, at = (hi - 1) & ~(PAGE - 1);
	uint64_t base = hi - sizeof(s->buf);
	int n = 1;
	ssize_t got;

	s->low_frame = s->hi = s->lo = hi;
	s->below = 0;
	if (top < PAGE)
		return;   /* no stack there: every read goes to the target */
	if (s->pages < 1 || s->pages > ENG_PYF_SNAP_PAGES)
		s->pages = 2;
	remote[0].iov_base = (void *)at;
	remote[0].iov_len = hi - at;
	for (; n < s->pages && at >= PAGE; n++) {
		at -= PAGE;
		remote[n].iov_base = (void *)at;
		remote[n].iov_len = PAGE;
	}
	for (int i = 0; i < n; i++) {
		local[i].iov_base = s->buf + ((uint64_t)remote[i].iov_base - base);
		local[i].iov_len = remote[i].iov_len;
	}
	got = process_vm_readv(pf->pid, local, n, remote, n, 0);
	if (got > 0)
		s->lo = hi - (uint64_t)got;
}

/* Read len bytes at addr: from the copy when it holds them, from the
 * target otherwise.  0 or -errno. */
int eng_pyframes_snap_mem(struct eng_pyframes *pf, uint64_t addr, void *buf,
			  size_t len)
{
	struct eng_pyf_snap *s = &pf->snap;

	if (addr >= s->lo && addr + len <= s->hi && addr + len > addr) {
		memcpy(buf, s->buf + (addr - (s->hi - sizeof(s->buf))), len);
		if (addr < s->low_frame)
			s->low_frame = addr;
		return 0;
	}
	/* a frame just below the copy: the next copy reaches it */
	if (addr < s->lo && s->hi - addr <= sizeof(s->buf))
		s->below = addr;
	return eng_pyframes_mem(pf, addr, buf, len);
}

/* After a walk: copy as many pages as its frames spanned, one more for
 * a deeper stack next time. */
void eng_pyframes_snap_fit(struct eng_pyframes *pf)
{
	struct eng_pyf_snap *s = &pf->snap;
	uint64_t low = s->below ? s->below : s->low_frame;
	int need = (int)((s->hi - (low & ~(PAGE - 1)) + PAGE - 1) / PAGE) + 1;

	s->pages = need > ENG_PYF_SNAP_PAGES ? ENG_PYF_SNAP_PAGES : need;
}

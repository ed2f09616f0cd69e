/*
 * stackwalk_bounds.c - the unwinder reads the copied stack only, for any
 * address libdwfl asks about.
 *
 * A frame whose pc lies in no module the map knows (a library mapped,
 * or an image exec'ed, since it was read) has no CFI: libdwfl's
 * frame-pointer fallback then reads at %rbp and %rbp + 8.  Code built
 * without frame pointers may hold anything there, -1 among the likeliest;
 * the bounds check computed addr + 8, which wrapped past 0, and the read
 * went to the copy plus nearly 2^64: hunch's SIGSEGV in memory_read at
 * the exec of e2e_exec_late_bn_cpu_deep.  Checks, on this process's own
 * map with a pc in no module:
 *  - %rbp -1, -8 and -16 (the read at %rbp or at %rbp + 8 near 2^64):
 *    the walk ends after the first frame, no crash;
 *  - %rbp at the copy's end less 16 (the return address in its last 8
 *    bytes): still read, the second frame is that return address.
 */
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "eng_stackwalk.h"
#include "tap.h"

#define LO 0x7ffd12345000ull     /* the copy's address in the target */
#define PC 0x1000ull             /* in no module */
#define RET 0x2345ull            /* a return address, in no module */

struct seen {
	int n;
	uint64_t pc[8];
};

static bool on_frame(void *arg, int i, uint64_t pc, uint64_t sp, bool act)
{
	struct seen *s = arg;

	(void)sp;
	(void)act;
	if (i == 0)
		s->n = 0;
	if (s->n < 8)
		s->pc[s->n++] = pc;
	return true;
}

static int walk(struct eng_stackwalk *sw, uint64_t rbp, unsigned char *stack,
		size_t len, struct seen *s)
{
	uint64_t regs[17] = { 0 };
	struct eng_walk_end end;

	regs[6] = rbp;
	regs[7] = LO;
	regs[16] = PC;
	memset(s, 0, sizeof(*s));
	return eng_stackwalk_dw(sw, gettid(), regs, stack, len, on_frame, s,
				&end);
}

int main(void)
{
	static const uint64_t wrap[] = { UINT64_MAX, UINT64_MAX - 7,
					 UINT64_MAX - 15 };
	unsigned char stack[64] = { 0 };
	uint64_t ret = RET, rbp;
	struct eng_stackwalk *sw;
	struct seen s;

	if (!tap_ok(eng_stackwalk_open(getpid(), 1000000000ull, &sw) == 0,
		    "a map of this process"))
		return tap_done();
	for (size_t i = 0; i < sizeof(wrap) / sizeof(wrap[0]); i++) {
		int rc = walk(sw, wrap[i], stack, sizeof(stack), &s);

		tap_ok(rc == 0 && s.n == 1 && s.pc[0] == PC,
		       "%%rbp %#llx: one frame, the copy never read outside "
		       "(rc %d, %d frames)", (unsigned long long)wrap[i], rc,
		       s.n);
	}
	/* the return address in the copy's last 8 bytes */
	rbp = LO + sizeof(stack) - 16;
	memcpy(stack + sizeof(stack) - 8, &ret, 8);
	walk(sw, rbp, stack, sizeof(stack), &s);
	tap_ok(s.n >= 2 && s.pc[1] + 1 >= RET && s.pc[1] <= RET,
	       "%%rbp 16 bytes below the copy's end: the return address in "
	       "its last 8 bytes is read (%d frames, second pc %#llx)", s.n,
	       (unsigned long long)(s.n >= 2 ? s.pc[1] : 0));
	eng_stackwalk_close(sw);
	return tap_done();
}

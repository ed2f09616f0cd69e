/*
 * test_decode.c - finding main in _start's code, for the three forms
 * glibc's start files take: non-PIE `mov $main,%rdi`, PIE `lea
 * main(%rip),%rdi`, and the unrelaxed PIE `mov main@GOTPCREL(%rip),%rdi`
 * (a load from the GOT), each followed by the call of
 * __libc_start_main.
 */
#include "tap.h"
#include "x86_decode.h"

#include <errno.h>
#include <string.h>

/* xor %ebp,%ebp; mov %rdx,%r9; pop %rsi; mov %rsp,%rdx; and $-16,%rsp;
 * push %rax; push %rsp; xor %r8d,%r8d; xor %ecx,%ecx */
static const uint8_t prologue[] = {
	0x31, 0xed, 0x49, 0x89, 0xd1, 0x5e, 0x48, 0x89, 0xe2, 0x48, 0x83,
	0xe4, 0xf0, 0x50, 0x54, 0x45, 0x31, 0xc0, 0x31, 0xc9,
};
/* call *0x2f53(%rip) */
static const uint8_t call_got[] = { 0xff, 0x15, 0x53, 0x2f, 0x00, 0x00 };

static size_t build(uint8_t *buf, const uint8_t *load, size_t n)
{
	size_t len = 0;

	memcpy(buf, prologue, sizeof(prologue));
	len += sizeof(prologue);
	memcpy(buf + len, load, n);
	len += n;
	memcpy(buf + len, call_got, sizeof(call_got));
	return len + sizeof(call_got);
}

int main(void)
{
	struct x86_decoder *d;
	uint8_t code[64];
	uint64_t start = 0x1040, ref = 0, m = 0;
	uint64_t at = start + sizeof(prologue);
	bool load = true;
	size_t n;

	if (!tap_ok(x86_decode_open(&d) == 0, "decoder opens"))
		return tap_done();
	/* mov $0x401136,%rdi */
	n = build(code, (const uint8_t[]){ 0x48, 0xc7, 0xc7, 0x36, 0x11, 0x40,
					   0x00 }, 7);
	tap_ok(x86_decode_find_main_ref(d, code, n, start, &ref, &load) == 0 &&
	       ref == 0x401136 && !load, "non-PIE mov $main,%%rdi");
	/* lea 0xe0(%rip),%rdi */
	n = build(code, (const uint8_t[]){ 0x48, 0x8d, 0x3d, 0xe0, 0x00, 0x00,
					   0x00 }, 7);
	tap_ok(x86_decode_find_main_ref(d, code, n, start, &ref, &load) == 0 &&
	       ref == at + 7 + 0xe0 && !load, "PIE lea main(%%rip),%%rdi");
	tap_ok(x86_decode_find_main_from_start(d, code, n, start, &m) == 0 &&
	       m == ref, "the old interface agrees for lea");
	/* mov 0x2fd3(%rip),%rdi */
	n = build(code, (const uint8_t[]){ 0x48, 0x8b, 0x3d, 0xd3, 0x2f, 0x00,
					   0x00 }, 7);
	tap_ok(x86_decode_find_main_ref(d, code, n, start, &ref, &load) == 0 &&
	       ref == at + 7 + 0x2fd3 && load,
	       "PIE mov main@GOTPCREL(%%rip),%%rdi is a GOT load at 0x%llx",
	       (unsigned long long)ref);
	tap_ok(x86_decode_find_main_from_start(d, code, n, start, &m) ==
		       -ENOENT,
	       "the old interface cannot resolve a GOT load and says so");
	/* No %rdi before the call. */
	n = build(code, (const uint8_t[]){ 0x90 }, 1);
	tap_ok(x86_decode_find_main_ref(d, code, n, start, &ref, &load) ==
		       -ENOENT,
	       "no main without a load into %%rdi");
	x86_decode_close(d);
	return tap_done();
}

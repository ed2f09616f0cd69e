/*
 * fr_block.c - a function that needs relocation waits in read(2)
 * (tests/inst/inst_funcreloc_free.c).  fb_get ends in `call fb_len;
 * leave; ret` at -O0: its exit is too small for a jmp, so hunch
 * relocates it, and the read() it calls returns into the copy.
 *
 * main prints "ready", then for each line on stdin "got N: LINE" (N its
 * length, computed by fb_len from what fb_get read), "end" at EOF or at
 * a line "end", and exits 0.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

__attribute__((noinline)) long fb_len(const char *buf, long n)
{
	long k = 0;

	while (k < n && buf[k] != '\n')
		k++;
	return n <= 0 ? -1 : k;
}

/* One line (the test writes whole lines, one at a time). */
__attribute__((noinline)) long fb_get(char *buf, long cap)
{
	long n = read(0, buf, (size_t)cap - 1);

	if (n >= 0)
		buf[n] = 0;
	return fb_len(buf, n);
}

int main(void)
{
	char buf[256];
	long n;

	printf("ready\n");
	fflush(stdout);
	while ((n = fb_get(buf, sizeof buf)) >= 0) {
		buf[n] = 0;
		if (strcmp(buf, "end") == 0)
			break;
		printf("got %ld: %s\n", n, buf);
		fflush(stdout);
	}
	printf("end\n");
	return 0;
}

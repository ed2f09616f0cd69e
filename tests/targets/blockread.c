/* blockread.c - blocks in read(0) so tests can make inferior calls
 * while the only thread sits inside a system call.
 *
 * br_add3(a, b, c) returns a + b + c + 1 and br_counter() returns
 * br_value (1234): known answers for an inferior call.  The program
 * prints "ready" (flushed), reads stdin up to the first newline, prints
 * "got: <line>" and exits 0.  At end of input with nothing read it
 * prints "got: (eof)" and exits 1.
 */
#include <stdio.h>
#include <unistd.h>

#include "targets.h"

long br_value = 1234;

TGT_NOINLINE long br_add3(long a, long b, long c)
{
	return a + b + c + 1;
}

TGT_NOINLINE long br_counter(void)
{
	return br_value;
}

/* Reads up to the first newline (not stored) or end of input; one byte
 * at a time, so nothing after the line is consumed.  Returns the length,
 * or -1 at end of input with nothing read. */
TGT_NOINLINE long br_read_line(char *buf, long size)
{
	long n = 0;
	char c;

	while (n + 1 < size) {
		ssize_t r = read(0, &c, 1);

		if (r <= 0)
			return n ? n : -1;
		if (c == '\n')
			break;
		buf[n++] = c;
	}
	buf[n] = '\0';
	return n;
}

TGT_NOINLINE int main(void)
{
	char line[4096];
	long n;

	printf("ready\n");
	fflush(stdout);
	n = br_read_line(line, sizeof line);
	if (n < 0) {
		printf("got: (eof)\n");
		return 1;
	}
	line[n] = '\0';
	printf("got: %s\n", line);
	return 0;
}

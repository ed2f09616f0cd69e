/*
 * outlines - a target for batch mode's output journal: N numbered lines
 * on stdout and on stderr (one write each, DELAY_MS apart), a line that
 * is not UTF-8, an empty line, and a last stdout line with no newline;
 * exits with status 3 so a test sees the status come through.
 *   outlines N DELAY_MS
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void say(int fd, const char *s)
{
	size_t n = strlen(s);

	while (n > 0) {
		ssize_t w = write(fd, s, n);

		if (w <= 0)
			exit(10);  /* a lost byte: the test sees status 10 */
		s += w;
		n -= (size_t)w;
	}
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	long delay = argc > 2 ? atol(argv[2]) : 0;
	struct timespec d = { delay / 1000, (delay % 1000) * 1000000 };
	char buf[64];

	for (int i = 1; i <= n; i++) {
		snprintf(buf, sizeof(buf), "out %d\n", i);
		say(1, buf);
		snprintf(buf, sizeof(buf), "err %d\n", i);
		say(2, buf);
		nanosleep(&d, NULL);
	}
	say(1, "latin1 \xe9t\xe9\n\n");
	say(2, "err end\n");
	say(1, "no newline");
	return 3;
}

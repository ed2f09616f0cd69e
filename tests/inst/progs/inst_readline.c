/* inst_readline.c - prints "ready", then "got LINE" for every line of
 * stdin (read(2) a byte at a time: no stdio buffer to hide a lost or
 * doubled byte), "end" at EOF.  inst_sigkill interrupts its read with an
 * inferior call and kills hunch during it. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
	char line[256];
	size_t n = 0;
	char c;

	printf("ready\n");
	fflush(stdout);
	while (read(0, &c, 1) == 1) {
		if (c != '\n' && n < sizeof line - 1) {
			line[n++] = c;
			continue;
		}
		line[n] = 0;
		n = 0;
		printf("got %s\n", line);
		fflush(stdout);
	}
	printf("end\n");
	return 0;
}

/* p_crash MODE: dies the way it is told (segv, abort, kill, wait for a
 * signal with default action, or exit N). */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "exit";

	printf("mode %s\n", m);
	fflush(stdout);
	if (strcmp(m, "segv") == 0)
		*(volatile int *)(uintptr_t)argc = 1;  /* address 2: unmapped */
	if (strcmp(m, "abort") == 0)
		abort();
	if (strcmp(m, "kill") == 0)
		raise(SIGKILL);
	if (strcmp(m, "wait") == 0)
		for (;;)
			pause();
	return argc > 2 ? atoi(argv[2]) : 0;
}

/*
 * spin1.c - a single thread that is always runnable: it spins in
 * spin_work until its stdin is closed (checked every few ms with a
 * non-blocking poll), then prints "done" and exits.  e2e_cpu_values pins
 * it to one CPU beside competing spinners.
 */
#include <poll.h>
#include <stdio.h>

static volatile unsigned long sink;

static void __attribute__((noinline)) spin_work(void)
{
	for (unsigned long i = 0; i < 200000; i++)
		sink += i * i;
}

int main(void)
{
	struct pollfd p = { .fd = 0, .events = POLLIN };

	printf("ready\n");
	fflush(stdout);
	while (poll(&p, 1, 0) == 0)
		spin_work();
	printf("done\n");
	return 0;
}

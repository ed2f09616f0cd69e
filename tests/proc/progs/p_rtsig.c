/* p_rtsig: counts queued SIGRTMIN signals (each one is delivered, unlike
 * standard signals) and prints the count on SIGUSR2, then exits.
 * slow(ms) sleeps and says how many signals its handler saw meanwhile;
 * echo lines from stdin show that the program still runs normally. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t count, done;

static void on_rt(int sig)
{
	(void)sig;
	count++;
}

static void on_usr2(int sig)
{
	(void)sig;
	done = 1;
}

__attribute__((noinline, used)) long slow(long ms)
{
	long before = count;

	usleep((useconds_t)ms * 1000);
	return count - before;
}

int main(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_rt;
	sigaction(SIGRTMIN, &sa, NULL);
	sa.sa_handler = on_usr2;
	sigaction(SIGUSR2, &sa, NULL);
	printf("ready %ld\n", slow(0));
	fflush(stdout);
	while (!done)
		pause();
	printf("count %d\n", (int)count);
	return 0;
}

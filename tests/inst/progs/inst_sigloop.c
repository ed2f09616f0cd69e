/* inst_sigloop.c - a program that signals itself while hunch
 * instruments it: N times it calls sl_f and queues SIGUSR1 and SIGRTMIN
 * with value i (sigqueue: hunch can give such a signal back to the
 * kernel exactly); its handlers count every delivery.  Prints
 * "ready", then the counts, which must be exact whatever hunch did
 * (inst_sigkill: hunch SIGKILLed in the middle). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__clang__)
#define NOI __attribute__((noinline))
#else
#define NOI __attribute__((noipa))
#endif

static volatile long usr1, rt, rt_sum;

static void on_usr1(int sig)
{
	(void)sig;
	usr1++;
}

static void on_rt(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	rt++;
	rt_sum += si->si_value.sival_int;
}

NOI long sl_f(long x)
{
	return x * 3 + 1;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20000;
	struct sigaction sa;
	long s = 0;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_sigaction = on_rt;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGRTMIN, &sa, NULL);
	printf("ready\n");
	fflush(stdout);
	for (int i = 0; i < n; i++) {
		union sigval v = { .sival_int = i };

		s += sl_f(i);
		sigqueue(getpid(), SIGUSR1, v);
		sigqueue(getpid(), SIGRTMIN, v);
	}
	printf("usr1 %ld rt %ld rt_sum %ld s %ld\n", usr1, rt, rt_sum, s);
	return 0;
}

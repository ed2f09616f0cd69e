/* inst_sigloop.c - a program that signals itself while hunch
 * instruments it: N times it calls sl_f and queues SIGUSR1 and SIGRTMIN
 * with value i (sigqueue); its handlers count every delivery.  With a
 * second argument "tkill" the first signal is SIGUSR2 sent with tgkill
 * instead (a siginfo no other process can forge: it cannot be queued
 * again by hunch).  Prints "ready", then the counts, which must be exact
 * whatever hunch did (inst_sigkill: hunch SIGKILLed in the middle). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
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

/* SIGUSR2 from tgkill: its si_code must say so (glibc's own handlers,
 * SIGCANCEL's, check it). */
static volatile long usr2, usr2_bad;

static void on_usr2(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	usr2++;
	usr2_bad += si->si_code != SI_TKILL || si->si_pid != getpid();
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
	int tkill = argc > 2 && strcmp(argv[2], "tkill") == 0;
	struct sigaction sa;
	long s = 0;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_sigaction = on_rt;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGRTMIN, &sa, NULL);
	sa.sa_sigaction = on_usr2;
	sigaction(SIGUSR2, &sa, NULL);
	printf("ready\n");
	fflush(stdout);
	for (int i = 0; i < n; i++) {
		union sigval v = { .sival_int = i };

		s += sl_f(i);
		if (tkill)
			syscall(SYS_tgkill, getpid(), gettid(), SIGUSR2);
		else
			sigqueue(getpid(), SIGUSR1, v);
		sigqueue(getpid(), SIGRTMIN, v);
	}
	if (tkill)
		printf("usr2 %ld bad %ld rt %ld rt_sum %ld s %ld\n", usr2,
		       usr2_bad, rt, rt_sum, s);
	else
		printf("usr1 %ld rt %ld rt_sum %ld s %ld\n", usr1, rt,
		       rt_sum, s);
	return 0;
}

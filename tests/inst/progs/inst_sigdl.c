/* inst_sigdl.c - a program that dlopens and dlcloses a library in a
 * loop while another process floods it with queued signals
 * (inst_sigkill --kill-step).  Each dlopen and dlclose passes hunch's
 * int3 on the dynamic linker's r_brk twice, and hunch steps over each
 * hit with every other thread stopped, so signals arrive during those
 * steps.  Prints "ready", loops until K signals arrived (the sender
 * sends exactly K, values 0..K-1), then prints their count and sum,
 * which must be exact whatever hunch did.
 *
 *   inst_sigdl K LIBRARY */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile long rt, rt_sum;

static void on_rt(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	rt++;
	rt_sum += si->si_value.sival_int;
}

int main(int argc, char **argv)
{
	long k = argc > 2 ? atol(argv[1]) : 0;
	time_t give_up = time(NULL) + 20;
	struct sigaction sa = { 0 };

	if (argc != 3) {
		fprintf(stderr, "usage: inst_sigdl K LIBRARY\n");
		return 2;
	}
	sa.sa_sigaction = on_rt;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGRTMIN, &sa, NULL);
	printf("ready\n");
	fflush(stdout);
	while (rt < k && time(NULL) < give_up) {
		void *h = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);

		if (h == NULL) {
			fprintf(stderr, "dlopen %s: %s\n", argv[2], dlerror());
			return 1;
		}
		dlclose(h);
	}
	printf("rt %ld sum %ld\n", rt, rt_sum);
	return 0;
}

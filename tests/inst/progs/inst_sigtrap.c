/* inst_sigtrap.c - a program with its own SIGTRAP handler, installed in
 * main (after hunch's trap handler when hunch instrumented it at main):
 * it raises SIGTRAP, executes its own int3, and calls st_f (which hunch
 * instruments through traps) 1000 times.  Prints what its handler saw. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#if defined(__clang__)
#define NOI __attribute__((noinline))
#else
#define NOI __attribute__((noipa))
#endif

static volatile int raised, breakpoints;

static void on_trap(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if (si->si_code == SI_KERNEL)
		breakpoints++;
	else
		raised++;
}

NOI long st_f(long x)
{
	return x + 1;
}

int main(void)
{
	struct sigaction sa, old;
	long s = 0;

	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_trap;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTRAP, &sa, NULL);
	sigaction(SIGTRAP, NULL, &old);
	printf("own handler installed: %s\n",
	       old.sa_sigaction == on_trap ? "yes" : "no");
	raise(SIGTRAP);
	__asm__ __volatile__("int3");
	for (int i = 0; i < 1000; i++)
		s += st_f(i);
	printf("raised %d, int3 %d, sum %ld\n", raised, breakpoints, s);
	return 0;
}

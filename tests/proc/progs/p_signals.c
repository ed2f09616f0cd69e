/* p_signals: reports SIGUSR1, SIGINT and SIGTERM from handlers (with
 * the si_code, to show that hunch passed on the original signal), and
 * exits after the third with status 3. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t seen;

static void on_sig(int sig, siginfo_t *si, void *uc)
{
	char line[64];
	int n;

	(void)uc;
	n = snprintf(line, sizeof(line), "got %s code %d\n",
		     sig == SIGUSR1 ? "SIGUSR1" : sig == SIGINT ? "SIGINT" :
		     "SIGTERM", si->si_code);
	if (write(1, line, (size_t)n) < 0)
		_exit(9);
	seen++;
}

int main(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sig;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	printf("ready\n");
	fflush(stdout);
	while (seen < 3)
		pause();
	printf("done %d\n", (int)seen);
	return 3;
}

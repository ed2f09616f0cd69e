/* signals.c - handles signals, or dies of one on request.
 *
 *   signals              handle USR1 USR2 HUP INT TERM; print each name as
 *                        it arrives; SIGTERM prints "SIGTERM" and exits 42
 *   signals --count N    as above, but after N handled signals print
 *                        "done" and exit 0
 *   signals --crash      print "crashing", then write through NULL: SIGSEGV
 *   signals --abort      print "aborting", then abort(): SIGABRT
 *   signals --raise SIG  print "raising SIGxxx", then raise SIG with its
 *                        default action (e.g. SIGKILL, SIGQUIT)
 *
 * The handled mode prints "ready" (flushed) once the handlers are in
 * place.  Exit 42, not 143, on SIGTERM: a shell reports 143 both for
 * "exited 143" and for "killed by SIGTERM", and tests must tell the two
 * apart.  Handlers only record the signal; main prints it, because
 * stdio is not async-signal-safe.  The five signals are blocked except
 * inside sigsuspend, so no arrival is lost between two waits.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "targets.h"

#define SG_TERM_STATUS 42
#define SG_QUEUE 64

static const struct sg_name {
	int sig;
	const char *name;
} sg_names[] = {
	{ SIGHUP, "SIGHUP" },   { SIGINT, "SIGINT" },   { SIGQUIT, "SIGQUIT" },
	{ SIGILL, "SIGILL" },   { SIGTRAP, "SIGTRAP" }, { SIGABRT, "SIGABRT" },
	{ SIGBUS, "SIGBUS" },   { SIGFPE, "SIGFPE" },   { SIGKILL, "SIGKILL" },
	{ SIGUSR1, "SIGUSR1" }, { SIGSEGV, "SIGSEGV" }, { SIGUSR2, "SIGUSR2" },
	{ SIGPIPE, "SIGPIPE" }, { SIGALRM, "SIGALRM" }, { SIGTERM, "SIGTERM" },
};
static const int sg_handled[] = { SIGUSR1, SIGUSR2, SIGHUP, SIGINT, SIGTERM };

/* Written only by sg_handler, which runs with all five blocked. */
volatile sig_atomic_t sg_queue[SG_QUEUE];
volatile sig_atomic_t sg_arrived;
/* Volatile so the compiler cannot see that sg_crash writes to NULL and
 * turn the store into a trap instruction (SIGILL instead of SIGSEGV). */
int *volatile sg_null_pointer;

TGT_NOINLINE const char *sg_signame(int sig)
{
	for (size_t i = 0; i < sizeof sg_names / sizeof sg_names[0]; i++)
		if (sg_names[i].sig == sig)
			return sg_names[i].name;
	return "SIG?";
}

/* Accepts "SIGQUIT", "QUIT" or a number; returns 0 when unknown. */
TGT_NOINLINE int sg_parse_signal(const char *s)
{
	if (strncmp(s, "SIG", 3) == 0)
		s += 3;
	for (size_t i = 0; i < sizeof sg_names / sizeof sg_names[0]; i++)
		if (strcmp(sg_names[i].name + 3, s) == 0)
			return sg_names[i].sig;
	return atoi(s);
}

TGT_NOINLINE void sg_handler(int sig)
{
	if (sg_arrived < SG_QUEUE)
		sg_queue[sg_arrived] = sig;
	sg_arrived = sg_arrived + 1;
}

/* Installs sg_handler for the five signals; returns with them blocked. */
TGT_NOINLINE void sg_install(sigset_t *waitmask)
{
	struct sigaction sa;
	sigset_t block;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = sg_handler;
	sigemptyset(&block);
	for (size_t i = 0; i < sizeof sg_handled / sizeof sg_handled[0]; i++)
		sigaddset(&block, sg_handled[i]);
	sa.sa_mask = block;
	for (size_t i = 0; i < sizeof sg_handled / sizeof sg_handled[0]; i++)
		sigaction(sg_handled[i], &sa, NULL);
	sigprocmask(SIG_BLOCK, &block, waitmask);
	for (size_t i = 0; i < sizeof sg_handled / sizeof sg_handled[0]; i++)
		sigdelset(waitmask, sg_handled[i]);
}

/* Waits for signals until SIGTERM or until `count` (if > 0) arrived. */
TGT_NOINLINE int sg_wait_loop(long count)
{
	sigset_t waitmask;
	int printed = 0;

	sg_install(&waitmask);
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		sigsuspend(&waitmask);
		while (printed < sg_arrived && printed < SG_QUEUE) {
			int sig = sg_queue[printed++];

			printf("%s\n", sg_signame(sig));
			fflush(stdout);
			if (sig == SIGTERM)
				return SG_TERM_STATUS;
			if (count > 0 && printed >= count) {
				printf("done\n");
				return 0;
			}
		}
	}
}

TGT_NOINLINE void sg_crash(void)
{
	printf("crashing\n");
	fflush(stdout);
	*sg_null_pointer = 1;
}

TGT_NOINLINE void sg_raise(int sig)
{
	printf("raising %s\n", sg_signame(sig));
	fflush(stdout);
	signal(sig, SIG_DFL);
	raise(sig);
	printf("still alive after %s\n", sg_signame(sig));
}

TGT_NOINLINE int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--count") == 0)
		return sg_wait_loop(atol(argv[2]));
	if (argc == 2 && strcmp(argv[1], "--crash") == 0)
		sg_crash();
	else if (argc == 2 && strcmp(argv[1], "--abort") == 0) {
		printf("aborting\n");
		fflush(stdout);
		abort();
	} else if (argc == 3 && strcmp(argv[1], "--raise") == 0)
		sg_raise(sg_parse_signal(argv[2]));
	else if (argc == 1)
		return sg_wait_loop(0);
	else
		fprintf(stderr, "usage: signals [--count N | --crash | --abort | --raise SIG]\n");
	return TGT_EXIT_USAGE;
}

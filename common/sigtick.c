/* sigtick.c - signalfd and timerfd for the poll loops (see sigtick.h). */
#include "sigtick.h"

#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

int sigtick_signals(const int *sigs, size_t n, sigset_t *old)
{
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < n; i++)
		sigaddset(&set, sigs[i]);
	sigprocmask(SIG_BLOCK, &set, old);
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

int sigtick_read_ending(int sigfd)
{
	struct signalfd_siginfo si;
	int ending = 0;

	while (read(sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		if (si.ssi_signo != SIGCHLD)
			ending = (int)si.ssi_signo;
	return ending;
}

int sigtick_timer(long ms)
{
	struct itimerspec it = {
		.it_interval = { ms / 1000, (ms % 1000) * 1000000L },
		.it_value = { ms / 1000, (ms % 1000) * 1000000L },
	};
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);

	if (fd >= 0)
		timerfd_settime(fd, 0, &it, NULL);
	return fd;
}

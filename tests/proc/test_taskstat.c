/*
 * test_taskstat.c - /proc/PID/stat as the engine reads it
 * (eng_taskstate_stat): the state letter, a process's own CPU ticks and
 * those of the children it reaped, a zombie's exit status, a command
 * name holding ") (", and a pid that is gone.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "eng_taskstate.h"
#include "tap.h"

/* Spin on the CPU for ms milliseconds of this thread's CPU time. */
static void spin_ms(long ms)
{
	struct timespec ts;

	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	while (ts.tv_sec * 1000 + ts.tv_nsec / 1000000 < ms);
}

/* A child that burns 300 ms of CPU under a name with ") (" in it, then
 * exits with status 7 and stays a zombie until reaped. */
static pid_t spinner(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		prctl(PR_SET_NAME, "a) b (c");
		spin_ms(300);
		_exit(7);
	}
	return pid;
}

int main(void)
{
	struct eng_taskstat st, self0, self1;
	long hz = sysconf(_SC_CLK_TCK);
	pid_t pid;
	int rc, i, status;

	tap_eq(eng_taskstate_stat(getpid(), 0, &self0), 0, "own stat read");
	tap_eq(self0.state, 'R', "a running process reads R");
	tap_eq(self0.exit_code, 0, "a live process's exit status reads 0");
	pid = spinner();
	/* a zombie: wait for the state without reaping it */
	for (i = 0; i < 500; i++) {
		if (eng_taskstate_stat(pid, 0, &st) == 0 && st.state == 'Z')
			break;
		usleep(10000);
	}
	tap_eq(st.state, 'Z', "the exited child is a zombie (command \"a) b "
	       "(c\" parsed past its parentheses)");
	tap_eq(st.exit_code, 7 << 8, "its exit status is the wait status of "
	       "exit(7)");
	tap_ok(st.utime + st.stime >= (uint64_t)(hz * 25 / 100) &&
	       st.utime + st.stime <= (uint64_t)(hz * 60 / 100),
	       "its own CPU: %llu ticks for 300 ms (hz %ld)",
	       (unsigned long long)(st.utime + st.stime), hz);
	tap_eq(st.cutime + st.cstime, 0, "it reaped nothing");
	tap_eq(eng_taskstate_letter(pid, 0), 'Z', "the letter alone reads Z");
	tap_ok(eng_taskstate_dead(pid, 0), "and it counts as dead");
	waitpid(pid, &status, 0);
	tap_eq(eng_taskstate_stat(getpid(), 0, &self1), 0,
	       "own stat read after reaping it");
	tap_ok(self1.cutime + self1.cstime >= self0.cutime + self0.cstime +
	       st.utime + st.stime,
	       "the reaped child's ticks moved into this process's cutime and "
	       "cstime (%llu, was %llu)",
	       (unsigned long long)(self1.cutime + self1.cstime),
	       (unsigned long long)(self0.cutime + self0.cstime));
	rc = eng_taskstate_stat(pid, 0, &st);
	tap_ok(rc == -ENOENT || rc == -ESRCH, "a reaped pid is gone (%d)", rc);
	tap_eq(eng_taskstate_letter(pid, 0), 0, "its letter reads 0");
	tap_eq(eng_taskstate_stat(getpid(), getpid(), &st), 0,
	       "the main thread's own stat (task/TID) reads too");
	return tap_done();
}

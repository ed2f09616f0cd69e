/*
 * reap - run a command as a child subreaper and report how every
 * process under it ended, even those orphaned when their parent died
 * (a SIGKILLed hunch's launched program).  Writes to FILE one line
 * "child PID", then "PID exit N" or "PID signal N" per process reaped.
 *   reap FILE CMD ARGS...
 */
#include <errno.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	FILE *f;
	pid_t pid;
	int st;

	if (argc < 3 || (f = fopen(argv[1], "w")) == NULL) {
		fprintf(stderr, "usage: reap FILE CMD ARGS...\n");
		return 2;
	}
	setvbuf(f, NULL, _IOLBF, 0);
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0) {
		perror("reap: PR_SET_CHILD_SUBREAPER");
		return 2;
	}
	pid = fork();
	if (pid == 0) {
		fclose(f);
		execvp(argv[2], argv + 2);
		perror(argv[2]);
		_exit(127);
	}
	fprintf(f, "child %d\n", (int)pid);
	while ((pid = wait(&st)) > 0 || errno == EINTR)
		if (pid > 0)
			fprintf(f, "%d %s %d\n", (int)pid, WIFEXITED(st) ?
				"exit" : "signal", WIFEXITED(st) ?
				WEXITSTATUS(st) : WTERMSIG(st));
	return 0;
}

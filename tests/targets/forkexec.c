/* forkexec.c - forks two children: one execs, one just exits.
 *
 * Child 1 execs /bin/echo (full path, execv: no PATH search, so the
 * result does not depend on the environment) and prints
 * "child-says hello".  Child 2 calls fe_child_exit, which _exit(7)s
 * without flushing stdio.  The parent waits for each in turn, so stdout
 * is in a fixed order.  stdout is flushed before every fork, or a
 * buffered line would be written twice.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "targets.h"

#define FE_ECHO "/bin/echo"

TGT_NOINLINE void fe_child_exec(void)
{
	char *const argv[] = { "echo", "child-says", "hello", NULL };

	execv(FE_ECHO, argv);
	perror("forkexec: execv " FE_ECHO);
	_exit(127);
}

TGT_NOINLINE void fe_child_exit(void)
{
	_exit(7);
}

/* Forks; the child runs fn (which never returns).  Returns the pid. */
TGT_NOINLINE pid_t fe_spawn(void (*fn)(void))
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("forkexec: fork");
		exit(1);
	}
	if (pid == 0)
		fn();
	return pid;
}

TGT_NOINLINE void fe_wait_report(const char *name, pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid) {
		perror("forkexec: waitpid");
		exit(1);
	}
	if (WIFEXITED(status))
		printf("%s exited with status %d\n", name, WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		printf("%s killed by signal %d\n", name, WTERMSIG(status));
}

TGT_NOINLINE int main(void)
{
	printf("forkexec: starting\n");
	fe_wait_report("child 1", fe_spawn(fe_child_exec));
	fe_wait_report("child 2", fe_spawn(fe_child_exit));
	printf("forkexec: done\n");
	return 0;
}

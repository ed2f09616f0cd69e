/* p_exec [PROGRAM ARGS...]: prints a line, then replaces itself with
 * PROGRAM (default: /bin/echo after exec). */
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	printf("before exec\n");
	fflush(stdout);
	if (argc > 1)
		execv(argv[1], argv + 1);
	else
		execl("/bin/echo", "echo", "after exec", (char *)NULL);
	return 1;
}

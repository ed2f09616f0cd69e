/* p_exec: prints a line, then replaces itself with /bin/echo. */
#include <stdio.h>
#include <unistd.h>

int main(void)
{
	printf("before exec\n");
	fflush(stdout);
	execl("/bin/echo", "echo", "after exec", (char *)NULL);
	return 1;
}

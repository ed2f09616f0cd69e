/* p_echo: prints what it was given (args, environment, cwd, stdin) so
 * that a run under hunch can be compared byte for byte with a direct
 * run; exits with the status given as argv[1]. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void show_env(const char *name)
{
	const char *v = getenv(name);

	printf("env %s=%s\n", name, v ? v : "(unset)");
}

int main(int argc, char **argv)
{
	char buf[4096];
	size_t n, total = 0;

	for (int i = 0; i < argc; i++)
		printf("arg %d=%s\n", i, i == 0 ? "(argv0)" : argv[i]);
	show_env("HUNCH_TEST_VAR");
	show_env("LD_PRELOAD");
	show_env("HUNCH_SHM_FD");
	show_env("HUNCH_HAD_LD_PRELOAD");
	show_env("HUNCH_ORIG_LD_PRELOAD");
	if (getcwd(buf, sizeof(buf)) != NULL)
		printf("cwd %s\n", buf);
	while ((n = fread(buf, 1, sizeof(buf), stdin)) > 0) {
		fwrite(buf, 1, n, stdout);
		total += n;
	}
	printf("stdin %zu bytes\n", total);
	return argc > 1 ? atoi(argv[1]) : 0;
}

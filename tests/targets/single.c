/* single.c - single-threaded target with a known call chain.
 *
 * main -> st_run -> st_compute -> st_leaf does deterministic integer
 * work; the program then prints what it was given (arguments after
 * argv[0], HUNCH_TEST_VAR, working directory, a checksum of stdin) so a
 * launch test can check that each of them was passed through exactly.
 * argv[0] is not printed: it differs between variants.
 *
 *   single [--exit N] [ARG...]      exits with status N (default 0)
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "targets.h"

#define ST_ROUNDS 100000

/* A small mixing step: cheap, but not foldable into a closed form. */
TGT_NOINLINE unsigned long st_leaf(unsigned long x)
{
	x ^= x >> 13;
	x *= 0x9E3779B97F4A7C15ul;
	return x ^ (x >> 29);
}

TGT_NOINLINE unsigned long st_compute(unsigned long rounds)
{
	unsigned long acc = 1;

	for (unsigned long i = 0; i < rounds; i++)
		acc = st_leaf(acc + i);
	return acc;
}

/* Reads all of stdin; prints its length and byte sum. */
TGT_NOINLINE void st_checksum_stdin(void)
{
	unsigned char buf[4096];
	unsigned long bytes = 0, sum = 0;
	ssize_t n;

	while ((n = read(0, buf, sizeof buf)) > 0) {
		for (ssize_t i = 0; i < n; i++)
			sum += buf[i];
		bytes += (unsigned long)n;
	}
	printf("stdin: %lu bytes, sum %lu\n", bytes, sum);
}

TGT_NOINLINE void st_print_args(int argc, char **argv)
{
	printf("argc: %d\n", argc);
	for (int i = 1; i < argc; i++)
		printf("arg %d: %s\n", i, argv[i]);
}

TGT_NOINLINE void st_print_env_cwd(void)
{
	const char *var = getenv("HUNCH_TEST_VAR");
	char cwd[PATH_MAX];

	printf("HUNCH_TEST_VAR: %s\n", var ? var : "(unset)");
	printf("cwd: %s\n", getcwd(cwd, sizeof cwd) ? cwd : "(unknown)");
}

/* Returns the status given by --exit N, 0 without it. */
TGT_NOINLINE int st_exit_status(int argc, char **argv)
{
	int status = 0;

	for (int i = 1; i + 1 < argc; i++)
		if (strcmp(argv[i], "--exit") == 0)
			status = atoi(argv[i + 1]);
	return status;
}

TGT_NOINLINE int st_run(int argc, char **argv)
{
	st_print_args(argc, argv);
	st_print_env_cwd();
	st_checksum_stdin();
	printf("compute: %lu\n", st_compute(ST_ROUNDS));
	return st_exit_status(argc, argv);
}

TGT_NOINLINE int main(int argc, char **argv)
{
	return st_run(argc, argv);
}

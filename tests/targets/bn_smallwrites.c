/* bn_smallwrites.c - bottleneck target: too many small I/O
 * operations.  main -> bnsw_write_loop write()s one byte at a time to a
 * file: PATH given with --file (created or truncated, kept), or else
 * $TMPDIR/bn_smallwrites-XXXXXX ($TMPDIR defaults to /tmp; created with
 * mkstemp and removed at the end).  Every 1 MiB it seeks back to the
 * start, so the file stays small.  Single-threaded.
 *
 *   bn_smallwrites [--seconds S] [--file PATH]   S fractional, default 10
 *
 * stdout: the configuration line (without the path), then
 * "bn_smallwrites done".
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "targets.h"

char bnsw_path[4096];

/* Work done, for the throughput line on stderr at the end (bench/). */
unsigned long bnsw_done;

TGT_NOINLINE double bnsw_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Opens the output file; sets *remove when it made a temporary one. */
TGT_NOINLINE int bnsw_open(const char *file, int *remove)
{
	const char *dir = getenv("TMPDIR");

	if (file) {
		*remove = 0;
		snprintf(bnsw_path, sizeof bnsw_path, "%s", file);
		return open(bnsw_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	}
	*remove = 1;
	snprintf(bnsw_path, sizeof bnsw_path, "%s/bn_smallwrites-XXXXXX",
		dir && *dir ? dir : "/tmp");
	return mkstemp(bnsw_path);
}

TGT_NOINLINE int bnsw_write_loop(int fd, double seconds)
{
	double end = bnsw_now() + seconds;
	char c = 'x';
	long n = 0;

	do {
		for (int i = 0; i < 256; i++, n++) {
			if (n == 1 << 20) {
				if (lseek(fd, 0, SEEK_SET) != 0)
					return -1;
				n = 0;
			}
			if (write(fd, &c, 1) != 1)
				return -1;
			bnsw_done++;
		}
	} while (bnsw_now() < end);
	return 0;
}

TGT_NOINLINE int bnsw_parse(int argc, char **argv, double *seconds, const char **file)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
			*seconds = atof(argv[++i]);
		else if (strcmp(argv[i], "--file") == 0 && i + 1 < argc)
			*file = argv[++i];
		else
			return -1;
	}
	return *seconds >= 0 ? 0 : -1;
}

TGT_NOINLINE int main(int argc, char **argv)
{
	double seconds = 10;
	const char *file = NULL;
	int fd, remove, rc;

	if (bnsw_parse(argc, argv, &seconds, &file)) {
		fprintf(stderr, "usage: bn_smallwrites [--seconds S] [--file PATH]\n");
		return TGT_EXIT_USAGE;
	}
	printf("bn_smallwrites: %g seconds, 1-byte writes\n", seconds);
	fflush(stdout);
	fd = bnsw_open(file, &remove);
	if (fd < 0) {
		perror("bn_smallwrites: open");
		return 1;
	}
	rc = bnsw_write_loop(fd, seconds);
	if (rc)
		perror("bn_smallwrites: write");
	close(fd);
	if (remove)
		unlink(bnsw_path);
	if (rc)
		return 1;
	fprintf(stderr, "bn_smallwrites: throughput %.0f writes/s\n", bnsw_done / seconds);
	printf("bn_smallwrites done\n");
	return 0;
}

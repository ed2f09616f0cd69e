/* bn_fsync.c - bottleneck target: an fsync-heavy writer.
 * main -> bnfs_write_loop: write a 64 KiB block (bnfs_fill makes it),
 * fsync, repeat; blocks are large, so this is I/O blocking, not "too
 * many small operations".  The file is PATH given with --file (created
 * or truncated, kept), or else $TMPDIR/bn_fsync-XXXXXX ($TMPDIR defaults
 * to /tmp; removed at the end); it wraps to the start every 4 MiB.  fsync
 * only blocks on a real disk: on tmpfs it returns at once, so give a
 * --file or TMPDIR on a disk-backed file system.  Single-threaded.
 *
 *   bn_fsync [--seconds S] [--file PATH]     S fractional, default 10
 *
 * stdout: the configuration line (without the path), then "bn_fsync done".
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "targets.h"

#define BNFS_BLOCK 65536
#define BNFS_WRAP (4 << 20)

char bnfs_path[4096];
char bnfs_block[BNFS_BLOCK];

/* Work done, for the throughput line on stderr at the end (bench/). */
unsigned long bnfs_done;

TGT_NOINLINE double bnfs_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

TGT_NOINLINE int bnfs_open(const char *file, int *remove)
{
	const char *dir = getenv("TMPDIR");

	if (file) {
		*remove = 0;
		snprintf(bnfs_path, sizeof bnfs_path, "%s", file);
		return open(bnfs_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	}
	*remove = 1;
	snprintf(bnfs_path, sizeof bnfs_path, "%s/bn_fsync-XXXXXX",
		dir && *dir ? dir : "/tmp");
	return mkstemp(bnfs_path);
}

/* Fills the block with bytes that change from block to block. */
TGT_NOINLINE void bnfs_fill(unsigned long seq)
{
	for (int i = 0; i < BNFS_BLOCK; i++)
		bnfs_block[i] = (char)('a' + (seq + (unsigned long)i) % 26);
}

TGT_NOINLINE int bnfs_write_loop(int fd, double seconds)
{
	double end = bnfs_now() + seconds;
	unsigned long seq = 0;
	long off = 0;

	do {
		bnfs_fill(seq++);
		if (off == BNFS_WRAP) {
			if (lseek(fd, 0, SEEK_SET) != 0)
				return -1;
			off = 0;
		}
		if (write(fd, bnfs_block, BNFS_BLOCK) != BNFS_BLOCK)
			return -1;
		off += BNFS_BLOCK;
		if (fsync(fd) != 0)
			return -1;
		bnfs_done++;
	} while (bnfs_now() < end);
	return 0;
}

TGT_NOINLINE int bnfs_parse(int argc, char **argv, double *seconds, const char **file)
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

	if (bnfs_parse(argc, argv, &seconds, &file)) {
		fprintf(stderr, "usage: bn_fsync [--seconds S] [--file PATH]\n");
		return TGT_EXIT_USAGE;
	}
	printf("bn_fsync: %g seconds, 64 KiB write + fsync\n", seconds);
	fflush(stdout);
	fd = bnfs_open(file, &remove);
	if (fd < 0) {
		perror("bn_fsync: open");
		return 1;
	}
	rc = bnfs_write_loop(fd, seconds);
	if (rc)
		perror("bn_fsync: write");
	close(fd);
	if (remove)
		unlink(bnfs_path);
	if (rc)
		return 1;
	fprintf(stderr, "bn_fsync: throughput %.0f blocks/s\n", bnfs_done / seconds);
	printf("bn_fsync done\n");
	return 0;
}

/* bn_phases.c - bottleneck target: the bottleneck changes half
 * way.  Phase 1 (the first S/2 seconds): main -> bnph_cpu_phase ->
 * bnph_hot_loop, pure computation.  Phase 2 (the last S/2 seconds):
 * main -> bnph_io_phase, which writes a 64 KiB block and fsyncs it,
 * again and again, to PATH given with --file (created or truncated,
 * kept) or else $TMPDIR/bn_phases-XXXXXX ($TMPDIR defaults to /tmp;
 * removed at the end; it wraps every 4 MiB).  "phase 2" goes to stderr
 * when phase 2 starts.  As for bn_fsync, fsync only blocks on a real
 * disk, not on tmpfs.  Single-threaded.
 *
 *   bn_phases [--seconds S] [--file PATH]     S fractional, default 10
 *
 * stdout: the configuration line, then "bn_phases done".
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "targets.h"

#define BNPH_BLOCK 65536
#define BNPH_WRAP (4 << 20)

char bnph_path[4096];
char bnph_block[BNPH_BLOCK];
volatile unsigned long bnph_sink;

/* Work done in each half, for the throughput line on stderr at the end
 * (bench/): hot loop calls, then 64 KiB blocks written and synced. */
unsigned long bnph_done, bnph_done2;

TGT_NOINLINE double bnph_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

TGT_NOINLINE unsigned long bnph_hot_loop(unsigned long seed, int rounds)
{
	for (int i = 0; i < rounds; i++) {
		seed ^= seed << 7;
		seed ^= seed >> 9;
		seed *= 0x2545F4914F6CDD1Dul;
	}
	return seed;
}

TGT_NOINLINE void bnph_cpu_phase(double end)
{
	unsigned long x = 1;

	do {
		x = bnph_hot_loop(x | 1, 20000);
		bnph_done++;
	} while (bnph_now() < end);
	bnph_sink = x;
}

TGT_NOINLINE int bnph_open(const char *file, int *remove)
{
	const char *dir = getenv("TMPDIR");

	if (file) {
		*remove = 0;
		snprintf(bnph_path, sizeof bnph_path, "%s", file);
		return open(bnph_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	}
	*remove = 1;
	snprintf(bnph_path, sizeof bnph_path, "%s/bn_phases-XXXXXX",
		dir && *dir ? dir : "/tmp");
	return mkstemp(bnph_path);
}

TGT_NOINLINE int bnph_io_phase(int fd, double end)
{
	long off = 0;

	memset(bnph_block, 'p', sizeof bnph_block);
	do {
		if (off == BNPH_WRAP) {
			if (lseek(fd, 0, SEEK_SET) != 0)
				return -1;
			off = 0;
		}
		if (write(fd, bnph_block, BNPH_BLOCK) != BNPH_BLOCK)
			return -1;
		off += BNPH_BLOCK;
		if (fsync(fd) != 0)
			return -1;
		bnph_done2++;
	} while (bnph_now() < end);
	return 0;
}

TGT_NOINLINE int bnph_parse(int argc, char **argv, double *seconds, const char **file)
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
	double seconds = 10, start;
	const char *file = NULL;
	int fd, remove, rc;

	if (bnph_parse(argc, argv, &seconds, &file)) {
		fprintf(stderr, "usage: bn_phases [--seconds S] [--file PATH]\n");
		return TGT_EXIT_USAGE;
	}
	printf("bn_phases: %g seconds, CPU bound then write+fsync\n", seconds);
	fflush(stdout);
	fd = bnph_open(file, &remove);
	if (fd < 0) {
		perror("bn_phases: open");
		return 1;
	}
	start = bnph_now();
	bnph_cpu_phase(start + seconds / 2);
	fprintf(stderr, "phase 2\n");
	rc = bnph_io_phase(fd, start + seconds);
	if (rc)
		perror("bn_phases: write");
	close(fd);
	if (remove)
		unlink(bnph_path);
	if (rc)
		return 1;
	fprintf(stderr, "bn_phases: throughput %.0f chains/s, then %.0f blocks/s\n",
		bnph_done / (seconds / 2), bnph_done2 / (seconds / 2));
	printf("bn_phases done\n");
	return 0;
}

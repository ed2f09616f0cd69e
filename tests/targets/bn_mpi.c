/* bn_mpi.c - bottleneck target: an MPI job with a load imbalance.
 * Every rank runs BNMPI_ROUNDS rounds; in each, it computes in
 * bnmpi_work and then waits in MPI_Barrier for the others.  Rank 0
 * computes 3 times longer than the others, so the other ranks spend
 * about two thirds of each round in MPI_Barrier while rank 0 computes.
 *
 *   mpirun -np 4 bn_mpi [--seconds S]   S fractional, default 10: the
 *                                       run time, about (rank 0's
 *                                       compute time)
 *
 * The work is measured in iterations of bnmpi_work, calibrated once by
 * rank 0 and broadcast, so every rank's share is the same amount of
 * work (3x for rank 0), not the same wall time.
 *
 * stdout (rank 0 alone, after the last round): the configuration line,
 * then "bn_mpi done".  The other ranks print nothing.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "targets.h"

#define BNMPI_ROUNDS 20
#define BNMPI_SLOW 3   /* rank 0's work, in shares of the others' */

volatile unsigned long bnmpi_sink;

TGT_NOINLINE double bnmpi_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

TGT_NOINLINE unsigned long bnmpi_work(unsigned long x)
{
	for (int i = 0; i < 20000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	return x;
}

/* Calls of bnmpi_work that take `seconds` here and now. */
TGT_NOINLINE long bnmpi_calibrate(double seconds)
{
	double t0 = bnmpi_now(), t;
	unsigned long x = 5;
	long n = 0;

	do {
		x = bnmpi_work(x);
		n++;
		t = bnmpi_now() - t0;
	} while (t < 0.05);
	bnmpi_sink = x;
	return (long)((double)n * seconds / t) + 1;
}

TGT_NOINLINE void bnmpi_compute(long calls)
{
	unsigned long x = 1;

	for (long i = 0; i < calls; i++)
		x = bnmpi_work(x);
	bnmpi_sink = x;
}

TGT_NOINLINE int main(int argc, char **argv)
{
	double seconds = 10;
	long calls = 0;
	int rank, size;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
			seconds = atof(argv[++i]);
		} else {
			if (rank == 0)
				fprintf(stderr, "usage: bn_mpi [--seconds S]\n");
			MPI_Finalize();
			return TGT_EXIT_USAGE;
		}
	}
	/* One round of the others' work: rank 0's share over 3. */
	if (rank == 0)
		calls = bnmpi_calibrate(seconds / BNMPI_ROUNDS / BNMPI_SLOW);
	MPI_Bcast(&calls, 1, MPI_LONG, 0, MPI_COMM_WORLD);
	for (int r = 0; r < BNMPI_ROUNDS; r++) {
		bnmpi_compute(rank == 0 ? calls * BNMPI_SLOW : calls);
		MPI_Barrier(MPI_COMM_WORLD);
	}
	if (rank == 0) {
		printf("bn_mpi ranks=%d rounds=%d seconds=%g\n", size,
		       BNMPI_ROUNDS, seconds);
		printf("bn_mpi done\n");
	}
	MPI_Finalize();
	return 0;
}

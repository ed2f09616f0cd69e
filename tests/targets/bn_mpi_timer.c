/* bn_mpi_timer.c - the truth for hunch's estimate of the time bn_mpi's
 * ranks wait in MPI: a wrapper library through MPI's profiling
 * interface (LD_PRELOAD'ed into the ranks), timing each MPI_Barrier and
 * MPI_Bcast call (the waits bn_mpi makes) with CLOCK_MONOTONIC.
 *
 *   mpirun -x LD_PRELOAD=bn_mpi_timer.so -x BNMPI_TIMER_DIR=DIR ...
 *
 * At MPI_Finalize each rank writes DIR/rankN.waits: one call a line,
 * "ENTER_NS EXIT_NS" (CLOCK_MONOTONIC, the clock of hunch's journal's
 * start_mono_ns).  Nothing is printed: the job's output is unchanged.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define BNMPI_TIMER_MAX 4096

static long long bnmpi_timer_calls[BNMPI_TIMER_MAX][2];
static int bnmpi_timer_n;

static long long bnmpi_timer_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void bnmpi_timer_add(long long enter)
{
	if (bnmpi_timer_n == BNMPI_TIMER_MAX)
		return;
	bnmpi_timer_calls[bnmpi_timer_n][0] = enter;
	bnmpi_timer_calls[bnmpi_timer_n++][1] = bnmpi_timer_now();
}

int MPI_Barrier(MPI_Comm comm)
{
	long long t = bnmpi_timer_now();
	int rc = PMPI_Barrier(comm);

	bnmpi_timer_add(t);
	return rc;
}

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root,
	      MPI_Comm comm)
{
	long long t = bnmpi_timer_now();
	int rc = PMPI_Bcast(buf, count, type, root, comm);

	bnmpi_timer_add(t);
	return rc;
}

int MPI_Finalize(void)
{
	const char *dir = getenv("BNMPI_TIMER_DIR");
	char path[4096];
	int rank;
	FILE *f;

	PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
	snprintf(path, sizeof(path), "%s/rank%d.waits", dir ? dir : ".",
		 rank);
	if ((f = fopen(path, "w")) != NULL) {
		for (int i = 0; i < bnmpi_timer_n; i++)
			fprintf(f, "%lld %lld\n", bnmpi_timer_calls[i][0],
				bnmpi_timer_calls[i][1]);
		fclose(f);
	}
	return PMPI_Finalize();
}

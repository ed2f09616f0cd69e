/*
 * src_live_rank.h - MPI ranks of the followed processes (internal to the
 * live source): a process started by an MPI launcher carries its rank
 * in its environment (OpenMPI: OMPI_COMM_WORLD_RANK; any PMIx launcher:
 * PMIX_RANK), read from /proc/PID/environ.  The where axis shows such a
 * process as "rank N" (its path stays /Process/<pid>).
 */
#ifndef SRC_LIVE_RANK_H
#define SRC_LIVE_RANK_H

#include <stdbool.h>
#include <sys/types.h>

#include "pc_source.h"

struct src_live_kids;
struct src_live_rank;

struct src_live_rank *src_live_rank_new(void);
void src_live_rank_free(struct src_live_rank *r);
/* The rank in process pid's environment, or -1 (none, or unreadable). */
int src_live_rank_rank_of(pid_t pid);
/* Each live child whose rank is known and not said yet is reported
 * again through fn as a process discovery naming it ("rank 2").  A child
 * is looked at until it has a rank or has run for a while: its rank
 * appears only once it has exec'ed the MPI program. */
void src_live_rank_scan(struct src_live_rank *r, const struct src_live_kids *kids, pc_disc_fn fn,
	      void *arg);
/* Does process p run an MPI launcher (mpirun: it links an MPI runtime,
 * libopen-rte, libpmix or libprrte, but not libmpi)?  Then a metric
 * that counts 0 where its functions are absent (absent_is_zero: the
 * message-passing wait) is refused with *why (malloc'd): its calls are
 * made in the ranks, child processes hunch follows with the kernel's
 * measures and stack samples only, and the launcher's 0 is not theirs. */
struct eng_proc;
struct pc_metric_def;
bool src_live_rank_refuse_launcher(const struct eng_proc *p,
			 const struct pc_metric_def *md, char **why);

#endif

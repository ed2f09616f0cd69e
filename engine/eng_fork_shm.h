/*
 * eng_fork_shm.h - a forked child's own shared-memory segment, mapped
 * at the fork stop over the one it inherited, at the same address.
 *
 * The child inherits the parent's patches, trampolines and runtime
 * library with the parent's segment mapped MAP_SHARED: whatever it ran
 * would count into the parent's slots.  eng_fork_shm_new, called while
 * the parent and the child are stopped at the fork event (a fork hook,
 * eng_proc.h), gives the child a segment of its own: a memfd made in
 * the child by an injected memfd_create, filled by hunch (the parent's
 * header and layout, the child's pid in rt_pid, the forking thread's
 * slot and block header, every counter and timer zero) and mapped by
 * an injected mmap(MAP_FIXED | MAP_SHARED) over the inherited mapping.
 * The trampolines and the block pointer in the child's TLS stay valid;
 * the runtime library's fork handler sees its own pid in the header and
 * stays live (rtlib/README.md, Fork).  hunch keeps its own mapping to
 * read the child's slots at the parent's handles.
 */
#ifndef ENG_FORK_SHM_H
#define ENG_FORK_SHM_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "eng_shm.h"
#include "hunch_err.h"

struct eng_fork_shm;

/* Give the stopped child `child` of the process whose segment is
 * `parent` a segment of its own at the same address.  On failure the
 * child is as it was (the parent's segment mapped, its registers and
 * memory unchanged) and err says why. */
int eng_fork_shm_new(const struct eng_shm *parent, pid_t child,
		     struct eng_fork_shm **out, struct hunch_err *err);
void eng_fork_shm_free(struct eng_fork_shm *k);

pid_t eng_fork_shm_pid(const struct eng_fork_shm *k);
/* The index the forking thread kept (-1: it had none at the fork). */
int eng_fork_shm_forker(const struct eng_fork_shm *k);
/* A counter at `handle` summed over every thread the child registered
 * (live, or exited and pending: hunch never frees a child's index, so
 * an exited thread's final value stays), or thread tid's alone (tid 0:
 * all); *nthreads how many. */
int64_t eng_fork_shm_counter(const struct eng_fork_shm *k, uint64_t handle,
			     pid_t tid, uint32_t *nthreads);
/* A wall (cpu false) or CPU timer at `handle`, in ns, summed the same
 * way, the running part of a timer in progress included; -1 when a
 * thread's timer is caught inside its update (descheduled there): no
 * consistent value now, read again at the next tick. */
int64_t eng_fork_shm_timer(const struct eng_fork_shm *k, uint64_t handle,
			   bool cpu, pid_t tid, uint32_t *nthreads);
/* What the child's instrumentation has cost it so far (the snippets'
 * charges, hunch_block_hdr.obs_cost, summed over every thread it
 * registered), in ns: the child's part of the observed cost. */
uint64_t eng_fork_shm_cost_ns(const struct eng_fork_shm *k);
/* A timer at `handle` that runs in the forking thread (the program is
 * inside the timed function: main, the function that forked) runs on
 * in the child from this moment, on the child's clock (its own CPU
 * time for a CPU timer), so the child's time in it until it returns
 * is counted.  Call while the child is stopped at its fork. */
void eng_fork_shm_carry_timer(struct eng_fork_shm *k,
			      const struct eng_shm *parent, uint64_t handle,
			      bool cpu);
/* Does the child still map its segment (false once it exec'ed or
 * ended: its values stay as they were)? */
bool eng_fork_shm_mapped(const struct eng_fork_shm *k);
/* The child's header, for its thread table and ring. */
volatile struct hunch_shm_header *
eng_fork_shm_header(const struct eng_fork_shm *k);

#endif

/*
 * src_live_kidseg.h - followed children that keep the instrumentation
 * they inherited, counting into a segment of their own (internal to
 * the live source; engine/eng_fork_shm.h).
 *
 * At a child's fork stop (the live source's fork hook) the child gets
 * its own segment at the inherited address, and the metric instances
 * enabled in the program at that moment are remembered for it.  Those
 * instances, and only those, are measured in the child:
 * - an instance on the whole job (/Process) reads the program's value
 *   plus each child's at the same slot: times and counts summed;
 * - an enable on /Process/<child> or one of its threads of a counter or
 *   timer whose instance on /Process the child inherited reads that
 *   child's segment alone, that thread's slot for a thread (it shares
 *   the program's instance, keeping its variable alive).
 * The child is also registered with the engine's mirror
 * (eng_inst_mirror_add): experiments enabled or disabled later in the
 * program are patched into it or taken out of it too, so it counts
 * every instance while it stays mirrored; one that left the mirror is
 * measured as before for what it did not inherit (kernel measures, its
 * stack samples).  A child that exec'ed has none of it any more.  When the
 * live source ends, every child still running gets the program's bytes
 * back at each inherited patch (eng_fork_patch.h).
 */
#ifndef SRC_LIVE_KIDSEG_H
#define SRC_LIVE_KIDSEG_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "pc_source.h"

struct src_live_kidseg;
struct src_live_ops;
struct src_live_ops_inst;
struct eng_inst;
struct eng_minst;
struct eng_shm;

struct src_live_kidseg *src_live_kidseg_new(void);
/* Restore every running child's inherited patches, then free. */
void src_live_kidseg_free(struct src_live_kidseg *ks);
/* The program exec'ed: its instrumentation state and instances are
 * gone (and their addresses may be reused by the new image's).  The
 * children forked before keep their segments and what they inherited,
 * to be taken out at the end, but no commit reaches them and no
 * instance counts there any more. */
void src_live_kidseg_exec(struct src_live_kidseg *ks);

/* From the fork hook (parent and child stopped): give `child` its own
 * segment and remember the patches and instances it inherits; false
 * when that failed (the caller restores the patches, as for a child
 * not followed), with the reason in the journal-free stderr line. */
bool src_live_kidseg_fork(struct src_live_kidseg *ks, struct src_live_ops *o,
			  struct eng_inst *in, const struct eng_shm *shm,
			  pid_t child);

/* ops: an enable on /Process/<child> served from what it inherited
 * (true: `in` is live); false: measure it as before. */
bool src_live_kidseg_enable(struct src_live_ops *o,
			    struct src_live_ops_inst *in, const char *metric,
			    const struct pc_src_focus *f);
/* ops: an instrumented instance's value (the child's, or the program's
 * plus its children's on the whole job); < 0 when unreadable. */
int src_live_kidseg_value(struct src_live_ops *o,
			  const struct src_live_ops_inst *in, int64_t *v);
/* The largest slowdown the instrumentation causes any child with a
 * segment, each over the interval since the last call (0 without one):
 * the cost limit holds for every process of the job, not only the
 * program, and a worker's cost is not diluted by an idle parent. */
double src_live_kidseg_slowdown(struct src_live_kidseg *ks);
/* ops: `mi` loses its last reference: no child reads it any more. */
void src_live_kidseg_forget(struct src_live_ops *o, const struct eng_minst *mi);

#endif

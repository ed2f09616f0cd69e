/*
 * pc_procend.h - a process of the job that ends mid-search ends its
 * experiments: every node whose /Process component lies in a retired
 * process (the process, or one of its threads) stops, is marked cut
 * short (the reports list it as not tested, "ended before it
 * concluded"), and leaves the queue; what it concluded before stays.
 * The search goes on over the processes that live.  The end of the
 * last one is the target's end, which ends the search as a whole.
 */
#ifndef PC_PROCEND_H
#define PC_PROCEND_H

#include "pc_search.h"

/* After the where axis took the source's discoveries. */
void pc_procend_stop(struct pc_consult *pc);

/* Does a process of the job (the program, or a child followed) live
 * on?  A batch search that completes while the job runs keeps
 * following it: its report lists each process's real end rather than
 * "running", and workers the program forks later are searched too (a
 * search over in 2.8 s, before bn_forkers --delay 4 forked its
 * workers, left them without segments or findings). */
bool pc_procend_job_lives(const struct pc_consult *pc);

#endif

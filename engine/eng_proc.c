/*
 * eng_proc.c - the eng_proc object itself: made (eng_proc_new, by
 * launch and attach), freed (eng_proc_free: never leaving a target
 * traced), and what a client may read of it (eng_proc.h): its pid, how
 * it was found, whether it ended or is stopped, its threads, the
 * addresses learnt at launch (entry, main, the dynamic linker's r_brk)
 * and a note for the user.  Everything that changes it is elsewhere
 * (eng_ptrace.c, eng_detach.c, ...).
 */
#include "eng_proc_int.h"
#include "clock_mono.h"

#include <stdlib.h>
#include <unistd.h>

struct eng_proc *eng_proc_new(pid_t pid, bool launched)
{
	struct eng_proc *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return NULL;
	p->pid = pid;
	p->launched = launched;
	p->memfd = -1;
	p->infcall_timeout_ms = 10000;
	return p;
}

void eng_proc_free(struct eng_proc *p)
{
	if (p == NULL)
		return;
	/* Never leave a target traced: freeing is letting go. */
	if (!p->detached && !p->ended)
		eng_detach(p, NULL);
	for (size_t i = 0; i < p->nth; i++)
		free(p->th[i]);
	free(p->th);
	eng_solib_clear(p);
	free(p->mods);
	free(p->evq);
	free(p->main_ret_file);
	if (p->memfd >= 0)
		close(p->memfd);
	free(p);
}

pid_t eng_proc_pid(const struct eng_proc *p)
{
	return p->pid;
}

bool eng_proc_launched(const struct eng_proc *p)
{
	return p->launched;
}

bool eng_proc_ended(const struct eng_proc *p)
{
	return p->ended;
}

bool eng_proc_stopped(const struct eng_proc *p)
{
	if (p->ended || p->detached)
		return false;
	for (size_t i = 0; i < p->nth; i++)
		if (p->th[i]->state == TS_RUNNING)
			return false;
	return true;
}

void eng_proc_held(const struct eng_proc *p, uint64_t *holds, uint64_t *ns)
{
	*holds = p->holds;
	*ns = p->held_ns + (p->held_t0 ? clock_mono_ns() - p->held_t0 : 0);
}

size_t eng_proc_threads(const struct eng_proc *p, pid_t *tids, size_t max)
{
	size_t n = 0;

	/* The leader is th[0] from launch or attach on. */
	for (size_t i = 0; i < p->nth; i++)
		if (p->th[i]->state == TS_RUNNING ||
		    p->th[i]->state == TS_STOPPED) {
			if (n < max)
				tids[n] = p->th[i]->tid;
			n++;
		}
	return n;
}

uint64_t eng_proc_entry(const struct eng_proc *p)
{
	return p->entry;
}

uint64_t eng_proc_main(const struct eng_proc *p)
{
	return p->main_addr;
}

uint64_t eng_proc_r_brk(const struct eng_proc *p)
{
	return p->r_brk;
}

const char *eng_proc_note(const struct eng_proc *p)
{
	return p->note;
}

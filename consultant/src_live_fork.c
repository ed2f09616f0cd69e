/*
 * src_live_fork.c - the live source follows the program's child
 * processes (fork, vfork, a clone that makes a process).
 *
 * The engine stops each new child before its first instruction; while
 * the parent still sits at its fork event, the child gets the program's
 * bytes back at every patch (eng_inst_fork_restore), so that nothing it
 * inherited jumps into trampolines whose snippets are dead there (the
 * runtime library is inert in a forked child: its counters are the
 * parent's).  Then the child runs untraced and is measured from /proc
 * (src_live_kids.h): it is /Process/<pid> with its threads, its CPU
 * time and run-queue wait are summed into /Process (every process of the
 * job), and each of its processes and threads can be the focus of a
 * kernel measure; what needs instrumentation is refused in a child with
 * the reason.  Children of children are found under the children in
 * /proc.  A child's end retires it in the where axis.
 *
 * Launched programs are followed; attached ones when asked
 * (src_live_follow).
 */
#include "src_live_int.h"

#include "eng_inst.h"
#include "eng_proc.h"
#include "src_live_kids.h"

/* Called by the engine with the parent and the child stopped. */
static void fork_hook(void *arg, pid_t child)
{
	struct src_live *l = arg;
	struct eng_inst *in = l->slo ? slo_engine_inst(l->slo) : NULL;

	if (in != NULL)
		l->fork_restored += eng_inst_fork_restore(in, child);
}

void src_live_fork_follow(struct src_live *l, bool on)
{
	l->follow = on;
	if (l->proc != NULL)
		eng_fork_follow(l->proc, on, fork_hook, l);
}

void src_live_follow(struct pc_source *s, bool on)
{
	src_live_fork_follow(s->impl, on);
}

void src_live_fork_event(struct src_live *l, const struct eng_event *ev)
{
	if (l->kids == NULL)
		return;
	l->forks++;
	slk_add(l->kids, ev->tid, eng_proc_pid(l->proc));
}

static void enqueue_cb(void *arg, const struct pc_discovery *d)
{
	src_live_enqueue(arg, d);
}

void src_live_fork_tick(struct src_live *l)
{
	slk_scan(l->kids, enqueue_cb, l);
}

size_t src_live_processes(const struct pc_source *s)
{
	const struct src_live *l = s->impl;

	return 1 + slk_count(l->kids);
}

size_t src_live_fork_restored(const struct pc_source *s)
{
	const struct src_live *l = s->impl;

	return l->fork_restored;
}

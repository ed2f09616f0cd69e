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
 * (src_live_fork_set_follow), and with their descendants of the moment
 * (src_live_fork_adopt_tree: those children carry no patch of hunch's).
 */
#include "src_live_int.h"

#include <dirent.h>
#include <stdio.h>

#include "eng_inst.h"
#include "eng_proc.h"
#include "src_live_kids.h"
#include "src_live_kidseg.h"
#include "src_live_rank.h"
#include "src_live_kidimg.h"
#include "src_live_hint.h"
#include "src_live_pyname.h"
#include "src_live_cg.h"
#include "clock_mono.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FORK_SCAN_S 0.1   /* the hint samplers' own tick (SRC_LIVE_HINT_TICK_S) */

/* Called by the engine with the parent and the child stopped: a
 * followed child keeps what it inherited, counting into a segment of
 * its own (src_live_kidseg.h); any other child, or one that could not
 * be given a segment, gets the program's bytes back. */
static void fork_hook(void *arg, pid_t child)
{
	struct src_live *l = arg;
	struct eng_inst *in = l->slo ? src_live_ops_engine_inst(l->slo) : NULL;

	if (in == NULL)
		return;
	if (l->follow && l->kids != NULL &&
	    src_live_kidseg_fork(src_live_kids_segs(l->kids), l->slo, in,
				 l->shm, child))
		return;
	eng_inst_fork_restore(in, child);   /* the patches removed */
}

void src_live_fork_follow(struct src_live *l, bool on)
{
	l->follow = on;
	if (l->proc != NULL)
		eng_fork_follow(l->proc, on, fork_hook, l);
}

void src_live_fork_set_follow(struct pc_source *s, bool on)
{
	src_live_fork_follow(s->impl, on);
}

bool src_live_fork_following(const struct pc_source *s)
{
	const struct src_live *l = s->impl;

	return l->follow;
}

void src_live_fork_event(struct src_live *l, const struct eng_event *ev)
{
	if (l->kids == NULL)
		return;
	l->forks++;
	src_live_kids_add(l->kids, ev->tid, eng_proc_pid(l->proc));
}

static void enqueue_cb(void *arg, const struct pc_discovery *d)
{
	src_live_enqueue(arg, d);
}

/* Does process pid run the program's executable (forked, not exec'ed
 * since)?  Then the program's images resolve its stacks.  (Compared
 * with the file the program's first module was read from: the program
 * may have ended already.) */
static bool same_exe(struct src_live *l, pid_t pid)
{
	char a[64], pa[PATH_MAX], pb[PATH_MAX];
	ssize_t na;

	snprintf(a, sizeof(a), "/proc/%d/exe", (int)pid);
	na = readlink(a, pa, sizeof(pa) - 1);
	if (na <= 0 || l->nmods == 0 || realpath(l->mods[0].path, pb) == NULL)
		return false;
	pa[na] = '\0';
	return strcmp(pa, pb) == 0;
}

/* Is path one of the program's modules (its functions are in /Code)?
 * By file name, as /Code names modules (the maps may say /usr/lib where
 * the program's link map said /lib). */
static bool known_module(void *arg, const char *path)
{
	struct src_live *l = arg;
	const char *b = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;

	for (size_t i = 0; i < l->nmods; i++) {
		const char *m = strrchr(l->mods[i].path, '/');

		if (strcmp(m ? m + 1 : l->mods[i].path, b) == 0)
			return true;
	}
	return false;
}

/* A child's own hint sampler: its stack samples estimate the CPU time
 * of its code (slo's sampled instances), as for the program's. */
static struct src_live_hint *make_hint(void *arg, pid_t pid)
{
	struct src_live *l = arg;
	struct src_live_hint *h = NULL;
	/* a child that exec'ed another program: its own maps' images */
	bool own = !same_exe(l, pid);
	void *img_arg = own ? (void *)src_live_kidimg_proc(l->kidimgs, pid) : l;

	if (l->cfg == NULL || img_arg == NULL ||
	    src_live_hint_new(pid, src_live_hint_rate(l->cfg), l->t0_ns,
		    own ? src_live_kidimg_image_at : src_live_image_at, img_arg, &h,
		    NULL) < 0)
		return NULL;
	if (own)   /* its program's functions, for its /Code */
		src_live_kidimg_report(img_arg, known_module, l, enqueue_cb, l);
	/* the Python functions it runs join the where axis, as the
	 * program's do, under the program's names: a pool's `work` runs
	 * in its workers alone */
	if (l->pynames == NULL)
		l->pynames = src_live_pyname_new();
	src_live_hint_share_names(h, l->pynames);
	src_live_hint_set_disc(h, enqueue_cb, l);
	/* its samples count in the report's stack samples section too: a
	 * pool's work is in its workers, not in the parent that waits */
	src_live_hint_set_tally(h, l->tally);
	return h;
}

/* The files of children with their own images that were mapped since
 * (a library an MPI rank loads late): into /Code too. */
static void report_kid_images(struct src_live *l)
{
	for (size_t i = 0; l->kidimgs != NULL &&
	     i < src_live_kidimg_nprocs(l->kidimgs); i++) {
		struct src_live_kidimg_proc *p = src_live_kidimg_proc(l->kidimgs,
						src_live_kidimg_pid(l->kidimgs, i));

		if (p != NULL)
			src_live_kidimg_report(p, known_module, l, enqueue_cb, l);
	}
}

/* Each path once over the children's answers (they share their files). */
struct once {
	char **p;
	size_t n;
	pc_path_fn fn;
	void *arg;
};

static void once_add(void *arg, const char *path)
{
	struct once *o = arg;
	char **p;

	for (size_t i = 0; i < o->n; i++)
		if (strcmp(o->p[i], path) == 0)
			return;
	if ((p = realloc(o->p, (o->n + 1) * sizeof(*p))) == NULL)
		return;
	o->p = p;
	if ((o->p[o->n] = strdup(path)) == NULL)
		return;
	o->n++;
	o->fn(o->arg, path);
}

static void once_free(struct once *o)
{
	for (size_t i = 0; i < o->n; i++)
		free(o->p[i]);
	free(o->p);
}

/* The sampled edges and roots of the children that run the program's
 * own image (forked, not exec'ed): what they ran that the program did
 * not (a pool's workers run `work`, the parent waits). */
static void same_image_callees(struct src_live *l, const char *path,
			       struct once *o)
{
	struct src_live_hint *h;
	size_t i = 0;
	pid_t pid;
	bool ended;

	while ((h = src_live_kids_sampled(l->kids, &i, &pid, &ended)) != NULL) {
		if (l->kidimgs != NULL &&
		    src_live_kidimg_proc(l->kidimgs, pid) != NULL)
			continue;
		if (path == NULL)
			src_live_hint_roots(h, NULL, 0, once_add, o);
		else
			src_live_hint_callees(h, path, once_add, o);
	}
}

void src_live_fork_callees(struct src_live *l, const char *path,
			   pc_path_fn fn, void *arg)
{
	static const char *const starts[] = { "main" };
	size_t n = l->kidimgs ? src_live_kidimg_modules(l->kidimgs, NULL, 0) : 0;
	struct once o = { .fn = fn, .arg = arg };
	struct src_live_cg_module *mods;
	bool any = false;

	same_image_callees(l, path, &o);
	if (n == 0 || (mods = calloc(n, sizeof(*mods))) == NULL) {
		once_free(&o);
		return;
	}
	n = src_live_kidimg_modules(l->kidimgs, mods, n);
	/* Each child's sampled edges and roots, with the static graph of
	 * the children's own files. */
	for (size_t i = 0; i < src_live_kidimg_nprocs(l->kidimgs); i++) {
		struct src_live_hint *h = src_live_kids_hint(l->kids, src_live_kidimg_pid(l->kidimgs, i));

		if (h == NULL)
			continue;
		src_live_cg_answer(l->pcache, mods, n, starts, 1, h, path, once_add,
			    &o);
		any = true;
	}
	if (!any)
		src_live_cg_answer(l->pcache, mods, n, starts, 1, NULL, path,
			    once_add, &o);
	once_free(&o);
	free(mods);
}

size_t src_live_fork_hints(struct src_live *l, struct src_live_hint **out,
			   size_t max)
{
	size_t n = 0, i = 0;
	pid_t pid;
	bool ended;

	while (n < max &&
	       (out[n] = src_live_kids_sampled(l->kids, &i, &pid, &ended)) != NULL)
		n++;
	return n;
}

void src_live_fork_tick(struct src_live *l, bool force)
{
	double t = clock_mono_s();

	if (!force && t < l->fork_next_scan)
		return;  /* /proc is read at most every FORK_SCAN_S */
	l->fork_next_scan = t + FORK_SCAN_S;
	src_live_kids_scan(l->kids, l->t0_ns, t - (double)l->t0_ns / 1e9,
			   enqueue_cb, l);
	src_live_rank_scan(l->ranks, l->kids, enqueue_cb, l);   /* MPI ranks named */
	if (l->hint != NULL)
		src_live_kids_hints(l->kids, make_hint, l);
	report_kid_images(l);
}

size_t src_live_fork_processes(const struct pc_source *s)
{
	const struct src_live *l = s->impl;

	return 1 + src_live_kids_count(l->kids);
}

/* The children of one process, as /proc lists them: followed. */
static void adopt_children(struct src_live *l, pid_t pid)
{
	char path[64], cpath[64 + sizeof(((struct dirent *)0)->d_name) + 16];
	struct dirent *e;
	long cpid;
	DIR *d;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if ((d = opendir(path)) == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(cpath, sizeof(cpath), "%s/%s/children", path,
			 e->d_name);
		if ((f = fopen(cpath, "r")) == NULL)
			continue;
		while (fscanf(f, "%ld", &cpid) == 1)
			src_live_kids_add(l->kids, (pid_t)cpid, pid);
		fclose(f);
	}
	closedir(d);
}

void src_live_fork_adopt_tree(struct pc_source *s)
{
	struct src_live *l = s->impl;

	if (l->proc == NULL || l->kids == NULL)
		return;
	src_live_fork_follow(l, true);
	/* The children now; theirs are found by the next scans. */
	adopt_children(l, eng_proc_pid(l->proc));
}

void src_live_fork_parent_end(struct src_live *l)
{
	l->parent_ended = true;
	src_live_fork_tick(l, true);
	l->status.ended = src_live_kids_live(l->kids) == 0;
}

void src_live_fork_wait(int timeout_ms)
{
	struct timespec ts = { 0, (long)(timeout_ms < 50 ? timeout_ms : 50) *
				  1000000L };

	nanosleep(&ts, NULL);
}

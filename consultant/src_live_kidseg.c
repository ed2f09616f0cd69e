/*
 * src_live_kidseg.c - followed children counting their inherited
 * instrumentation into segments of their own (see src_live_kidseg.h).
 */
#include "src_live_kidseg.h"
#include "src_live_ops_int.h"
#include "src_live_kids.h"

#include <dirent.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock_mono.h"
#include "eng_fork_patch.h"
#include "eng_fork_shm.h"
#include "eng_inst.h"
#include "eng_metric.h"
#include "eng_sampler.h"
#include "pc_config.h"

struct seg {
	struct eng_fork_shm *shm;
	struct eng_fork_patch *p;      /* what it inherited, for the end */
	size_t np;
	const struct eng_minst **mis;  /* instances live at its fork */
	size_t nmi;
	/* every commit reaches it (eng_inst_mirror_add): an instance
	 * enabled after its fork counts there too */
	struct eng_inst *in;
	/* its part of the observed cost: cost and CPU time at the last
	 * figure, and that figure (src_live_kidseg_slowdown) */
	uint64_t cost_last, cpu_last;
	double slowdown;
	/* when /proc/PID/maps was last read, and whether the segment was
	 * gone from it then (seg_mapped) */
	uint64_t maps_at;
	bool unmapped;
};

struct src_live_kidseg {
	struct seg *s;
	size_t n;
};

struct src_live_kidseg *src_live_kidseg_new(void)
{
	struct src_live_kidseg *ks = calloc(1, sizeof(*ks));

	if (ks == NULL)
		abort();
	return ks;
}

/* pid's executable into exe (PATH_MAX bytes): false when it is gone. */
static bool exe_of(pid_t pid, char *exe)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, exe, PATH_MAX - 1);
	if (n <= 0)
		return false;
	exe[n] = '\0';
	return true;
}

/* The inherited patches out of pid and of its descendants (which
 * inherited them in turn when they forked untraced) that still run
 * `exe`, the child's executable; a patch is only written where it
 * still is.  A descendant that exec'ed holds none (a subshell's
 * `sleep`): it is passed over, not reported as a failure. */
static void restore_below(const struct seg *s, pid_t pid, const char *exe,
			  int depth)
{
	char path[96], got[PATH_MAX];
	struct hunch_err e = { 0 };
	struct dirent *d;
	DIR *dir;
	long c;
	FILE *f;

	if (kill(pid, 0) != 0 ||
	    (depth > 0 && (!exe_of(pid, got) || strcmp(got, exe) != 0)))
		return;
	if (eng_fork_patch_restore(pid, s->p, s->np, &e) < 0)
		fprintf(stderr, "hunch: %s\n", e.msg);
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (depth > 16 || (dir = opendir(path)) == NULL)
		return;
	while ((d = readdir(dir)) != NULL) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/children",
			 (int)pid, d->d_name);
		if ((f = fopen(path, "re")) == NULL)
			continue;
		while (fscanf(f, "%ld", &c) == 1)
			restore_below(s, (pid_t)c, exe, depth + 1);
		fclose(f);
	}
	closedir(dir);
}

/* ... from the child at the top of the tree. */
static void restore_tree(const struct seg *s, pid_t pid)
{
	char exe[PATH_MAX];

	if (exe_of(pid, exe))
		restore_below(s, pid, exe, 0);
}

void src_live_kidseg_free(struct src_live_kidseg *ks)
{
	if (ks == NULL)
		return;
	for (size_t i = 0; i < ks->n; i++) {
		struct seg *s = &ks->s[i];

		if (s->np > 0)
			restore_tree(s, eng_fork_shm_pid(s->shm));
		eng_fork_shm_free(s->shm);
		free(s->p);
		free(s->mis);
	}
	free(ks->s);
	free(ks);
}

/* The program exec'ed: nothing will keep the child's patches in step
 * with its trampolines any more, and nothing reads what they count.
 * The program's bytes go back at every site it inherited or was
 * written at since, in it and in its descendants; its trampolines stay
 * (its private copy) for a thread still inside one. */
static void release(struct seg *s)
{
	pid_t pid = eng_fork_shm_pid(s->shm);
	struct eng_fork_patch *all;
	ssize_t n = eng_inst_mirror_release(s->in, pid, s->p, s->np, &all);

	if (n < 0)
		return;   /* out of memory: the end restores what it can */
	free(s->p);
	s->p = all;
	s->np = (size_t)n;
	if (eng_fork_patch_read(pid, s->p, s->np) == 0)
		restore_tree(s, pid);
	s->np = 0;
}

void src_live_kidseg_exec(struct src_live_kidseg *ks)
{
	for (size_t i = 0; ks != NULL && i < ks->n; i++) {
		struct seg *s = &ks->s[i];

		if (s->in != NULL)
			release(s);
		s->in = NULL;
		free(s->mis);
		s->mis = NULL;
		s->nmi = 0;
	}
}

static struct seg *find(struct src_live_kidseg *ks, pid_t pid)
{
	for (size_t i = 0; ks != NULL && i < ks->n; i++)
		if (eng_fork_shm_pid(ks->s[i].shm) == pid)
			return &ks->s[i];
	return NULL;
}

static bool inherited(const struct seg *s, const struct eng_minst *mi)
{
	if (mi != NULL && s->in != NULL)
		return true;
	for (size_t i = 0; mi != NULL && i < s->nmi; i++)
		if (s->mis[i] == mi)
			return true;
	return false;
}

static bool in_snapshot(const struct seg *s, const struct eng_minst *mi)
{
	for (size_t i = 0; mi != NULL && i < s->nmi; i++)
		if (s->mis[i] == mi)
			return true;
	return false;
}

/* The instrumented instances live now (each instance once); their
 * timers running in the forking thread run on in the child. */
static void snapshot(struct seg *s, const struct src_live_ops *o,
		     const struct eng_shm *shm)
{
	struct eng_minst_info info;

	s->mis = calloc(o->ninst + 1, sizeof(*s->mis));
	for (size_t i = 0; s->mis != NULL && i < o->ninst; i++) {
		const struct src_live_ops_inst *in = &o->inst[i];

		if (!in->live || in->mi == NULL || in->kidpid != 0 ||
		    inherited(s, in->mi))
			continue;
		s->mis[s->nmi++] = in->mi;
		eng_metric_info(o->m, in->mi, &info);
		if (in->scale != 1.0)
			eng_fork_shm_carry_timer(s->shm, shm, info.var_handle,
						 in->cpu);
	}
}

bool src_live_kidseg_fork(struct src_live_kidseg *ks, struct src_live_ops *o,
			  struct eng_inst *in, const struct eng_shm *shm,
			  pid_t child)
{
	struct hunch_err e = { 0 };
	struct eng_fork_shm *k;
	struct seg *s;

	if (ks == NULL || o == NULL || in == NULL || shm == NULL)
		return false;
	if ((s = realloc(ks->s, (ks->n + 1) * sizeof(*s))) == NULL)
		return false;
	ks->s = s;
	if (eng_fork_shm_new(shm, child, &k, &e) < 0) {
		fprintf(stderr, "hunch: %s; its inherited instrumentation is "
			"removed instead\n", e.msg);
		return false;
	}
	s = &ks->s[ks->n++];
	memset(s, 0, sizeof(*s));
	s->shm = k;
	s->np = eng_inst_fork_patches(in, &s->p);
	if (s->p != NULL && eng_fork_patch_read(child, s->p, s->np) != 0)
		s->np = 0;   /* unreadable now: nothing to take out later */
	snapshot(s, o, shm);
	if (eng_inst_mirror_add(in, child) == 0)
		s->in = in;
	else
		fprintf(stderr, "hunch: process %d: out of memory: "
			"experiments changed after its fork do not reach "
			"it\n", (int)child);
	return true;
}

/* One child's value of in's variable (of its focus thread, if any). */
static int64_t seg_value(const struct seg *s, const struct src_live_ops_inst *in,
			 uint64_t handle)
{
	pid_t tid = in->kidpid != 0 ? in->kidtid : 0;

	if (in->scale == 1.0)
		return eng_fork_shm_counter(s->shm, handle, tid, NULL);
	return eng_fork_shm_timer(s->shm, handle, in->cpu, tid, NULL);
}

int src_live_kidseg_value(struct src_live_ops *o,
			  const struct src_live_ops_inst *in, int64_t *v)
{
	struct src_live_kidseg *ks = src_live_kids_segs(o->kids);
	struct eng_minst_info info;
	const struct seg *s;

	eng_metric_info(o->m, in->mi, &info);
	if (in->kidpid != 0) {
		if ((s = find(ks, in->kidpid)) == NULL)
			return -1;
		*v = seg_value(s, in, info.var_handle);
		return in->scale != 1.0 && *v < 0 ? -1 : 0;
	}
	if (eng_metric_value(o->m, in->mi, v) < 0)
		return -1;
	for (size_t i = 0; in->job && ks != NULL && i < ks->n; i++) {
		int64_t kv;

		if (!inherited(&ks->s[i], in->mi))
			continue;
		kv = seg_value(&ks->s[i], in, info.var_handle);
		if (in->scale != 1.0 && kv < 0)
			return -1;   /* a timer caught mid-update: next tick */
		*v += kv;
	}
	return 0;
}

/* The job-wide instance of metric on f's code: f with /Process whole. */
static struct eng_minst *job_instance(struct src_live_ops *o,
				      const char *metric,
				      const struct pc_src_focus *f)
{
	const struct pc_metric_def *md = pc_metric_def_find(o->cfg, metric);
	struct src_live_metric_resolved r = { 0 };
	struct pc_src_focus jf = *f;
	struct src_live_metric *sm;
	struct eng_minst *mi;

	jf.path[1] = "/Process";
	if (md == NULL || o->m == NULL ||
	    src_live_metric_translate(o->cfg, md, &jf, &r, &sm, NULL) < 0)
		return NULL;
	mi = eng_metric_share(o->m, src_live_metric_def(sm),
			      src_live_metric_focus(sm));
	src_live_metric_free(sm);
	return mi;
}

/* The child a focus is on, "/Process/<pid>", and its thread if it
 * names one, "/Process/<pid>/<tid>[:name]" (*tid 0: none). */
static pid_t focus_child(const struct pc_src_focus *f, pid_t *tid)
{
	const char *p = f->path[1];
	char *end;
	long pid, t = 0;

	*tid = 0;
	if (p == NULL || strncmp(p, "/Process/", 9) != 0)
		return 0;
	pid = strtol(p + 9, &end, 10);
	if (*end == '/') {
		t = strtol(end + 1, &end, 10);
		if (*end == ':')
			end += strlen(end);
	}
	if (*end != '\0' || pid <= 0 || t < 0)
		return 0;
	*tid = (pid_t)t;
	return (pid_t)pid;
}

bool src_live_kidseg_enable(struct src_live_ops *o,
			    struct src_live_ops_inst *in, const char *metric,
			    const struct pc_src_focus *f)
{
	pid_t tid, pid = focus_child(f, &tid);
	struct seg *s = pid ? find(src_live_kids_segs(o->kids), pid) : NULL;
	const struct pc_metric_def *md = pc_metric_def_find(o->cfg, metric);
	struct eng_minst *mi;

	if (s == NULL || md == NULL ||
	    (md->type != PC_BASE_COUNTER && md->type != PC_BASE_WALL_TIMER &&
	     md->type != PC_BASE_CPU_TIMER) || !eng_fork_shm_mapped(s->shm) ||
	    (mi = job_instance(o, metric, f)) == NULL)
		return false;
	if (!inherited(s, mi) ||   /* enabled after its fork: not in it */
	    (s->in != NULL && !eng_inst_mirror_live(s->in, pid) &&
	     !in_snapshot(s, mi))) {
		eng_metric_disable(o->m, mi, NULL);
		return false;
	}
	in->mi = mi;
	in->kidpid = pid;
	in->kidtid = tid;
	in->scale = md->type == PC_BASE_COUNTER ? 1.0 : 1e9;
	in->cpu = md->type == PC_BASE_CPU_TIMER;
	src_live_kidseg_value(o, in, &in->prev);
	in->h = ++o->next_h;
	in->live = true;
	in->prev_t = src_live_ops_now(o);
	return true;
}

void src_live_kidseg_forget(struct src_live_ops *o, const struct eng_minst *mi)
{
	struct src_live_kidseg *ks = src_live_kids_segs(o->kids);
	struct eng_minst_info info;

	if (ks == NULL || mi == NULL)
		return;
	eng_metric_info(o->m, mi, &info);
	if (info.refs > 1)
		return;
	for (size_t i = 0; i < ks->n; i++)
		for (size_t j = 0; j < ks->s[i].nmi; j++)
			if (ks->s[i].mis[j] == mi)
				ks->s[i].mis[j] = NULL;
}

/* Does the child still map its segment?  The cost figure asks at
 * every sample tick, for every child, and each answer reads the
 * child's whole /proc/PID/maps: it is read at most once a second per
 * child, and never again once the segment is gone (an exec or the end
 * drops it, and nothing maps it back).  Until the next read, a child
 * that exec'ed reads a cost that no longer grows, so its figure falls
 * to 0 as it would. */
#define KIDSEG_MAPS_EVERY_NS 1000000000ull

static bool seg_mapped(struct seg *s)
{
	uint64_t now = clock_mono_ns();

	if (s->unmapped)
		return false;
	if (s->maps_at != 0 && now - s->maps_at < KIDSEG_MAPS_EVERY_NS)
		return true;
	s->maps_at = now;
	s->unmapped = !eng_fork_shm_mapped(s->shm);
	return !s->unmapped;
}

/* A child's CPU time so far, in ns; false once it is gone. */
static bool child_cpu_ns(pid_t pid, uint64_t *ns)
{
	struct timespec ts;
	clockid_t c;

	if (clock_getcpuclockid(pid, &c) != 0 || clock_gettime(c, &ts) != 0)
		return false;
	*ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	return true;
}

/* One child's slowdown since its last figure, as the sampler figures
 * the program's (engine/eng_sampler.c, observed_cost): the cost over
 * the CPU time the child would have used without it.  Under 2 ms of
 * its CPU the last figure stands (an idle worker's few microseconds
 * read as anything); a child that exec'ed or ended costs nothing. */
#define KIDSEG_MIN_CPU_NS 2000000u

static double seg_slowdown(struct seg *s)
{
	uint64_t cost, cpu;
	double f;

	if (!seg_mapped(s) || !child_cpu_ns(eng_fork_shm_pid(s->shm), &cpu))
		return s->slowdown = 0;
	cost = eng_fork_shm_cost_ns(s->shm);
	if (s->cpu_last == 0 || cpu < s->cpu_last || cost < s->cost_last) {
		s->cpu_last = cpu;
		s->cost_last = cost;
		return s->slowdown;
	}
	if (cpu - s->cpu_last < KIDSEG_MIN_CPU_NS)
		return s->slowdown;
	f = (double)(cost - s->cost_last) / (double)(cpu - s->cpu_last);
	s->slowdown = f >= 1 - 1e-9 ? ENG_SAMPLER_MAX_SLOWDOWN : f / (1 - f);
	if (s->slowdown > ENG_SAMPLER_MAX_SLOWDOWN)
		s->slowdown = ENG_SAMPLER_MAX_SLOWDOWN;
	s->cpu_last = cpu;
	s->cost_last = cost;
	return s->slowdown;
}

double src_live_kidseg_slowdown(struct src_live_kidseg *ks)
{
	double most = 0;

	for (size_t i = 0; ks != NULL && i < ks->n; i++) {
		double d = seg_slowdown(&ks->s[i]);

		if (d > most)
			most = d;
	}
	return most;
}

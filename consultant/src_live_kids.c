/*
 * src_live_kids.c - the followed child processes as the kernel sees
 * them (see src_live_kids.h).
 */
#include "src_live_kids.h"
#include "src_live_kidseg.h"

#include <dirent.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "eng_taskcpu.h"
#include "src_live_exits.h"
#include "src_live_hint.h"
#include "clock_mono.h"

#define SRC_LIVE_KIDS_HINT_CPUS 0.05   /* a child this busy gets a sampler */
#define SRC_LIVE_KIDS_HINT_S 0.5       /* over at least this long */
#define SRC_LIVE_KIDS_SOON_NS 20000000 /* CPU in a busy window: a sampler may come */

struct kid {
	pid_t pid, parent;
	struct eng_taskcpu *tc;   /* NULL: not opened yet, or gone */
	uint64_t cpu_ns, wait_ns; /* process totals at the last reading */
	pid_t *tids;              /* threads reported */
	size_t ntids;
	struct src_live_hint *hint;         /* its stack samples, or NULL */
	uint64_t busy_ns;         /* cpu_ns when busy_t was taken */
	double busy_t;            /* CLOCK_MONOTONIC s, 0: not yet */
	bool reported, ended, hint_tried;
};

struct src_live_kids {
	struct kid *k;
	size_t n;
	struct src_live_exits *exits;        /* the kernel's exit events, or NULL */
	bool exits_tried;
	uint64_t share_run, share_wait;  /* totals at src_live_kids_share_delta */
	struct src_live_kidseg *segs;    /* children with their own segment */
};

struct src_live_kids *src_live_kids_new(void)
{
	struct src_live_kids *k = calloc(1, sizeof(*k));

	if (k == NULL)
		abort();
	return k;
}

struct src_live_kidseg *src_live_kids_segs(struct src_live_kids *k)
{
	if (k != NULL && k->segs == NULL)
		k->segs = src_live_kidseg_new();
	return k != NULL ? k->segs : NULL;
}

void src_live_kids_free(struct src_live_kids *k)
{
	if (k == NULL)
		return;
	src_live_kidseg_free(k->segs);
	for (size_t i = 0; i < k->n; i++) {
		eng_taskcpu_close(k->k[i].tc);
		src_live_hint_free(k->k[i].hint);
		free(k->k[i].tids);
	}
	src_live_exits_close(k->exits);
	free(k->k);
	free(k);
}

static struct kid *find(const struct src_live_kids *k, pid_t pid)
{
	for (size_t i = 0; i < k->n; i++)
		if (k->k[i].pid == pid)
			return &k->k[i];
	return NULL;
}

bool src_live_kids_has(const struct src_live_kids *k, pid_t pid)
{
	return k != NULL && find(k, pid) != NULL;
}

size_t src_live_kids_count(const struct src_live_kids *k)
{
	return k ? k->n : 0;
}

pid_t src_live_kids_pid(const struct src_live_kids *k, size_t i, bool *ended)
{
	*ended = k->k[i].ended;
	return k->k[i].pid;
}

struct src_live_hint *src_live_kids_sampled(const struct src_live_kids *k,
				   size_t *i, pid_t *pid, bool *ended)
{
	while (k != NULL && *i < k->n) {
		const struct kid *c = &k->k[(*i)++];

		if (c->hint != NULL) {
			*pid = c->pid;
			*ended = c->ended;
			return c->hint;
		}
	}
	return NULL;
}

size_t src_live_kids_live(const struct src_live_kids *k)
{
	size_t n = 0;

	for (size_t i = 0; k != NULL && i < k->n; i++)
		n += !k->k[i].ended;
	return n;
}

bool src_live_kids_add(struct src_live_kids *k, pid_t pid, pid_t parent)
{
	struct kid *c;

	if (find(k, pid) != NULL)
		return false;
	if (!k->exits_tried) {   /* before any child can end */
		k->exits_tried = true;
		k->exits = src_live_exits_open();
	}
	k->k = realloc(k->k, (k->n + 1) * sizeof(*k->k));
	if (k->k == NULL)
		abort();
	c = &k->k[k->n++];
	memset(c, 0, sizeof(*c));
	c->pid = pid;
	c->parent = parent;
	/* The base is now: a child's CPU time counts from its fork. */
	if (eng_taskcpu_open(pid, &c->tc, NULL) < 0)
		c->tc = NULL;
	return true;
}

static void refresh_one(struct kid *c)
{
	if (c->ended || c->tc == NULL || eng_taskcpu_refresh(c->tc) < 0)
		return;
	c->cpu_ns = eng_taskcpu_process_ns(c->tc);
	c->wait_ns = eng_taskcpu_process_wait_ns(c->tc);
}

void src_live_kids_refresh(struct src_live_kids *k)
{
	for (size_t i = 0; k != NULL && i < k->n; i++)
		refresh_one(&k->k[i]);
}

bool src_live_kids_value(const struct src_live_kids *k, pid_t pid, pid_t tid, bool wait,
	       int64_t *ns)
{
	const struct eng_taskcpu_thread *t;
	const struct kid *c;
	uint64_t sum = 0;

	if (k == NULL)
		return false;
	if (pid == 0) {
		for (size_t i = 0; i < k->n; i++)
			sum += wait ? k->k[i].wait_ns : k->k[i].cpu_ns;
		*ns = (int64_t)sum;
		return true;
	}
	if ((c = find(k, pid)) == NULL || c->tc == NULL)
		return false;
	if (tid == 0) {
		*ns = (int64_t)(wait ? c->wait_ns : c->cpu_ns);
		return true;
	}
	t = eng_taskcpu_thread(c->tc, tid);
	if (t == NULL)
		return false;
	*ns = (int64_t)(wait ? t->wait_ns : t->run_ns);
	return true;
}

/* The process state letter from /proc/PID/stat ('?' when unreadable):
 * it follows the command name, in parentheses that may hold ')'. */
static char proc_state(pid_t pid, const char *tid)
{
	char path[320], buf[512], *paren;
	FILE *f;
	size_t n;

	if (tid != NULL)
		snprintf(path, sizeof(path), "/proc/%d/task/%s/stat",
			 (int)pid, tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (f == NULL)
		return '?';
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	paren = strrchr(buf, ')');
	return paren != NULL && paren[1] == ' ' ? paren[2] : '?';
}

double src_live_kids_active_threads(pid_t pid)
{
	char path[64];
	struct dirent *e;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (d == NULL)
		return 1;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.' && proc_state(pid, e->d_name) == 'R')
			n++;
	closedir(d);
	return n < 1 ? 1 : n;
}

static bool has_tid(const struct kid *c, pid_t tid)
{
	for (size_t i = 0; i < c->ntids; i++)
		if (c->tids[i] == tid)
			return true;
	return false;
}

/* The children of one thread of a followed child: followed too. */
static void scan_children(struct src_live_kids *k, pid_t pid, const char *tid)
{
	char path[320];
	long cpid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%s/children", (int)pid,
		 tid);
	f = fopen(path, "r");
	if (f == NULL)
		return;
	while (fscanf(f, "%ld", &cpid) == 1)
		src_live_kids_add(k, (pid_t)cpid, pid);
	fclose(f);
}

/* New threads of a live child are reported (and its new children
 * added); threads gone are retired. */
static void scan_threads(struct src_live_kids *k, size_t i, pc_disc_fn fn, void *arg)
{
	struct pc_discovery d = { .kind = PC_DISC_THREAD, .pid = k->k[i].pid };
	pid_t seen[1024];
	size_t nseen = 0, keep = 0;
	char path[64];
	struct dirent *e;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)d.pid);
	if ((dir = opendir(path)) == NULL)
		return;
	while ((e = readdir(dir)) != NULL && nseen < 1024) {
		if (e->d_name[0] == '.')
			continue;
		seen[nseen++] = (pid_t)atoi(e->d_name);
		scan_children(k, d.pid, e->d_name);
	}
	closedir(dir);
	struct kid *c = &k->k[i];   /* scan_children may move k->k */

	for (size_t j = 0; j < nseen; j++) {
		if (has_tid(c, seen[j]))
			continue;
		c->tids = realloc(c->tids, (c->ntids + 1) * sizeof(pid_t));
		if (c->tids == NULL)
			abort();
		c->tids[c->ntids++] = d.tid = seen[j];
		fn(arg, &d);
	}
	for (size_t j = 0; j < c->ntids; j++) {
		bool alive = false;

		for (size_t m = 0; m < nseen && !alive; m++)
			alive = seen[m] == c->tids[j];
		if (alive) {
			c->tids[keep++] = c->tids[j];
		} else {
			d.tid = c->tids[j];
			d.retired = true;
			fn(arg, &d);
			d.retired = false;
		}
	}
	c->ntids = keep;
}

static bool want_exit(void *arg, pid_t pid)
{
	return find(arg, pid) != NULL;
}

/* How child c ended (st: its state letter), into d: from /proc while it
 * is a zombie, else from the kernel's exit event, else unseen (its
 * parent reaped it between two scans and no event could be had). */
static void end_of(const struct src_live_kids *k, const struct kid *c, char st,
		   uint64_t t0_ns, double now, struct pc_discovery *d)
{
	uint64_t mono_ns = 0;
	int status;

	d->end = '?';
	d->end_t = now;
	if (src_live_exits_status(k->exits, c->pid, &status, &mono_ns)) {
		if (mono_ns > t0_ns)
			d->end_t = (double)(mono_ns - t0_ns) / 1e9;
	} else if (st != 'Z' || !src_live_exits_zombie_status(c->pid, &status)) {
		return;
	}
	d->end = WIFSIGNALED(status) ? 's' : 'x';
	d->end_code = WIFSIGNALED(status) ? WTERMSIG(status) :
		      WEXITSTATUS(status);
}

void src_live_kids_scan(struct src_live_kids *k, uint64_t t0_ns, double now, pc_disc_fn fn,
	      void *arg)
{
	if (k != NULL)
		src_live_exits_drain(k->exits, want_exit, k);
	for (size_t i = 0; k != NULL && i < k->n; i++) {
		struct pc_discovery d = { .kind = PC_DISC_PROCESS,
					  .pid = k->k[i].pid };
		char st;

		if (k->k[i].ended)
			continue;
		if (!k->k[i].reported) {
			k->k[i].reported = true;
			fn(arg, &d);
		}
		st = proc_state(k->k[i].pid, NULL);
		if (st == '?' || st == 'Z' || st == 'X') {
			refresh_one(&k->k[i]);   /* its last CPU time */
			k->k[i].ended = true;
			d.retired = true;
			end_of(k, &k->k[i], st, t0_ns, now, &d);
			fn(arg, &d);
			continue;
		}
		scan_threads(k, i, fn, arg);
	}
}

void src_live_kids_share_delta(struct src_live_kids *k, uint64_t *run, uint64_t *wait)
{
	uint64_t r = 0, w = 0;

	if (k == NULL)
		return;
	for (size_t i = 0; i < k->n; i++) {
		r += k->k[i].cpu_ns;
		w += k->k[i].wait_ns;
	}
	*run += r - k->share_run;
	*wait += w - k->share_wait;
	k->share_run = r;
	k->share_wait = w;
}

void src_live_kids_kill(struct src_live_kids *k)
{
	for (size_t i = 0; k != NULL && i < k->n; i++)
		if (!k->k[i].ended)
			kill(k->k[i].pid, SIGKILL);
}

size_t src_live_kids_threads(const struct src_live_kids *k, pid_t pid, pid_t *tids, size_t max)
{
	const struct kid *c = k ? find(k, pid) : NULL;
	size_t n = 0;

	for (; c != NULL && n < c->ntids && n < max; n++)
		tids[n] = c->tids[n];
	return n;
}

struct src_live_hint *src_live_kids_hint(const struct src_live_kids *k, pid_t pid)
{
	const struct kid *c = k ? find(k, pid) : NULL;

	return c ? c->hint : NULL;
}

/* Has the child used at least SRC_LIVE_KIDS_HINT_CPUS CPUs over the last
 * SRC_LIVE_KIDS_HINT_S seconds or more (its readings, src_live_kids_refresh)?  An idle
 * child gets no sampler: in a pool of mostly idle workers the samplers'
 * /proc reads were most of what following them cost. */
static bool busy(struct kid *c)
{
	double t = clock_mono_s(), rate;

	if (c->busy_t == 0 || c->cpu_ns < c->busy_ns) {
		c->busy_t = t;
		c->busy_ns = c->cpu_ns;
		return false;
	}
	if (t - c->busy_t < SRC_LIVE_KIDS_HINT_S)
		return false;
	rate = (double)(c->cpu_ns - c->busy_ns) / 1e9 / (t - c->busy_t);
	c->busy_t = t;
	c->busy_ns = c->cpu_ns;
	return rate >= SRC_LIVE_KIDS_HINT_CPUS;
}

bool src_live_kids_sampler_soon(const struct src_live_kids *k, pid_t pid)
{
	for (size_t i = 0; k != NULL && i < k->n; i++) {
		const struct kid *c = &k->k[i];

		if (c->pid == pid)
			return !c->ended && !c->hint_tried &&
			       c->cpu_ns >= c->busy_ns + SRC_LIVE_KIDS_SOON_NS;
	}
	return false;
}

void src_live_kids_hints(struct src_live_kids *k, src_live_kids_hint_fn make, void *arg)
{
	for (size_t i = 0; k != NULL && i < k->n; i++) {
		struct kid *c = &k->k[i];

		if (!c->hint_tried && !c->ended && busy(c)) {
			c->hint_tried = true;
			c->hint = make(arg, c->pid);
		}
		if (c->hint != NULL && !c->ended)
			src_live_hint_tick(c->hint, 0);
	}
}

int src_live_kids_cpus_available(pid_t pid)
{
	cpu_set_t set;
	long n;

	if (sched_getaffinity(pid, sizeof(set), &set) == 0 &&
	    CPU_COUNT(&set) > 0)
		return CPU_COUNT(&set);
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}

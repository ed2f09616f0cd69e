/*
 * eng_sym_debuginfod.c - fetching debug files from debuginfod servers
 * without ever blocking the caller (see eng_sym_debuginfod.h).
 *
 * One helper thread owns one job: it takes build-ids from a queue and
 * calls debuginfod_find_debuginfo for each, with one client handle used
 * only by that thread.  Everything the loop thread sees (job states, the
 * generation counter, the progress messages) sits behind one mutex and
 * is only ever copied out, so the loop never waits longer than it takes
 * to copy a string.  The thread starts on the first request; at exit the
 * progress callback tells a download under way to stop, and exit waits
 * at most EXIT_WAIT_MS for it, so that libdebuginfod's destructor does
 * not run under a transfer.  libdebuginfod records a stopped download as
 * a miss in its cache (an empty file that makes every lookup of that
 * build-id fail for cache_miss_s, 10 minutes); quitting hunch must not
 * do that, so the empty file of a download we stopped is removed.
 */
#include "eng_sym_debuginfod.h"

#include <elfutils/debuginfod.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_NOTES 64
#define EXIT_WAIT_MS 2000

struct job {
	char *id;      /* lowercase hex build-id */
	char *path;    /* the file it is for, for messages */
	char *dbg;     /* the fetched file in the cache, once DONE */
	enum eng_sym_debuginfod_state state;
};

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;       /* a job was queued, or one ended */
	struct job *jobs;
	size_t njobs, capjobs;
	size_t npending;
	char *notes[MAX_NOTES];  /* ring of progress messages */
	size_t note_head, nnotes;
	unsigned gen;
	bool started, running, stopping;
	bool cancelled;          /* the running download was told to stop */
} g = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

bool eng_sym_debuginfod_enabled(void)
{
	const char *u = getenv("DEBUGINFOD_URLS");

	return u != NULL && u[strspn(u, " \t")] != '\0';
}

/* Called with g.mu held. */
__attribute__((format(printf, 1, 2)))
static void note_locked(const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (s == NULL)
		return;
	if (g.nnotes == MAX_NOTES) {   /* nobody reads them: drop the oldest */
		free(g.notes[g.note_head]);
		g.note_head = (g.note_head + 1) % MAX_NOTES;
		g.nnotes--;
	}
	g.notes[(g.note_head + g.nnotes++) % MAX_NOTES] = s;
}

bool eng_sym_debuginfod_note(char *buf, size_t len)
{
	char *s = NULL;

	pthread_mutex_lock(&g.mu);
	if (g.nnotes > 0) {
		s = g.notes[g.note_head];
		g.note_head = (g.note_head + 1) % MAX_NOTES;
		g.nnotes--;
	}
	pthread_mutex_unlock(&g.mu);
	if (s == NULL)
		return false;
	snprintf(buf, len, "%s", s);
	free(s);
	return true;
}

static struct job *find_locked(const char *id)
{
	for (size_t i = 0; i < g.njobs; i++)
		if (strcmp(g.jobs[i].id, id) == 0)
			return &g.jobs[i];
	return NULL;
}

/* Returning non-zero makes libdebuginfod give up the transfer. */
static int progress(debuginfod_client *c, long a, long b)
{
	bool stop;

	(void)c;
	(void)a;
	(void)b;
	pthread_mutex_lock(&g.mu);
	stop = g.stopping;
	g.cancelled |= stop;
	pthread_mutex_unlock(&g.mu);
	return stop;
}

static char *cache_dir(void);

/* Undo the miss libdebuginfod recorded for a download we stopped. */
static void forget_miss(const char *id)
{
	char *dir = cache_dir(), *path = NULL;
	struct stat st;

	if (dir != NULL && asprintf(&path, "%s/%s/debuginfo", dir, id) >= 0 &&
	    stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0)
		unlink(path);
	free(path);
	free(dir);
}

static void finish_locked(struct job *j, int fd, char *dbg)
{
	struct stat st;

	if (fd >= 0 && dbg != NULL) {
		j->state = ENG_DEBUGINFOD_DONE;
		j->dbg = dbg;
		note_locked("fetching debug info for %s (build-id %s) from "
			    "debuginfod: done, %lld KiB in %s", j->path, j->id,
			    fstat(fd, &st) == 0 ? (long long)st.st_size / 1024
						: 0LL, dbg);
	} else {
		j->state = ENG_DEBUGINFOD_FAILED;
		free(dbg);
		note_locked("fetching debug info for %s (build-id %s) from "
			    "debuginfod: failed (%s); its functions keep the "
			    "names the file itself gives", j->path, j->id,
			    fd == -ENOENT ? "no server has it"
					  : strerror(fd < 0 ? -fd : EIO));
	}
	if (fd >= 0)
		close(fd);
	g.npending--;
	g.gen++;
	pthread_cond_broadcast(&g.cv);
}

static void *helper(void *arg)
{
	debuginfod_client *c = debuginfod_begin();

	(void)arg;
	if (c != NULL)
		debuginfod_set_progressfn(c, progress);
	pthread_mutex_lock(&g.mu);
	for (;;) {
		struct job *j = NULL;
		char *id, *dbg = NULL;
		int fd;

		for (size_t i = 0; i < g.njobs && j == NULL; i++)
			if (g.jobs[i].state == ENG_DEBUGINFOD_PENDING)
				j = &g.jobs[i];
		if (j == NULL || g.stopping) {
			pthread_cond_wait(&g.cv, &g.mu);
			continue;
		}
		/* jobs may move (realloc) while we download: keep the id */
		id = strdup(j->id);
		if (id == NULL || c == NULL) {
			finish_locked(j, -ENOMEM, NULL);
			free(id);
			continue;
		}
		g.running = true;
		note_locked("fetching debug info for %s (build-id %s) from "
			    "debuginfod...", j->path, j->id);
		pthread_mutex_unlock(&g.mu);
		fd = debuginfod_find_debuginfo(c, (const unsigned char *)id, 0,
					       &dbg);
		pthread_mutex_lock(&g.mu);
		if (g.cancelled && fd < 0)
			forget_miss(id);
		g.running = false;
		g.cancelled = false;
		finish_locked(find_locked(id), fd, dbg);
		free(id);
	}
	return NULL;
}

/* At exit: stop a transfer under way (via the progress callback) and let
 * it end before libdebuginfod's destructor cleans up curl. */
static void at_exit(void)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += EXIT_WAIT_MS / 1000;
	pthread_mutex_lock(&g.mu);
	g.stopping = true;
	while (g.running &&
	       pthread_cond_timedwait(&g.cv, &g.mu, &until) == 0)
		;
	pthread_mutex_unlock(&g.mu);
}

/* The helper blocks every signal: hunch reads its signals from a
 * signalfd in the loop thread, and a signal delivered to the helper
 * instead would never reach it. */
static void start_locked(void)
{
	sigset_t all, old;
	pthread_t t;
	int rc;

	if (g.started)
		return;
	g.started = true;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&t, NULL, helper, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		note_locked("cannot start the debuginfod thread: %s; no debug "
			    "info will be fetched", strerror(rc));
		return;
	}
	pthread_detach(t);
	atexit(at_exit);
}

void eng_sym_debuginfod_request(const char *build_id, const char *path)
{
	struct job *j;

	pthread_mutex_lock(&g.mu);
	if (find_locked(build_id) != NULL || g.stopping)
		goto out;
	if (g.njobs == g.capjobs) {
		size_t cap = g.capjobs ? g.capjobs * 2 : 16;
		void *p = realloc(g.jobs, cap * sizeof(*g.jobs));

		if (p == NULL)
			goto out;
		g.jobs = p;
		g.capjobs = cap;
	}
	j = &g.jobs[g.njobs];
	*j = (struct job){ .id = strdup(build_id), .path = strdup(path),
			   .state = ENG_DEBUGINFOD_PENDING };
	if (j->id == NULL || j->path == NULL) {
		free(j->id);
		free(j->path);
		goto out;
	}
	g.njobs++;
	g.npending++;
	start_locked();
	pthread_cond_broadcast(&g.cv);
out:
	pthread_mutex_unlock(&g.mu);
}

enum eng_sym_debuginfod_state eng_sym_debuginfod_state(const char *build_id)
{
	enum eng_sym_debuginfod_state s;
	struct job *j;

	pthread_mutex_lock(&g.mu);
	j = find_locked(build_id);
	s = j ? j->state : ENG_DEBUGINFOD_NONE;
	pthread_mutex_unlock(&g.mu);
	return s;
}

/* debuginfod's cache folder, as libdebuginfod chooses it. */
static char *cache_dir(void)
{
	const char *env = getenv("DEBUGINFOD_CACHE_PATH");
	const char *home = getenv("HOME");
	const char *xdg = getenv("XDG_CACHE_HOME");
	struct stat st;
	char *s = NULL;

	if (env != NULL && env[0] != '\0')
		return strdup(env);
	if (home != NULL) {
		if (asprintf(&s, "%s/.debuginfod_client_cache", home) >= 0 &&
		    stat(s, &st) == 0 && S_ISDIR(st.st_mode))
			return s;
		free(s);
		s = NULL;
	}
	if (xdg != NULL && xdg[0] != '\0') {
		if (asprintf(&s, "%s/debuginfod_client", xdg) < 0)
			s = NULL;
	} else if (home != NULL) {
		if (asprintf(&s, "%s/.cache/debuginfod_client", home) < 0)
			s = NULL;
	}
	return s;
}

char *eng_sym_debuginfod_cached(const char *build_id)
{
	struct job *j;
	char *dir, *path = NULL;
	struct stat st;

	pthread_mutex_lock(&g.mu);
	j = find_locked(build_id);
	if (j != NULL && j->state == ENG_DEBUGINFOD_DONE)
		path = strdup(j->dbg);
	pthread_mutex_unlock(&g.mu);
	if (path != NULL || (dir = cache_dir()) == NULL)
		return path;
	/* A failed lookup leaves an empty, mode-000 file there. */
	if (asprintf(&path, "%s/%s/debuginfo", dir, build_id) < 0 ||
	    stat(path, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
		free(path);
		path = NULL;
	}
	free(dir);
	return path;
}

unsigned eng_sym_debuginfod_generation(void)
{
	unsigned gen;

	pthread_mutex_lock(&g.mu);
	gen = g.gen;
	pthread_mutex_unlock(&g.mu);
	return gen;
}

int eng_sym_debuginfod_wait(int timeout_ms)
{
	struct timespec until;
	int rc = 0;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&g.mu);
	while (g.npending > 0 && rc == 0)
		rc = pthread_cond_timedwait(&g.cv, &g.mu, &until);
	if (g.npending == 0)
		rc = 0;
	pthread_mutex_unlock(&g.mu);
	return rc == 0 ? 0 : -ETIMEDOUT;
}

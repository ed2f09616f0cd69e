/*
 * src_live_rank.c - naming the followed processes by MPI rank (see
 * src_live_rank.h).
 */
#include "src_live_rank.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eng_proc.h"
#include "pc_config.h"
#include "src_live_kids.h"

/* Looks at a child that shows no rank: an MPI launcher's fork reaches
 * its exec quickly, but under load it may take a few scans. */
#define SRC_LIVE_RANK_TRIES 50   /* scans (FORK_SCAN_S apart: 5 s) */

struct seen {
	pid_t pid;
	int tries;   /* scans that found no rank */
	bool done;   /* named, or given up on */
};

struct src_live_rank {
	struct seen *s;
	size_t n;
};

struct src_live_rank *src_live_rank_new(void)
{
	struct src_live_rank *r = calloc(1, sizeof(*r));

	if (r == NULL)
		abort();
	return r;
}

void src_live_rank_free(struct src_live_rank *r)
{
	if (r == NULL)
		return;
	free(r->s);
	free(r);
}

/* The value of NAME=... in an environment block (NUL-separated). */
static const char *env_get(const char *env, size_t len, const char *name)
{
	size_t nl = strlen(name);

	for (size_t i = 0; i < len; i += strlen(env + i) + 1)
		if (strncmp(env + i, name, nl) == 0 && env[i + nl] == '=')
			return env + i + nl + 1;
	return NULL;
}

/* A rank: decimal digits only, below a million. */
static int parse_rank(const char *v)
{
	char *end;
	long r;

	if (v == NULL || *v < '0' || *v > '9')
		return -1;
	r = strtol(v, &end, 10);
	return *end == '\0' && r < 1000000 ? (int)r : -1;
}

int src_live_rank_rank_of(pid_t pid)
{
	static const char *const names[] = { "OMPI_COMM_WORLD_RANK",
					     "PMIX_RANK" };
	char path[64], *env = NULL;
	size_t len = 0, cap = 0;
	ssize_t n;
	int fd, rank = -1;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	do {
		if (len + 4096 + 1 > cap) {
			char *more;

			cap = cap ? 2 * cap : 16384;
			if (cap > (1u << 22) ||
			    (more = realloc(env, cap)) == NULL)
				break;
			env = more;
		}
		n = read(fd, env + len, cap - len - 1);
		len += n > 0 ? (size_t)n : 0;
	} while (n > 0);
	close(fd);
	if (env == NULL || len + 1 > cap) {
		free(env);
		return -1;
	}
	env[len] = '\0';   /* a last entry cut short still ends */
	for (size_t i = 0; i < 2 && rank < 0; i++)
		rank = parse_rank(env_get(env, len, names[i]));
	free(env);
	return rank;
}

static struct seen *seen_of(struct src_live_rank *r, pid_t pid)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->s[i].pid == pid)
			return &r->s[i];
	r->s = realloc(r->s, (r->n + 1) * sizeof(*r->s));
	if (r->s == NULL)
		abort();
	r->s[r->n] = (struct seen){ .pid = pid };
	return &r->s[r->n++];
}

void src_live_rank_scan(struct src_live_rank *r, const struct src_live_kids *kids, pc_disc_fn fn,
	      void *arg)
{
	struct pc_discovery d = { .kind = PC_DISC_PROCESS };
	char label[24];
	bool ended;
	pid_t pid;
	int rank;

	for (size_t i = 0; r != NULL && i < src_live_kids_count(kids); i++) {
		struct seen *s;

		pid = src_live_kids_pid(kids, i, &ended);
		if (ended || (s = seen_of(r, pid))->done)
			continue;
		if ((rank = src_live_rank_rank_of(pid)) < 0) {
			s->done = ++s->tries >= SRC_LIVE_RANK_TRIES;
			continue;
		}
		s->done = true;
		snprintf(label, sizeof(label), "rank %d", rank);
		d.pid = pid;
		d.name = label;
		fn(arg, &d);
	}
}

static bool links(const struct eng_proc *p, const char *lib)
{
	size_t n = strlen(lib);

	for (size_t i = 0; i < eng_solib_nmodules(p); i++) {
		const char *path = eng_solib_module(p, i)->path;
		const char *base = strrchr(path, '/');

		base = base ? base + 1 : path;
		if (strncmp(base, lib, n) == 0)
			return true;
	}
	return false;
}

bool src_live_rank_refuse_launcher(const struct eng_proc *p,
			 const struct pc_metric_def *md, char **why)
{
	char buf[512];

	if (p == NULL || md == NULL || !md->absent_is_zero ||
	    links(p, "libmpi.so") ||
	    !(links(p, "libopen-rte.so") || links(p, "libpmix.so") ||
	      links(p, "libprrte.so")))
		return false;
	snprintf(buf, sizeof(buf), "metric %s cannot be measured in an MPI "
		 "launcher: the MPI calls are made by the ranks, child "
		 "processes that hunch follows with the kernel's measures "
		 "and stack samples only (run a rank under hunch to "
		 "instrument its MPI calls)", md->name);
	if ((*why = strdup(buf)) == NULL)
		abort();
	return true;
}

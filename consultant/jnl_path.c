/* jnl_path.c - default journal locations (see jnl_path.h). */
#include "jnl_path.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int jnl_path_default_dir(char *buf, size_t len, char *(*env)(const char *),
		    struct hunch_err *err)
{
	const char *state = env ? env("XDG_STATE_HOME") : NULL;
	const char *home = env ? env("HOME") : NULL;
	int n;

	/* XDG: a relative $XDG_STATE_HOME is invalid and must be ignored. */
	if (state != NULL && state[0] == '/')
		n = snprintf(buf, len, "%s/hunch/journals", state);
	else if (home != NULL && home[0] == '/')
		n = snprintf(buf, len, "%s/.local/state/hunch/journals", home);
	else
		return hunch_err_set(err, -ENOENT,
				  "no place for the journal: neither $XDG_STATE_HOME nor $HOME is an absolute path; "
				  "set one, name the file with --journal FILE, or pass --no-journal");
	if (n < 0 || (size_t)n >= len)
		return hunch_err_set(err, -ENAMETOOLONG,
				  "the journal directory under %s is too long a path; name the file with --journal FILE",
				  state && state[0] == '/' ? state : home);
	return 0;
}

int jnl_path_default_name(char *buf, size_t len, const char *dir,
		     const char *program, time_t start)
{
	const char *base = program ? strrchr(program, '/') : NULL;
	char name[64], when[32];
	struct tm tm;
	size_t i;
	int n;

	base = base ? base + 1 : program;
	if (base == NULL || base[0] == '\0')
		base = "target";
	for (i = 0; base[i] && i < sizeof(name) - 1; i++) {
		char c = base[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '.' || c == '-' ||
			  c == '_';

		name[i] = ok ? c : '_';
	}
	name[i] = '\0';
	if (name[0] == '.')
		name[0] = '_';  /* no hidden files, no ".." */
	gmtime_r(&start, &tm);
	strftime(when, sizeof(when), "%Y%m%dT%H%M%SZ", &tm);
	n = snprintf(buf, len, "%s/%s-%s.jsonl", dir, name, when);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* mkdir -p with mode 0700 for the directories it creates. */
static int jnl_path_mkdirs(const char *dir, struct hunch_err *err)
{
	char p[PATH_MAX];
	size_t n = strlen(dir);

	if (n == 0 || n >= sizeof(p))
		return hunch_err_set(err, -ENAMETOOLONG, "bad journal directory \"%s\"",
				  dir);
	memcpy(p, dir, n + 1);
	for (char *s = p + 1; ; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;

		*s = '\0';
		if (mkdir(p, 0700) != 0 && errno != EEXIST)
			return hunch_err_set(err, -errno,
					  "cannot create the journal directory %s: %s; "
					  "choose a file with --journal FILE, or pass --no-journal",
					  p, strerror(errno));
		*s = c;
		if (c == '\0')
			return 0;
	}
}

/* O_EXCL with -2, -3... suffixes: never overwrite another search. */
static int create_unique(char *path, size_t len, struct hunch_err *err)
{
	char base[PATH_MAX];
	size_t n = strlen(path);

	if (n < 6 || n >= sizeof(base))
		return hunch_err_set(err, -ENAMETOOLONG, "bad journal path %s", path);
	memcpy(base, path, n - 6);  /* without ".jsonl" */
	base[n - 6] = '\0';
	for (int k = 1; k < 1000; k++) {
		int fd;

		if (k > 1 && snprintf(path, len, "%s-%d.jsonl", base, k) >= (int)len)
			break;
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST)
			return hunch_err_set(err, -errno,
					  "cannot create journal %s: %s; choose another file with --journal FILE, or pass --no-journal",
					  path, strerror(errno));
	}
	return hunch_err_set(err, -EEXIST,
			  "cannot create journal %s: too many journals of that name; name the file with --journal FILE",
			  path);
}

int jnl_path_open_for_search(struct jnl_writer **out,
			     const struct jnl_choice *c,
			     const struct jnl_header *h,
			     const struct jnl_writer_opts *opts,
			     char *(*env)(const char *), struct hunch_err *err)
{
	char dir[PATH_MAX], path[PATH_MAX];
	int rc, fd;

	*out = NULL;
	if (c && c->disabled)
		return 0;
	if (c && c->path)
		return jnl_write_open(out, c->path, h, opts, err);
	if ((rc = jnl_path_default_dir(dir, sizeof(dir), env, err)) != 0 ||
	    (rc = jnl_path_mkdirs(dir, err)) != 0)
		return rc;
	if (jnl_path_default_name(path, sizeof(path), dir, h->program,
			     h->start_wall.tv_sec) != 0)
		return hunch_err_set(err, -ENAMETOOLONG,
				  "the journal path under %s is too long; name the file with --journal FILE",
				  dir);
	fd = create_unique(path, sizeof(path), err);
	if (fd < 0)
		return fd;
	return jnl_write_fdopen(out, fd, path, h, opts, err);
}

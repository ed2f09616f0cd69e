/*
 * cli_journals.c - `hunch replay DIR` (and `hunch replay` alone, on the
 * default journal directory): the journals there, newest first by when
 * each search started, with that time, its program and mode, so that
 * the one to replay can be picked without opening each.
 *
 * A journal is a file named *.jsonl or *.jsonl.gz; its header (the
 * first line) gives the start time, the program's command line and the
 * mode.  The listing is ordered by the time it shows: the header's
 * start time, not the file's modification time (a copied, touched or
 * decompressed journal keeps its start time but not its file time).  A
 * file whose header cannot be read is listed with the reason, never
 * skipped in silence, and placed and shown by its file time, which the
 * line says.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "jnl_path.h"
#include "jnl_read.h"

struct journal_ent {
	char *path;
	const char *name;      /* inside path */
	off_t size;
	struct timespec when;  /* the search's start, else the file's time */
	char *mode, *cmd;      /* from the header; NULL when unreadable */
	char *why;             /* why `when` is the file's time, else NULL */
};

static bool is_journal_name(const char *n)
{
	size_t len = strlen(n);

	return (len > 6 && strcmp(n + len - 6, ".jsonl") == 0) ||
	       (len > 9 && strcmp(n + len - 9, ".jsonl.gz") == 0);
}

static int newest_first(const void *a, const void *b)
{
	const struct journal_ent *x = a, *y = b;

	if (x->when.tv_sec != y->when.tv_sec)
		return x->when.tv_sec < y->when.tv_sec ? 1 : -1;
	if (x->when.tv_nsec != y->when.tv_nsec)
		return x->when.tv_nsec < y->when.tv_nsec ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* The header's start_wall ("2026-11-21T13:29:58.290965Z", UTC, as
 * jnl_write.c writes it) into *t; false when s is not such a time. */
static bool parse_start(const char *s, struct timespec *t)
{
	struct tm tm = { 0 };
	unsigned us = 0;
	int end = 0, usend = 0, n;

	if (s == NULL)
		return false;
	n = sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n.%6u%nZ", &tm.tm_year,
		   &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
		   &tm.tm_sec, &end, &us, &usend);
	if (n < 6 || end != 19)
		return false;
	if (n == 7 && usend == 26 && strcmp(s + usend, "Z") == 0)
		t->tv_nsec = (long)us * 1000;
	else if (strcmp(s + end, "Z") == 0)
		t->tv_nsec = 0;
	else
		return false;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	t->tv_sec = timegm(&tm);
	return t->tv_sec != (time_t)-1;
}

/* The command line a header recorded, on one line (malloc'd). */
static char *header_cmd(const json_t *h)
{
	const json_t *argv = json_object_get(json_object_get(h, "target"),
					     "argv");
	char *s = NULL;
	size_t len = 0, i;
	FILE *m = open_memstream(&s, &len);
	json_t *a;

	if (m == NULL)
		return NULL;
	if (json_is_array(argv)) {
		json_array_foreach(argv, i, a) {
			fputs(i ? " " : "", m);
			cli_quote_word(json_string_value(a) ?: "", m);
		}
	} else {
		fputs(json_string_value(json_object_get(h, "program")) ?: "?",
		      m);
	}
	fclose(m);
	return s;
}

/* Fill j's time, mode and command line from its header; when the header
 * cannot be read, or holds no start time, j->why says so and j->when
 * keeps the file's time. */
static void read_header(struct journal_ent *j)
{
	struct jnl_reader *r;
	struct hunch_err err = { 0 };
	const json_t *h;
	const char *start, *mode;

	if (jnl_read_open(&r, j->path, &err) != 0) {
		if (asprintf(&j->why, "cannot read its header: %s",
			     err.msg) < 0)
			j->why = NULL;
		return;
	}
	h = jnl_read_header(r);
	start = json_string_value(json_object_get(h, "start_wall"));
	if (!parse_start(start, &j->when)) {
		if (asprintf(&j->why, "its header's start_wall \"%s\" is not "
			     "a UTC time like 2026-01-02T10:00:00.000000Z",
			     start ?: "") < 0)
			j->why = NULL;
	} else {
		mode = json_string_value(json_object_get(h, "mode"));
		j->mode = strdup(mode ? mode : "?");
		j->cmd = header_cmd(h);
	}
	jnl_read_close(r);
}

static void ent_free(struct journal_ent *j)
{
	free(j->path);
	free(j->mode);
	free(j->cmd);
	free(j->why);
}

/* The journal entry for dir/name in *j; false when it is no regular
 * file (or memory ran out). */
static bool ent_make(const char *dir, const char *name,
		     struct journal_ent *j)
{
	struct stat st;

	*j = (struct journal_ent){ 0 };
	if (asprintf(&j->path, "%s/%s", dir, name) < 0)
		return false;
	if (stat(j->path, &st) != 0 || !S_ISREG(st.st_mode)) {
		free(j->path);
		return false;
	}
	j->name = j->path + strlen(dir) + 1;
	j->size = st.st_size;
	j->when = st.st_mtim;
	read_header(j);
	return true;
}

/* The journals in dir: *n of them, sorted; NULL with errno on failure. */
static struct journal_ent *scan(const char *dir, size_t *n)
{
	DIR *d = opendir(dir);
	struct journal_ent *v = NULL, j;
	struct dirent *e;
	size_t cap = 0;

	*n = 0;
	if (d == NULL)
		return NULL;
	while ((e = readdir(d)) != NULL) {
		if (!is_journal_name(e->d_name) ||
		    !ent_make(dir, e->d_name, &j))
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 16;
			v = realloc(v, cap * sizeof(*v));
		}
		v[(*n)++] = j;
	}
	closedir(d);
	if (*n > 1)
		qsort(v, *n, sizeof(*v), newest_first);
	return v != NULL ? v : calloc(1, sizeof(*v));
}

static void print_one(const struct journal_ent *j)
{
	struct tm tm;
	char when[32];

	gmtime_r(&j->when.tv_sec, &tm);
	strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
	printf("  %-40s %8.1f KiB  %s  ", j->name, (double)j->size / 1024,
	       when);
	if (j->why != NULL || j->mode == NULL)
		printf("(the file's time: %s)\n",
		       j->why ? j->why : "out of memory");
	else
		printf("%-9s  %s\n", j->mode, j->cmd ? j->cmd : "?");
}

int cli_journals_list(const char *dir)
{
	char def[4096];
	struct hunch_err err = { 0 };
	struct journal_ent *v;
	size_t n;

	if (dir == NULL) {
		if (jnl_path_default_dir(def, sizeof def, getenv, &err) != 0) {
			fprintf(stderr, "hunch replay: which journal? (%s)\n",
				err.msg);
			return HUNCH_EXIT_USAGE;
		}
		dir = def;
	}
	v = scan(dir, &n);
	if (v == NULL && errno == ENOENT && dir == def) {
		printf("hunch replay: no journals yet: searches write them in "
		       "%s\n", dir);
		return 0;
	}
	if (v == NULL) {
		fprintf(stderr, "hunch replay: cannot list %s: %s; name a "
			"journal file to replay\n", dir, strerror(errno));
		return HUNCH_EXIT_USAGE;
	}
	if (n == 0)
		printf("hunch replay: no journals (*.jsonl, *.jsonl.gz) in "
		       "%s\n", dir);
	else
		printf("hunch replay: %zu journal%s in %s, newest first by "
		       "start time (UTC):\n", n, n == 1 ? "" : "s", dir);
	for (size_t i = 0; i < n; i++)
		print_one(&v[i]);
	for (size_t i = 0; i < n; i++) {
		if (v[i].mode != NULL) {  /* the newest that can be read */
			printf("replay one: hunch replay %s\n", v[i].path);
			break;
		}
	}
	for (size_t i = 0; i < n; i++)
		ent_free(&v[i]);
	free(v);
	return 0;
}

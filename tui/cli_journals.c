/*
 * cli_journals.c - `hunch replay DIR` (and `hunch replay` alone, on the
 * default journal directory): the journals there, newest first, with
 * when each search started, its program and mode, so that the one to
 * replay can be picked without opening each.
 *
 * A journal is a file named *.jsonl or *.jsonl.gz; its header (the
 * first line) gives the start time, the program's command line and the
 * mode.  A file whose header cannot be read is listed with the reason,
 * never skipped in silence.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "jnl_path.h"
#include "jnl_read.h"

struct journal_ent {
	char *path;
	const char *name;      /* inside path */
	struct timespec mtime;
	off_t size;
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

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? 1 : -1;
	if (x->mtime.tv_nsec != y->mtime.tv_nsec)
		return x->mtime.tv_nsec < y->mtime.tv_nsec ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* The journals in dir: *n of them, sorted; NULL with errno on failure. */
static struct journal_ent *scan(const char *dir, size_t *n)
{
	DIR *d = opendir(dir);
	struct journal_ent *v = NULL;
	struct dirent *e;
	size_t cap = 0;

	*n = 0;
	if (d == NULL)
		return NULL;
	while ((e = readdir(d)) != NULL) {
		struct journal_ent j = { 0 };
		struct stat st;

		if (!is_journal_name(e->d_name) ||
		    asprintf(&j.path, "%s/%s", dir, e->d_name) < 0)
			continue;
		if (stat(j.path, &st) != 0 || !S_ISREG(st.st_mode)) {
			free(j.path);
			continue;
		}
		j.name = j.path + strlen(dir) + 1;
		j.mtime = st.st_mtim;
		j.size = st.st_size;
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

/* The command line a header recorded, on one line. */
static void print_argv(const json_t *argv)
{
	size_t i;
	json_t *a;

	json_array_foreach(argv, i, a) {
		fputs(i ? " " : "", stdout);
		cli_quote_word(json_string_value(a) ?: "", stdout);
	}
}

static void print_one(const struct journal_ent *j)
{
	struct jnl_reader *r;
	struct hunch_err err = { 0 };
	const json_t *h, *t;
	const char *start, *mode;

	printf("  %-40s %8.1f KiB  ", j->name, (double)j->size / 1024);
	if (jnl_reader_open(&r, j->path, &err) != 0) {
		printf("(cannot read its header: %s)\n", err.msg);
		return;
	}
	h = jnl_reader_header(r);
	start = json_string_value(json_object_get(h, "start_wall"));
	mode = json_string_value(json_object_get(h, "mode"));
	t = json_object_get(json_object_get(h, "target"), "argv");
	printf("%.19s  %-8s  ", start ? start : "?", mode ? mode : "?");
	if (json_is_array(t))
		print_argv(t);
	else
		fputs(json_string_value(json_object_get(h, "program"))
			      ?: "?", stdout);
	putchar('\n');
	jnl_reader_close(r);
}

int cli_journals_list(const char *dir)
{
	char def[4096];
	struct hunch_err err = { 0 };
	struct journal_ent *v;
	size_t n;

	if (dir == NULL) {
		if (jnl_default_dir(def, sizeof def, getenv, &err) != 0) {
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
		printf("hunch replay: %zu journal%s in %s, newest first:\n", n,
		       n == 1 ? "" : "s", dir);
	for (size_t i = 0; i < n; i++)
		print_one(&v[i]);
	if (n > 0)
		printf("replay one: hunch replay %s\n", v[0].path);
	for (size_t i = 0; i < n; i++)
		free(v[i].path);
	free(v);
	return 0;
}

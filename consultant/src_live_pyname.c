/*
 * src_live_pyname.c - unique, readable where-axis names of Python code
 * (see src_live_pyname.h).  Few files and functions run in one search:
 * plain arrays searched linearly, behind a cache by code object.
 */
#include "src_live_pyname.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"

#define CACHE 1024   /* code object -> function, direct-mapped */
#define LINES 64     /* lines counted per function; more are not */

struct linecount {
	int line;
	unsigned long n;
};

struct pyfile {
	char *path;              /* co_filename */
	char *shown;
};

struct pyfunc {
	size_t file;             /* index into files */
	char *qualname;
	int firstline;
	char *shown;
	struct linecount *lines;  /* LINES of them, made on first count */
	int nlines;
};

struct slot {
	const struct eng_pycode *code;
	size_t fn;
};

struct src_live_pyname {
	struct pyfile *files;
	size_t nfiles;
	struct pyfunc *fns;
	size_t nfns;
	struct slot cache[CACHE];
};

bool src_live_pyname_is_code(const char *path)
{
	static const char pre[] = "/Code/" SRC_LIVE_PYNAME_MODULE;
	size_t n = sizeof(pre) - 1;

	return path != NULL && strncmp(path, pre, n) == 0 &&
	       (path[n] == '/' || path[n] == '\0');
}

bool src_live_pyname_refines(const char *caller, const char *callee,
			     const char *interp)
{
	size_t n;

	if (interp == NULL || !src_live_pyname_is_code(caller) ||
	    strncmp(callee, "/Code/", 6) != 0)
		return true;
	n = strlen(interp);
	return !(strncmp(callee + 6, interp, n) == 0 &&
		 (callee[6 + n] == '/' || callee[6 + n] == '\0'));
}

struct src_live_pyname *src_live_pyname_new(void)
{
	struct src_live_pyname *n = xrealloc(NULL, sizeof(*n));

	memset(n, 0, sizeof(*n));
	return n;
}

void src_live_pyname_forget_codes(struct src_live_pyname *n)
{
	memset(n->cache, 0, sizeof(n->cache));
}

void src_live_pyname_free(struct src_live_pyname *n)
{
	if (n == NULL)
		return;
	for (size_t i = 0; i < n->nfiles; i++) {
		free(n->files[i].path);
		free(n->files[i].shown);
	}
	for (size_t i = 0; i < n->nfns; i++) {
		free(n->fns[i].qualname);
		free(n->fns[i].shown);
		free(n->fns[i].lines);
	}
	free(n->files);
	free(n->fns);
	free(n);
}

static bool file_shown(const struct src_live_pyname *n, const char *shown)
{
	for (size_t i = 0; i < n->nfiles; i++)
		if (strcmp(n->files[i].shown, shown) == 0)
			return true;
	return false;
}

/* The shown name of a file: its basename, else folder:basename, else
 * its path with ':' for '/'. */
static size_t file_of(struct src_live_pyname *n, const char *path)
{
	const char *base = strrchr(path, '/');
	struct pyfile *f;
	char *shown;

	for (size_t i = 0; i < n->nfiles; i++)
		if (strcmp(n->files[i].path, path) == 0)
			return i;
	shown = xstrdup(base ? base + 1 : path);
	if (file_shown(n, shown) && base != NULL) {
		const char *dir = base;

		while (dir > path && dir[-1] != '/')
			dir--;
		free(shown);
		shown = xrealloc(NULL, strlen(dir) + 1);
		snprintf(shown, strlen(dir) + 1, "%.*s:%s",
			 (int)(base - dir), dir, base + 1);
	}
	if (file_shown(n, shown)) {
		free(shown);
		shown = xstrdup(path[0] == '/' ? path + 1 : path);
		for (char *p = shown; *p; p++)
			if (*p == '/')
				*p = ':';
	}
	n->files = xrealloc(n->files, (n->nfiles + 1) * sizeof(*n->files));
	f = &n->files[n->nfiles];
	f->path = xstrdup(path);
	f->shown = shown;
	return n->nfiles++;
}

static size_t func_of(struct src_live_pyname *n, const struct eng_pycode *c,
		      bool *is_new)
{
	size_t file = file_of(n, c->file);
	bool taken = false;
	struct pyfunc *f;
	char line[32];

	*is_new = false;
	for (size_t i = 0; i < n->nfns; i++) {
		if (n->fns[i].file != file ||
		    strcmp(n->fns[i].qualname, c->qualname) != 0)
			continue;
		if (n->fns[i].firstline == c->firstline)
			return i;
		taken = true;
	}
	*is_new = true;
	n->fns = xrealloc(n->fns, (n->nfns + 1) * sizeof(*n->fns));
	f = &n->fns[n->nfns];
	f->file = file;
	f->qualname = xstrdup(c->qualname);
	f->firstline = c->firstline;
	f->lines = NULL;
	f->nlines = 0;
	snprintf(line, sizeof(line), ":%d", c->firstline);
	f->shown = xrealloc(NULL, strlen(c->qualname) + sizeof(line));
	snprintf(f->shown, strlen(c->qualname) + sizeof(line), "%s%s",
		 c->qualname, taken ? line : "");
	return n->nfns++;
}

void src_live_pyname_of(struct src_live_pyname *n, const struct eng_pycode *c,
			const char **file, const char **function,
			bool *is_new)
{
	struct slot *s = &n->cache[((uintptr_t)c >> 4) % CACHE];

	*is_new = false;
	if (s->code != c) {
		s->code = c;
		s->fn = func_of(n, c, is_new);
	}
	*file = n->files[n->fns[s->fn].file].shown;
	*function = n->fns[s->fn].shown;
}

void src_live_pyname_line_seen(struct src_live_pyname *n,
			       const struct eng_pycode *c, int line)
{
	const char *file, *fn;
	bool is_new;
	struct pyfunc *f;

	if (line <= 0)
		return;
	src_live_pyname_of(n, c, &file, &fn, &is_new);
	f = &n->fns[n->cache[((uintptr_t)c >> 4) % CACHE].fn];
	if (f->lines == NULL)
		f->lines = xrealloc(NULL, LINES * sizeof(*f->lines));
	for (int i = 0; i < f->nlines; i++)
		if (f->lines[i].line == line) {
			f->lines[i].n++;
			return;
		}
	if (f->nlines < LINES)
		f->lines[f->nlines++] = (struct linecount){ line, 1 };
}

/* The function whose shown file and name are at `fn` ("FILE/FN" of
 * length len), or NULL. */
static const struct pyfunc *func_named(const struct src_live_pyname *n,
				       const char *fn, size_t len)
{
	for (size_t i = 0; i < n->nfns; i++) {
		const char *file = n->files[n->fns[i].file].shown;
		size_t fl = strlen(file), nl = strlen(n->fns[i].shown);

		if (fl + 1 + nl == len && strncmp(fn, file, fl) == 0 &&
		    fn[fl] == '/' && strncmp(fn + fl + 1, n->fns[i].shown,
					     nl) == 0)
			return &n->fns[i];
	}
	return NULL;
}

int src_live_pyname_line(const struct src_live_pyname *n, const char *path)
{
	static const char pre[] = "/Code/" SRC_LIVE_PYNAME_MODULE "/";
	size_t lp = strlen(path), lq = strlen(SRC_LIVE_PYNAME_LINE_Q);
	const struct pyfunc *f;
	int best = 0;

	if (strncmp(path, pre, sizeof(pre) - 1) != 0 || lp < sizeof(pre) + lq ||
	    strcmp(path + lp - lq, SRC_LIVE_PYNAME_LINE_Q) != 0)
		return -1;
	f = func_named(n, path + sizeof(pre) - 1, lp - lq - (sizeof(pre) - 1));
	for (int i = 0; f != NULL && i < f->nlines; i++)
		if (best == 0 || f->lines[i].n > f->lines[best - 1].n)
			best = i + 1;
	return best ? f->lines[best - 1].line : 0;
}

/*
 * src_live_pyname.c - unique, readable where-axis names of Python code
 * (see src_live_pyname.h).  Few files and functions run in one search:
 * plain arrays searched linearly, shared by the job's samplers, behind a
 * cache by code object per sampler.
 */
#include "src_live_pyname.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"

#define CACHE 1024   /* code object -> function, direct-mapped */
#define LINES 64     /* lines counted per function; more are not */
#define CALLERS 16   /* callers counted per function; more are not */

/* How often a key was seen: a line of a function, or a function
 * calling it (its index into fns). */
struct tally {
	size_t key;
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
	struct tally *lines;     /* LINES of them, made on first count */
	int nlines;
	struct tally *callers;   /* CALLERS functions right under its
				  * frames, made on first count */
	int ncallers;
	unsigned long frames;    /* its frames seen, with a caller or not */
};

struct slot {
	const struct eng_pycode *code;
	size_t fn;
};

/* The names, shared by every sampler of one job (refs: its handles). */
struct pytable {
	struct pyfile *files;
	size_t nfiles;
	struct pyfunc *fns;
	size_t nfns;
	int refs;
};

/* A handle: the shared names, and the cache of one reader's code
 * objects (a code object's address names nothing in another process). */
struct src_live_pyname {
	struct pytable *t;
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
	n->t = xrealloc(NULL, sizeof(*n->t));
	memset(n->t, 0, sizeof(*n->t));
	n->t->refs = 1;
	return n;
}

struct src_live_pyname *src_live_pyname_share(struct src_live_pyname *with)
{
	struct src_live_pyname *n = xrealloc(NULL, sizeof(*n));

	memset(n, 0, sizeof(*n));
	n->t = with->t;
	n->t->refs++;
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
	if (--n->t->refs > 0) {
		free(n);
		return;
	}
	for (size_t i = 0; i < n->t->nfiles; i++) {
		free(n->t->files[i].path);
		free(n->t->files[i].shown);
	}
	for (size_t i = 0; i < n->t->nfns; i++) {
		free(n->t->fns[i].qualname);
		free(n->t->fns[i].shown);
		free(n->t->fns[i].lines);
		free(n->t->fns[i].callers);
	}
	free(n->t->files);
	free(n->t->fns);
	free(n->t);
	free(n);
}

static bool file_shown(const struct src_live_pyname *n, const char *shown)
{
	for (size_t i = 0; i < n->t->nfiles; i++)
		if (strcmp(n->t->files[i].shown, shown) == 0)
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

	for (size_t i = 0; i < n->t->nfiles; i++)
		if (strcmp(n->t->files[i].path, path) == 0)
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
	n->t->files = xrealloc(n->t->files, (n->t->nfiles + 1) * sizeof(*n->t->files));
	f = &n->t->files[n->t->nfiles];
	f->path = xstrdup(path);
	f->shown = shown;
	return n->t->nfiles++;
}

static size_t func_of(struct src_live_pyname *n, const struct eng_pycode *c,
		      bool *is_new)
{
	size_t file = file_of(n, c->file);
	bool taken = false;
	struct pyfunc *f;
	char line[32];

	*is_new = false;
	for (size_t i = 0; i < n->t->nfns; i++) {
		if (n->t->fns[i].file != file ||
		    strcmp(n->t->fns[i].qualname, c->qualname) != 0)
			continue;
		if (n->t->fns[i].firstline == c->firstline)
			return i;
		taken = true;
	}
	*is_new = true;
	n->t->fns = xrealloc(n->t->fns, (n->t->nfns + 1) * sizeof(*n->t->fns));
	f = &n->t->fns[n->t->nfns];
	f->file = file;
	f->qualname = xstrdup(c->qualname);
	f->firstline = c->firstline;
	f->lines = NULL;
	f->nlines = 0;
	f->callers = NULL;
	f->ncallers = 0;
	f->frames = 0;
	snprintf(line, sizeof(line), ":%d", c->firstline);
	f->shown = xrealloc(NULL, strlen(c->qualname) + sizeof(line));
	snprintf(f->shown, strlen(c->qualname) + sizeof(line), "%s%s",
		 c->qualname, taken ? line : "");
	return n->t->nfns++;
}

void src_live_pyname_first_file(struct src_live_pyname *n, const char *path)
{
	file_of(n, path);
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
	*file = n->t->files[n->t->fns[s->fn].file].shown;
	*function = n->t->fns[s->fn].shown;
}

/* The index of code object c's function (named now if it was not). */
static size_t fn_index(struct src_live_pyname *n, const struct eng_pycode *c)
{
	const char *file, *fn;
	bool is_new;

	src_live_pyname_of(n, c, &file, &fn, &is_new);
	return n->cache[((uintptr_t)c >> 4) % CACHE].fn;
}

/* One more of key in t (cap of them at most, made on first count). */
static void tally_add(struct tally **t, int *n, int cap, size_t key)
{
	if (*t == NULL)
		*t = xrealloc(NULL, (size_t)cap * sizeof(**t));
	for (int i = 0; i < *n; i++)
		if ((*t)[i].key == key) {
			(*t)[i].n++;
			return;
		}
	if (*n < cap)
		(*t)[(*n)++] = (struct tally){ key, 1 };
}

void src_live_pyname_line_seen(struct src_live_pyname *n,
			       const struct eng_pycode *c, int line)
{
	struct pyfunc *f;

	if (line <= 0)
		return;
	f = &n->t->fns[fn_index(n, c)];
	tally_add(&f->lines, &f->nlines, LINES, (size_t)line);
}

void src_live_pyname_caller_seen(struct src_live_pyname *n,
				 const struct eng_pycode *c,
				 const struct eng_pycode *caller)
{
	size_t fc = fn_index(n, c), fk;
	struct pyfunc *f;

	n->t->fns[fc].frames++;
	if (caller == NULL)
		return;
	fk = fn_index(n, caller);
	f = &n->t->fns[fc];   /* fns may have moved: caller named now */
	tally_add(&f->callers, &f->ncallers, CALLERS, fk);
}

/* The function whose shown file and name are at `fn` ("FILE/FN" of
 * length len), or NULL. */
static const struct pyfunc *func_named(const struct src_live_pyname *n,
				       const char *fn, size_t len)
{
	for (size_t i = 0; i < n->t->nfns; i++) {
		const char *file = n->t->files[n->t->fns[i].file].shown;
		size_t fl = strlen(file), nl = strlen(n->t->fns[i].shown);

		if (fl + 1 + nl == len && strncmp(fn, file, fl) == 0 &&
		    fn[fl] == '/' && strncmp(fn + fl + 1, n->t->fns[i].shown,
					     nl) == 0)
			return &n->t->fns[i];
	}
	return NULL;
}

/* The function named by a where path "/Code/<python>/FILE/FN" of
 * length len, or NULL. */
static const struct pyfunc *func_at(const struct src_live_pyname *n,
				    const char *path, size_t len)
{
	static const char pre[] = "/Code/" SRC_LIVE_PYNAME_MODULE "/";

	if (len < sizeof(pre) || strncmp(path, pre, sizeof(pre) - 1) != 0)
		return NULL;
	return func_named(n, path + sizeof(pre) - 1, len - (sizeof(pre) - 1));
}

/* The line of f where the samples put most of its time (the first such
 * line on a tie), 0 when none was counted. */
static int line_of(const struct pyfunc *f)
{
	int best = 0;

	for (int i = 0; f != NULL && i < f->nlines; i++)
		if (best == 0 || f->lines[i].n > f->lines[best - 1].n)
			best = i + 1;
	return best ? (int)f->lines[best - 1].key : 0;
}

/* The share of f's frames that had the function at caller (a where
 * path of len bytes) right under them; 0 when none was seen. */
static double caller_share(const struct src_live_pyname *n,
			   const struct pyfunc *f, const char *caller,
			   size_t len)
{
	const struct pyfunc *k = func_at(n, caller, len);

	for (int i = 0; f != NULL && k != NULL && i < f->ncallers; i++)
		if (&n->t->fns[f->callers[i].key] == k)
			return (double)f->callers[i].n / (double)f->frames;
	return 0;
}

double src_live_pyname_hint(const struct src_live_pyname *n, const char *path)
{
	size_t lq = strlen(SRC_LIVE_PYNAME_LINE_Q), lp = strlen(path);
	const char *q = strstr(path, SRC_LIVE_PYNAME_CALLER_Q);

	if (!src_live_pyname_is_code(path))
		return -1;
	if (q != NULL && src_live_pyname_is_code(q + strlen(SRC_LIVE_PYNAME_CALLER_Q)))
		return caller_share(n, func_at(n, path, (size_t)(q - path)),
			q + strlen(SRC_LIVE_PYNAME_CALLER_Q),
			strlen(q + strlen(SRC_LIVE_PYNAME_CALLER_Q)));
	if (lp > lq && strcmp(path + lp - lq, SRC_LIVE_PYNAME_LINE_Q) == 0)
		return line_of(func_at(n, path, lp - lq));
	return -1;
}

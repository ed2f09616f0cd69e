/*
 * pyname_table.c - the where-axis names of Python code
 * (consultant/src_live_pyname.c) shared by the samplers of one job, and
 * the script a real python3.11 runs (src_live_pyscript.c):
 * - the script named first keeps its basename, whichever file of that
 *   basename the samples hold first; without it, the first one seen
 *   takes it (a pool worker's multiprocessing/pool.py);
 * - two handles (a parent's sampler and a worker's) give one file and
 *   one function one name, and a function is new once;
 * - a function's lines and its callers count over both handles: the
 *   hint questions `?line` and `?caller=` answer the sums;
 * - src_live_pyscript_path gives what CPython itself names the script's
 *   code (co_filename), for `python3.11 -u -X dev ./s.py` in a folder.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "src_live_pyname.h"
#include "src_live_pyscript.h"
#include "tap.h"

#define PY "/usr/bin/python3.11"

static struct eng_pycode script_mod = { 1, "<module>", "/tmp/x/pool.py", 1 };
static struct eng_pycode work = { 2, "work", "/tmp/x/pool.py", 4 };
static struct eng_pycode lib_pool = { 3, "Pool._repopulate_pool_static",
	"/usr/lib/python3.11/multiprocessing/pool.py", 320 };
static struct eng_pycode mapstar = { 4, "mapstar",
	"/usr/lib/python3.11/multiprocessing/pool.py", 47 };

static void str_is(const char *got, const char *want, const char *what)
{
	if (!tap_ok(strcmp(got, want) == 0, "%s", what))
		tap_diag("  got \"%s\", want \"%s\"", got, want);
}

static const char *name_of(struct src_live_pyname *n,
			   const struct eng_pycode *c, bool *is_new)
{
	static char buf[512];
	const char *file, *fn;

	src_live_pyname_of(n, c, &file, &fn, is_new);
	snprintf(buf, sizeof(buf), "%s/%s", file, fn);
	return buf;
}

static void first_seen_takes_it(void)
{
	struct src_live_pyname *n = src_live_pyname_new();
	bool is_new;

	name_of(n, &lib_pool, &is_new);
	str_is(name_of(n, &work, &is_new), "x:pool.py/work",
		   "without the script named first, the library's pool.py "
		   "seen first takes the basename");
	src_live_pyname_free(n);
}

static void shared(void)
{
	struct src_live_pyname *parent = src_live_pyname_new();
	struct src_live_pyname *worker = src_live_pyname_share(parent);
	bool is_new;

	src_live_pyname_first_file(parent, "/tmp/x/pool.py");
	str_is(name_of(worker, &lib_pool, &is_new),
		   "multiprocessing:pool.py/Pool._repopulate_pool_static",
		   "the script named first: the library's pool.py, seen "
		   "first in a worker, is shown with its folder");
	tap_ok(is_new, "  and is new there");
	str_is(name_of(worker, &work, &is_new), "pool.py/work",
		   "the script keeps its basename");
	tap_ok(is_new, "  work is new in the worker");
	str_is(name_of(parent, &work, &is_new), "pool.py/work",
		   "the parent's handle gives work the same name");
	tap_ok(!is_new, "  and it is not new again");
	/* lines: 7 twice in the worker, once in the parent; 6 twice */
	src_live_pyname_line_seen(worker, &work, 7);
	src_live_pyname_line_seen(worker, &work, 7);
	src_live_pyname_line_seen(parent, &work, 7);
	src_live_pyname_line_seen(parent, &work, 6);
	src_live_pyname_line_seen(parent, &work, 6);
	tap_ok(src_live_pyname_hint(parent,
		"/Code/<python>/pool.py/work?line") == 7,
	       "?line: the line counted most over both handles (7: 3, 6: 2)");
	/* callers: mapstar under work 3 times, <module> once, top once */
	src_live_pyname_caller_seen(worker, &work, &mapstar);
	src_live_pyname_caller_seen(worker, &work, &mapstar);
	src_live_pyname_caller_seen(parent, &work, &mapstar);
	src_live_pyname_caller_seen(parent, &work, &script_mod);
	src_live_pyname_caller_seen(parent, &work, NULL);
	tap_ok(src_live_pyname_hint(worker, "/Code/<python>/pool.py/work"
		"?caller=/Code/<python>/multiprocessing:pool.py/mapstar") == 0.6,
	       "?caller=: mapstar called work in 3 of its 5 frames");
	tap_ok(src_live_pyname_hint(worker, "/Code/<python>/pool.py/work"
		"?caller=/Code/<python>/pool.py/<module>") == 0.2,
	       "  <module> in 1 of 5");
	tap_ok(src_live_pyname_hint(worker, "/Code/<python>/pool.py/work"
		"?caller=/Code/<python>/multiprocessing:pool.py/"
		"Pool._repopulate_pool_static") == 0,
	       "  a function never right under it: 0");
	tap_ok(src_live_pyname_hint(worker, "/Code/<python>/pool.py/work")
	       == -1 && src_live_pyname_hint(worker,
		"/Code/python3.11/<unknown>/main?line") == -1,
	       "a bare path, or a C function's, is no question here (-1)");
	src_live_pyname_free(parent);
	str_is(name_of(worker, &work, &is_new), "pool.py/work",
		   "the names live while a handle does");
	src_live_pyname_free(worker);
}

/* python3.11 prints its script's co_filename, then waits on stdin. */
static void script_path(void)
{
	char dir[] = "/tmp/pyname_table.XXXXXX", py[600], want[700] = "";
	char got[700];
	int in[2], out[2];
	pid_t pid;
	FILE *f;

	if (mkdtemp(dir) == NULL || pipe(in) < 0 || pipe(out) < 0) {
		tap_ok(0, "temp folder and pipes");
		return;
	}
	snprintf(py, sizeof(py), "%s/s.py", dir);
	f = fopen(py, "w");
	fprintf(f, "import sys\nprint(sys._getframe().f_code.co_filename, "
		"flush=True)\nsys.stdin.read()\n");
	fclose(f);
	pid = fork();
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);   /* stdin's end comes when the test closes it */
		close(out[0]);
		if (chdir(dir) == 0)
			execl(PY, PY, "-u", "-X", "dev", "./s.py", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	f = fdopen(out[0], "r");
	if (f == NULL || fgets(want, sizeof(want), f) == NULL)
		want[0] = '\0';
	want[strcspn(want, "\n")] = '\0';
	tap_ok(src_live_pyscript_path(pid, got, sizeof(got)),
	       "the script of `python3.11 -u -X dev ./s.py` is found");
	str_is(got, want, "  named as CPython names its code");
	close(in[1]);
	waitpid(pid, NULL, 0);
	if (f != NULL)
		fclose(f);
	unlink(py);
	rmdir(dir);
	tap_ok(!src_live_pyscript_path(getpid(), got, sizeof(got)) ||
	       strstr(got, ".py") == NULL,
	       "a program that is no python script gives none");
}

int main(void)
{
	first_seen_takes_it();
	shared();
	script_path();
	return tap_done();
}

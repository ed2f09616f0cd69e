/*
 * pyframes_live.c - eng_pyframes reads Debian's python3.11 (stripped)
 * running tests/pyframes/nested.py: the main thread's stack
 * (inner <- outer <- main <- <module>) and the second thread's
 * (worker <- threading's Thread.run ...) are exactly what CPython itself
 * wrote (qualnames, files, the line each spins at), the reads never
 * drop a stack of a thread that only spins, and the script's output is
 * byte-identical to a run that was not read.  Also the refusals: a
 * program that is not CPython, a process gone.
 *
 * Usage: pyframes_live NESTED_PY
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "eng_pyframes.h"
#include "tap.h"

#define PY "/usr/bin/python3.11"
#define MAXROWS 32

struct truth {
	pid_t tid;
	int n;
	char row[MAXROWS][1200];
};

static void nap_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static pid_t spawn(const char *script, const char *truth, const char *out)
{
	pid_t pid = fork();

	if (pid == 0) {
		if (freopen(out, "w", stdout) == NULL)
			_exit(126);
		execl(PY, PY, script, truth, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* The truth file, once the script has renamed it into place. */
static int read_truth(const char *path, struct truth t[2])
{
	FILE *f = NULL;
	char name[16];

	for (int i = 0; i < 3000 && f == NULL; i++) {
		f = fopen(path, "r");
		if (f == NULL)
			nap_ms(10);
	}
	if (f == NULL)
		return -1;
	for (int k = 0; k < 2; k++) {
		if (fscanf(f, "%15s %d %d\n", name, &t[k].tid, &t[k].n) != 3 ||
		    t[k].n > MAXROWS)
			return -1;
		for (int r = 0; r < t[k].n; r++) {
			if (fgets(t[k].row[r], sizeof(t[k].row[r]), f) == NULL)
				return -1;
			t[k].row[r][strcspn(t[k].row[r], "\n")] = '\0';
		}
	}
	fclose(f);
	return 0;
}

struct seen {
	const struct truth *t;
	int matched[2];     /* stacks read equal to the truth */
	int other[2];       /* stacks read of those threads that differ */
	char first_diff[2][1300];
};

static bool same(const struct eng_pystack *s, const struct truth *t,
		 char *diff, size_t len)
{
	char row[1200];

	if (s->nframes != t->n) {
		snprintf(diff, len, "%d frames, want %d", s->nframes, t->n);
		return false;
	}
	for (int i = 0; i < s->nframes; i++) {
		snprintf(row, sizeof(row), "%s\t%s\t%d", s->f[i].code->qualname,
			 s->f[i].code->file, s->f[i].line);
		if (strcmp(row, t->row[i]) != 0) {
			snprintf(diff, len, "frame %d: '%s', want '%s'", i, row,
				 t->row[i]);
			return false;
		}
	}
	return true;
}

static void on_stack(void *arg, const struct eng_pystack *s)
{
	struct seen *sn = arg;

	for (int k = 0; k < 2; k++) {
		char diff[1300];

		if (s->tid != sn->t[k].tid)
			continue;
		if (same(s, &sn->t[k], diff, sizeof(diff))) {
			sn->matched[k]++;
		} else {
			if (sn->other[k]++ == 0)
				snprintf(sn->first_diff[k],
					 sizeof(sn->first_diff[k]), "%s", diff);
		}
	}
}

static int wait_exit(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "r");
	char *b = calloc(1, 65536);

	*n = f && b ? fread(b, 1, 65535, f) : 0;
	if (f)
		fclose(f);
	return b;
}

static void check_refusals(void)
{
	struct eng_pyframes *pf = NULL;
	struct hunch_err err = { 0 };
	char want[512];
	pid_t pid;

	tap_eq(eng_pyframes_open(getpid(), &pf, &err), ENG_PYF_NOT_PYTHON,
	       "this test program is refused as not CPython");
	snprintf(want, sizeof(want), "pid %d: not a CPython program: neither "
		 "the executable nor a mapped libpython3.x.so defines "
		 "_PyRuntime and Py_Version", (int)getpid());
	tap_ok(strcmp(err.msg, want) == 0 && pf == NULL, "its reason: %s",
	       err.msg);
	/* no other CPython is installed to refuse: the reason's text */
	tap_ok(strcmp(eng_pyframes_why_text(ENG_PYF_VERSION), "a CPython whose "
		      "frames hunch cannot read: only 3.11's layout is "
		      "known") == 0, "the version refusal: %s",
	       eng_pyframes_why_text(ENG_PYF_VERSION));
	pid = fork();
	if (pid == 0)
		_exit(0);
	wait_exit(pid);
	tap_eq(eng_pyframes_open(pid, &pf, &err), ENG_PYF_NO_MAPS,
	       "a process gone is refused: %s", err.msg);
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/pyframes-XXXXXX", truth_a[128], truth_b[128];
	char out_a[128], out_b[128];
	struct truth t[2];
	struct eng_pyframes *pf = NULL;
	struct hunch_err err = { 0 };
	struct seen sn = { .t = t };
	pid_t pa, pb;
	size_t na, nb;
	char *a, *b;
	int rounds = 0;

	if (argc != 2 || mkdtemp(dir) == NULL)
		return fprintf(stderr, "usage: pyframes_live NESTED_PY\n"), 2;
	check_refusals();
	snprintf(truth_a, sizeof(truth_a), "%s/truth-read", dir);
	snprintf(truth_b, sizeof(truth_b), "%s/truth-plain", dir);
	snprintf(out_a, sizeof(out_a), "%s/out-read", dir);
	snprintf(out_b, sizeof(out_b), "%s/out-plain", dir);

	pa = spawn(argv[1], truth_a, out_a);
	if (!tap_ok(read_truth(truth_a, t) == 0, "%s wrote its stacks", PY)) {
		kill(pa, SIGKILL);
		return tap_done();
	}
	tap_eq(eng_pyframes_open(pa, &pf, &err), ENG_PYF_OK,
	       "%s is found to be CPython%s%s", PY, err.msg[0] ? ": " : "",
	       err.msg);
	if (pf == NULL) {
		kill(pa, SIGKILL);
		return tap_done();
	}
	tap_ok(strcmp(eng_pyframes_file(pf), PY) == 0 &&
	       strncmp(eng_pyframes_version(pf), "3.11.", 5) == 0,
	       "runtime in %s, version %s", eng_pyframes_file(pf),
	       eng_pyframes_version(pf));
	tap_ok(t[0].n == 4 && strncmp(t[0].row[0], "inner\t", 6) == 0 &&
	       strncmp(t[0].row[1], "outer\t", 6) == 0 &&
	       strncmp(t[0].row[2], "main\t", 5) == 0 &&
	       strncmp(t[0].row[3], "<module>\t", 9) == 0,
	       "main thread's truth: inner <- outer <- main <- <module>");
	tap_ok(t[1].n == 4 && strncmp(t[1].row[0], "worker\t", 7) == 0 &&
	       strncmp(t[1].row[1], "Thread.run\t", 11) == 0,
	       "second thread's truth: worker <- Thread.run <- ...");
	/* the threads reach their loops after the truth is written: wait
	 * for a read that matches, then read 100 times more */
	while (rounds++ < 3000 && (sn.matched[0] == 0 || sn.matched[1] == 0)) {
		sn.other[0] = sn.other[1] = 0;
		eng_pyframes_read(pf, NULL, 0, on_stack, &sn);
		if (sn.matched[0] == 0 || sn.matched[1] == 0)
			nap_ms(10);
	}
	tap_ok(sn.matched[0] > 0, "main thread %d read as: %s", (int)t[0].tid,
	       sn.matched[0] ? t[0].row[0] : sn.first_diff[0]);
	tap_ok(sn.matched[1] > 0, "second thread %d read as: %s", (int)t[1].tid,
	       sn.matched[1] ? t[1].row[0] : sn.first_diff[1]);
	memset(sn.matched, 0, sizeof(sn.matched));
	memset(sn.other, 0, sizeof(sn.other));
	memset(sn.first_diff, 0, sizeof(sn.first_diff));
	for (int i = 0; i < 100; i++) {
		eng_pyframes_read(pf, NULL, 0, on_stack, &sn);
		nap_ms(1);
	}
	tap_eq(sn.matched[0], 100, "100 more reads of the main thread: all "
	       "exact%s%s", sn.other[0] ? "; first other: " : "",
	       sn.first_diff[0]);
	tap_eq(sn.matched[1], 100, "100 more reads of the second thread: all "
	       "exact%s%s", sn.other[1] ? "; first other: " : "",
	       sn.first_diff[1]);
	tap_eq(eng_pyframes_stats(pf)->dropped, 0, "no stack dropped");
	tap_ok(eng_pyframes_stats(pf)->code_misses <= 12,
	       "code objects read once each (%llu read, %llu from the cache)",
	       (unsigned long long)eng_pyframes_stats(pf)->code_misses,
	       (unsigned long long)eng_pyframes_stats(pf)->code_hits);
	{
		pid_t only = t[1].tid;
		struct seen one = { .t = t };

		tap_eq(eng_pyframes_read(pf, &only, 1, on_stack, &one), 1,
		       "a read of one thread hands on one stack");
		tap_eq(one.matched[1], 1, "and it is that thread's");
	}
	kill(pa, SIGUSR1);
	tap_eq(wait_exit(pa), 0, "the script read exits 0 on SIGUSR1");
	tap_ok(eng_pyframes_read(pf, NULL, 0, on_stack, &sn) < 0,
	       "reading a process gone fails");
	eng_pyframes_close(pf);

	pb = spawn(argv[1], truth_b, out_b);
	tap_ok(read_truth(truth_b, t) == 0, "the run not read wrote its stacks");
	kill(pb, SIGUSR1);
	tap_eq(wait_exit(pb), 0, "the script not read exits 0 on SIGUSR1");
	a = slurp(out_a, &na);
	b = slurp(out_b, &nb);
	tap_ok(na == nb && na > 0 && memcmp(a, b, na) == 0,
	       "its output is byte-identical to the run not read (%zu bytes)",
	       na);
	free(a);
	free(b);
	unlink(truth_a);
	unlink(truth_b);
	unlink(out_a);
	unlink(out_b);
	rmdir(dir);
	return tap_done();
}

/*
 * pyframes_churn.c - eng_pyframes reading a CPython 3.11 whose stack
 * changes all the time (tests/pyframes/churn.py: calls and returns of
 * a, b, c up to 40 deep, a generator, a lambda): in reads of the
 * running target until 3000 stacks are handed on, every frame handed on is one of the script's
 * functions with its file and a line of it (a torn read is dropped,
 * never handed on as an invented frame), at most 1 stack in 1000 is
 * not a chain of calls the script makes from <module> (how many reads hand on a stack
 * depends on the load: printed).
 *
 * Usage: pyframes_churn CHURN_PY
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "eng_pyframes.h"
#include "tap.h"

#define PY "/usr/bin/python3.11"

struct seen {
	const char *file;
	int stacks, bad, frames, badchain;
	char first_bad[1200];
};

static const char *const names[] = {
	"<module>", "main", "a", "b", "c", "a.<locals>.<genexpr>",
	"b.<locals>.<lambda>", "on_usr1",
};

static bool known(const char *q)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(q, names[i]) == 0)
			return true;
	return false;
}

/* Who may call whom in churn.py (the signal handler runs on any). */
static bool caller_ok(const char *callee, const char *caller)
{
	static const char *const pairs[][2] = {
		{ "a", "c" }, { "a", "main" }, { "b", "a" }, { "c", "b" },
		{ "a.<locals>.<genexpr>", "a" }, { "b.<locals>.<lambda>", "b" },
		{ "main", "<module>" },
	};

	if (strcmp(callee, "on_usr1") == 0)
		return true;
	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++)
		if (strcmp(callee, pairs[i][0]) == 0 &&
		    strcmp(caller, pairs[i][1]) == 0)
			return true;
	return false;
}

static void on_stack(void *arg, const struct eng_pystack *s)
{
	struct seen *sn = arg;

	if (s->nframes > 0 &&
	    (strcmp(s->f[s->nframes - 1].code->qualname, "<module>") != 0 ||
	     s->nframes > 43) && sn->badchain++ < 3)
		tap_diag("a stack of %d frames from %s", s->nframes,
			 s->f[s->nframes - 1].code->qualname);
	for (int i = 0; i + 1 < s->nframes; i++)
		if (!caller_ok(s->f[i].code->qualname,
			       s->f[i + 1].code->qualname) &&
		    sn->badchain++ < 3)
			tap_diag("not a call: %s:%d called by %s:%d",
				 s->f[i].code->qualname, s->f[i].line,
				 s->f[i + 1].code->qualname, s->f[i + 1].line);

	sn->stacks++;
	for (int i = 0; i < s->nframes; i++) {
		const struct eng_pyframe *f = &s->f[i];
		bool ok = known(f->code->qualname) &&
			  strcmp(f->code->file, sn->file) == 0 &&
			  f->line >= 1 && f->line <= 40;

		sn->frames++;
		if (!ok && sn->bad++ == 0)
			snprintf(sn->first_bad, sizeof(sn->first_bad),
				 "%s %s:%d", f->code->qualname,
				 f->code->file, f->line);
	}
}

int main(int argc, char **argv)
{
	struct seen sn = { 0 };
	struct eng_pyframes *pf = NULL;
	const struct eng_pyframes_stats *st;
	int p[2], status, reads;
	char line[16] = "";
	pid_t pid;
	FILE *f;

	if (argc != 2 || pipe(p) < 0)
		return fprintf(stderr, "usage: pyframes_churn CHURN_PY\n"), 2;
	sn.file = argv[1];
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		execl(PY, PY, argv[1], (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	f = fdopen(p[0], "r");
	tap_ok(f && fgets(line, sizeof(line), f) && strcmp(line, "ready\n") == 0,
	       "churn.py runs");
	tap_eq(eng_pyframes_open(pid, &pf, NULL), ENG_PYF_OK, "CPython found");
	if (pf == NULL)
		return kill(pid, SIGKILL), tap_done();
	/* 3000 stacks handed on, however many reads that takes (under load
	 * a walk the reader is descheduled in fails its re-check: 517 of
	 * 3000 reads handed one on in a CI run, and 1 bad chain in 517 was
	 * no measure of 1 in 1000) */
	for (reads = 0; sn.stacks < 3000 && reads < 60000; reads++)
		eng_pyframes_read(pf, NULL, 0, on_stack, &sn);
	st = eng_pyframes_stats(pf);
	tap_diag("%d reads: %d stacks handed on (%d frames), %llu dropped",
		 reads, sn.stacks, sn.frames, (unsigned long long)st->dropped);
	tap_eq(sn.bad, 0, "every frame handed on is one of the script's "
	       "functions, in its file, at one of its lines%s%s",
	       sn.bad ? ": first other " : "", sn.first_bad);
	/* Reads of a running thread are never atomic.  The walk copies the
	 * pages under the top frame at once and copies them again to
	 * check; a frame not yet started below the top (a caller's slot
	 * reused while the copy held a returned frame) drops the stack.
	 * Measured 2026-11-29: 0 such stacks in 12 x 3000, loaded or not
	 * (41-51 in 3000 without that rule; about 20 in 3000 with one read
	 * per frame).  Bound: 1 in 1000. */
	tap_ok(sn.stacks >= 3000 && sn.badchain * 1000 <= sn.stacks,
	       "at most 1 stack in 1000 "
	       "is a chain churn.py does not make (%d of %d)", sn.badchain,
	       sn.stacks);
	/* how many reads succeed depends on the machine's load (a walk
	 * the reader is descheduled in fails its check): printed above,
	 * not asserted */
	tap_ok(sn.stacks > 0, "reads hand on stacks (%d)", sn.stacks);
	tap_ok(sn.frames > sn.stacks, "stacks of more than one frame are read");
	kill(pid, SIGUSR1);
	tap_ok(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	       WEXITSTATUS(status) == 0, "churn.py exits 0 on SIGUSR1");
	eng_pyframes_close(pf);
	return tap_done();
}

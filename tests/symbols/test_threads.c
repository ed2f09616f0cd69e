/*
 * test_threads.c - eng_unwind names each thread's start routine.
 *
 * The fixture (fixtures/symthreads.c) starts three threads with known
 * start routines that block in read(0).  For each build (PIE and
 * non-PIE) this test seizes every thread (PTRACE_SEIZE + INTERRUPT, as
 * the engine does), unwinds each one, names the returned pc with the
 * symbol reader, detaches, closes the fixture's stdin and checks that it
 * finishes normally.  The stripped copies ("-strip-all") have no symbol
 * for any routine: the pc libdw returns must lie in the function the
 * unwind table gives, "<module>+0x<offset>" at the unstripped build's
 * address of the routine.
 */
#include "sym_util.h"
#include "eng_unwind.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAXT 16

struct target {
	pid_t pid;
	int in, out;                /* its stdin (we write), stdout */
	FILE *outf;
	pid_t tids[MAXT];           /* from "<tid> <name>" lines */
	char names[MAXT][64];
	int n;
	pid_t seized[MAXT];
	int nseized;
};

static int start(struct target *t, const char *path)
{
	int in[2], out[2];

	memset(t, 0, sizeof(*t));
	if (pipe(in) < 0 || pipe(out) < 0)
		return -1;
	t->pid = fork();
	if (t->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	t->in = in[1];
	t->outf = fdopen(out[0], "r");
	return t->pid > 0 ? 0 : -1;
}

/* Read "<tid> <routine>" lines up to "ready". */
static int read_ready(struct target *t)
{
	char line[256];

	while (fgets(line, sizeof(line), t->outf)) {
		if (strncmp(line, "ready", 5) == 0)
			return 0;
		if (t->n < MAXT && sscanf(line, "%d %63s", &t->tids[t->n],
					  t->names[t->n]) == 2)
			t->n++;
	}
	return -1;
}

/* Seize and stop every thread listed in /proc/<pid>/task. */
static int seize_all(struct target *t)
{
	char dir[64];
	struct dirent *de;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/task", t->pid);
	d = opendir(dir);
	if (d == NULL)
		return -1;
	while ((de = readdir(d)) != NULL && t->nseized < MAXT) {
		pid_t tid = atoi(de->d_name);
		int st;

		if (tid <= 0)
			continue;
		if (ptrace(PTRACE_SEIZE, tid, 0, 0) < 0 ||
		    ptrace(PTRACE_INTERRUPT, tid, 0, 0) < 0 ||
		    waitpid(tid, &st, __WALL) != tid || !WIFSTOPPED(st)) {
			tap_diag("  seizing %d: %s", tid, strerror(errno));
			continue;
		}
		t->seized[t->nseized++] = tid;
	}
	closedir(d);
	return t->nseized;
}

static void detach_all(struct target *t)
{
	for (int i = 0; i < t->nseized; i++)
		ptrace(PTRACE_DETACH, t->seized[i], 0, 0);
	t->nseized = 0;
}

/* A stripped copy ("<build>-strip-all") names its functions from the
 * unwind table: "<module>+0x<offset>" at the unstripped build's address
 * of the routine (and of _start, the entry). */
static const char *stripped_name(const char *path, const char *sym)
{
	static char name[256];
	char full[4096];
	struct hunch_err err = { 0 };
	struct eng_image *img = NULL;
	const struct eng_func *f;
	size_t n = strlen(path);

	snprintf(full, sizeof(full), "%.*s", (int)(n - strlen("-strip-all")),
		 path);
	if (eng_image_open(full, &img, &err) < 0)
		return "(unstripped build missing)";
	f = eng_sym_lazy_func_by_name(img, sym);
	snprintf(name, sizeof(name), "%s+0x%lx", base(path),
		 f ? (unsigned long)f->addr : 0UL);
	eng_image_close(img);
	return name;
}

static bool is_stripped_copy(const char *path)
{
	size_t n = strlen(path), k = strlen("-strip-all");

	return n > k && strcmp(path + n - k, "-strip-all") == 0;
}

static const char *expected_name(const struct target *t, const char *path,
				 pid_t tid)
{
	const char *sym = "?";

	if (tid == t->pid)
		sym = "_start";
	for (int i = 0; i < t->n; i++)
		if (t->tids[i] == tid)
			sym = t->names[i];
	return is_stripped_copy(path) ? stripped_name(path, sym) : sym;
}

/* Name a runtime pc through the symbol reader: the image of the module
 * libdw found, at pc - bias - link base. */
static const char *name_pc(const struct eng_thread_start *ts, bool *entry)
{
	static char name[128];
	struct hunch_err err = { 0 };
	struct eng_image *img;
	const struct eng_func *f;
	uint64_t rel;

	*entry = false;
	if (ts->module == NULL || eng_image_open(ts->module, &img, &err) < 0)
		return "(no module)";
	rel = ts->pc - ts->bias - eng_image_link_base(img);
	f = eng_image_func_at(img, rel);
	snprintf(name, sizeof(name), "%s", f ? f->name : "(none)");
	*entry = f && f->addr == rel;
	eng_image_close(img);
	return name;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void check_threads(struct target *t, const char *kind,
			  const char *path)
{
	struct hunch_err err = { 0 };
	struct eng_unwinder *u;
	double t0 = now();
	int good = 0;

	if (!tap_ok(eng_unwind_open(t->pid, &u, &err) == 0,
		    "%s: unwinder opens pid", kind)) {
		tap_diag("  %s", err.msg);
		return;
	}
	for (int i = 0; i < t->nseized; i++) {
		struct eng_thread_start ts;
		const char *got;
		char want[256];
		bool entry;

		if (eng_unwind_thread_start(u, t->seized[i], &ts, &err) < 0) {
			tap_ok(0, "%s: thread %d unwinds", kind, t->seized[i]);
			tap_diag("  %s", err.msg);
			continue;
		}
		snprintf(want, sizeof(want), "%s",
			 expected_name(t, path, t->seized[i]));
		got = name_pc(&ts, &entry);
		/* libdw has no symbol in a stripped copy, so its pc is one
		 * inside the routine (at_entry false); the symbol reader
		 * names the function that holds it, which is what the
		 * where axis shows. */
		if (is_stripped_copy(path) ?
		    tap_ok(strcmp(got, want) == 0 && !ts.at_entry &&
			   ts.symbol == NULL,
			   "%s: thread %s runs in %s (no symbol for libdw)",
			   kind, t->seized[i] == t->pid ? "main" : "worker",
			   want) :
		    tap_ok(strcmp(got, want) == 0 && entry && ts.at_entry,
			   "%s: thread %s starts at the entry of %s", kind,
			   t->seized[i] == t->pid ? "main" : "worker", want))
			good++;
		else
			tap_diag("  tid %d: got %s (entry %d, %d frames, %s)",
				 t->seized[i], got, entry, ts.nframes,
				 ts.module ? ts.module : "-");
	}
	tap_diag("%s: %d threads unwound in %.2f ms (one unwinder)", kind,
		 t->nseized, (now() - t0) * 1e3);
	eng_unwind_close(u);
	tap_eq(good, 4, "%s: all four threads named", kind);
}

/* The one-shot form agrees with the reusable one. */
static void check_oneshot(struct target *t, const char *kind)
{
	struct hunch_err err = { 0 };
	struct eng_unwinder *u;
	struct eng_thread_start ts = { 0 };
	uint64_t pc = 0;
	pid_t tid = t->tids[0];

	eng_unwind_open(t->pid, &u, &err);
	if (u)
		eng_unwind_thread_start(u, tid, &ts, &err);
	eng_unwind_close(u);
	tap_ok(eng_unwind_thread_start_function(t->pid, tid, &pc, &err) == 0 &&
		       pc == ts.pc && pc != 0,
	       "%s: eng_unwind_thread_start_function agrees", kind);
}

/* Unwinding needs a ptrace-stopped thread and a live process: without
 * them the error names the thread or pid. */
static void check_errors(struct target *t, const char *kind)
{
	struct hunch_err err = { 0 };
	char want[64];
	uint64_t pc = 0;
	int r;

	r = eng_unwind_thread_start_function(t->pid, t->tids[0], &pc, &err);
	snprintf(want, sizeof(want), "thread %d of pid %d", t->tids[0],
		 t->pid);
	if (!tap_ok(r < 0 && strstr(err.msg, want), "%s: a thread not "
		    "stopped by us is refused by name", kind))
		tap_diag("  r=%d: %s", r, err.msg);
	r = eng_unwind_thread_start_function(999999999, 999999999, &pc, &err);
	if (!tap_ok(r < 0 && strstr(err.msg, "pid 999999999"),
		    "%s: a pid that does not exist is refused by name", kind))
		tap_diag("  r=%d: %s", r, err.msg);
}

static void run(const char *kind, const char *path)
{
	struct target t;
	char line[256] = "";
	int st = 0;

	if (!tap_ok(start(&t, path) == 0 && read_ready(&t) == 0 && t.n == 3,
		    "%s: fixture reports 3 workers", kind))
		goto out;
	tap_eq(seize_all(&t), 4, "%s: seized all 4 threads", kind);
	check_threads(&t, kind, path);
	check_oneshot(&t, kind);
out:
	detach_all(&t);
	if (t.n > 0)
		check_errors(&t, kind);
	close(t.in);   /* EOF: every read(0) returns, the program ends */
	if (t.outf && !fgets(line, sizeof(line), t.outf))
		line[0] = '\0';
	tap_ok(strcmp(line, "done 5\n") == 0, "%s: runs on after detach and "
	       "prints 'done 5'", kind);
	if (waitpid(t.pid, &st, 0) != t.pid)
		st = -1;
	tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: exits with 0",
	       kind);
	if (t.outf)
		fclose(t.outf);
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		run(base(argv[i]), argv[i]);
	return tap_done();
}

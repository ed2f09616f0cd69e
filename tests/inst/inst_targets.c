/*
 * inst_targets.c - real targets (tests/targets) run with entry and exit
 * counters on every function of the executable: C++ exceptions thrown
 * through instrumented frames, pthread_exit from deep in instrumented
 * calls, pthread_cancel of a thread blocked in read() inside an
 * instrumented function, mutex/condvar workers.  stdout and the exit
 * status must be exactly those of the uninstrumented program (the
 * ground truth in tests/targets/<case>.expected-out), and after removal
 * every code byte equals the file's.
 *
 *   inst_targets EXPECTED PROGRAM...
 */
#include "inst_util.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf = calloc(1, 1 << 16);
	size_t n;

	if (f == NULL || buf == NULL) {
		if (f)
			fclose(f);
		return buf;
	}
	n = fread(buf, 1, (1 << 16) - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

/* The libc functions hunch's default metrics watch (sync, I/O,
 * allocation), counted too. */
static const char *const libc_fns[] = {
	"pthread_mutex_lock", "pthread_mutex_unlock", "pthread_cond_wait",
	"pthread_cond_signal", "pthread_cond_broadcast", "pthread_create",
	"pthread_join", "pthread_exit", "pthread_cancel", "malloc", "free",
	"calloc", "realloc", "write", "read", "fwrite", "fflush", "puts",
	"printf", "fork", "waitpid", "dlopen", "dlclose", "nanosleep",
	"__cxa_finalize", NULL
};

static void run(const char *prog, const char *want)
{
	char *argv[] = { (char *)prog, NULL };
	const char *name = strrchr(prog, '/') ? strrchr(prog, '/') + 1 : prog;
	struct fn_ctr *c, *lc;
	size_t n, nl, nentry = 0, nexit = 0, lentry = 0;
	struct tgt t;
	int npts, lpts;

	if (!tap_ok(tgt_launch(&t, prog, argv) == 0, "%s: launched", name))
		return;
	close(t.to);       /* stdin at end of file, as /dev/null */
	t.to = -1;
	c = fns_prepare(&t, NULL, &n);
	npts = fns_instrument(&t, c, n, IM_COUNTERS);
	tap_ok(npts > 0, "%s: %d points in %zu functions", name, npts, n);
	lc = fns_prepare_lib(&t, "libc.so", libc_fns, &nl);
	lpts = fns_instrument(&t, lc, nl, IM_COUNTERS);
	tap_ok(lpts > 0, "%s: and %d points in %zu libc functions", name,
	       lpts, nl);
	for (size_t i = 0; i < nl; i++) {
		if (lc[i].why)
			tap_diag("%s: libc %s: refused: %s", name,
				 lc[i].f->name, lc[i].why);
		if (lc[i].trap_why)
			tap_diag("%s: libc %s: trap fallback: %s", name,
				 lc[i].f->name, lc[i].trap_why);
	}
	eng_ptrace_resume_all(t.p, NULL);
	tap_ok(tgt_wait_exit(&t, 60000) == 0 && t.status == 0,
	       "%s: exited 0 (%d)", name, t.status);
	tap_ok(strcmp(t.out, want) == 0, "%s: stdout identical", name);
	if (strcmp(t.out, want) != 0)
		tap_diag("got:\n%s", t.out);
	for (size_t i = 0; i < n; i++) {
		struct eng_var_agg a;

		eng_sampler_var_agg(t.smp, c[i].entry_var, &a);
		nentry += (size_t)a.sum;
		eng_sampler_var_agg(t.smp, c[i].exit_var, &a);
		nexit += (size_t)a.sum;
	}
	tap_ok(nentry > 0 && nexit > 0, "%s: %zu entries, %zu exits counted",
	       name, nentry, nexit);
	for (size_t i = 0; i < nl; i++) {
		struct eng_var_agg a;

		eng_sampler_var_agg(t.smp, lc[i].entry_var, &a);
		lentry += (size_t)a.sum;
	}
	tap_ok(lentry > 0, "%s: %zu libc calls counted", name, lentry);
	fns_free(c, n);
	fns_free(lc, nl);
	tgt_fini(&t);
}

int main(int argc, char **argv)
{
	char *want;

	if (argc < 3)
		return tap_ok(0, "usage: inst_targets EXPECTED PROGRAM..."),
		       tap_done();
	want = slurp(argv[1]);
	for (int i = 2; i < argc; i++)
		run(argv[i], want);
	free(want);
	return tap_done();
}

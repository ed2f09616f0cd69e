/*
 * inst_attach.c - instrumenting a process hunch attached to (the rtlib
 * loaded by dlopen, threads registering lazily through the trampolines'
 * slow path): the storm target, already running with 8 threads, gets
 * entry/exit counters on every function; they count; removal restores
 * every byte; after detach the program finishes with correct output.
 */
#include "inst_util.h"
#include "tap.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char expected[] =
	"thread 0: ok\nthread 1: ok\nthread 2: ok\nthread 3: ok\n"
	"thread 4: ok\nthread 5: ok\nthread 6: ok\nthread 7: ok\nend\n";

int main(int argc, char **argv)
{
	struct hunch_err err = { 0 };
	int in[2], out[2], errp[2], st, npts;
	struct fn_ctr *c;
	struct tgt t;
	char buf[4096] = "";
	size_t n, len = 0, counted = 0;
	ssize_t k;
	pid_t pid;

	if (argc != 2 || pipe(in) < 0 || pipe(out) < 0 || pipe(errp) < 0)
		return tap_ok(0, "usage: inst_attach STORM"), tap_done();
	pid = fork();
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(errp[1], 2);
		close(in[1]);
		close(out[0]);
		close(errp[0]);
		execl(argv[1], argv[1], (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	close(errp[1]);
	/* "ready" on stderr once its 8 threads are created (a fixed sleep
	 * could end first under load, and then attach before them) */
	while (len < sizeof buf - 1 && strstr(buf, "ready\n") == NULL &&
	       (k = read(errp[0], buf + len, sizeof buf - 1 - len)) > 0)
		buf[len += (size_t)k] = 0;
	tap_ok(strstr(buf, "ready\n") != NULL, "the program runs, its 8 "
	       "threads created");
	len = 0;
	memset(&t, 0, sizeof t);
	t.to = t.from = -1;
	if (!tap_ok(eng_shm_create(0, true, &t.shm, &err) == 0 &&
		    eng_sampler_create(t.shm, &t.smp, &err) == 0 &&
		    eng_attach(pid, getenv("HUNCHRT"), t.shm, &t.p, &err) == 0,
		    "attached with the rtlib (%s)", err.msg))
		return tap_done();
	eng_sampler_set_pid(t.smp, pid);
	tap_ok(eng_inst_create(t.p, t.shm, &t.in, &err) == 0,
	       "instrumentation manager (%s)", err.msg);
	eng_image_open(argv[1], &t.img, NULL);
	t.base = eng_solib_module(t.p, 0)->bias + eng_image_link_base(t.img);
	c = fns_prepare(&t, "sf_", &n);
	npts = fns_instrument(&t, c, n, IM_COUNTERS);
	tap_ok(npts >= 1000, "%d points instrumented in %zu functions", npts,
	       n);
	eng_ptrace_resume_all(t.p, NULL); /* attach left every thread stopped */
	tgt_pump(&t, 1500);
	for (size_t i = 0; i < n; i++) {
		struct eng_var_agg a;

		eng_sampler_var_agg(t.smp, c[i].entry_var, &a);
		counted += a.sum > 0;
	}
	tap_ok(counted > 900, "%zu functions counted calls (threads that "
	       "existed before attach registered from the trampolines)",
	       counted);
	tap_ok(eng_sampler_stats(t.smp)->live_threads >= 8, "%u threads "
	       "registered", eng_sampler_stats(t.smp)->live_threads);
	tap_ok(eng_inst_commit_remove_all(t.in, &err) == 0, "removed (%s)",
	       err.msg);
	tap_eq(tgt_code_mismatches(&t), 0, "every code byte equals the file's");
	tap_ok(eng_detach(t.p, &err) == 0, "detached (%s)", err.msg);
	if (write(in[1], "stop\n", 5) != 5)
		tap_ok(0, "write");
	while (len < sizeof buf - 1 &&
	       (k = read(out[0], buf + len, sizeof buf - 1 - len)) > 0)
		len += (size_t)k;
	buf[len] = 0;
	tap_ok(waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	       WEXITSTATUS(st) == 0, "the program exited 0");
	tap_ok(strcmp(buf, expected) == 0, "output identical");
	fns_free(c, n);
	tgt_fini(&t);
	return tap_done();
}

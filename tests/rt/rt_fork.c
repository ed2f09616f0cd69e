/*
 * rt_fork.c - a target whose threads count while its main thread forks
 * children that keep calling the primitives on the same handles (and
 * start threads of their own): the children are inert, so the parent's
 * counts stay exact; and a target that attaches the library with dlopen
 * + hunchrt_attach after its threads exist (they register lazily).
 */
#include "rt_harness.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define NOPS 1000000L

static void fork_test(const char *prog)
{
	struct rth h;
	char a[32], line[64];
	const char *args[] = { "fork", a, "2", "1000000", "8", NULL };
	uint64_t hc;
	uint32_t ic;
	long ok = -1;
	struct eng_var_agg ag;

	rth_init(&h, prog, 100, false);
	ic = rth_var(&h, ENG_VAR_COUNTER, &hc);
	snprintf(a, sizeof(a), "%llu", (unsigned long long)hc);
	rth_launch(&h, true, args);
	tap_ok(rth_wait_line(&h, "done", line, sizeof(line), 30000) == 0 &&
	       sscanf(line, "done %ld", &ok) == 1, "fork target finished");
	tap_eq(ok, 8, "8 children used the primitives and exited cleanly, "
	       "finding themselves without a thread index");
	rth_tick(&h);
	eng_sampler_var_agg(h.smp, ic, &ag);
	tap_eq(ag.sum, 2 * NOPS + 8, "the parent's count is exact (2 threads "
	       "x 10^6 + 8 by main); the children added nothing");
	tap_eq(eng_sampler_stats(h.smp)->threads_new, 3, "the children's "
	       "threads never registered in the parent's table");
	rth_send(&h, "exit\n");
	tap_ok(rth_wait_exit(&h, 5000) == 0 && WIFEXITED(h.status) &&
	       WEXITSTATUS(h.status) == 0, "fork target exited cleanly");
	rth_fini(&h);
}

static void attach_test(const char *prog)
{
	struct rth h;
	char a[32];
	const char *args[] = { "attach", NULL, a, "4", "1000000", NULL };
	uint64_t hc;
	uint32_t ic;
	struct eng_var_agg ag;
	struct hunch_err e = { 0 };

	rth_init(&h, prog, 100, true);
	ic = rth_var(&h, ENG_VAR_COUNTER, &hc);
	snprintf(a, sizeof(a), "%llu", (unsigned long long)hc);
	args[1] = eng_shm_name(h.shm);
	rth_launch(&h, false, args);
	tap_ok(rth_wait_line(&h, "done", NULL, 0, 30000) == 0,
	       "attach target finished");
	tap_eq(eng_shm_check_ready(h.shm, &e), 0, "dlopen + hunchrt_attach "
	       "answered the handshake");
	eng_shm_unlink(h.shm);
	rth_tick(&h);
	eng_sampler_var_agg(h.smp, ic, &ag);
	tap_eq(ag.sum, 4 * NOPS, "threads created before the attach "
	       "registered lazily; count exact");
	tap_eq(eng_sampler_stats(h.smp)->threads_new, 4, "exactly the 4 "
	       "threads that used primitives registered");
	rth_send(&h, "exit\n");
	tap_ok(rth_wait_exit(&h, 5000) == 0 && WIFEXITED(h.status) &&
	       WEXITSTATUS(h.status) == 0, "attach target exited cleanly");
	rth_fini(&h);
}

static void exec_test(const char *prog)
{
	struct rth h;
	char fd[16], line[128];
	const char *args[] = { "exec", fd, NULL };

	rth_init(&h, prog, 100, false);
	snprintf(fd, sizeof(fd), "%d", eng_shm_fd(h.shm));
	rth_launch(&h, true, args);
	tap_ok(rth_wait_line(&h, "env:", line, sizeof(line), 10000) == 0,
	       "exec'd child reported");
	tap_ok(strcmp(line, "env:none:none fd:closed lib:0") == 0,
	       "a program the target execs inherits no LD_PRELOAD, no "
	       "HUNCH_SHM_FD, no segment descriptor, no library (%s)", line);
	rth_wait_exit(&h, 5000);
	rth_fini(&h);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: rt_fork RT_PROG\n");
		return 2;
	}
	fork_test(argv[1]);
	attach_test(argv[1]);
	exec_test(argv[1]);
	return tap_done();
}

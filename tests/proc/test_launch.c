/*
 * test_launch.c - launching under hunch is invisible to the program:
 * output, exit status, death by signal, signal delivery, arguments,
 * environment, working directory and stdin are exactly as in a direct
 * run; the launch stops at main; the runtime library answers and is
 * scrubbed from the environment before main.
 */
#include "proc_util.h"

#include <sys/user.h>

static char *env_plain[] = { "HUNCH_TEST_VAR=a b  c", "PATH=/usr/bin:/bin",
			     NULL };

static void same_run(const char *what, char *const argv[], char *const env[],
		     const char *cwd, const char *in)
{
	struct run_result d, h;
	struct hunch_err err = { 0 };
	int rc;

	run_direct(argv, env, cwd, in, &d);
	rc = run_hunch(argv, env, cwd, in, &h, &err);
	if (!tap_ok(rc == 0, "%s: runs under hunch", what))
		tap_diag("error: %s", err.msg);
	if (!tap_ok(d.outlen == h.outlen && memcmp(d.out, h.out, d.outlen) == 0,
		    "%s: output identical (%zu bytes)", what, d.outlen))
		tap_diag("direct:\n%s\nhunch:\n%s", d.out, h.out);
	tap_ok(d.exited == h.exited && d.code == h.code && d.core == h.core,
	       "%s: %s %d%s both ways (hunch: %s %d%s)", what,
	       d.exited ? "exit" : "signal", d.code, d.core ? " core" : "",
	       h.exited ? "exit" : "signal", h.code, h.core ? " core" : "");
}

static void test_passthrough(void)
{
	char *pie = prog("p_echo"), *nopie = prog("p_echo_nopie");
	char *a1[] = { pie, "7", "hello world", "", "--x=1", NULL };
	char *a2[] = { nopie, "0", "é ü", NULL };

	same_run("PIE args/env/cwd/stdin", a1, env_plain, "/tmp",
		 "line one\nline two\n");
	same_run("non-PIE args/env/cwd/stdin", a2, env_plain, "/",
		 "x\n");
}

static bool is_pie(const char *path)
{
	unsigned char h[18] = { 0 };
	int fd = open(path, O_RDONLY);

	if (fd < 0 || read(fd, h, sizeof(h)) != (ssize_t)sizeof(h))
		h[16] = 0;
	if (fd >= 0)
		close(fd);
	return h[16] == 3;  /* ET_DYN */
}

static void test_stops_at_main(const char *name)
{
	char *path = prog(name);
	char *argv[] = { path, NULL };
	struct user_regs_struct r;
	struct hunch_err err = { 0 };
	struct run_result res;
	struct hrun h;
	pid_t tids[4];
	uint64_t main_file = sym_addr(path, "main"), bias;

	if (!tap_ok(launch(&h, argv, env_plain, NULL, false, &err) == 0,
		    "%s: launched", name)) {
		tap_diag("%s", err.msg);
		return;
	}
	bias = eng_solib_module(h.p, 0)->bias;
	tap_ok(eng_proc_stopped(h.p), "%s: stopped after launch", name);
	tap_eq(eng_proc_threads(h.p, tids, 4), 1, "%s: one thread", name);
	memset(&r, 0, sizeof(r));
	eng_regs_get(h.p, eng_proc_pid(h.p), &r, &err);
	tap_ok(r.rip == main_file + bias, "%s: rip 0x%llx is main (nm 0x%llx "
	       "+ bias 0x%llx)", name, (unsigned long long)r.rip,
	       (unsigned long long)main_file, (unsigned long long)bias);
	tap_eq(eng_proc_main(h.p), main_file + bias, "%s: main found from "
	       "_start", name);
	tap_ok(strcmp(eng_solib_module(h.p, 0)->path, path) == 0 ||
	       strstr(path, "/../") != NULL, "%s: module 0 is the program "
	       "(%s)", name, eng_solib_module(h.p, 0)->path);
	tap_ok(is_pie(path) ? bias != 0 : bias == 0,
	       "%s: bias 0x%llx fits PIE-ness", name, (unsigned long long)bias);
	memset(&res, 0, sizeof(res));
	eng_ptrace_resume_all(h.p, &err);
	feed(h.in, "");
	h.in = -1;
	finish(h.p, h.out, &res, 10000);
	tap_ok(res.exited && res.code == 0, "%s: then runs to exit 0", name);
	hrun_close(&h);
}

static void test_static(void)
{
	char *path = prog("p_static");
	char *argv[] = { path, "4", "static", NULL };
	struct hunch_err err = { 0 };
	struct hrun h;

	same_run("static program", argv, env_plain, "/tmp", "in\n");
	test_stops_at_main("p_static");
	if (launch(&h, argv, env_plain, NULL, false, &err) != 0)
		return;
	tap_ok(eng_proc_r_brk(h.p) == 0 && strstr(eng_proc_note(h.p),
						   "no r_debug"),
	       "static: no r_debug, and the note says so: %s",
	       eng_proc_note(h.p));
	eng_detach_kill(h.p);
	hrun_close(&h);
}

static void test_no_main(void)
{
	char *path = prog("p_nomain"), *argv[] = { path, NULL };
	struct user_regs_struct r;
	struct hunch_err err = { 0 };
	struct run_result res;
	struct hrun h;

	memset(&res, 0, sizeof(res));
	if (!tap_ok(launch(&h, argv, env_plain, NULL, false, &err) == 0,
		    "a program without main launches")) {
		tap_diag("%s", err.msg);
		return;
	}
	memset(&r, 0, sizeof(r));
	eng_regs_get(h.p, eng_proc_pid(h.p), &r, &err);
	tap_ok(eng_proc_main(h.p) == 0 && r.rip == eng_proc_entry(h.p) &&
	       r.rip != 0, "it is stopped at the entry point 0x%llx",
	       (unsigned long long)r.rip);
	tap_ok(strstr(eng_proc_note(h.p), "not found") &&
	       strstr(eng_proc_note(h.p), "entry point"),
	       "the note says why: %s", eng_proc_note(h.p));
	eng_ptrace_resume_all(h.p, &err);
	finish(h.p, h.out, &res, 5000);
	tap_ok(res.exited && res.code == 5 &&
	       strcmp(res.out, "no main here\n") == 0,
	       "and it runs normally from there");
	hrun_close(&h);
}

static void test_deaths(void)
{
	char *path = prog("p_crash");
	char *segv[] = { path, "segv", NULL }, *abrt[] = { path, "abort", NULL };
	char *kill9[] = { path, "kill", NULL }, *ex[] = { path, "exit", "42",
							  NULL };

	same_run("SIGSEGV", segv, env_plain, NULL, NULL);
	same_run("SIGABRT", abrt, env_plain, NULL, NULL);
	same_run("SIGKILL", kill9, env_plain, NULL, NULL);
	same_run("exit 42", ex, env_plain, NULL, NULL);
}

/* Send SIGUSR1, SIGINT, SIGTERM one after the other (each once the
 * previous has been reported), directly or under hunch. */
static void signal_run(bool under, struct run_result *r)
{
	char *path = prog("p_signals"), *argv[] = { path, NULL };
	static const int sigs[] = { SIGUSR1, SIGINT, SIGTERM };
	static const char *const names[] = { "SIGUSR1", "SIGINT", "SIGTERM" };
	struct hunch_err err = { 0 };
	struct hrun h;
	pid_t pid;
	int op[2], st;

	memset(r, 0, sizeof(*r));
	memset(&h, 0, sizeof(h));
	if (under) {
		if (launch(&h, argv, env_plain, NULL, false, &err) != 0) {
			tap_diag("launch: %s", err.msg);
			return;
		}
		eng_ptrace_resume_all(h.p, &err);
		pid = eng_proc_pid(h.p);
		op[0] = h.out;
	} else {
		if (pipe(op) != 0)
			return;
		pid = fork();
		if (pid == 0) {
			dup2(op[1], 1);
			execve(path, argv, env_plain);
			_exit(127);
		}
		close(op[1]);
	}
	wait_output(h.p, op[0], r, "ready", 5000);
	for (int i = 0; i < 3; i++) {
		kill(pid, sigs[i]);
		wait_output(h.p, op[0], r, names[i], 5000);
	}
	if (under) {
		finish(h.p, h.out, r, 5000);
		hrun_close(&h);
	} else {
		slurp(op[0], r);
		close(op[0]);
		waitpid(pid, &st, 0);
		r->exited = WIFEXITED(st);
		r->code = r->exited ? WEXITSTATUS(st) : WTERMSIG(st);
	}
}

static void test_signals(void)
{
	struct run_result d, h;
	int nsig = 0;

	signal_run(false, &d);
	signal_run(true, &h);
	if (!tap_ok(strcmp(d.out, h.out) == 0, "signals reach the handlers "
		    "exactly as without hunch"))
		tap_diag("direct:\n%s\nhunch:\n%s", d.out, h.out);
	tap_ok(h.exited && h.code == 3 && d.exited && d.code == 3,
	       "signal program exits 3 both ways");
	for (int i = 0; i < h.nev; i++)
		nsig += h.ev[i].kind == ENG_EV_SIGNAL;
	tap_eq(nsig, 3, "three ENG_EV_SIGNAL events reported");
}

/* Default action: SIGTERM without a handler kills, reported exactly. */
static void test_term_default(void)
{
	char *path = prog("p_crash"), *argv[] = { path, "wait", NULL };
	struct hunch_err err = { 0 };
	struct run_result r;
	struct hrun h;

	memset(&r, 0, sizeof(r));
	if (!tap_ok(launch(&h, argv, env_plain, NULL, false, &err) == 0,
		    "p_crash wait launched"))
		return;
	eng_ptrace_resume_all(h.p, &err);
	wait_output(h.p, h.out, &r, "mode wait", 5000);
	kill(eng_proc_pid(h.p), SIGTERM);
	finish(h.p, h.out, &r, 5000);
	tap_ok(!r.exited && r.code == SIGTERM && !r.core,
	       "SIGTERM from outside kills it: reported as signal %d", r.code);
	hrun_close(&h);
}

static void test_rtlib(void)
{
	char *path = prog("p_echo"), *plug = prog("libplug.so");
	char *argv[] = { path, NULL };
	char *user_pre;
	char *env_user[] = { "HUNCH_TEST_VAR=1", NULL, NULL };
	struct hunch_err err = { 0 };
	struct run_result r;
	struct hrun h;
	uint64_t ping, ret = 0, arg = 41;
	bool found = false;

	if (!tap_ok(launch(&h, argv, env_plain, NULL, true, &err) == 0,
		    "launch with the runtime library")) {
		tap_diag("%s", err.msg);
		return;
	}
	tap_eq(eng_shm_check_ready(h.shm, &err), 0, "handshake ready at main");
	ping = eng_shm_entry(h.shm, HUNCH_RT_ENTRY_PING);
	if (ping == 0 || eng_infcall(h.p, eng_proc_pid(h.p), ping, &arg, 1,
				     &ret, &err) != 0)
		tap_diag("infcall: %s", err.msg);
	tap_ok(ret == 42,
	       "infcall hunchrt_ping(41) returns %llu", (unsigned long long)ret);
	for (size_t i = 0; i < eng_solib_nmodules(h.p); i++)
		found |= strstr(eng_solib_module(h.p, i)->path,
				"libhunchrt.so") != NULL;
	tap_ok(found, "libhunchrt.so is in the module list");
	memset(&r, 0, sizeof(r));
	eng_ptrace_resume_all(h.p, &err);
	feed(h.in, NULL);
	h.in = -1;
	finish(h.p, h.out, &r, 10000);
	tap_ok(strstr(r.out, "env LD_PRELOAD=(unset)\nenv HUNCH_SHM_FD=(unset)\n"
		      "env HUNCH_HAD_LD_PRELOAD=(unset)\n"
		      "env HUNCH_ORIG_LD_PRELOAD=(unset)\n") != NULL,
	       "the environment at main has no trace of hunch");
	hrun_close(&h);

	if (asprintf(&user_pre, "LD_PRELOAD=%s", plug) < 0)
		return;
	env_user[1] = user_pre;
	if (!tap_ok(launch(&h, argv, env_user, NULL, true, &err) == 0,
		    "launch with rtlib and a user LD_PRELOAD")) {
		tap_diag("%s", err.msg);
		return;
	}
	tap_eq(eng_shm_check_ready(h.shm, &err), 0, "handshake ready with a "
	       "user LD_PRELOAD");
	memset(&r, 0, sizeof(r));
	eng_ptrace_resume_all(h.p, &err);
	feed(h.in, NULL);
	h.in = -1;
	finish(h.p, h.out, &r, 10000);
	tap_ok(strstr(r.out, user_pre) != NULL &&
	       strstr(r.out, "HUNCH_SHM_FD=(unset)") != NULL,
	       "the user's LD_PRELOAD survives, hunch's variables do not");
	hrun_close(&h);
}

static void test_path_search(void)
{
	char *dir = prog(""), *argv[] = { "p_echo", "3", NULL }, *old;
	struct run_result r;
	struct hunch_err err = { 0 };
	int rc;

	old = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
	setenv("PATH", dir, 1);
	rc = run_hunch(argv, env_plain, NULL, NULL, &r, &err);
	if (old)
		setenv("PATH", old, 1);
	tap_ok(rc == 0 && r.exited && r.code == 3, "a bare name is searched "
	       "in PATH (%s)", rc ? err.msg : "ok");
}

int main(void)
{
	test_passthrough();
	test_stops_at_main("p_echo");
	test_stops_at_main("p_echo_nopie");
	test_static();
	test_no_main();
	test_deaths();
	test_signals();
	test_term_default();
	test_rtlib();
	test_path_search();
	tap_ok(no_children(), "no child process left behind");
	return tap_done();
}

/*
 * test_attach.c - attaching to a running multi-threaded program: every
 * thread is seized and stopped, detach lets it run on to the right
 * output; attach with the runtime library (dlopen by inferior call)
 * answers the handshake and leaves no shm name behind; a second tracer
 * is told who holds the program; a SIGKILLed hunch leaves the program
 * running.
 */
#include "proc_util.h"

struct target {
	pid_t pid;
	int out;
	char stop[64];
	struct run_result r;
};

static void start(struct target *t)
{
	char *path = prog("p_threads");
	int op[2];

	memset(t, 0, sizeof(*t));
	snprintf(t->stop, sizeof(t->stop), "/tmp/hunch-proc-stop-%d",
		 (int)getpid());
	unlink(t->stop);
	if (pipe2(op, O_CLOEXEC) != 0)
		abort();
	t->pid = fork();
	if (t->pid == 0) {
		char *argv[] = { path, t->stop, NULL };

		dup2(op[1], 1);
		execv(path, argv);
		_exit(127);
	}
	close(op[1]);
	t->out = op[0];
	wait_output(NULL, t->out, &t->r, "ready\n", 5000);
}

/* Let it finish; true if it printed what it prints without hunch. */
static bool end_ok(struct target *t)
{
	int st = -1;
	bool ok;

	touch(t->stop);
	waitpid(t->pid, &st, 0);
	slurp(t->out, &t->r);
	close(t->out);
	unlink(t->stop);
	ok = WIFEXITED(st) && WEXITSTATUS(st) == 0 &&
	     strcmp(t->r.out, "ready\ndone 4 threads worked\n") == 0;
	if (!ok)
		tap_diag("status 0x%x, output: %s", st, t->r.out);
	return ok;
}

static int task_tids(pid_t pid, pid_t *tids, int max)
{
	char path[64];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	while (d && (de = readdir(d)) != NULL)
		if (atoi(de->d_name) > 0 && n < max)
			tids[n++] = atoi(de->d_name);
	if (d)
		closedir(d);
	return n;
}

/* The state letter and TracerPid of a thread. */
static char thread_state(pid_t pid, pid_t tid, int *tracer)
{
	char path[96], line[256], st = '?';
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid,
		 (int)tid);
	f = fopen(path, "r");
	*tracer = -1;
	while (f && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "State:", 6) == 0)
			st = line[7];
		if (strncmp(line, "TracerPid:", 10) == 0)
			*tracer = atoi(line + 10);
	}
	if (f)
		fclose(f);
	return st;
}

/* The thread's state once it is `want`, or the last one seen after
 * `ms`: a loaded machine may not have scheduled it there yet. */
static char wait_state(pid_t pid, char want, int ms)
{
	int tracer;
	char st = thread_state(pid, pid, &tracer);

	for (int i = 0; i < ms && st != want; i++) {
		usleep(1000);
		st = thread_state(pid, pid, &tracer);
	}
	return st;
}

static bool contains(const pid_t *a, size_t n, pid_t x)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] == x)
			return true;
	return false;
}

static void test_threads(void)
{
	struct target t;
	struct eng_proc *p = NULL;
	struct hunch_err err = { 0 };
	pid_t tids[32], task[32];
	size_t n;
	int nt, stopped = 0, traced = 0, tracer;

	start(&t);
	if (!tap_ok(eng_attach(t.pid, NULL, NULL, &p, &err) == 0,
		    "attach to p_threads")) {
		tap_diag("%s", err.msg);
		return;
	}
	n = eng_proc_threads(p, tids, 32);
	nt = task_tids(t.pid, task, 32);
	tap_eq(n, 5, "five threads listed");
	tap_ok(n == (size_t)nt && tids[0] == t.pid, "the list is "
	       "/proc/pid/task, leader first");
	for (int i = 0; i < nt; i++) {
		stopped += thread_state(t.pid, task[i], &tracer) == 't';
		traced += tracer == getpid() && contains(tids, n, task[i]);
	}
	tap_eq(stopped, nt, "every thread is in a tracing stop");
	tap_eq(traced, nt, "every thread is traced by us");
	tap_ok(eng_proc_stopped(p), "eng_proc_stopped says so too");
	tap_ok(eng_ptrace_resume_all(p, &err) == 0 &&
		       eng_ptrace_stop_all(p, &err) == 0,
	       "resume and stop again");
	tap_ok(eng_detach(p, &err) == 0, "detach");
	traced = 0;
	for (int i = 0; i < nt; i++) {
		char s = thread_state(t.pid, task[i], &tracer);

		traced += tracer != 0 || s == 't' || s == 'T';
	}
	tap_eq(traced, 0, "after detach no thread is traced or stopped");
	eng_proc_free(p);
	tap_ok(end_ok(&t), "the program runs on to its normal output and "
	       "exit 0");
}

static void test_inject(void)
{
	struct target t;
	struct eng_proc *p = NULL;
	struct eng_shm *shm = NULL;
	struct hunch_err err = { 0 };
	uint64_t ping, ret = 0, arg = 41;
	bool found = false;

	start(&t);
	if (eng_shm_create(0, true, &shm, &err) != 0) {
		tap_ok(0, "create a named segment: %s", err.msg);
		return;
	}
	tap_eq(shm_leftovers(), 1, "the named segment exists before attach");
	if (!tap_ok(eng_attach(t.pid, rtlib(), shm, &p, &err) == 0,
		    "attach and inject the runtime library"))
		tap_diag("%s", err.msg);
	tap_eq(eng_shm_check_ready(shm, &err), 0, "handshake ready");
	tap_eq(shm_leftovers(), 0, "the shm name is gone from /dev/shm");
	ping = eng_shm_entry(shm, HUNCH_RT_ENTRY_PING);
	if (p != NULL && ping != 0)
		eng_infcall(p, t.pid, ping, &arg, 1, &ret, &err);
	tap_eq(ret, 42, "hunchrt_ping(41) in the attached program");
	for (size_t i = 0; p && i < eng_solib_nmodules(p); i++)
		found |= strstr(eng_solib_module(p, i)->path,
				"libhunchrt.so") != NULL;
	tap_ok(found, "libhunchrt.so appears in the module list");
	if (p != NULL) {
		tap_ok(eng_detach(p, &err) == 0, "detach");
		eng_proc_free(p);
	}
	eng_shm_destroy(shm);
	tap_ok(end_ok(&t), "the program finishes normally");
}

/* Injection while the only thread sits in read(): dlopen runs as an
 * inferior call inside the system call, which then restarts. */
static void test_inject_in_read(void)
{
	char *path = prog("p_block");
	struct eng_proc *p = NULL;
	struct eng_shm *shm = NULL;
	struct hunch_err err = { 0 };
	struct run_result r;
	int ip[2], op[2], st;
	pid_t kid;

	memset(&r, 0, sizeof(r));
	if (pipe2(ip, O_CLOEXEC) || pipe2(op, O_CLOEXEC))
		return;
	kid = fork();
	if (kid == 0) {
		dup2(ip[0], 0);
		dup2(op[1], 1);
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	close(ip[0]);
	close(op[1]);
	wait_output(NULL, op[0], &r, "ready 0\n", 5000);
	/* (blocked: asleep after "ready", not a fixed 50 ms later) */
	wait_state(kid, 'S', 5000);
	eng_shm_create(0, true, &shm, &err);
	if (!tap_ok(eng_attach(kid, rtlib(), shm, &p, &err) == 0,
		    "inject while blocked in read()"))
		tap_diag("%s", err.msg);
	tap_eq(eng_shm_check_ready(shm, &err), 0, "handshake ready");
	if (p != NULL) {
		eng_detach(p, &err);
		eng_proc_free(p);
	}
	eng_shm_destroy(shm);
	if (write(ip[1], "after\n", 6) != 6)
		tap_diag("write failed");
	close(ip[1]);
	waitpid(kid, &st, 0);
	slurp(op[0], &r);
	close(op[0]);
	tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0 &&
	       strcmp(r.out, "ready 0\ngot: after\neof\n") == 0,
	       "read() restarted and got the next line (%s)", one_line(r.out));
}

/* A job-control stopped program stays stopped through attach, rtlib
 * injection (inferior calls on its threads) and detach. */
static void test_stopped_program(void)
{
	char *path = prog("p_block");
	struct eng_proc *p = NULL;
	struct eng_shm *shm = NULL;
	struct hunch_err err = { 0 };
	struct run_result r;
	int ip[2], op[2], st;
	char s1, s2;
	pid_t kid;

	memset(&r, 0, sizeof(r));
	if (pipe2(ip, O_CLOEXEC) || pipe2(op, O_CLOEXEC))
		return;
	kid = fork();
	if (kid == 0) {
		dup2(ip[0], 0);
		dup2(op[1], 1);
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	close(ip[0]);
	close(op[1]);
	wait_output(NULL, op[0], &r, "ready 0\n", 5000);
	kill(kid, SIGSTOP);
	waitpid(kid, &st, WUNTRACED);
	eng_shm_create(0, true, &shm, &err);
	if (!tap_ok(eng_attach(kid, rtlib(), shm, &p, &err) == 0,
		    "attach and inject into a SIGSTOPped program"))
		tap_diag("%s", err.msg);
	tap_eq(eng_shm_check_ready(shm, &err), 0, "handshake ready");
	if (write(ip[1], "later\n", 6) != 6)
		tap_diag("write failed");
	if (p != NULL) {
		eng_ptrace_resume_all(p, &err);
		wait_output(p, op[0], &r, "got: later\n", 300);
		tap_ok(strstr(r.out, "got: later") == NULL, "resumed by hunch, "
		       "it stays job-control stopped");
		eng_detach(p, &err);
		eng_proc_free(p);
	}
	eng_shm_destroy(shm);
	/* Stopped is the end state: wait for it rather than 50 ms (a
	 * program wrongly resumed reads "later" and never gets there). */
	s1 = wait_state(kid, 'T', 5000);
	wait_output(NULL, op[0], &r, "got: later\n", 300);
	tap_ok(s1 == 'T' && strstr(r.out, "got: later") == NULL,
	       "after detach it is still stopped (state %c)", s1);
	kill(kid, SIGCONT);
	wait_output(NULL, op[0], &r, "got: later\n", 5000);
	s2 = thread_state(kid, kid, &st);
	tap_ok(strstr(r.out, "got: later\n") != NULL, "SIGCONT resumes it "
	       "(state %c) and read() returns the line", s2);
	close(ip[1]);
	waitpid(kid, &st, 0);
	close(op[0]);
	tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "exit 0");
}

/* A second hunch (a child process) tries while we hold the program. */
static void test_already_traced(void)
{
	struct target t;
	struct eng_proc *p = NULL;
	struct hunch_err err = { 0 };
	char msg[HUNCH_ERR_MAX] = "", want[64];
	int ep[2], st;
	pid_t kid;

	start(&t);
	if (eng_attach(t.pid, NULL, NULL, &p, &err) != 0 || pipe(ep) != 0) {
		tap_ok(0, "first attach: %s", err.msg);
		return;
	}
	kid = fork();
	if (kid == 0) {
		struct eng_proc *q = NULL;
		int rc = eng_attach(t.pid, NULL, NULL, &q, &err);

		if (write(ep[1], err.msg, strlen(err.msg) + 1) < 0)
			_exit(3);
		_exit(rc == -EPERM ? 0 : 1);
	}
	close(ep[1]);
	if (read(ep[0], msg, sizeof(msg) - 1) < 0)
		msg[0] = '\0';
	close(ep[0]);
	waitpid(kid, &st, 0);
	snprintf(want, sizeof(want), "already traced by process %d",
		 (int)getpid());
	tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "second attach fails "
	       "with EPERM");
	tap_ok(strstr(msg, want) != NULL && strstr(msg, "detach that tracer")
	       && strstr(msg, "process"), "it names the tracer and the fix: %s",
	       msg);
	eng_detach(p, &err);
	eng_proc_free(p);
	tap_ok(end_ok(&t), "the program finishes normally after all that");
}

/* hunch SIGKILLed while attached: the kernel detaches, the program
 * (which never meets our r_brk int3: it loads no library) runs on. */
static void test_tracer_killed(void)
{
	struct target t;
	char c;
	int sp[2], st;
	pid_t kid;

	start(&t);
	if (pipe(sp) != 0)
		return;
	kid = fork();
	if (kid == 0) {
		struct eng_proc *p = NULL;
		struct hunch_err err = { 0 };

		if (eng_attach(t.pid, NULL, NULL, &p, &err) != 0 ||
		    write(sp[1], "a", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(sp[1]);
	tap_ok(read(sp[0], &c, 1) == 1, "a helper attached (and stopped it)");
	close(sp[0]);
	kill(kid, SIGKILL);
	waitpid(kid, &st, 0);
	tap_ok(end_ok(&t), "after the helper is SIGKILLed the program runs "
	       "on and finishes normally");
}

int main(void)
{
	shm_leftovers();  /* the baseline */
	test_threads();
	test_inject();
	test_inject_in_read();
	test_stopped_program();
	test_already_traced();
	test_tracer_killed();
	tap_ok(no_children(), "no child process left behind");
	tap_eq(shm_leftovers(), 0, "no /dev/shm/hunch-* object left behind");
	return tap_done();
}

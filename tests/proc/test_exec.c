/*
 * test_exec.c - following execve (engine/eng_exec.c, eng_proc.h): with
 * eng_exec_follow on, nothing is written into the program and no
 * inferior call runs from the exec event until the client lets go (the
 * exact refusals); the new image is held stopped at its entry point with
 * its libraries loaded (ENG_EV_EXEC_ENTRY) and stays held while events
 * are polled; the runtime library is loaded there by dlopen and the
 * program runs on as without hunch; a static program has no dlopen: the
 * refusal says so and the program runs on; a script is launched as the
 * kernel runs it: stopped at its interpreter's main, then following the
 * exec its last line makes, with the output of a run without hunch.
 */
#include "proc_util.h"

#include <sys/user.h>

static void tap_eq_str(const char *got, const char *want, const char *what)
{
	if (!tap_ok(strcmp(got, want) == 0, "%s", what))
		tap_diag("  got \"%s\", want \"%s\"", got, want);
}

static char *env[] = { "PATH=/usr/bin:/bin", NULL };

/* Poll events until one of `kind` has arrived (recording all). */
static bool wait_kind(struct hrun *h, struct run_result *r,
		      enum eng_event_kind kind, int ms)
{
	long long end = ms_now() + ms;

	while (r->nkind[kind] == 0 && ms_now() < end &&
	       !eng_proc_ended(h->p))
		wait_output(h->p, h->out, r, "\001never\001", 20);
	return r->nkind[kind] > 0;
}

static char task_state(pid_t pid)
{
	char path[64], buf[512], *s;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (f == NULL)
		return '?';
	s = fgets(buf, sizeof(buf), f);
	fclose(f);
	s = s ? strrchr(buf, ')') : NULL;
	return s ? s[2] : '?';
}

static bool maps_have(pid_t pid, const char *what)
{
	char path[64], line[4096];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	while (f != NULL && fgets(line, sizeof(line), f) != NULL)
		found |= strstr(line, what) != NULL;
	if (f != NULL)
		fclose(f);
	return found;
}

/* The fence, right after the exec event. */
static void check_fence(struct hrun *h)
{
	struct hunch_err err = { 0 };
	pid_t pid = eng_proc_pid(h->p);
	char want[256];
	uint64_t ret = 0;
	uint8_t b = 0x90;
	int rc;

	rc = eng_mem_write(h->p, eng_proc_entry(h->p), &b, 1, &err);
	snprintf(want, sizeof(want), "process %d replaced its image (exec): "
		 "hunch does not write into it until it has read the new one",
		 (int)pid);
	tap_eq(rc, -ESTALE, "a write after the exec is refused");
	tap_eq_str(err.msg, want, "and says why");
	memset(&err, 0, sizeof(err));
	rc = eng_ptrace_stop_all(h->p, &err);
	tap_eq(rc, 0, "the program can be stopped meanwhile");
	rc = eng_infcall(h->p, pid, eng_proc_entry(h->p), NULL, 0, &ret, &err);
	snprintf(want, sizeof(want), "process %d replaced its image (exec): "
		 "hunch does not call a function in it until it has read the "
		 "new one", (int)pid);
	tap_eq(rc, -ESTALE, "an inferior call after the exec is refused");
	tap_eq_str(err.msg, want, "and says why");
	eng_ptrace_resume_all(h->p, NULL);
}

static void test_follow(void)
{
	char *path = prog("p_exec"), *argv[] = { path, NULL };
	struct hunch_err err = { 0 };
	struct user_regs_struct regs;
	struct eng_shm *shm = NULL;
	struct run_result r;
	struct hrun h;
	pid_t pid;
	int rc;

	memset(&r, 0, sizeof(r));
	if (launch(&h, argv, env, NULL, true, &err) != 0) {
		tap_ok(0, "launch p_exec with the runtime library: %s", err.msg);
		return;
	}
	pid = eng_proc_pid(h.p);
	eng_exec_follow(h.p, true);
	eng_ptrace_resume_all(h.p, &err);
	tap_ok(wait_kind(&h, &r, ENG_EV_EXEC, 5000), "ENG_EV_EXEC");
	check_fence(&h);
	tap_ok(wait_kind(&h, &r, ENG_EV_EXEC_ENTRY, 5000),
	       "ENG_EV_EXEC_ENTRY: the new image reached its entry point");
	memset(&regs, 0, sizeof(regs));
	rc = eng_regs_get(h.p, pid, &regs, NULL);
	tap_ok(rc == 0 && regs.rip == eng_proc_entry(h.p) &&
	       eng_proc_entry(h.p) != 0,
	       "held stopped at the entry point 0x%llx",
	       (unsigned long long)regs.rip);
	tap_ok(eng_solib_nmodules(h.p) > 1 &&
	       strstr(eng_solib_module(h.p, 1)->path, "ld-linux") == NULL,
	       "its libraries are loaded (module 1: %s)",
	       eng_solib_nmodules(h.p) > 1 ? eng_solib_module(h.p, 1)->path :
	       "none");
	wait_output(h.p, h.out, &r, "\001never\001", 200);
	eng_ptrace_resume_all(h.p,
			      NULL); /* a client's resume does not free it */
	wait_output(h.p, h.out, &r, "\001never\001", 200);
	tap_ok(task_state(pid) == 't' && strcmp(r.out, "before exec\n") == 0,
	       "still held 0.4 s later (state %c), nothing printed since",
	       task_state(pid));
	if (eng_shm_create(0, true, &shm, &err) < 0) {
		tap_ok(0, "named segment: %s", err.msg);
		return;
	}
	tap_eq(eng_exec_load_rtlib(h.p, rtlib(), shm, &err), 0,
		   "the runtime library is loaded at the entry point");
	tap_ok(maps_have(pid, "libhunchrt.so"), "it is mapped in /bin/echo");
	tap_eq(eng_exec_release(h.p, &err), 0, "released");
	finish(h.p, h.out, &r, 5000);
	tap_ok(r.exited && r.code == 0 &&
	       strcmp(r.out, "before exec\nafter exec\n") == 0,
	       "output and exit as without hunch");
	hrun_close(&h);
	eng_shm_destroy(shm);
}

static void test_static(void)
{
	char *path = prog("p_exec"), *st = prog("p_static");
	char *argv[] = { path, st, "0", NULL };
	struct hunch_err err = { 0 };
	struct eng_shm *shm = NULL;
	struct run_result r;
	struct hrun h;
	char want[256];

	memset(&r, 0, sizeof(r));
	if (launch(&h, argv, env, NULL, true, &err) != 0) {
		tap_ok(0, "launch p_exec p_static: %s", err.msg);
		return;
	}
	eng_exec_follow(h.p, true);
	eng_ptrace_resume_all(h.p, &err);
	tap_ok(wait_kind(&h, &r, ENG_EV_EXEC_ENTRY, 5000) &&
	       r.nkind[ENG_EV_EXEC] == 1,
	       "a static image: exec, then held at its entry point");
	if (eng_shm_create(0, true, &shm, &err) < 0) {
		tap_ok(0, "named segment: %s", err.msg);
		return;
	}
	snprintf(want, sizeof(want), "cannot load the runtime library into "
		 "process %d: it has no dynamic linker (a static program): "
		 "attach without the runtime library", (int)eng_proc_pid(h.p));
	tap_eq(eng_exec_load_rtlib(h.p, rtlib(), shm, &err), -ENOENT,
		   "no runtime library in a static program");
	tap_eq_str(err.msg, want, "and the error says so");
	tap_eq(eng_exec_release(h.p, &err), 0, "released");
	close(h.in);   /* p_echo reads its stdin to the end */
	h.in = -1;
	finish(h.p, h.out, &r, 5000);
	tap_ok(r.exited && r.code == 0 && strstr(r.out, "before exec\n") ==
	       r.out && strstr(r.out, "arg 1=0\n") != NULL &&
	       strstr(r.out, "env LD_PRELOAD=(unset)\n") != NULL,
	       "the static program runs to its end, exit 0, with no "
	       "LD_PRELOAD inherited");
	hrun_close(&h);
	eng_shm_destroy(shm);
}

/* A launcher script, `#!/bin/sh` then `exec /bin/echo ...`: launched
 * with the runtime library, stopped at the interpreter's main; the exec
 * is followed; the output is the script's. */
static void test_script(void)
{
	static const char text[] = "#!/bin/sh\n"
		"exec /bin/echo from-script \"$@\"\n";
	char dir[] = "/tmp/hunch-script-XXXXXX", path[64], link[64], exe[256];
	char *argv[] = { path, "a", "b c", NULL };
	struct hunch_err err = { 0 };
	struct run_result r;
	struct hrun h;
	ssize_t n;
	FILE *f;

	memset(&r, 0, sizeof(r));
	snprintf(path, sizeof(path), "%s/run.sh", mkdtemp(dir));
	if ((f = fopen(path, "w")) == NULL || fputs(text, f) < 0 ||
	    fclose(f) != 0 || chmod(path, 0755) != 0) {
		tap_ok(0, "write %s", path);
		return;
	}
	tap_eq(launch(&h, argv, env, NULL, true, &err), 0,
	       "a #!/bin/sh script is launched with the runtime library");
	if (h.p == NULL) {
		tap_diag("  %s", err.msg);
		return;
	}
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)eng_proc_pid(h.p));
	n = readlink(link, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	tap_ok(strstr(exe, "sh") != NULL && strstr(exe, "run.sh") == NULL,
	       "stopped in its interpreter (%s)", exe);
	tap_ok(maps_have(eng_proc_pid(h.p), "libhunchrt.so"),
	       "with the runtime library in it");
	eng_exec_follow(h.p, true);
	eng_ptrace_resume_all(h.p, &err);
	tap_ok(wait_kind(&h, &r, ENG_EV_EXEC_ENTRY, 5000) &&
	       r.nkind[ENG_EV_EXEC] == 1,
	       "the script's exec of /bin/echo is followed");
	eng_exec_release(h.p, &err);
	finish(h.p, h.out, &r, 5000);
	tap_eq_str(r.out, "from-script a b c\n", "the script's output");
	tap_ok(r.exited && r.code == 0, "exit 0");
	hrun_close(&h);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	test_follow();
	test_static();
	test_script();
	return tap_done();
}

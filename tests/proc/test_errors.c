/*
 * test_errors.c - every failure to launch or attach says what failed, on
 * what, and what to do, and leaves nothing behind: no child process (not
 * even a zombie) and no /dev/shm/hunch-* object.
 */
#include "proc_util.h"

#include <sys/stat.h>

static char *env[] = { "PATH=/usr/bin:/bin", NULL };
static char tmpdir[64];

static char *fixture(const char *name, const void *bytes, size_t len,
		     mode_t mode)
{
	char *path;
	int fd;

	if (asprintf(&path, "%s/%s", tmpdir, name) < 0)
		abort();
	fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, mode);
	if (fd < 0 || write(fd, bytes, len) != (ssize_t)len)
		abort();
	close(fd);
	chmod(path, mode);
	return path;
}

static void launch_fails(const char *what, const char *path,
			 const char *rt, const char *want1, const char *want2)
{
	char *argv[] = { (char *)path, NULL };
	struct eng_launch_opts o;
	struct eng_proc *p = NULL;
	struct eng_shm *shm = NULL;
	struct hunch_err err = { 0 };
	int rc;

	memset(&o, 0, sizeof(o));
	o.path = path;
	o.argv = argv;
	o.envp = env;
	o.stdin_fd = o.stdout_fd = o.stderr_fd = -1;
	if (rt != NULL) {
		eng_shm_create(0, false, &shm, &err);
		o.rtlib_path = rt;
		o.shm = shm;
	}
	rc = eng_launch(&o, &p, &err);
	tap_ok(rc < 0 && p == NULL && err.code == rc, "%s: refused (%d)",
	       what, rc);
	tap_ok(strstr(err.msg, rt ? rt : path) != NULL &&
	       strstr(err.msg, want1) != NULL &&
	       (want2 == NULL || strstr(err.msg, want2) != NULL),
	       "%s: message names it and says what to do: %s", what, err.msg);
	eng_shm_destroy(shm);
	tap_ok(no_children(), "%s: no child left", what);
}

/* Scripts whose #! line leads to nothing hunch (or the kernel) could
 * run: each message names the script and its interpreter. */
static void script_fails(const unsigned char *elf32)
{
	char line[256], *s;

	launch_fails("script, missing interpreter", fixture("noint.sh",
		     "#!/nonexistent/hunch-interp -x\necho hi\n", 39, 0755),
		     NULL, "its interpreter /nonexistent/hunch-interp",
		     "fix the #! line");
	launch_fails("script, no interpreter", fixture("empty.sh",
		     "#!  \necho hi\n", 13, 0755), NULL,
		     "names no interpreter", "#!/path/to/interpreter");
	snprintf(line, sizeof(line), "#!%s\n", fixture("elf32", elf32, 52,
		 0755));
	launch_fails("script, 32-bit interpreter", fixture("i386.sh", line,
		     strlen(line), 0755), NULL, "its interpreter",
		     "32-bit i386");
	/* six scripts, each the interpreter of the next */
	s = fixture("deep0.sh", "#!/bin/sh\n", 10, 0755);
	for (int i = 1; i <= 5; i++) {
		char name[16];

		snprintf(line, sizeof(line), "#!%s\n", s);
		snprintf(name, sizeof(name), "deep%d.sh", i);
		s = fixture(name, line, strlen(line), 0755);
	}
	launch_fails("script, interpreters 5 deep", s, NULL,
		     "more than 4 levels deep", NULL);
}

static void test_launch_errors(void)
{
	static const char text[] = "hello, I am not a program\n";
	unsigned char elf32[52] = { 0x7f, 'E', 'L', 'F', 1, 1, 1, 0 };
	char *echo = prog("p_echo"), *copy;
	char buf[65536];
	int fd;
	ssize_t n;

	elf32[16] = 2;   /* ET_EXEC */
	elf32[18] = 3;   /* EM_386 */
	elf32[20] = 1;   /* EV_CURRENT */
	launch_fails("missing program", "/nonexistent/hunch-prog",
		     NULL, "no such file", "check the path");
	launch_fails("missing program in PATH", "hunch-no-such-prog", NULL,
		     "no such program in PATH", "give a path");
	launch_fails("text file", fixture("text", text, sizeof(text) - 1,
					  0755), NULL, "not an ELF",
		     "x86-64");
	script_fails(elf32);
	launch_fails("32-bit ELF", fixture("elf32", elf32, sizeof(elf32),
					   0755), NULL, "32-bit i386",
		     "only handles 64-bit x86-64");
	launch_fails("directory", tmpdir, NULL, "is a directory", NULL);
	fd = open(echo, O_RDONLY);
	n = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;
	if (fd >= 0)
		close(fd);
	copy = fixture("noexec", buf, n > 0 ? (size_t)n : 0, 0644);
	launch_fails("not executable", copy, NULL, "not executable",
		     "chmod +x");
	launch_fails("missing runtime library", echo,
		     "/nonexistent/libhunchrt.so", "runtime library",
		     "No such file");
	launch_fails("runtime library not an ELF", echo,
		     fixture("librt.so", text, sizeof(text) - 1, 0644),
		     "bad runtime library", "not an ELF");
}

static void attach_fails(const char *what, pid_t pid, const char *rt,
			 const char *want1, const char *want2)
{
	struct eng_proc *p = NULL;
	struct eng_shm *shm = NULL;
	struct hunch_err err = { 0 };
	int rc;

	if (rt != NULL)
		eng_shm_create(0, true, &shm, &err);
	rc = eng_attach(pid, rt, shm, &p, &err);
	tap_ok(rc < 0 && p == NULL, "%s: refused (%d)", what, rc);
	tap_ok(strstr(err.msg, want1) != NULL &&
	       (want2 == NULL || strstr(err.msg, want2) != NULL),
	       "%s: %s", what, err.msg);
	eng_shm_destroy(shm);
	tap_eq(shm_leftovers(), 0, "%s: no shm object left", what);
}

static pid_t dead_pid(void)
{
	pid_t kid = fork();
	int st;

	if (kid == 0)
		_exit(0);
	waitpid(kid, &st, 0);
	return kid;
}

/* As user nobody, attach to our (root's) process: refused with the
 * owner named. */
static void other_user(pid_t target)
{
	char msg[HUNCH_ERR_MAX] = "";
	int ep[2], st;
	pid_t kid;

	if (pipe(ep) != 0)
		return;
	kid = fork();
	if (kid == 0) {
		struct eng_proc *p = NULL;
		struct hunch_err err = { 0 };
		int rc;

		if (setgid(65534) != 0 || setuid(65534) != 0)
			_exit(3);
		rc = eng_attach(target, NULL, NULL, &p, &err);
		if (write(ep[1], err.msg, strlen(err.msg) + 1) < 0)
			_exit(3);
		_exit(rc == -EPERM ? 0 : 1);
	}
	close(ep[1]);
	if (read(ep[0], msg, sizeof(msg) - 1) < 0)
		msg[0] = '\0';
	close(ep[0]);
	waitpid(kid, &st, 0);
	tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0 &&
	       strstr(msg, "belongs to user root") &&
	       strstr(msg, "run hunch as that user, or as root"),
	       "another user's process: %s", msg);
}

static void test_attach_errors(void)
{
	char want[64], *txt;
	pid_t pid = dead_pid(), kid;
	int st, sp[2], ip[2];
	char c;

	snprintf(want, sizeof(want), "no process %d", (int)pid);
	attach_fails("no such pid", pid, NULL, want, "check the pid");
	attach_fails("hunch itself", getpid(), NULL, "hunch itself",
		     "pid of the program");
	kid = fork();
	if (kid == 0)
		_exit(0);
	/* a zombie until we reap it: WNOWAIT waits for its exit and leaves it
	 * unreaped (a fixed sleep could end before it ran under load) */
	waitid(P_PID, (id_t)kid, &(siginfo_t){ 0 }, WEXITED | WNOWAIT);
	attach_fails("zombie", kid, NULL, "is a zombie", "nothing to attach");
	waitpid(kid, &st, 0);

	/* dlopen refuses a library that is not one: dlerror's text. */
	if (pipe(sp) != 0 || pipe(ip) != 0)
		return;
	kid = fork();
	if (kid == 0) {
		char *b = prog("p_block");

		dup2(ip[0], 0);
		close(ip[1]);
		dup2(sp[1], 1);
		execl(b, b, (char *)NULL);
		_exit(127);
	}
	close(sp[1]);
	close(ip[0]);
	if (read(sp[0], &c, 1) != 1)
		tap_diag("p_block did not start");
	if (getuid() == 0)
		other_user(kid);
	txt = fixture("notalib.so", "garbage", 7, 0644);
	attach_fails("runtime library not loadable", kid, txt,
		     "dlopen says", "file too short");
	tap_ok(kill(kid, 0) == 0, "the program survived the failed "
	       "injection");
	close(sp[0]);
	kill(kid, SIGTERM);
	waitpid(kid, &st, 0);
	close(ip[1]);
	tap_ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM,
	       "and it was left untraced (SIGTERM killed it normally)");
}

int main(void)
{
	shm_leftovers();  /* the baseline */
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/hunch-proc-err-%d",
		 (int)getpid());
	mkdir(tmpdir, 0700);
	test_launch_errors();
	test_attach_errors();
	tap_ok(no_children(), "no child process left behind");
	tap_eq(shm_leftovers(), 0, "no /dev/shm/hunch-* object left behind");
	if (system("rm -rf /tmp/hunch-proc-err-*") != 0)
		tap_diag("cleanup failed");
	return tap_done();
}

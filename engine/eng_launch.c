/*
 * eng_launch.c - starting a program under hunch and running it to main.
 *
 * Everything that can be checked is checked before fork (program found,
 * executable, an x86-64 ELF; the runtime library too), so that the usual
 * mistakes get a message naming the file and leave no child behind.
 * The child stops itself before execve so that we can seize it; if
 * execve fails anyway, the child says why through a close-on-exec pipe.
 */
#include "eng_inst.h"
#include "eng_main.h"
#include "eng_proc_int.h"
#include "eng_shm.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define SEIZE_OPTS (PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC | \
		    PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | \
		    PTRACE_O_TRACESYSGOOD)

/* What the child tells us when it fails before or at execve. */
struct child_fail {
	int step;    /* 0 chdir, 1 execve */
	int err;
};

static const char *machine_name(int m)
{
	switch (m) {
	case EM_386: return "i386";
	case EM_ARM: return "ARM";
	case EM_AARCH64: return "AArch64";
	case EM_RISCV: return "RISC-V";
	case EM_PPC64: return "PowerPC64";
	default: return "non-x86-64";
	}
}

static int elf_header_check(const char *path, const unsigned char *b,
			    ssize_t n, bool want_exec, struct hunch_err *err)
{
	const Elf64_Ehdr *eh = (const void *)b;
	int cls, mach;

	if (n >= 2 && b[0] == '#' && b[1] == '!')
		return hunch_err_set(err, -ENOEXEC, "%s is a script, not an x86-64 "
			"program: run hunch on the program the script starts "
			"(or on its interpreter, with the script as argument)",
			path);
	if (n < (ssize_t)sizeof(Elf64_Ehdr) / 2 ||
	    memcmp(b, ELFMAG, SELFMAG) != 0)
		return hunch_err_set(
			err, -ENOEXEC,
			"%s is not an ELF %s (no ELF "
			"header): %s",
			path, want_exec ? "program" : "library",
			want_exec ? "give hunch a compiled x86-64 Linux "
				    "executable"
				  : "point hunch at the libhunchrt.so it "
				    "was built with");
	cls = b[EI_CLASS];
	/* e_machine sits at the same offset in 32- and 64-bit headers. */
	mach = b[18] | b[19] << 8;
	if (cls != ELFCLASS64 || mach != EM_X86_64)
		return hunch_err_set(
			err, -ENOEXEC,
			"%s is a %d-bit %s ELF file, "
			"not x86-64: hunch only handles 64-bit x86-64 programs "
			"(rebuild it for x86-64)",
			path, cls == ELFCLASS32 ? 32 : 64, machine_name(mach));
	if (n < (ssize_t)sizeof(Elf64_Ehdr) ||
	    (eh->e_type != ET_EXEC && eh->e_type != ET_DYN) ||
	    (want_exec && eh->e_entry == 0))
		return hunch_err_set(
			err, -ENOEXEC,
			"%s is an ELF file but not an "
			"executable program (ELF type %d): give hunch the "
			"linked program, not an object file or library",
			path, n >= (ssize_t)sizeof(*eh) ? eh->e_type : -1);
	return 0;
}

/* Is `path` an x86-64 ELF executable we can run?  Names the file. */
int eng_launch_elf_check(const char *path, struct hunch_err *err)
{
	unsigned char b[sizeof(Elf64_Ehdr)];
	struct stat st;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		if (e == ENOENT)
			return hunch_err_set(err, -e, "cannot run %s: no such "
				"file (check the path)", path);
		return hunch_err_set(err, -e,
				     "cannot run %s: cannot open it: %s "
				     "(check its permissions)",
				     path, strerror(e));
	}
	if (fstat(fd, &st) == 0 && !S_ISREG(st.st_mode)) {
		close(fd);
		return hunch_err_set(err, -EACCES,
				     "cannot run %s: it is %s, not "
				     "a program file",
				     path,
				     S_ISDIR(st.st_mode)
					     ? "a directory"
					     : "not a regular file");
	}
	n = pread(fd, b, sizeof(b), 0);
	close(fd);
	return elf_header_check(path, b, n, true, err);
}

static int check_rtlib(const char *path, struct hunch_err *err)
{
	unsigned char b[sizeof(Elf64_Ehdr)];
	ssize_t n;
	int fd, rc;

	if (strpbrk(path, " :") != NULL)
		return hunch_err_set(
			err, -EINVAL,
			"the runtime library path %s "
			"contains a space or colon, which LD_PRELOAD cannot "
			"carry: install libhunchrt.so under another path",
			path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return hunch_err_set(err, -errno,
				     "cannot use the runtime library "
				     "%s: %s (build hunch, or point hunch at "
				     "libhunchrt.so)",
				     path, strerror(errno));
	n = pread(fd, b, sizeof(b), 0);
	close(fd);
	rc = elf_header_check(path, b, n, false, err);
	if (rc < 0)
		hunch_err_prefix(err, "bad runtime library: ");
	return rc;
}

/* execvp's search, done here so that we can check the file first. */
static int find_program(const char *name, char *out, size_t len,
			struct hunch_err *err)
{
	const char *path = getenv("PATH");

	if (name == NULL || name[0] == '\0')
		return hunch_err_set(err, -EINVAL,
				     "no program to run was given");
	if (strchr(name, '/') != NULL) {
		snprintf(out, len, "%s", name);
		return 0;
	}
	if (path == NULL)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *s = path; ; ) {
		const char *e = strchrnul(s, ':');
		struct stat st;

		snprintf(out, len, "%.*s%s%s", (int)(e - s), s,
			 e == s ? "" : "/", name);
		if (stat(out, &st) == 0 && S_ISREG(st.st_mode) &&
		    access(out, X_OK) == 0)
			return 0;
		if (*e == '\0')
			break;
		s = e + 1;
	}
	return hunch_err_set(err, -ENOENT, "cannot run %s: no such program in "
		"PATH (%s): check the name, or give a path", name, path);
}

static bool has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static void free_env(char **env)
{
	if (env == NULL)
		return;
	for (char **e = env; *e != NULL; e++)
		free(*e);
	free(env);
}

/* The program's environment: exactly the given one, plus, with the
 * runtime library, LD_PRELOAD and the variables the library reads and
 * scrubs before main (rtlib/hunchrt.c). */
static char **build_env(const struct eng_launch_opts *o)
{
	char *const *src = o->envp ? o->envp : environ;
	const char *user = NULL;
	size_t n = 0, k = 0;
	char **env;
	bool ok = true;

	while (src[n] != NULL)
		n++;
	env = calloc(n + 5, sizeof(*env));
	if (env == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (o->rtlib_path != NULL &&
		    (has_prefix(src[i], HUNCH_ENV_SHM_FD "=") ||
		     has_prefix(src[i], HUNCH_ENV_ORIG_PRELOAD "=") ||
		     has_prefix(src[i], HUNCH_ENV_HAD_PRELOAD "=")))
			continue;  /* stale, from a hunch above us */
		if (o->rtlib_path != NULL && has_prefix(src[i], "LD_PRELOAD=")) {
			user = src[i] + strlen("LD_PRELOAD=");
			continue;
		}
		ok &= (env[k++] = strdup(src[i])) != NULL;
	}
	if (o->rtlib_path != NULL) {
		ok &= asprintf(&env[k++], "LD_PRELOAD=%s%s%s", o->rtlib_path,
			       user && *user ? ":" : "", user ? user : "") > 0;
		ok &= asprintf(&env[k++], HUNCH_ENV_SHM_FD "=%d",
			       eng_shm_fd(o->shm)) > 0;
		ok &= asprintf(&env[k++], HUNCH_ENV_HAD_PRELOAD "=%d",
			       user != NULL) > 0;
		if (user != NULL)
			ok &= asprintf(&env[k++], HUNCH_ENV_ORIG_PRELOAD "=%s",
				       user) > 0;
	}
	if (!ok) {
		free_env(env);
		return NULL;
	}
	return env;
}

static void child_fail(int fd, int step, int e)
{
	struct child_fail f = { step, e };

	if (write(fd, &f, sizeof(f)) < 0)
		_exit(126);
	_exit(127);
}

/* In the child: only async-signal-safe calls from here on. */
static void child_run(const struct eng_launch_opts *o, const char *path,
		      char **env, int errfd)
{
	sigset_t none;

	/* The program starts with a clean signal mask, as from a shell,
	 * whatever hunch blocked for its signalfd. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	if (o->cwd != NULL && chdir(o->cwd) != 0)
		child_fail(errfd, 0, errno);
	if (o->stdin_fd >= 0 && o->stdin_fd != 0)
		dup2(o->stdin_fd, 0);
	if (o->stdout_fd >= 0 && o->stdout_fd != 1)
		dup2(o->stdout_fd, 1);
	if (o->stderr_fd >= 0 && o->stderr_fd != 2)
		dup2(o->stderr_fd, 2);
	/* None of hunch's descriptors leak into the program except the
	 * segment, which the runtime library maps and closes. */
	close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
	if (o->rtlib_path != NULL && o->shm != NULL)
		fcntl(eng_shm_fd(o->shm), F_SETFD, 0);
	raise(SIGSTOP);
	execve(path, o->argv, env);
	child_fail(errfd, 1, errno);
}

static int exec_failed(const char *path, int errfd, struct hunch_err *err)
{
	struct child_fail f;

	if (read(errfd, &f, sizeof(f)) != (ssize_t)sizeof(f))
		return hunch_err_set(err, -ECHILD,
				     "%s ended before hunch could "
				     "trace it",
				     path);
	if (f.step == 0)
		return hunch_err_set(err, -f.err,
				     "cannot run %s: cannot change "
				     "to its working directory: %s",
				     path, strerror(f.err));
	if (f.err == ENOENT)
		return hunch_err_set(err, -ENOENT, "cannot run %s: the kernel "
			"says no such file: its ELF interpreter (dynamic "
			"linker) is probably missing", path);
	return hunch_err_set(err, -f.err, "cannot run %s: execve failed: %s",
			  path, strerror(f.err));
}

/* Seize the self-stopped child and let it run into execve. */
static int seize_to_exec(pid_t pid, const char *path, int errfd,
			 struct hunch_err *err)
{
	int st;

	if (waitpid(pid, &st, WUNTRACED) != pid || !WIFSTOPPED(st))
		return exec_failed(path, errfd, err);
	if (ptrace(PTRACE_SEIZE, pid, 0, (void *)(long)SEIZE_OPTS) != 0)
		return hunch_err_set(err, -errno, "cannot trace %s (pid %d): "
			"PTRACE_SEIZE: %s", path, (int)pid, strerror(errno));
	kill(pid, SIGCONT);
	for (;;) {
		if (waitpid(pid, &st, __WALL) != pid)
			return hunch_err_set(err, -errno,
					     "lost %s (pid %d): %s", path,
					     (int)pid, strerror(errno));
		if (WIFEXITED(st) || WIFSIGNALED(st))
			return exec_failed(path, errfd, err);
		if (st >> 8 == (SIGTRAP | PTRACE_EVENT_EXEC << 8))
			return 0;
		/* Our own SIGSTOP/SIGCONT dance: the program never sees it. */
		if (ptrace(PTRACE_CONT, pid, 0, 0) != 0)
			return hunch_err_set(err, -errno, "cannot start %s: %s",
					  path, strerror(errno));
	}
}

static void kill_reap(pid_t pid)
{
	int st;

	kill(pid, SIGKILL);
	while (waitpid(pid, &st, __WALL) < 0 && errno == EINTR)
		;
}

/* Run until the leader hits our int3 at addr. */
static int run_to_bp(struct eng_proc *p, uint64_t addr, const char *path,
		     struct hunch_err *err)
{
	struct eng_thread *t;
	pid_t tid;
	int rc;

	if ((rc = eng_ptrace_thread_resume(p, eng_ptrace_leader(p))) < 0)
		return hunch_err_set(err, rc, "cannot resume %s: %s", path,
				  strerror(-rc));
	for (;;) {
		rc = eng_ptrace_wait_any(p, -1, &tid);
		if (p->ended || rc == -ECHILD) {
			const struct eng_event *ev =
				p->nevq ? &p->evq[p->nevq - 1] : NULL;

			if (ev != NULL && ev->kind == ENG_EV_KILLED)
				return hunch_err_set(
					err, -ECHILD,
					"%s was killed "
					"by signal %d (%s) before reaching main",
					path, ev->signo, strsignal(ev->signo));
			return hunch_err_set(err, -ECHILD,
					     "%s exited with status "
					     "%d before reaching main",
					     path,
					     ev != NULL ? ev->status : -1);
		}
		if (rc < 0)
			return hunch_err_set(err, rc, "lost %s: %s", path,
					  strerror(-rc));
		t = eng_ptrace_thread_find(p, tid);
		if (t == NULL)
			continue;
		if (tid == p->pid && t->stop == SK_BREAK && t->hit_bp == addr)
			return 0;
		if ((rc = eng_ptrace_settle(p, t)) < 0)
			return hunch_err_set(err, rc, "cannot resume %s: %s",
					     path, strerror(-rc));
	}
}

static int run_to_main(struct eng_proc *p, const char *path,
		       struct hunch_err *err)
{
	int rc;

	if (eng_solib_read_auxv(p->pid, AT_ENTRY, &p->entry) < 0)
		return hunch_err_set(err, -EIO,
				     "cannot read the entry point of "
				     "%s from /proc/%d/auxv",
				     path, (int)p->pid);
	if ((rc = eng_bp_insert(p, p->entry, BP_ENTRY, err)) < 0 ||
	    (rc = run_to_bp(p, p->entry, path, err)) < 0)
		return rc;
	eng_bp_remove(p, p->entry);
	p->main_addr = eng_main_find(p);
	if (p->main_addr == 0) {
		snprintf(p->note, sizeof(p->note), "main() of %s was not "
			 "found from its entry point: stopped at the entry "
			 "point 0x%llx instead", path,
			 (unsigned long long)p->entry);
	} else {
		if ((rc = eng_bp_insert(p, p->main_addr, BP_MAIN, err)) < 0 ||
		    (rc = run_to_bp(p, p->main_addr, path, err)) < 0)
			return rc;
		eng_bp_remove(p, p->main_addr);
		eng_main_note_return(p);
	}
	return eng_ptrace_stop_all(p, err);
}

static int check_handshake(const struct eng_launch_opts *o,
			   struct hunch_err *err)
{
	int rc = eng_shm_check_ready(o->shm, err);

	if (rc == -EAGAIN)
		return hunch_err_set(err, -EPROTO, "the runtime library %s did not "
			"answer in %s: the dynamic linker did not load it "
			"(a setuid program ignores LD_PRELOAD; a static "
			"program cannot preload): run without the runtime "
			"library (--no-rtlib)", o->rtlib_path, o->path);
	if (rc < 0)
		hunch_err_prefix(err, "runtime library %s in %s: ",
				 o->rtlib_path, o->path);
	return rc;
}

/* From the exec stop to main; on error the program is killed. */
static int trace_child(const struct eng_launch_opts *o, pid_t pid,
		       const char *path, struct eng_proc **out,
		       struct hunch_err *err)
{
	struct eng_proc *p;
	struct eng_thread *t;
	int rc;

	p = eng_proc_new(pid, true);
	if (p == NULL ||
	    (t = eng_ptrace_thread_add(p, pid, TS_STOPPED)) == NULL) {
		free(p);
		kill_reap(pid);
		return hunch_err_set(err, -ENOMEM, "out of memory");
	}
	t->stop = SK_EXEC;
	eng_mem_open(p);
	eng_solib_set_exe(p);
	rc = run_to_main(p, path, err);
	if (rc == 0)
		rc = eng_solib_init(p, err);
	if (rc == 0 && o->rtlib_path != NULL)
		rc = check_handshake(o, err);
	if (rc == 0 && o->rtlib_path != NULL && p->main_addr != 0)
		eng_inst_catchup_mark_main(o->shm, pid);  /* main begins now */
	if (rc < 0) {
		eng_detach_kill_reap(p);
		eng_proc_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

int eng_launch(const struct eng_launch_opts *o, struct eng_proc **out,
	       struct hunch_err *err)
{
	char path[PATH_MAX];
	char **env = NULL;
	int pfd[2], rc;
	pid_t pid;

	*out = NULL;
	if (o->argv == NULL || o->argv[0] == NULL)
		return hunch_err_set(err, -EINVAL, "launching %s needs an argv "
			"with at least argv[0]", o->path ? o->path : "(null)");
	if ((rc = find_program(o->path, path, sizeof(path), err)) < 0 ||
	    (rc = eng_launch_script_check(path, err)) < 0 ||
	    (rc == 0 && (rc = eng_launch_elf_check(path, err)) < 0))
		return rc;
	if (access(path, X_OK) != 0)
		return hunch_err_set(err, -EACCES, "cannot run %s: it is not "
			"executable (chmod +x %s)", path, path);
	if (o->rtlib_path != NULL &&
	    (o->shm == NULL || eng_shm_fd(o->shm) < 0))
		return hunch_err_set(
			err, -EINVAL,
			"launching %s with the runtime "
			"library needs a memfd segment (eng_shm_create with "
			"named=false)",
			path);
	if (o->rtlib_path != NULL && (rc = check_rtlib(o->rtlib_path, err)))
		return rc;
	if ((env = build_env(o)) == NULL)
		return hunch_err_set(err, -ENOMEM, "out of memory");
	if (pipe2(pfd, O_CLOEXEC) != 0) {
		free_env(env);
		return hunch_err_set(err, -errno, "pipe: %s", strerror(errno));
	}
	pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		child_run(o, path, env, pfd[1]);
	}
	rc = pid < 0 ? hunch_err_set(err, -errno, "cannot start %s: fork: %s",
				  path, strerror(errno)) : 0;
	close(pfd[1]);
	free_env(env);
	if (rc == 0 && (rc = seize_to_exec(pid, path, pfd[0], err)) < 0)
		kill_reap(pid);
	else if (rc == 0)
		rc = trace_child(o, pid, path, out, err);
	close(pfd[0]);
	return rc;
}

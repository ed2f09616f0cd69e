/*
 * eng_launch_script.c - launching a script: its #! interpreter checked
 * before fork.
 *
 * A launcher script (`./run.sh`, a version manager's shim, anything that
 * ends in `exec PROGRAM`) is how many programs are started.  The kernel
 * runs the interpreter named on the script's first line, which must in
 * the end be an x86-64 ELF program; hunch launches the script as the
 * kernel would, starts its search on the interpreter, and follows the
 * execs that lead to the program (eng_exec.c).  What is checked here is
 * only what would make execve fail, so that the mistake gets a message
 * naming the script and its #! line and leaves no child behind.
 *
 * The #! line is parsed as Linux's binfmt_script does: at most the first
 * 255 bytes, blanks after "#!" skipped, the interpreter up to the next
 * blank, and an interpreter may itself be a script, a few levels deep.
 */
#include "eng_proc_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Linux allows 4 levels of interpreters (BINPRM_MAX_RECURSION) */
#define SCRIPT_DEPTH 4

/* The first line of `path` if it starts with "#!", else "" (not a
 * script).  -errno when it cannot be read. */
static int first_line(const char *path, char *line, size_t len)
{
	ssize_t n;
	char *nl;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	line[0] = '\0';
	if (fd < 0)
		return -errno;
	n = pread(fd, line, len - 1, 0);
	close(fd);
	if (n < 2 || line[0] != '#' || line[1] != '!') {
		line[0] = '\0';
		return 0;
	}
	line[n] = '\0';
	if ((nl = strchr(line, '\n')) != NULL)
		*nl = '\0';
	return 0;
}

/* The interpreter of a #! line, into interp. */
static void interpreter(const char *line, char *interp, size_t len)
{
	const char *s = line + 2;
	size_t n;

	s += strspn(s, " \t");
	n = strcspn(s, " \t");
	snprintf(interp, len, "%.*s", (int)n, s);
}

int eng_launch_script_check(const char *path, struct hunch_err *err)
{
	char line[256], interp[256], at[256];
	int rc;

	snprintf(at, sizeof(at), "%s", path);
	for (int depth = 0; depth <= SCRIPT_DEPTH; depth++) {
		if ((rc = first_line(at, line, sizeof(line))) < 0)
			return 0;  /* eng_launch_elf_check names the error */
		if (line[0] == '\0')
			return depth;  /* 0: not a script */
		interpreter(line, interp, sizeof(interp));
		if (interp[0] == '\0')
			return hunch_err_set(err, -ENOEXEC, "cannot run %s: "
				"its first line \"%s\" names no interpreter "
				"(write #!/path/to/interpreter)", path, line);
		if (access(interp, F_OK) != 0)
			return hunch_err_set(err, -ENOENT, "cannot run %s: "
				"its interpreter %s (first line \"%s\") does "
				"not exist: install it or fix the #! line",
				path, interp, line);
		if (access(interp, X_OK) != 0)
			return hunch_err_set(err, -EACCES, "cannot run %s: "
				"its interpreter %s is not executable",
				path, interp);
		if ((rc = first_line(interp, line, sizeof(line))) < 0)
			return depth + 1;  /* unreadable: the kernel may run it */
		if (line[0] == '\0') {
			if ((rc = eng_launch_elf_check(interp, err)) < 0) {
				hunch_err_prefix(err, "cannot run the script "
						 "%s: its interpreter: ", path);
				return rc;
			}
			return depth + 1;
		}
		snprintf(at, sizeof(at), "%s", interp);
	}
	return hunch_err_set(err, -ELOOP, "cannot run %s: its interpreters "
		"are scripts more than %d levels deep (Linux runs at most "
		"%d)", path, SCRIPT_DEPTH, SCRIPT_DEPTH);
}

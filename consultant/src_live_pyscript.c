/*
 * src_live_pyscript.c - the script a Python process runs, from its
 * command line (see src_live_pyscript.h).
 *
 * CPython's own options come before the script: those that take a
 * value (-W, -X) skip it, -c and -m run no file, and "--" or the first
 * argument that is not an option is the script.  CPython 3.11 names the
 * script's code by the path as given, joined to the working directory
 * when relative, without normalizing it (`python3 ./x.py` in /tmp is
 * "/tmp/./x.py"): the same join here gives the same co_filename.
 */
#include "src_live_pyscript.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The process's argv, NUL-separated, into buf; its length, 0 none. */
static size_t read_cmdline(pid_t pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return (size_t)n;
}

/* The argument naming the script in argv (n bytes), or NULL. */
static const char *script_arg(const char *argv, size_t n)
{
	const char *a = argv + strlen(argv) + 1;   /* past the interpreter */

	for (; a < argv + n; a += strlen(a) + 1) {
		if (strcmp(a, "--") == 0) {
			a += strlen(a) + 1;
			return a < argv + n && *a ? a : NULL;
		}
		if (a[0] != '-' || a[1] == '\0')
			return a[0] ? a : NULL;   /* "-" is stdin: no file */
		if (strcmp(a, "-c") == 0 || strcmp(a, "-m") == 0)
			return NULL;
		if (strcmp(a, "-W") == 0 || strcmp(a, "-X") == 0)
			a += strlen(a) + 1;       /* its value */
	}
	return NULL;
}

bool src_live_pyscript_path(pid_t pid, char *out, size_t len)
{
	char argv[8192], cwd[PATH_MAX], link[64];
	size_t n = read_cmdline(pid, argv, sizeof(argv));
	const char *s = n ? script_arg(argv, n) : NULL;
	ssize_t k;

	if (s == NULL || strcmp(s, "-") == 0)
		return false;
	if (s[0] == '/')
		return (size_t)snprintf(out, len, "%s", s) < len;
	snprintf(link, sizeof(link), "/proc/%d/cwd", (int)pid);
	k = readlink(link, cwd, sizeof(cwd) - 1);
	if (k <= 0)
		return false;
	cwd[k] = '\0';
	return (size_t)snprintf(out, len, "%s/%s", cwd, s) < len;
}

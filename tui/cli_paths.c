/* cli_paths.c - finding libhunchrt.so and the demo program. */
#include "cli.h"
#include "hunch_config.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Directory of the running hunch executable, from /proc/self/exe. */
static const char *self_dir(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);
	char *slash;

	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	slash = strrchr(buf, '/');
	if (slash != NULL)
		*slash = '\0';
	return buf;
}

/* out = dir/rel, if it fits and names a readable file. */
static bool readable_at(char *out, size_t len, const char *dir,
			const char *rel)
{
	int n = dir ? snprintf(out, len, "%s/%s", dir, rel)
		    : snprintf(out, len, "%s", rel);

	return n > 0 && (size_t)n < len && access(out, R_OK) == 0;
}

/* The first that exists of: $env; <exe dir>/<build_rel> (the build
 * tree); <exe dir>/<installed_rel> (a relocated install); <installed>. */
static const char *find_file(const char *env, const char *build_rel,
			     const char *installed_rel, const char *installed,
			     char *out, size_t len)
{
	char dir[PATH_MAX];
	const char *e = getenv(env);

	if (e != NULL && e[0] != '\0') {
		snprintf(out, len, "%s", e);
		return out;  /* the user said so: errors will name it */
	}
	if (self_dir(dir, sizeof(dir)) != NULL) {
		if (readable_at(out, len, dir, build_rel))
			return out;
		if (readable_at(out, len,
				installed_rel[0] == '/' ? NULL : dir,
				installed_rel))
			return out;
	}
	return readable_at(out, len, NULL, installed) ? out : NULL;
}

const char *cli_paths_rtlib(void)
{
	static char path[PATH_MAX];  /* tui/ may keep process-wide state */

	if (find_file("HUNCH_RTLIB", "rtlib/libhunchrt.so",
		      HUNCH_RTLIB_FROM_BINDIR, HUNCH_RTLIB_INSTALLED, path,
		      sizeof(path)))
		return path;
	fprintf(stderr, "hunch: cannot find the runtime library "
		"libhunchrt.so (looked in rtlib/ next to hunch and in %s); "
		"reinstall hunch or set HUNCH_RTLIB to its path\n",
		HUNCH_RTLIB_INSTALLED);
	return NULL;
}

const char *cli_paths_demo(void)
{
	static char path[PATH_MAX];

	if (find_file("HUNCH_DEMO", "tests/targets/hunch-demo", "hunch-demo",
		      HUNCH_BINDIR "/hunch-demo", path, sizeof(path)))
		return path;
	fprintf(stderr, "hunch: cannot find the demo program hunch-demo "
		"(looked in tests/targets/ next to hunch and in %s); "
		"reinstall hunch or set HUNCH_DEMO to its path\n",
		HUNCH_BINDIR);
	return NULL;
}

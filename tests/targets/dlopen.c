/* dlopen.c - loads libtgtplugin.so at run time and calls into it.
 *
 *   dlopen [--wait-file PATH]
 *
 * The plugin is found next to the executable (dirname of
 * /proc/self/exe), so every variant, stripped or not, finds the one
 * built beside it, whatever the working directory.  With --wait-file,
 * the program waits for PATH to exist before dlopen and for PATH.2
 * before dlclose (polling every 1 ms), so a test can look at the process
 * with and then without the library.  Before each wait it prints
 * "waiting for load" / "waiting for unload" on stderr.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "targets.h"

#define DL_PLUGIN "libtgtplugin.so"

TGT_NOINLINE void dl_wait_file(const char *path, const char *what)
{
	const struct timespec ms = { 0, 1000000 };

	if (!path)
		return;
	fprintf(stderr, "waiting for %s\n", what);
	while (access(path, F_OK) != 0)
		nanosleep(&ms, NULL);
}

/* Fills buf with <dir of /proc/self/exe>/libtgtplugin.so; 0 on success. */
TGT_NOINLINE int dl_plugin_path(char *buf, size_t size)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	char *slash;

	if (n <= 0)
		return -1;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	return snprintf(buf, size, "%s/%s", exe, DL_PLUGIN) < (int)size ? 0 : -1;
}

/* Loads the plugin, calls plugin_compute(arg), unloads it; 0 on success. */
TGT_NOINLINE int dl_run(const char *wait_path, int arg)
{
	char path[PATH_MAX], path2[PATH_MAX + 2];
	int (*compute)(int);
	void *handle;

	snprintf(path2, sizeof path2, "%s.2", wait_path ? wait_path : "");
	if (dl_plugin_path(path, sizeof path))
		return fprintf(stderr, "dlopen: cannot find my own directory\n"), 1;
	dl_wait_file(wait_path, "load");
	handle = dlopen(path, RTLD_NOW);
	if (!handle)
		return fprintf(stderr, "dlopen: %s\n", dlerror()), 1;
	printf("loaded " DL_PLUGIN "\n");
	compute = (int (*)(int))dlsym(handle, "plugin_compute");
	if (!compute)
		return fprintf(stderr, "dlopen: %s\n", dlerror()), 1;
	printf("plugin_compute(%d) = %d\n", arg, compute(arg));
	fflush(stdout);
	dl_wait_file(wait_path ? path2 : NULL, "unload");
	if (dlclose(handle))
		return fprintf(stderr, "dlclose: %s\n", dlerror()), 1;
	printf("unloaded " DL_PLUGIN "\n");
	return 0;
}

TGT_NOINLINE int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--wait-file") == 0)
		return dl_run(argv[2], 7);
	if (argc == 1)
		return dl_run(NULL, 7);
	fprintf(stderr, "usage: dlopen [--wait-file PATH]\n");
	return TGT_EXIT_USAGE;
}

/*
 * test_maps.c - engine/eng_maps.c on this process's own mappings, whose
 * every field the test knows: its code (path and executable bit), an
 * anonymous mapping (no path), a file with spaces in a 600-byte path
 * mapped at a page offset (the whole name, the offset, the inode), a
 * deleted memfd ("/memfd:NAME (deleted)"); an unmapped address and a
 * process that is gone.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "eng_maps.h"
#include "tap.h"

static struct eng_maps_line l;

/* String equality with both strings on failure. */
#define tap_str_eq(got, want, ...) do {                                  \
	if (!tap_ok(strcmp((got), (want)) == 0, __VA_ARGS__))            \
		tap_diag("  got \"%s\", want \"%s\"", (got), (want));    \
} while (0)

#define tap_bail(...) do {                                               \
	printf("Bail out! ");                                            \
	printf(__VA_ARGS__);                                             \
	printf("\n");                                                    \
	exit(1);                                                         \
} while (0)

static void test_code_and_anon(void)
{
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	void *anon = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	exe[n > 0 ? n : 0] = '\0';
	tap_ok(eng_maps_find(getpid(), (uint64_t)(uintptr_t)test_code_and_anon,
			     &l), "this function's mapping is found");
	tap_str_eq(l.path, exe, "its path is the executable");
	tap_ok(eng_maps_is_code(&l) && l.perms[0] == 'r' && l.inode != 0,
	       "readable code of a file (perms %s, inode %llu)", l.perms,
	       (unsigned long long)l.inode);
	tap_ok(eng_maps_find(getpid(), (uint64_t)(uintptr_t)anon + 4096, &l),
	       "an anonymous mapping is found");
	tap_ok(l.lo <= (uint64_t)(uintptr_t)anon &&
	       l.hi >= (uint64_t)(uintptr_t)anon + 8192,
	       "it spans the 8 KiB mapped");
	tap_str_eq(l.path, "", "an anonymous mapping has no path");
	tap_ok(l.inode == 0 && !eng_maps_is_code(&l), "inode 0, not code");
	munmap(anon, 8192);
}

static void test_long_name(void)
{
	char path[700], dir[] = "/tmp/eng-maps-XXXXXX";
	long pg = sysconf(_SC_PAGESIZE);
	struct stat st;
	char *p;
	int fd;

	if (mkdtemp(dir) == NULL)
		tap_bail("mkdtemp: %s", strerror(errno));
	/* three directories of 190 bytes each: a name's limit is 255 */
	snprintf(path, sizeof(path), "%s", dir);
	for (int d = 0; d < 3; d++) {
		strcat(path, "/");
		for (int k = 0; k < 10; k++)
			strcat(path, "a name with spaces ");
		if (d < 2 && mkdir(path, 0700) != 0)
			tap_bail("%s: %s", path, strerror(errno));
	}
	fd = open(path, O_RDWR | O_CREAT, 0600);
	if (fd < 0 || ftruncate(fd, 3 * pg) != 0 || fstat(fd, &st) != 0)
		tap_bail("%s: %s", path, strerror(errno));
	p = mmap(NULL, (size_t)pg, PROT_READ, MAP_SHARED, fd, 2 * pg);
	tap_ok(p != MAP_FAILED && eng_maps_find(getpid(), (uint64_t)(uintptr_t)p,
						&l), "a file mapped at a page offset is found");
	tap_str_eq(l.path, path, "its whole %zu-byte name, spaces and all",
		   strlen(path));
	tap_eq((long long)l.off, (long long)(2 * pg), "its file offset");
	tap_eq((long long)l.inode, (long long)st.st_ino, "its inode");
	tap_str_eq(l.perms, "r--s", "its perms");
	munmap(p, (size_t)pg);
	close(fd);
	for (int d = 0; d < 3; d++) {
		if ((d == 0 ? unlink(path) : rmdir(path)) != 0)
			tap_diag("cleanup %s: %s", path, strerror(errno));
		*strrchr(path, '/') = '\0';
	}
	rmdir(dir);
}

static void test_deleted_memfd(void)
{
	int fd = memfd_create("eng-maps-test", MFD_CLOEXEC);
	long pg = sysconf(_SC_PAGESIZE);
	struct eng_maps m;
	bool seen = false;
	void *p;

	if (fd < 0 || ftruncate(fd, pg) != 0)
		tap_bail("memfd: %s", strerror(errno));
	p = mmap(NULL, (size_t)pg, PROT_READ, MAP_SHARED, fd, 0);
	tap_eq(eng_maps_open(&m, getpid()), 0, "the maps open");
	while (!seen && eng_maps_next(&m, &l))
		seen = l.lo == (uint64_t)(uintptr_t)p;
	eng_maps_close(&m);
	tap_ok(seen, "walking every line reaches the memfd's mapping");
	tap_str_eq(l.path, "/memfd:eng-maps-test (deleted)",
		   "a memfd's path as the kernel writes it");
	munmap(p, (size_t)pg);
	close(fd);
}

static void test_missing(void)
{
	struct eng_maps m;
	pid_t gone = fork();

	if (gone == 0)
		_exit(0);
	waitpid(gone, NULL, 0);
	tap_ok(!eng_maps_find(getpid(), 8, &l), "address 8 is in no mapping");
	tap_eq(eng_maps_open(&m, gone), -ENOENT,
	       "the maps of a process that is gone: -ENOENT");
	tap_ok(!eng_maps_next(&m, &l), "and no line");
	eng_maps_close(&m);
	tap_ok(!eng_maps_find(gone, 0x400000, &l), "nor a mapping");
}

int main(void)
{
	test_code_and_anon();
	test_long_name();
	test_deleted_memfd();
	test_missing();
	return tap_done();
}

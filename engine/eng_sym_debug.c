/*
 * eng_sym_debug.c - finding the debug symbols of a stripped file.
 *
 * `strip` removes the symbol table and DWARF; distributions ship them
 * apart.  In the order gdb uses:
 *  1. by build-id: /usr/lib/debug/.build-id/<xx>/<rest>.debug (Debian's
 *     -dbg and -dbgsym packages; with libc6-dbg, libc gains start_thread,
 *     _int_malloc, __lll_lock_wait and its source files);
 *  2. by the .gnu_debuglink name, checked by its CRC32: beside the file,
 *     in its .debug/ folder, and under /usr/lib/debug/<its folder>/;
 *  3. with DEBUGINFOD_URLS set, debuginfod's cache (a file fetched by
 *     this run or an earlier one);
 *  4. the file's own MiniDebugInfo (.gnu_debugdata, eng_sym_minidebug.c):
 *     static functions only, no DWARF.
 * With DEBUGINFOD_URLS set and no debug file on disk (1-3), a background
 * fetch starts (eng_sym_debuginfod.c) and the image opens without it.
 * A candidate whose build-id differs from the file's is never used, so a
 * stale file from another build cannot name the code.
 */
#include "eng_sym_int.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "eng_sym_debuginfod.h"

#define DEBUG_ROOT "/usr/lib/debug"
#define MAX_ID 64

/* The GNU build-id note as lowercase hex; 0 or -ENOENT. */
static int build_id(Elf *elf, char hex[2 * MAX_ID + 1])
{
	const void *id;
	ssize_t n = dwelf_elf_gnu_build_id(elf, &id);

	if (n < 2 || n > MAX_ID)
		return -ENOENT;
	for (ssize_t i = 0; i < n; i++)
		sprintf(hex + 2 * i, "%02x", ((const unsigned char *)id)[i]);
	return 0;
}

/* CRC32 of a whole file, as .gnu_debuglink records it (zlib's CRC). */
static uint32_t file_crc(Elf *elf)
{
	size_t n = 0;
	const char *raw = elf_rawfile(elf, &n);

	return raw ? (uint32_t)crc32_z(0, (const Bytef *)raw, n) : 0;
}

/* Open `path` as the debug file of img.  A build-id, when both files have
 * one, must match; with `want_crc` the file's CRC32 must be `crc`. */
static int try_file(struct eng_image *img, const char *path, bool want_crc,
		    uint32_t crc, enum eng_debug_source src)
{
	char id2[2 * MAX_ID + 1];
	bool has_id2;
	Elf64_Ehdr *eh;

	img->dbg_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (img->dbg_fd < 0)
		return -ENOENT;
	img->dbg_elf = elf_begin(img->dbg_fd, ELF_C_READ_MMAP, NULL);
	eh = img->dbg_elf ? elf64_getehdr(img->dbg_elf) : NULL;
	has_id2 = eh != NULL && build_id(img->dbg_elf, id2) == 0;
	/* without a build-id in the candidate, only a CRC vouches for it */
	if (eh == NULL || eh->e_machine != EM_X86_64 ||
	    (img->build_id[0] != '\0' && has_id2 &&
	     strcmp(img->build_id, id2) != 0) ||
	    (img->build_id[0] != '\0' && !has_id2 && !want_crc) ||
	    (want_crc && file_crc(img->dbg_elf) != crc) ||
	    (img->dbg_path = strdup(path)) == NULL) {
		eng_sym_debug_close(img);
		return -ENOENT;
	}
	img->dbg_source = src;
	return 0;
}

static int by_build_id(struct eng_image *img)
{
	char path[sizeof(DEBUG_ROOT) + sizeof(img->build_id) + 16];

	if (img->build_id[0] == '\0')
		return -ENOENT;
	snprintf(path, sizeof(path), DEBUG_ROOT "/.build-id/%.2s/%s.debug",
		 img->build_id, img->build_id + 2);
	return try_file(img, path, false, 0, ENG_DEBUG_BUILD_ID);
}

/* Is `path` the image file itself (a debuglink naming its own file)? */
static bool same_file(const struct eng_image *img, const char *path)
{
	struct stat a, b;

	return fstat(img->fd, &a) == 0 && stat(path, &b) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* The .gnu_debuglink name in gdb's three places, relative to the folder
 * of the file's real path. */
static int by_debuglink(struct eng_image *img)
{
	GElf_Word crc = 0;
	const char *name = dwelf_elf_gnu_debuglink(img->elf, &crc);
	char real[PATH_MAX], path[2 * PATH_MAX];
	const char *fmt[] = { "%s/%s", "%s/.debug/%s", DEBUG_ROOT "%s/%s" };
	char *slash;

	if (name == NULL || name[0] == '\0' || strchr(name, '/') != NULL ||
	    realpath(img->path, real) == NULL ||
	    (slash = strrchr(real, '/')) == NULL)
		return -ENOENT;
	*slash = '\0';   /* the folder; "" for a file in / */
	for (size_t i = 0; i < sizeof(fmt) / sizeof(fmt[0]); i++) {
		snprintf(path, sizeof(path), fmt[i], real, name);
		if (!same_file(img, path) &&
		    try_file(img, path, true, crc, ENG_DEBUG_LINK) == 0)
			return 0;
	}
	return -ENOENT;
}

/* debuginfod's cache, or a fetch started in the background. */
static int by_debuginfod(struct eng_image *img)
{
	char *path;
	int rc;

	if (img->build_id[0] == '\0' || !eng_sym_debuginfod_enabled())
		return -ENOENT;
	path = eng_sym_debuginfod_cached(img->build_id);
	if (path != NULL) {
		rc = try_file(img, path, false, 0, ENG_DEBUG_DEBUGINFOD);
		free(path);
		if (rc == 0)
			return 0;
	}
	if (eng_sym_debuginfod_state(img->build_id) != ENG_DEBUGINFOD_DONE) {
		eng_sym_debuginfod_request(img->build_id, img->path);
		img->dbg_pending = eng_sym_debuginfod_state(img->build_id) ==
				   ENG_DEBUGINFOD_PENDING;
	}
	return -ENOENT;
}

int eng_sym_debug_open(struct eng_image *img)
{
	if (build_id(img->elf, img->build_id) < 0)
		img->build_id[0] = '\0';
	if (by_build_id(img) == 0 || by_debuglink(img) == 0 ||
	    by_debuginfod(img) == 0 || eng_sym_minidebug_open(img) == 0)
		return 0;
	return -ENOENT;
}

void eng_sym_debug_close(struct eng_image *img)
{
	if (img->dbg_elf)
		elf_end(img->dbg_elf);
	if (img->dbg_fd >= 0)
		close(img->dbg_fd);
	free(img->dbg_mem);
	free(img->dbg_path);
	img->dbg_elf = NULL;
	img->dbg_fd = -1;
	img->dbg_mem = NULL;
	img->dbg_path = NULL;
	img->dbg_source = ENG_DEBUG_NONE;
}

/* ---- accessors (declared in eng_image.h) ---------------------------- */

enum eng_debug_source eng_sym_debug_source(const struct eng_image *img)
{
	return img->dbg_source;
}

const char *eng_sym_debug_source_name(enum eng_debug_source s)
{
	switch (s) {
	case ENG_DEBUG_BUILD_ID: return "build-id";
	case ENG_DEBUG_LINK: return "debuglink";
	case ENG_DEBUG_DEBUGINFOD: return "debuginfod";
	case ENG_DEBUG_MINI: return "minidebuginfo";
	case ENG_DEBUG_NONE: break;
	}
	return "none";
}

bool eng_sym_debug_arrived(const struct eng_image *img)
{
	return img->dbg_pending &&
	       eng_sym_debuginfod_state(img->build_id) == ENG_DEBUGINFOD_DONE;
}

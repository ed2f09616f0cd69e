/*
 * eng_sym_debug.c - finding a stripped file's separate debug file.
 *
 * Debian's -dbg and -dbgsym packages install the symbol table and DWARF
 * that `strip` removed under /usr/lib/debug/.build-id/<xx>/<rest>.debug,
 * named by the file's GNU build-id note.  With libc6-dbg installed, libc
 * gains its local functions (start_thread, _int_malloc, __lll_lock_wait)
 * and its source files.  The build-id of the debug file is checked, so a
 * stale file from another build is never used.
 */
#include "eng_sym_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEBUG_ROOT "/usr/lib/debug/.build-id/"
#define MAX_ID 64

/* The GNU build-id note as lowercase hex; 0 or -ENOENT. */
static int build_id(Elf *elf, char hex[2 * MAX_ID + 1])
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		Elf64_Shdr *sh = elf64_getshdr(scn);
		Elf_Data *d;
		size_t off = 0, next, noff, doff;
		GElf_Nhdr nh;

		if (sh == NULL || sh->sh_type != SHT_NOTE)
			continue;
		d = elf_getdata(scn, NULL);
		if (d == NULL || d->d_buf == NULL)
			continue;
		while ((next = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
			const unsigned char *id = (const unsigned char *)
						  d->d_buf + doff;

			off = next;
			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
			    memcmp((const char *)d->d_buf + noff, "GNU", 4) ||
			    nh.n_descsz < 2 || nh.n_descsz > MAX_ID)
				continue;
			for (size_t i = 0; i < nh.n_descsz; i++)
				sprintf(hex + 2 * i, "%02x", id[i]);
			return 0;
		}
	}
	return -ENOENT;
}

int eng_sym_open_debug_file(struct eng_image *img)
{
	char id[2 * MAX_ID + 1], id2[2 * MAX_ID + 1];
	char path[sizeof(DEBUG_ROOT) + sizeof(id) + 8];
	Elf64_Ehdr *eh;

	if (build_id(img->elf, id) < 0)
		return -ENOENT;
	snprintf(path, sizeof(path), DEBUG_ROOT "%.2s/%s.debug", id, id + 2);
	img->dbg_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (img->dbg_fd < 0)
		return -ENOENT;
	img->dbg_elf = elf_begin(img->dbg_fd, ELF_C_READ_MMAP, NULL);
	eh = img->dbg_elf ? elf64_getehdr(img->dbg_elf) : NULL;
	if (eh == NULL || eh->e_machine != EM_X86_64 ||
	    build_id(img->dbg_elf, id2) < 0 || strcmp(id, id2) != 0 ||
	    (img->dbg_path = strdup(path)) == NULL) {
		eng_sym_close_debug_file(img);
		return -ENOENT;
	}
	return 0;
}

void eng_sym_close_debug_file(struct eng_image *img)
{
	if (img->dbg_elf)
		elf_end(img->dbg_elf);
	if (img->dbg_fd >= 0)
		close(img->dbg_fd);
	free(img->dbg_path);
	img->dbg_elf = NULL;
	img->dbg_fd = -1;
	img->dbg_path = NULL;
}

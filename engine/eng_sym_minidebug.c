/*
 * eng_sym_minidebug.c - MiniDebugInfo: the `.gnu_debugdata` section that
 * Fedora (and others) leave in stripped binaries.
 *
 * The section holds an xz-compressed ELF file whose `.symtab` lists the
 * functions that `.dynsym` does not (static and hidden functions), made
 * by `objcopy --only-keep-debug`, `objcopy -S --keep-symbols=...`, `xz`
 * and `objcopy --add-section .gnu_debugdata=...`.  We decompress it with
 * liblzma into memory and hand it to libelf (elf_memory), so the rest of
 * the reader treats it like any separate debug file: its `.symtab` is
 * read, its section headers clamp sizes, and its string table stays
 * mapped until the image closes.
 */
#include "eng_sym_int.h"

#include <errno.h>
#include <lzma.h>
#include <stdlib.h>
#include <string.h>

/* A damaged or hostile section must not make us allocate without bound:
 * real MiniDebugInfo is a few hundred KiB once decompressed. */
#define MINI_MAX_OUT (256u << 20)

/* The raw bytes of the section named `name`, or NULL. */
static const unsigned char *find_section(Elf *elf, const char *name,
					 size_t *len)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) < 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		Elf64_Shdr *sh = elf64_getshdr(scn);
		const char *nm;
		Elf_Data *d;

		if (sh == NULL || sh->sh_type == SHT_NOBITS)
			continue;
		nm = elf_strptr(elf, shstrndx, sh->sh_name);
		if (nm == NULL || strcmp(nm, name) != 0)
			continue;
		d = elf_rawdata(scn, NULL);
		if (d == NULL || d->d_buf == NULL || d->d_size == 0)
			return NULL;
		*len = d->d_size;
		return d->d_buf;
	}
	return NULL;
}

/* Decompress a whole .xz stream; 0 and *out malloc'd, or -errno. */
static int unxz(const unsigned char *in, size_t inlen, unsigned char **out,
		size_t *outlen)
{
	lzma_stream st = LZMA_STREAM_INIT;
	size_t cap = inlen * 4 + 4096;
	unsigned char *buf = malloc(cap);
	lzma_ret r;

	if (buf == NULL)
		return -ENOMEM;
	if (lzma_stream_decoder(&st, UINT64_MAX, 0) != LZMA_OK) {
		free(buf);
		return -ENOMEM;
	}
	st.next_in = in;
	st.avail_in = inlen;
	st.next_out = buf;
	st.avail_out = cap;
	while ((r = lzma_code(&st, LZMA_FINISH)) == LZMA_OK) {
		unsigned char *nb;

		if (st.avail_out != 0)
			continue;
		if (cap >= MINI_MAX_OUT)
			break;
		nb = realloc(buf, cap * 2);
		if (nb == NULL)
			break;
		buf = nb;
		st.next_out = buf + cap;
		st.avail_out = cap;
		cap *= 2;
	}
	*outlen = st.total_out;
	lzma_end(&st);
	if (r != LZMA_STREAM_END) {
		free(buf);
		return r == LZMA_MEM_ERROR ? -ENOMEM : -EINVAL;
	}
	*out = buf;
	return 0;
}

int eng_sym_minidebug_open(struct eng_image *img)
{
	const unsigned char *xz;
	unsigned char *mem = NULL;
	size_t xzlen = 0, len = 0;
	Elf64_Ehdr *eh;

	xz = find_section(img->elf, ".gnu_debugdata", &xzlen);
	if (xz == NULL || unxz(xz, xzlen, &mem, &len) < 0)
		return -ENOENT;
	img->dbg_elf = elf_memory((char *)mem, len);
	eh = img->dbg_elf ? elf64_getehdr(img->dbg_elf) : NULL;
	if (eh == NULL || eh->e_machine != EM_X86_64 ||
	    (img->dbg_path = strdup(img->path)) == NULL) {
		if (img->dbg_elf)
			elf_end(img->dbg_elf);
		img->dbg_elf = NULL;
		free(mem);
		return -ENOENT;
	}
	img->dbg_mem = mem;
	img->dbg_source = ENG_DEBUG_MINI;
	return 0;
}

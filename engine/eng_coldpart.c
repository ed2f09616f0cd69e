/*
 * eng_coldpart.c - telling a symbol-less cold part (gcc's `foo.cold` in
 * a stripped file) from a symbol-less static function (eng_coldpart.h).
 *
 * Both are a range of .eh_frame with no symbol at its start.  What sets
 * a cold part apart is its first CFI row: a function begins with the
 * return address on top of the stack (CFA = rsp+8), a cold part begins
 * in the middle of its function's frame (python3.11's has rsp+352).
 *
 * The file is opened again here (libelf, read-only mmap) rather than
 * borrowing the image's Elf handle: the image's inside is private to
 * eng_image, and this runs once per image that has jumps into code
 * without a symbol.
 */
#include "eng_coldpart.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <elfutils/libdw.h>
#include <dwarf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct eng_coldpart {
	int fd;
	Elf *elf;
	Dwarf_CFI *cfi;
	const uint8_t *hdr, *eh;   /* .eh_frame_hdr, .eh_frame contents */
	size_t hdr_len, eh_len;
	uint64_t hdr_addr, eh_addr;  /* their link-time addresses */
	uint64_t link_base;
	/* .text, where gcc's .text.unlikely ends up when linked.  The PLT
	 * has an FDE too whose CFA at its start is rsp+16 (after the push
	 * of its first entry): a tail jump there is no cold part. */
	uint64_t text_lo, text_hi;
};

static void find_sections(struct eng_coldpart *c)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(c->elf, &shstrndx) != 0)
		return;
	while ((scn = elf_nextscn(c->elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *name;
		Elf_Data *d;

		if (gelf_getshdr(scn, &sh) == NULL ||
		    sh.sh_type == SHT_NOBITS ||
		    (name = elf_strptr(c->elf, shstrndx, sh.sh_name)) == NULL)
			continue;
		if (strcmp(name, ".text") == 0) {
			c->text_lo = sh.sh_addr;
			c->text_hi = sh.sh_addr + sh.sh_size;
			continue;
		}
		if (strcmp(name, ".eh_frame_hdr") != 0 &&
		    strcmp(name, ".eh_frame") != 0)
			continue;
		if ((d = elf_getdata(scn, NULL)) == NULL || d->d_buf == NULL)
			continue;
		if (name[9] == '_') {
			c->hdr = d->d_buf;
			c->hdr_len = d->d_size;
			c->hdr_addr = sh.sh_addr;
		} else {
			c->eh = d->d_buf;
			c->eh_len = d->d_size;
			c->eh_addr = sh.sh_addr;
		}
	}
}

int eng_coldpart_open(const struct eng_image *img, struct eng_coldpart **out)
{
	struct eng_coldpart *c = calloc(1, sizeof(*c));

	*out = NULL;
	if (c == NULL)
		return -ENOMEM;
	c->link_base = eng_image_link_base(img);
	elf_version(EV_CURRENT);
	c->fd = open(eng_image_path(img), O_RDONLY | O_CLOEXEC);
	if (c->fd < 0 ||
	    (c->elf = elf_begin(c->fd, ELF_C_READ_MMAP, NULL)) == NULL) {
		eng_coldpart_close(c);
		return 0;   /* no unwind table to read: no cold parts found */
	}
	find_sections(c);
	c->cfi = dwarf_getcfi_elf(c->elf);
	*out = c;
	return 0;
}

void eng_coldpart_close(struct eng_coldpart *c)
{
	if (c == NULL)
		return;
	if (c->cfi != NULL)
		dwarf_cfi_end(c->cfi);
	if (c->elf != NULL)
		elf_end(c->elf);
	if (c->fd >= 0)
		close(c->fd);
	free(c);
}

static int32_t rd_s32(const uint8_t *p)
{
	int32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* The FDE covering link-time address `link` from .eh_frame_hdr's sorted
 * table (datarel sdata4 pairs): its range [*start, *end).  Only FDEs
 * whose pc_begin is pcrel sdata4 and pc_range 4 bytes (what gcc and
 * binutils emit) are read: pc_begin must agree with the table. */
static bool fde_range(const struct eng_coldpart *c, uint64_t link,
		      uint64_t *start, uint64_t *end)
{
	const uint8_t *h = c->hdr;
	size_t lo = 0, hi, n;
	uint64_t loc, fde, off, pc;
	uint32_t range;

	if (c->hdr_len < 12 || c->eh == NULL || h[0] != 1 ||
	    h[2] != 0x03 || h[3] != 0x3b)
		return false;
	n = (uint32_t)rd_s32(h + 8);
	if (12 + n * 8 > c->hdr_len)
		return false;
	hi = n;
	while (lo < hi) {   /* the first entry starting after link */
		size_t mid = lo + (hi - lo) / 2;

		if (c->hdr_addr + (uint64_t)(int64_t)rd_s32(h + 12 + mid * 8)
		    <= link)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return false;
	loc = c->hdr_addr + (uint64_t)(int64_t)rd_s32(h + 12 + (lo - 1) * 8);
	fde = c->hdr_addr + (uint64_t)(int64_t)rd_s32(h + 16 + (lo - 1) * 8);
	off = fde - c->eh_addr;
	if (fde < c->eh_addr || off + 16 > c->eh_len ||
	    rd_s32(c->eh + off) == -1)   /* 64-bit DWARF length: not ours */
		return false;
	pc = c->eh_addr + off + 8 + (uint64_t)(int64_t)rd_s32(c->eh + off + 8);
	memcpy(&range, c->eh + off + 12, 4);
	if (pc != loc || link < pc || link - pc >= range)
		return false;
	*start = pc;
	*end = pc + range;
	return true;
}

/* The CFA rule of the first row at `link` is rsp+8 (a function's start). */
static bool cfa_is_entry(const struct eng_coldpart *c, uint64_t link)
{
	Dwarf_Frame *fr = NULL;
	Dwarf_Op *ops = NULL;
	size_t nops = 0;
	bool entry = true;   /* unreadable: assume an ordinary function */

	if (c->cfi == NULL || dwarf_cfi_addrframe(c->cfi, link, &fr) != 0)
		return true;
	if (dwarf_frame_cfa(fr, &ops, &nops) == 0 && nops == 1 &&
	    ops[0].atom == DW_OP_bregx)
		entry = ops[0].number == 7 && ops[0].number2 == 8;
	free(fr);
	return entry;
}

int eng_coldpart_at(const struct eng_coldpart *c, uint64_t t,
		    uint64_t *start, uint64_t *end)
{
	uint64_t s, e;

	if (c == NULL || !fde_range(c, t + c->link_base, &s, &e))
		return -1;
	*start = s - c->link_base;
	*end = e - c->link_base;
	if (s < c->text_lo || e > c->text_hi)
		return 0;
	return !cfa_is_entry(c, s);
}

/*
 * eng_sym_plt.c - the function a PLT entry jumps to, by name: the entry's
 * `jmp *slot(%rip)` (after `endbr64` and `bnd` in .plt.sec) names its
 * GOT slot, and the JUMP_SLOT relocation of that slot names the symbol
 * the dynamic linker fills it with.  Images keep no function at a PLT
 * entry (eng_sym_fde.c leaves the PLT's FDEs out), so a call or tail
 * call to one is followed by name into the module that defines it.
 */
#include "eng_sym_plt.h"

#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The GOT slot (image-relative) a PLT entry at `at` jumps through:
 * `jmp *d(%rip)`, after `endbr64` and a `bnd` prefix in .plt.sec. */
static bool plt_slot(const struct eng_image *img, uint64_t at, uint64_t *slot)
{
	uint8_t b[16];
	size_t i = 0;
	int32_t d;

	if (eng_image_read(img, at, b, sizeof(b)) < 0)
		return false;
	if (b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa)
		i = 4;
	if (b[i] == 0xf2)
		i++;
	if (b[i] != 0xff || b[i + 1] != 0x25)
		return false;
	memcpy(&d, b + i + 2, 4);
	*slot = at + i + 6 + (uint64_t)(int64_t)d;
	return true;
}

/* The symbol whose JUMP_SLOT relocation fills `slot` (link-time). */
static bool slot_name(const char *path, uint64_t slot, char *name,
		      size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	Elf_Scn *scn = NULL;
	bool found = false;

	while (e != NULL && !found && (scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh, lsh;
		Elf_Data *d;
		Elf_Scn *sym;

		if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type != SHT_RELA ||
		    (sym = elf_getscn(e, sh.sh_link)) == NULL ||
		    gelf_getshdr(sym, &lsh) == NULL ||
		    (d = elf_getdata(scn, NULL)) == NULL)
			continue;
		for (size_t k = 0; sh.sh_entsize &&
		     k < sh.sh_size / sh.sh_entsize && !found; k++) {
			GElf_Rela r;
			GElf_Sym s;
			Elf_Data *sd = elf_getdata(sym, NULL);
			const char *nm;

			if (gelf_getrela(d, (int)k, &r) == NULL ||
			    r.r_offset != slot ||
			    GELF_R_TYPE(r.r_info) != R_X86_64_JUMP_SLOT ||
			    sd == NULL ||
			    gelf_getsym(sd, (int)GELF_R_SYM(r.r_info), &s) ==
			    NULL ||
			    (nm = elf_strptr(e, lsh.sh_link, s.st_name)) ==
			    NULL)
				continue;
			snprintf(name, len, "%s", nm);
			found = true;
		}
	}
	if (e != NULL)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	return found;
}

bool eng_sym_plt_name(const struct eng_image *img, uint64_t at, char *name,
		      size_t len)
{
	uint64_t slot;

	return img != NULL && plt_slot(img, at, &slot) &&
	       slot_name(eng_image_path(img),
			 slot + eng_image_link_base(img), name, len);
}

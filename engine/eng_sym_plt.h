/*
 * eng_sym_plt.h - the symbol a PLT entry reaches (eng_sym_plt.c).
 */
#ifndef ENG_SYM_PLT_H
#define ENG_SYM_PLT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eng_image.h"

/* The name of the function the PLT entry at image-relative `at` jumps
 * to, into name[len]; false when `at` is no PLT entry or its slot has no
 * JUMP_SLOT relocation.  Reads the image's file. */
bool eng_sym_plt_name(const struct eng_image *img, uint64_t at, char *name,
		      size_t len);

#endif

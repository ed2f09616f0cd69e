/*
 * eng_funcreloc_check.c - what whole-function relocation would do with
 * a function of a file, without a process (eng_funcreloc.h): the same
 * builder, parser and unwind-info rewriter as a live relocation, at an
 * address in reach of the code.
 */
#include "eng_funcreloc_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "eng_points.h"
#include "eng_image.h"
#include "x86_decode.h"
#include "x86_reloc.h"

struct eng_funcreloc_checker {
	struct x86_decoder *dec;
	struct x86_reloc *reloc;
	const struct eng_image *img;   /* whose unwind sections are open */
	struct fr_elf elf;
};

int eng_funcreloc_check_new(struct eng_funcreloc_checker **out)
{
	struct eng_funcreloc_checker *c = calloc(1, sizeof *c);

	if (c == NULL || x86_decode_open(&c->dec) < 0 ||
	    x86_reloc_open(&c->reloc) < 0) {
		eng_funcreloc_check_free(c);
		return -ENOMEM;
	}
	*out = c;
	return 0;
}

void eng_funcreloc_check_free(struct eng_funcreloc_checker *c)
{
	if (c == NULL)
		return;
	if (c->dec != NULL)
		x86_decode_close(c->dec);
	if (c->reloc != NULL)
		x86_reloc_close(c->reloc);
	eng_funcreloc_cfi_elf_close(&c->elf);
	free(c);
}

/* Copy parse and unwind info, as eng_funcreloc.c does them live. */
static enum eng_funcreloc_verdict
check_copy(struct eng_funcreloc_checker *c, struct eng_image *img,
	   const struct x86_func *xf, const struct x86_funcreloc *fr, uint64_t base,
	   enum eng_refusal *why)
{
	struct x86_parse_ctx ctx = { .read = x86_funcreloc_read, .arg = (void *)fr };
	struct x86_func cf;
	uint8_t *blob = NULL;
	size_t len;
	bool ok;
	int rc;

	if (x86_parse_function(c->dec, fr->code, fr->code_len, fr->to, &ctx,
			       &cf) < 0)
		return ENG_FUNCRELOC_REFUSED;
	ok = cf.npoints > 0;
	for (size_t i = 0; i < cf.npoints; i++)
		if (!cf.points[i].ok)
			ok = false;
	x86_parse_func_free(&cf);
	if (!ok)
		return *why = ENG_REFUSAL_FR_COPY_POINT, ENG_FUNCRELOC_REFUSED;
	rc = eng_funcreloc_cfi_build(
		&c->elf, xf->addr + eng_image_link_base(img),
		base - eng_image_link_base(img), fr, &blob, &len, why);
	free(blob);
	return rc < 0 ? ENG_FUNCRELOC_REFUSED : ENG_FUNCRELOC_RELOCATED;
}

enum eng_funcreloc_verdict
eng_funcreloc_check(struct eng_funcreloc_checker *c,
		    struct eng_points_cache *pc, struct eng_image *img,
		    const struct eng_func *f, enum eng_refusal *why)
{
	const uint64_t base = 0x100000000000ull;
	const struct x86_func *xf = eng_points_of(pc, img, f, NULL);
	enum eng_funcreloc_verdict v;
	struct x86_funcreloc fr;
	uint8_t *code;
	int rc;

	*why = ENG_REFUSAL_NONE;
	if (xf == NULL)
		return *why = ENG_REFUSAL_NO_MEMORY, ENG_FUNCRELOC_REFUSED;
	if (xf->ok)
		return ENG_FUNCRELOC_IN_PLACE;
	if ((*why = eng_refusal_of_x86(x86_funcreloc_refusal(xf))) != ENG_REFUSAL_NONE)
		return ENG_FUNCRELOC_REFUSED;
	if (c->img != img) {
		eng_funcreloc_cfi_elf_close(&c->elf);
		c->img = NULL;
		if (eng_funcreloc_cfi_elf_open(&c->elf, eng_image_path(img)) <
		    0)
			return *why = ENG_REFUSAL_FR_NO_UNWIND,
			       ENG_FUNCRELOC_REFUSED;
		c->img = img;
	}
	if ((code = malloc(xf->size + 1)) == NULL)
		return *why = ENG_REFUSAL_NO_MEMORY, ENG_FUNCRELOC_REFUSED;
	if (eng_image_read(img, xf->addr, code, xf->size) < 0) {
		free(code);
		return *why = ENG_REFUSAL_FR_NO_BYTES, ENG_FUNCRELOC_REFUSED;
	}
	rc = x86_funcreloc_build(c->reloc, c->dec, xf, base, code,
			  base + xf->addr + 0x20000000, &fr);
	free(code);
	if (rc < 0) {
		*why = fr.why ? eng_refusal_of_x86(fr.why) :
			ENG_REFUSAL_NO_MEMORY;
		x86_funcreloc_free(&fr);
		return ENG_FUNCRELOC_REFUSED;
	}
	v = check_copy(c, img, xf, &fr, base, why);
	x86_funcreloc_free(&fr);
	return v;
}

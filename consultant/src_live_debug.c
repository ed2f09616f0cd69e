/*
 * src_live_debug.c - giving the live source's modules the names of a
 * debug file fetched from debuginfod after they were opened (see
 * src_live_debug.h).
 */
#include "src_live_debug.h"

#include <string.h>

#include "eng_sym_debuginfod.h"

bool sld_changed(unsigned *gen)
{
	unsigned now = eng_sym_debuginfod_generation();

	if (now == *gen)
		return false;
	*gen = now;
	return true;
}

/* Was f known to old, same address and same name? */
static bool known(const struct eng_image *old, const struct eng_func *f)
{
	const struct eng_func *o = eng_image_func_at(old, f->addr);

	return o != NULL && o->addr == f->addr && strcmp(o->name, f->name) == 0;
}

struct eng_image *sld_upgrade(const char *path, struct eng_image *old,
			      sld_func_fn fn, void *arg)
{
	struct eng_image *img;

	if (old == NULL || !eng_image_debug_arrived(old) ||
	    eng_image_open(path, &img, NULL) < 0)
		return NULL;
	if (eng_image_debug_source(img) != ENG_DEBUG_DEBUGINFOD) {
		eng_image_close(img);   /* the cached file did not fit */
		return NULL;
	}
	for (size_t i = 0; fn != NULL && i < eng_image_nfuncs(img); i++) {
		const struct eng_func *f = eng_image_func(img, i);

		if (!known(old, f))
			fn(arg, img, f);
	}
	return img;
}

int sld_wait(int timeout_ms)
{
	return eng_sym_debuginfod_wait(timeout_ms);
}

bool sld_note(char *buf, size_t len)
{
	return eng_sym_debuginfod_note(buf, len);
}

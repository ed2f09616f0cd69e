/*
 * src_live_debug.c - giving the live source's modules the names of a
 * debug file fetched from debuginfod after they were opened (see
 * src_live_debug.h).
 */
#include "src_live_debug.h"
#include "src_live.h"

#include <string.h>

#include "eng_sym_debuginfod.h"

bool src_live_debug_changed(unsigned *gen)
{
	unsigned now = eng_sym_debuginfod_generation();

	if (now == *gen)
		return false;
	*gen = now;
	return true;
}

static bool same_src(struct eng_image *a, const struct eng_func *fa,
		     struct eng_image *b, const struct eng_func *fb)
{
	const char *sa = eng_sym_lazy_source_file(a, fa);
	const char *sb = eng_sym_lazy_source_file(b, fb);

	return sa == sb || (sa != NULL && sb != NULL && strcmp(sa, sb) == 0);
}

/* Does `in` have f (of img) at the same address, by the same name and in
 * the same source file, i.e. the same /Code resource? */
static bool same_in(struct eng_image *in, struct eng_image *img,
		    const struct eng_func *f)
{
	const struct eng_func *o = eng_image_func_at(in, f->addr);

	return o != NULL && o->addr == f->addr &&
	       strcmp(o->name, f->name) == 0 && same_src(in, o, img, f);
}

struct eng_image *src_live_debug_upgrade(const char *path,
					 struct eng_image *old,
					 src_live_debug_func_fn fn, void *arg)
{
	struct eng_image *img;

	if (old == NULL || !eng_sym_debug_arrived(old) ||
	    eng_image_open(path, &img, NULL) < 0)
		return NULL;
	if (eng_sym_debug_source(img) != ENG_DEBUG_DEBUGINFOD) {
		eng_image_close(img);   /* the cached file did not fit */
		return NULL;
	}
	for (size_t i = 0; fn != NULL && i < eng_image_nfuncs(old); i++) {
		const struct eng_func *f = eng_image_func(old, i);

		if (!same_in(img, old, f))
			fn(arg, old, f, true);
	}
	for (size_t i = 0; fn != NULL && i < eng_image_nfuncs(img); i++) {
		const struct eng_func *f = eng_image_func(img, i);

		if (!same_in(old, img, f))
			fn(arg, img, f, false);
	}
	return img;
}

int src_live_debug_wait(int timeout_ms)
{
	return eng_sym_debuginfod_wait(timeout_ms);
}

bool src_live_debug_note(char *buf, size_t len)
{
	return eng_sym_debuginfod_note(buf, len);
}

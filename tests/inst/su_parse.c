/*
 * su_parse.c - the points of one function for the instrumentation
 * tests, from the engine's own parser (eng_points_parse: the same
 * context the engine gives it, cold parts, branches from other
 * functions, the padding after the function), into an x86_func the test
 * owns and may change (inst_sigtrap turns every point into a trap).
 *
 * It once was a stand-in linear decoder, written before the real parser
 * existed; the tests then checked exact counts with points the engine
 * would never choose (a 3-byte function borrowing padding went to
 * traps here and in place in hunch).
 */
#include "inst_util.h"

#include "eng_points.h"

static struct eng_points_cache *cache;

int su_parse(const struct eng_image *img, const struct eng_func *f,
	     struct x86_func *out)
{
	struct hunch_err err = { 0 };

	if (cache == NULL && eng_points_cache_new(&cache, &err) < 0)
		return -1;
	return eng_points_parse(cache, (struct eng_image *)img, f, out, &err);
}

void su_free(struct x86_func *f)
{
	x86_parse_func_free(f);
}

void su_forget(const struct eng_image *img)
{
	if (cache != NULL)
		eng_points_forget(cache, img);
}

/*
 * eng_points.h - the instrumentation points of a module's functions,
 * parsed on first use and cached per image.
 *
 * An image (eng_image.h) is shared by every process that maps the file,
 * and so is its cache entry: a function is decoded once per file, never
 * per process.  Addresses in the returned x86_func are image-relative
 * (add the module's load base for runtime addresses).
 *
 * Not thread-safe: the engine's one thread uses it (DESIGN §1).  The
 * first use of an image decodes all of its functions once for branches
 * from one function into the middle of another (about 0.2 s for
 * libLLVM-14, a few ms for libc); each function is then parsed on its
 * first request.
 *
 * gcc's hot/cold splitting (`foo` and `foo.cold`) is handled here: each
 * part is parsed knowing the other (jumps between them are not exits, and
 * jumps back from the cold part are branch targets inside `foo`).
 * Stripped files have no `foo.cold` symbol: a jump from foo into code no
 * symbol covers, in an unwind (FDE) range of .text whose CFA at its
 * start is not rsp+8, makes that range foo's cold part (eng_coldpart.h;
 * the first function in address order that jumps there gets it).  The
 * cold part's own exits (a `ret` in it) are not foo's points: the
 * instrumentation of foo does not see them, as with a named cold part.
 */
#ifndef ENG_POINTS_H
#define ENG_POINTS_H

#include <stddef.h>

#include "hunch_err.h"
#include "eng_image.h"
/* arch/ is not on every includer's path (the hunch executable has only
 * engine/): reach x86_parse.h from here. */
#include "x86_parse.h"

struct eng_points_cache;

int eng_points_cache_new(struct eng_points_cache **out,
			 struct hunch_err *err);
void eng_points_cache_free(struct eng_points_cache *c);

/* The parsed function, owned by the cache (valid until the image is
 * forgotten or the cache freed), or NULL with err filled (out of
 * memory).  A function whose bytes are not in the file comes back
 * refused with a reason, not as an error. */
const struct x86_func *eng_points_of(struct eng_points_cache *c,
				     struct eng_image *img,
				     const struct eng_func *f,
				     struct hunch_err *err);

/* The same parse, with the same context (cold parts, branches from
 * other functions, the padding after it), into `out`, which the caller
 * owns and frees with x86_parse_func_free (tests change points in it).
 * 0, or a negative errno with err filled. */
int eng_points_parse(struct eng_points_cache *c, struct eng_image *img,
		     const struct eng_func *f, struct x86_func *out,
		     struct hunch_err *err);

/* Drop what is cached for an image (call before eng_image_close). */
void eng_points_forget(struct eng_points_cache *c,
		       const struct eng_image *img);

/* Functions parsed so far in this cache (all images), for diagnostics. */
size_t eng_points_parsed(const struct eng_points_cache *c);

#endif

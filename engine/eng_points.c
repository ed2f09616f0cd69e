/*
 * eng_points.c - per-image lazy cache of parsed functions (eng_points.h).
 */
#include "eng_points.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eng_coldpart.h"
#include "x86_decode.h"
#include "eng_fault.h"


#define NO_SIBLING UINT32_MAX

struct img_entry {
	const struct eng_image *img;
	size_t nfuncs;
	struct x86_func **funcs;   /* by function index, NULL until parsed */
	uint32_t *sibling;         /* hot <-> cold part, or NO_SIBLING;
	                              nfuncs + k: cold[k] */
	struct eng_func *cold;     /* symbol-less cold parts (stripped) */
	size_t ncold;
	uint64_t *foreign;         /* branch targets inside one function from
	                              another, sorted */
	size_t nforeign;
};

struct eng_points_cache {
	struct x86_decoder *dec;
	struct img_entry *imgs;
	size_t nimgs;
	size_t parsed;
};

int eng_points_cache_new(struct eng_points_cache **out, struct hunch_err *err)
{
	struct eng_points_cache *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return hunch_err_set(err, -ENOMEM, "out of memory for the "
				  "points cache");
	if (x86_decode_open(&c->dec) < 0) {
		free(c);
		return hunch_err_set(err, -EINVAL, "cannot open the x86-64 "
				  "decoder (capstone)");
	}
	*out = c;
	return 0;
}

static void free_entry(struct img_entry *e)
{
	for (size_t i = 0; i < e->nfuncs; i++) {
		if (e->funcs[i] != NULL) {
			x86_parse_func_free(e->funcs[i]);
			free(e->funcs[i]);
		}
	}
	free(e->funcs);
	free(e->sibling);
	free(e->foreign);
	for (size_t k = 0; k < e->ncold; k++)
		free((char *)e->cold[k].name);
	free(e->cold);
}

void eng_points_cache_free(struct eng_points_cache *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < c->nimgs; i++)
		free_entry(&c->imgs[i]);
	free(c->imgs);
	x86_decode_close(c->dec);
	free(c);
}

void eng_points_forget(struct eng_points_cache *c, const struct eng_image *img)
{
	for (size_t i = 0; i < c->nimgs; i++) {
		if (c->imgs[i].img != img)
			continue;
		free_entry(&c->imgs[i]);
		c->imgs[i] = c->imgs[--c->nimgs];
		return;
	}
}

size_t eng_points_parsed(const struct eng_points_cache *c)
{
	return c->parsed;
}

/* Pair every `foo.cold` (gcc also numbers them: `foo.cold.3`) with foo,
 * once per image: names are looked up only for the few cold parts. */
static int find_siblings(struct img_entry *e, const struct eng_image *img)
{
	const struct eng_func *first = eng_image_func(img, 0);

	e->sibling = malloc((e->nfuncs ? e->nfuncs : 1) * sizeof(uint32_t));
	if (e->sibling == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < e->nfuncs; i++)
		e->sibling[i] = NO_SIBLING;
	for (size_t i = 0; i < e->nfuncs && e->nfuncs < NO_SIBLING; i++) {
		const struct eng_func *f = eng_image_func(img, i), *hot;
		const char *dot = strstr(f->name, ".cold");
		char name[512];

		if (dot == NULL || (size_t)(dot - f->name) >= sizeof(name))
			continue;
		memcpy(name, f->name, (size_t)(dot - f->name));
		name[dot - f->name] = '\0';
		hot = eng_sym_lazy_func_by_name(img, name);
		if (hot == NULL || hot == f || hot->size == 0 || f->size == 0)
			continue;
		e->sibling[i] = (uint32_t)(hot - first);
		e->sibling[hot - first] = (uint32_t)i;
	}
	return 0;
}

/* A direct branch from function `fi` to code no symbol covers. */
struct orphan {
	uint64_t target;
	size_t fi;
};

struct fscan {
	const struct eng_image *img;
	const struct eng_func *f;
	size_t fi;
	uint64_t *v;
	size_t n, cap;
	struct orphan *o;
	size_t no, ocap;
};

static int add_orphan(struct fscan *fs, uint64_t t)
{
	if (fs->no > 0 && fs->o[fs->no - 1].target == t &&
	    fs->o[fs->no - 1].fi == fs->fi)
		return 0;
	if (fs->no == fs->ocap) {
		size_t nc = fs->ocap ? 2 * fs->ocap : 64;
		struct orphan *o = realloc(fs->o, nc * sizeof(*o));

		if (o == NULL)
			return -ENOMEM;
		fs->o = o;
		fs->ocap = nc;
	}
	fs->o[fs->no++] = (struct orphan){ t, fs->fi };
	return 0;
}

static int on_target(void *arg, uint64_t from, uint64_t t)
{
	struct fscan *fs = arg;
	const struct eng_func *g;

	(void)from;
	if (t - fs->f->addr < fs->f->size)
		return 0;
	g = eng_image_func_at(fs->img, t);
	if (g == NULL)
		return add_orphan(fs, t);
	if (g->addr == t)
		return 0;
	if (fs->n == fs->cap) {
		size_t nc = fs->cap ? 2 * fs->cap : 64;
		uint64_t *v = realloc(fs->v, nc * sizeof(*v));

		if (v == NULL)
			return -ENOMEM;
		fs->v = v;
		fs->cap = nc;
	}
	fs->v[fs->n++] = t;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_orphan(const void *a, const void *b)
{
	const struct orphan *x = a, *y = b;

	if (x->target != y->target)
		return x->target < y->target ? -1 : 1;
	return x->fi < y->fi ? -1 : x->fi > y->fi;
}

/* Make [s, end) the cold part of function fi, named "<fi's name>.cold". */
static int add_cold(struct img_entry *e, const struct eng_image *img,
		    size_t fi, uint64_t s, uint64_t end)
{
	const struct eng_func *hot = eng_image_func(img, fi);
	size_t len = strlen(hot->name);
	struct eng_func *v;
	char *name;

	if (e->nfuncs + e->ncold + 1 >= NO_SIBLING)
		return 0;
	v = realloc(e->cold, (e->ncold + 1) * sizeof(*v));
	if (v == NULL)
		return -ENOMEM;
	e->cold = v;
	if ((name = malloc(len + sizeof(".cold"))) == NULL)
		return -ENOMEM;
	memcpy(name, hot->name, len);
	memcpy(name + len, ".cold", sizeof(".cold"));
	e->cold[e->ncold] = (struct eng_func){ .addr = s, .size = end - s,
					       .name = name };
	e->sibling[fi] = (uint32_t)(e->nfuncs + e->ncold++);
	return 0;
}

/* Stripped files keep no `foo.cold` symbol.  A jump from function F
 * into code no symbol covers, in an unwind range that begins inside a
 * frame (eng_coldpart.h), is a jump into F's cold part.  The range goes
 * to the first function (lowest index) that jumps into it and has no
 * other part yet. */
static int find_nameless_cold(struct img_entry *e, const struct eng_image *img,
			      struct orphan *o, size_t n)
{
	struct eng_coldpart *cp;
	uint64_t s = 1, end = 0;   /* the last range looked up */
	bool cold = false, taken = false;
	int rc = 0;

	if ((rc = eng_coldpart_open(img, &cp)) < 0 || cp == NULL)
		return rc;
	qsort(o, n, sizeof(*o), cmp_orphan);
	for (size_t k = 0; k < n && rc == 0; k++) {
		uint64_t t = o[k].target;

		if (t < s || t >= end) {   /* a new range */
			int r = eng_coldpart_at(cp, t, &s, &end);

			if (r < 0) {
				s = t;
				end = t + 1;
			}
			cold = r == 1 && eng_image_func_at(img, s) == NULL &&
			       eng_image_func_at(img, end - 1) == NULL;
			taken = false;
		}
		if (!cold || taken || e->sibling[o[k].fi] != NO_SIBLING)
			continue;
		rc = add_cold(e, img, o[k].fi, s, end);
		taken = true;
	}
	eng_coldpart_close(cp);
	return rc;
}

/* Branches from one function into the middle of another (glibc's
 * assembly shares tails between functions; cold parts jump back): the
 * other function's parse must know them, whichever is parsed first.  So
 * the first use of an image decodes all of it once for direct branch
 * targets (tables first: about as long as parsing it all). */
static int find_foreign(struct eng_points_cache *c, struct img_entry *e,
			const struct eng_image *img)
{
	struct fscan fs = { .img = img };
	uint8_t *buf = NULL;
	size_t cap = 0;
	int rc = 0;

	for (size_t i = 0; i < e->nfuncs && rc == 0; i++) {
		fs.f = eng_image_func(img, i);
		fs.fi = i;
		if (fs.f->size > cap) {
			uint8_t *nb = realloc(buf, fs.f->size);

			if (nb == NULL) {
				rc = -ENOMEM;
				break;
			}
			buf = nb;
			cap = fs.f->size;
		}
		if (fs.f->size == 0 ||
		    eng_image_read(img, fs.f->addr, buf, fs.f->size) != 0)
			continue;
		rc = x86_parse_direct_targets(c->dec, buf, fs.f->size,
					      fs.f->addr, on_target, &fs);
	}
	free(buf);
	if (rc == 0 && fs.no > 0)
		rc = find_nameless_cold(e, img, fs.o, fs.no);
	free(fs.o);
	if (rc < 0) {
		free(fs.v);
		return rc;
	}
	if (fs.n > 0)
		qsort(fs.v, fs.n, sizeof(*fs.v), cmp_u64);
	e->foreign = fs.v;
	e->nforeign = fs.n;
	return 0;
}

static struct img_entry *entry_for(struct eng_points_cache *c,
				   const struct eng_image *img)
{
	struct img_entry *e;

	for (size_t i = 0; i < c->nimgs; i++)
		if (c->imgs[i].img == img)
			return &c->imgs[i];
	e = realloc(c->imgs, (c->nimgs + 1) * sizeof(*e));
	if (e == NULL)
		return NULL;
	c->imgs = e;
	e = &c->imgs[c->nimgs];
	*e = (struct img_entry){ .img = img,
				 .nfuncs = eng_image_nfuncs(img) };
	e->funcs = calloc(e->nfuncs ? e->nfuncs : 1, sizeof(*e->funcs));
	if (e->funcs == NULL || find_siblings(e, img) < 0 ||
	    find_foreign(c, e, img) < 0) {
		free(e->funcs);
		free(e->sibling);
		for (size_t k = 0; k < e->ncold; k++)
			free((char *)e->cold[k].name);
		free(e->cold);
		return NULL;
	}
	c->nimgs++;
	return e;
}

static int read_image(void *arg, uint64_t addr, void *buf, size_t len)
{
	return eng_image_read(arg, addr, buf, len);
}

static int parse_raw(struct eng_points_cache *c, const struct eng_image *img,
		     const struct eng_func *f, const struct x86_parse_ctx *ctx,
		     struct x86_func *out)
{
	struct x86_parse_ctx tctx = *ctx;
	uint8_t *code = malloc(f->size + ctx->tail_max + 1);
	int rc;

	if (code == NULL)
		return -ENOMEM;
	if (tctx.tail_max > 0 &&
	    eng_image_read(img, f->addr, code, f->size + tctx.tail_max) != 0)
		tctx.tail_max = 0;   /* the end of a section */
	if (tctx.tail_max == 0 &&
	    eng_image_read(img, f->addr, code, f->size) != 0) {
		free(code);
		memset(out, 0, sizeof(*out));
		out->addr = f->addr;
		out->size = f->size;
		out->why = X86_REFUSAL_NO_BYTES;
		return 0;
	}
	rc = x86_parse_function(c->dec, code, f->size, f->addr, &tctx, out);
	free(code);
	return rc;
}

/* The bytes after f up to the next function or nameless cold part (at
 * most 15: functions are aligned to 16 at most, and 4 are all a point
 * can need), which no symbol covers: the parser may borrow the padding
 * among them (x86_parse_ctx.tail_max). */
static uint32_t tail_room(const struct img_entry *e, const struct eng_func *f,
			  size_t i)
{
	uint64_t end = f->addr + f->size, next = end + 15;

	/* For tests of whole-function relocation, whose targets' small
	 * functions would otherwise fit in place (and to compare). */
	if (eng_fault_no_tailpad())
		return 0;
	if (eng_image_func_at(e->img, end) != NULL)
		return 0;   /* overlapping symbols: not padding */
	if (i + 1 < e->nfuncs) {
		const struct eng_func *n = eng_image_func(e->img, i + 1);

		if (n->addr < next)
			next = n->addr;
	}
	for (size_t k = 0; k < e->ncold; k++)
		if (e->cold[k].addr >= end && e->cold[k].addr < next)
			next = e->cold[k].addr;
	return next > end ? (uint32_t)(next - end) : 0;
}

/* Jumps from the sibling part into f: targets inside f. */
static int sibling_targets(struct eng_points_cache *c,
			   const struct eng_image *img,
			   const struct eng_func *f, const struct eng_func *sib,
			   struct x86_parse_ctx *ctx, struct x86_range *range)
{
	struct x86_parse_ctx sctx = *ctx;
	struct x86_func sf;
	uint64_t *t;
	size_t n = 0;
	int rc;

	/* The sibling, parsed knowing f is its other part, reports its
	 * jumps and table entries into f. */
	*range = (struct x86_range){ f->addr, f->addr + f->size };
	sctx.also_inside = range;
	sctx.nalso_inside = 1;
	sctx.extra_targets = NULL;
	sctx.nextra_targets = 0;
	rc = parse_raw(c, img, sib, &sctx, &sf);
	if (rc < 0)
		return rc;
	n = sf.noutside_targets;
	t = malloc((n ? n : 1) * sizeof(*t));
	if (t == NULL) {
		x86_parse_func_free(&sf);
		return -ENOMEM;
	}
	if (n > 0)
		memcpy(t, sf.outside_targets, n * sizeof(*t));
	x86_parse_func_free(&sf);
	ctx->extra_targets = t;
	ctx->nextra_targets = n;
	*range = (struct x86_range){ sib->addr, sib->addr + sib->size };
	ctx->also_inside = range;
	ctx->nalso_inside = 1;
	return 0;
}

/* Append the foreign targets inside f to ctx->extra_targets (owned). */
static int add_foreign(const struct img_entry *e, const struct eng_func *f,
		       struct x86_parse_ctx *ctx)
{
	size_t lo = 0, hi = e->nforeign, n;
	uint64_t *t;

	while (lo < hi) {  /* the first target >= f->addr */
		size_t mid = lo + (hi - lo) / 2;

		if (e->foreign[mid] < f->addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (n = 0; lo + n < e->nforeign &&
		    e->foreign[lo + n] - f->addr < f->size; n++)
		;
	if (n == 0)
		return 0;
	t = realloc((void *)ctx->extra_targets,
		    (ctx->nextra_targets + n) * sizeof(*t));
	if (t == NULL)
		return -ENOMEM;
	memcpy(t + ctx->nextra_targets, e->foreign + lo, n * sizeof(*t));
	ctx->extra_targets = t;
	ctx->nextra_targets += n;
	return 0;
}

static int parse_func(struct eng_points_cache *c, const struct img_entry *e,
		      const struct eng_func *f, size_t i, struct x86_func *out)
{
	const struct eng_image *img = e->img;
	struct x86_parse_ctx ctx = {
		.read = read_image, .arg = (void *)img,
		.abs_base = eng_image_link_base(img),
	};
	uint32_t si = e->sibling[i];
	const struct eng_func *sib = si == NO_SIBLING ? NULL :
		si >= e->nfuncs ? &e->cold[si - e->nfuncs] :
		eng_image_func(img, si);
	struct x86_range range;
	int rc;

	if (sib != NULL &&
	    (rc = sibling_targets(c, img, f, sib, &ctx, &range)) < 0)
		return rc;
	if ((rc = add_foreign(e, f, &ctx)) < 0) {
		free((void *)ctx.extra_targets);
		return rc;
	}
	if (i < e->nfuncs)
		ctx.tail_max = tail_room(e, f, i);
	rc = parse_raw(c, img, f, &ctx, out);
	free((void *)ctx.extra_targets);
	return rc;
}

int eng_points_parse(struct eng_points_cache *c, struct eng_image *img,
		     const struct eng_func *f, struct x86_func *out,
		     struct hunch_err *err)
{
	struct img_entry *e = entry_for(c, img);
	const struct eng_func *first = eng_image_func(img, 0);
	int rc;

	memset(out, 0, sizeof(*out));
	if (e == NULL)
		return hunch_err_set(err, -ENOMEM, "out of memory parsing %s",
				  eng_image_name(img));
	if (first == NULL || f < first || (size_t)(f - first) >= e->nfuncs)
		return hunch_err_set(err, -EINVAL, "function %s is not one of "
				  "%s's", f ? f->name : "(null)",
				  eng_image_name(img));
	rc = parse_func(c, e, f, (size_t)(f - first), out);
	return rc < 0 ? hunch_err_set(err, rc, "out of memory parsing %s in %s",
				   f->name, eng_image_name(img)) : 0;
}

const struct x86_func *eng_points_of(struct eng_points_cache *c,
				     struct eng_image *img,
				     const struct eng_func *f,
				     struct hunch_err *err)
{
	struct img_entry *e = entry_for(c, img);
	const struct eng_func *first = eng_image_func(img, 0);
	size_t i;
	int rc;

	if (e == NULL) {
		hunch_err_set(err, -ENOMEM, "out of memory parsing %s",
			   eng_image_name(img));
		return NULL;
	}
	if (first == NULL || f < first || (size_t)(f - first) >= e->nfuncs) {
		hunch_err_set(err, -EINVAL, "function %s is not one of %s's",
			   f ? f->name : "(null)", eng_image_name(img));
		return NULL;
	}
	i = (size_t)(f - first);
	if (e->funcs[i] != NULL)
		return e->funcs[i];
	e->funcs[i] = calloc(1, sizeof(struct x86_func));
	if (e->funcs[i] == NULL ||
	    (rc = parse_func(c, e, f, i, e->funcs[i])) < 0) {
		free(e->funcs[i]);
		e->funcs[i] = NULL;
		hunch_err_set(err, -ENOMEM, "out of memory parsing %s in %s",
			   f->name, eng_image_name(img));
		return NULL;
	}
	c->parsed++;
	return e->funcs[i];
}

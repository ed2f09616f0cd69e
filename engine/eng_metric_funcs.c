/*
 * eng_metric_funcs.c - the where-part of MDL, evaluated in hunch: which
 * functions of the process a clause names (foreach lists with missing
 * names dropped silently, every function, the start functions, the
 * focus' functions).
 */
#include "eng_metric_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "eng_funcreloc.h"
#include "eng_proc.h"
#include "eng_sampler.h"

static void mod_close(struct mmod *mm)
{
	free(mm->path);
	eng_image_close(mm->img);
	memset(mm, 0, sizeof *mm);
}

/* An image whose debug file arrived from debuginfod is opened again (the
 * functions it names become reachable); the old one stays open until the
 * metric compiler is freed. */
static int retire_arrived(struct eng_metric *m)
{
	for (size_t j = 0; j < m->nmods; j++) {
		struct eng_image *img = m->mods[j].img;
		void *v;

		if (img == NULL || !eng_sym_debug_arrived(img))
			continue;
		v = realloc(m->old_imgs, (m->nold + 1) * sizeof(*m->old_imgs));
		if (v == NULL)
			return -ENOMEM;
		m->old_imgs = v;
		m->old_imgs[m->nold++] = img;
		if (m->pc != NULL)
			eng_points_forget(m->pc, img);
		m->mods[j].img = NULL;
	}
	return 0;
}

/* The module list grows with dlopen; images are opened once per path,
 * and again when a debug file arrived for one (retire_arrived). */
int eng_metric_funcs_refresh(struct eng_metric *m, struct hunch_err *err)
{
	size_t n = eng_solib_nmodules(m->p);
	struct mmod *mods;

	if (n == m->nmods) {
		size_t i = 0;

		while (i < n && strcmp(m->mods[i].path,
				       eng_solib_module(m->p, i)->path) == 0 &&
		       !(m->mods[i].img &&
			 eng_sym_debug_arrived(m->mods[i].img)))
			i++;
		if (i == n)
			return 0;
	}
	mods = calloc(n + 1, sizeof *mods);
	if (mods == NULL || retire_arrived(m) < 0) {
		free(mods);
		return hunch_err_set(err, -ENOMEM,
				  "metric compiler: out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		const struct eng_module *em = eng_solib_module(m->p, i);

		mods[i].path = strdup(em->path);
		for (size_t j = 0; j < m->nmods; j++)
			if (m->mods[j].img != NULL &&
			    strcmp(m->mods[j].path, em->path) == 0) {
				mods[i].img = m->mods[j].img;
				m->mods[j].img = NULL;
			}
		if (mods[i].img == NULL &&
		    eng_image_open(em->path, &mods[i].img, NULL) < 0)
			mods[i].img = NULL;   /* unreadable: no functions */
		if (mods[i].img != NULL)
			mods[i].base = em->bias +
				       eng_image_link_base(mods[i].img);
		/* points too small for a jmp: relocate their function
		 * before falling back to traps (eng_funcreloc.h) */
		if (mods[i].img != NULL)
			eng_funcreloc_module(m->in, em->path, em->bias, NULL);
	}
	for (size_t j = 0; j < m->nmods; j++) {
		if (m->mods[j].img != NULL && m->pc != NULL)
			eng_points_forget(m->pc, m->mods[j].img);
		mod_close(&m->mods[j]);
	}
	free(m->mods);
	m->mods = mods;
	m->nmods = n;
	m->nrel = 0;   /* the functions those answers were about are gone */
	return 0;
}

struct flist {
	struct mfunc *v;
	size_t n, cap;
};

static int fl_add(struct flist *l, const struct mmod *mm,
		  const struct eng_func *f)
{
	if (f == NULL || f->size == 0)
		return 0;
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].f == f)
			return 0;     /* an alias of one already named */
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		struct mfunc *v = realloc(l->v, cap * sizeof *v);

		if (v == NULL)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n].mod = mm;
	l->v[l->n++].f = f;
	return 0;
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

static bool mod_matches(const struct mmod *mm, const char *module)
{
	return mm->img != NULL &&
	       (module == NULL || strcmp(base_name(mm->path), module) == 0);
}

/* The first module defining `name` wins, as symbol interposition does
 * (the executable first). */
static int add_name(struct eng_metric *m, struct flist *l, const char *module,
		    const char *name)
{
	for (size_t i = 0; i < m->nmods; i++) {
		const struct eng_func *f;

		if (!mod_matches(&m->mods[i], module))
			continue;
		f = eng_sym_lazy_func_by_name(m->mods[i].img, name);
		if (f != NULL && f->size > 0)
			return fl_add(l, &m->mods[i], f);
	}
	return 0;
}

/* The function that starts exactly at addr, and its module; NULL if none. */
static const struct eng_func *func_starting_at(struct eng_metric *m,
					       uint64_t addr,
					       const struct mmod **mod)
{
	for (size_t i = 0; addr != 0 && i < m->nmods; i++) {
		const struct mmod *mm = &m->mods[i];
		const struct eng_func *f;

		if (mm->img == NULL || addr < mm->base)
			continue;
		f = eng_image_func_at(mm->img, addr - mm->base);
		if (f != NULL && f->addr == addr - mm->base) {
			*mod = mm;
			return f;
		}
	}
	return NULL;
}

static int add_addr(struct eng_metric *m, struct flist *l, uint64_t addr)
{
	const struct mmod *mm;
	const struct eng_func *f = func_starting_at(m, addr, &mm);

	return f != NULL ? fl_add(l, mm, f) : 0;
}

/* main, and the start routine of every thread the sampler knows. */
static int add_start(struct eng_metric *m, struct flist *l)
{
	const struct eng_sampler_stats *st = eng_sampler_stats(m->smp);
	int rc = add_addr(m, l, eng_proc_main(m->p));

	for (uint32_t i = 0; rc == 0 && i <= st->max_index; i++) {
		struct eng_thread_info ti;

		if (eng_sampler_thread(m->smp, i, &ti) == 0)
			rc = add_addr(m, l, ti.start_fn);
	}
	return rc;
}

static int add_module_funcs(struct flist *l, const struct mmod *mm,
			    const char *srcfile)
{
	size_t nf = eng_image_nfuncs(mm->img);
	int rc = 0;

	for (size_t k = 0; rc == 0 && k < nf; k++) {
		const struct eng_func *f = eng_image_func(mm->img, k);
		const char *src;

		if (srcfile != NULL) {
			src = eng_sym_lazy_source_basename(mm->img, f);
			if (src == NULL || strcmp(src, srcfile) != 0)
				continue;
		}
		rc = fl_add(l, mm, f);
	}
	return rc;
}

static int add_focus(struct eng_metric *m, struct flist *l,
		     const struct eng_mfocus *f)
{
	int rc = 0;

	switch (f->code) {
	case ENG_CODE_ALL:
		return 0;
	case ENG_CODE_FUNCTION:
		return add_name(m, l, f->module, f->function);
	case ENG_CODE_MODULE:
	case ENG_CODE_FILE:
		for (size_t i = 0; rc == 0 && i < m->nmods; i++)
			if (mod_matches(&m->mods[i], f->module))
				rc = add_module_funcs(l, &m->mods[i],
					f->code == ENG_CODE_FILE ?
					f->srcfile : NULL);
		return rc;
	}
	return 0;
}

/* A /SyncObject/<class> focus keeps the functions of that class. */
static void keep_class(struct flist *l, enum eng_seen_class cls)
{
	size_t k = 0;

	for (size_t i = 0; i < l->n; i++)
		if (eng_metric_seen_class(l->v[i].f->name) == (int)cls)
			l->v[k++] = l->v[i];
	l->n = k;
}

int eng_metric_funcs_of(struct eng_metric *m, const struct eng_mclause *c,
	      const struct eng_mfocus *f, struct mfunc **out, size_t *n,
	      struct hunch_err *err)
{
	struct flist l = { 0 };
	int rc = eng_metric_funcs_refresh(m, err);

	if (rc < 0)
		return rc;
	switch (c->funcs) {
	case ENG_MF_NAMES:
		for (size_t i = 0; rc == 0 && i < c->nnames; i++)
			rc = add_name(m, &l, NULL, c->names[i]);
		break;
	case ENG_MF_PROCEDURES:
		if (m->nmods > 0 && m->mods[0].img != NULL)
			rc = add_module_funcs(&l, &m->mods[0], NULL);
		break;
	case ENG_MF_START:
		rc = add_start(m, &l);
		break;
	case ENG_MF_FOCUS:
		rc = add_focus(m, &l, f);
		break;
	}
	if (rc < 0) {
		free(l.v);
		return hunch_err_set(err, rc, "metric compiler: out of memory");
	}
	if (f->has_class && c->funcs != ENG_MF_FOCUS)
		keep_class(&l, f->cls);
	*out = l.v;
	*n = l.n;
	return 0;
}

/* Calls through the PLT land on a PLT entry named by no symbol: the
 * entry's GOT slot is not followed here, so a callee filter also accepts
 * the function the entry is named after when the parser knows it ("x@plt"). */
const char *eng_metric_funcs_name_at(struct eng_metric *m, uint64_t addr)
{
	const struct mmod *mm;
	const struct eng_func *f = func_starting_at(m, addr, &mm);

	return f != NULL ? f->name : NULL;
}

double eng_metric_funcs_rate(const struct eng_metric *m, const struct mfunc *fn)
{
	for (size_t i = 0; i < m->nrates; i++) {
		const struct mrate *r = &m->rates[i];

		if (strcmp(r->function, fn->f->name) == 0 &&
		    (r->module == NULL ||
		     strcmp(r->module, base_name(fn->mod->path)) == 0))
			return r->calls_per_s;
	}
	return ENG_METRIC_DEFAULT_CALLS_PER_S;
}

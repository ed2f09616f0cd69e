/*
 * inst_util.c - see inst_util.h.
 */
#include "inst_util.h"

#include <capstone/capstone.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void tgt_fini(struct tgt *t)
{
	su_forget(t->img);
	for (size_t i = 0; i < t->nlib; i++)
		su_forget(t->libimg[i]);
	tgt_close(t);
}

static int add_point(struct tgt *t, struct fn_ctr *c,
		     const struct x86_point *xp, enum inst_mode mode)
{
	bool entry = xp->kind == X86_PT_ENTRY;
	struct x86_snip s = { .kind = X86_SN_ADD, .delta = 1 };
	struct eng_inst_point pt;
	struct hunch_err err = { 0 };

	if (xp->kind == X86_PT_CALL && !(t->count_calls && mode == IM_COUNTERS))
		return 0;
	if (!xp->ok)
		c->trap_why = x86_refusal_str(xp->why); /* relocated, or a trap */
	if (c->nreq == 16)
		return 0;
	if (mode == IM_BOTH)
		return add_point(t, c, xp, IM_COUNTERS) +
		       add_point(t, c, xp, IM_WALL);
	switch (mode) {
	case IM_BOTH:
	case IM_COUNTERS:
		s.handle = entry ? c->entry_h : c->exit_h;
		if (xp->kind == X86_PT_CALL)
			s.handle = c->call_h;
		break;
	case IM_WALL:
		s.kind = entry ? X86_SN_WALL_START : X86_SN_WALL_STOP;
		s.handle = c->wall_h;
		break;
	case IM_CPU:
		s.kind = entry ? X86_SN_CPU_START : X86_SN_CPU_STOP;
		s.handle = c->cpu_h;
		break;
	}
	eng_inst_point_from(xp, c->base, &pt);
	c->req_kind[c->nreq] = (uint8_t)xp->kind;
	if (eng_inst_add(t->in, &pt, &s, 1, false, &c->req[c->nreq], &err) < 0) {
		c->why = "add failed";
		fprintf(stderr, "# %s: %s\n", c->f->name, err.msg);
		return 0;
	}
	c->nreq++;
	return 1;
}

static void alloc_vars(struct tgt *t, struct fn_ctr *cc);

struct fn_ctr *fns_prepare(struct tgt *t, const char *prefix, size_t *nout)
{
	size_t nf = eng_image_nfuncs(t->img), n = 0;
	struct fn_ctr *c = calloc(nf + 1, sizeof *c);

	for (size_t i = 0; i < nf; i++) {
		const struct eng_func *f = eng_image_func(t->img, i);
		struct fn_ctr *cc = &c[n];

		if (prefix && strncmp(f->name, prefix, strlen(prefix)) != 0)
			continue;
		cc->f = f;
		cc->img = t->img;
		cc->base = t->base;
		n++;
		alloc_vars(t, cc);
		su_parse(t->img, f, &cc->xf);
		if (cc->xf.npoints == 0)     /* else the engine chooses how */
			cc->why = x86_refusal_str(cc->xf.why);
	}
	*nout = n;
	return c;
}

static void alloc_vars(struct tgt *t, struct fn_ctr *cc)
{
	eng_sampler_var_alloc(t->smp, ENG_VAR_COUNTER, &cc->call_var,
			      &cc->call_h, NULL);
	eng_sampler_var_alloc(t->smp, ENG_VAR_COUNTER, &cc->entry_var,
			      &cc->entry_h, NULL);
	eng_sampler_var_alloc(t->smp, ENG_VAR_COUNTER, &cc->exit_var,
			      &cc->exit_h, NULL);
	eng_sampler_var_alloc(t->smp, ENG_VAR_WALL_TIMER, &cc->wall_var,
			      &cc->wall_h, NULL);
	eng_sampler_var_alloc(t->smp, ENG_VAR_CPU_TIMER, &cc->cpu_var,
			      &cc->cpu_h, NULL);
}

struct fn_ctr *fns_prepare_lib(struct tgt *t, const char *lib,
			       const char *const *names, size_t *nout)
{
	size_t nm = 0, n = 0, nmod = eng_solib_nmodules(t->p);
	struct fn_ctr *c;
	struct eng_image *img = NULL;
	uint64_t base = 0;

	while (names[nm] != NULL)
		nm++;
	c = calloc(nm + 1, sizeof *c);
	*nout = 0;
	for (size_t i = 0; i < nmod && img == NULL && t->nlib < 8; i++) {
		const struct eng_module *m = eng_solib_module(t->p, i);
		const char *b = strrchr(m->path, '/');

		if (strncmp(b ? b + 1 : m->path, lib, strlen(lib)) != 0 ||
		    eng_image_open(m->path, &img, NULL) < 0)
			continue;
		t->libimg[t->nlib++] = img;
		base = m->bias + eng_image_link_base(img);
	}
	for (size_t k = 0; img != NULL && k < nm; k++) {
		const struct eng_func *f = eng_sym_lazy_func_by_name(img, names[k]);
		struct fn_ctr *cc = &c[n];

		if (f == NULL)
			continue;
		cc->f = f;
		cc->img = img;
		cc->base = base;
		alloc_vars(t, cc);
		su_parse(img, f, &cc->xf);
		if (cc->xf.npoints == 0)
			cc->why = x86_refusal_str(cc->xf.why);
		n++;
	}
	*nout = n;
	return c;
}

int fns_instrument(struct tgt *t, struct fn_ctr *c, size_t n,
		   enum inst_mode mode)
{
	struct hunch_err err = { 0 };
	int npts = 0, failed;

	for (size_t i = 0; i < n; i++) {
		struct fn_ctr *cc = &c[i];

		cc->nreq = cc->nentry = cc->nexit = cc->nrefused = 0;
		cc->ncall = 0;
		for (size_t k = 0; k < cc->xf.npoints; k++) {
			int a = add_point(t, cc, &cc->xf.points[k], mode);

			npts += a;
			if (cc->xf.points[k].kind == X86_PT_ENTRY)
				cc->nentry += (size_t)a;
			else if (cc->xf.points[k].kind == X86_PT_EXIT)
				cc->nexit += (size_t)a;
			else
				cc->ncall += (size_t)a;
		}
	}
	failed = eng_inst_commit(t->in, &err);
	if (failed < 0) {
		fprintf(stderr, "# commit: %s\n", err.msg);
		return failed;
	}
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < c[i].nreq; k++) {
			enum eng_refusal why;

			if (eng_inst_state(t->in, c[i].req[k], &why) ==
			    ENG_REQ_FAILED) {
				c[i].why = why ? eng_refusal_str(why) : "";
				c[i].nrefused++;
				if (c[i].req_kind[k] == X86_PT_ENTRY)
					c[i].nentry--;
				else if (c[i].req_kind[k] == X86_PT_EXIT)
					c[i].nexit--;
				else
					c[i].ncall--;
				npts--;
			}
		}
	return npts;
}

int fns_remove(struct tgt *t, struct fn_ctr *c, size_t n)
{
	struct hunch_err err = { 0 };
	int rc;

	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < c[i].nreq; k++)
			eng_inst_remove(t->in, c[i].req[k]);
		c[i].nreq = 0;
	}
	rc = eng_inst_commit(t->in, &err);
	if (rc < 0)
		fprintf(stderr, "# commit: %s\n", err.msg);
	return rc;
}

void fns_free(struct fn_ctr *c, size_t n)
{
	for (size_t i = 0; c != NULL && i < n; i++)
		su_free(&c[i].xf);
	free(c);
}

int instrument_counters(struct tgt *t, const char *prefix, struct fn_ctr **out,
			size_t *nout)
{
	*out = fns_prepare(t, prefix, nout);
	return fns_instrument(t, *out, *nout, IM_COUNTERS);
}

int add_timer(struct tgt *t, const struct x86_func *xf, uint64_t h,
		     bool cpu)
{
	struct hunch_err err = { 0 };
	int n = 0;

	for (size_t k = 0; k < xf->npoints; k++) {
		struct x86_snip s = { .handle = h };
		struct eng_inst_point pt;
		uint32_t id;

		if (xf->points[k].kind == X86_PT_CALL)
			continue;
		if (xf->points[k].kind == X86_PT_ENTRY)
			s.kind = cpu ? X86_SN_CPU_START : X86_SN_WALL_START;
		else
			s.kind = cpu ? X86_SN_CPU_STOP : X86_SN_WALL_STOP;
		eng_inst_point_from(&xf->points[k], t->base, &pt);
		if (eng_inst_add(t->in, &pt, &s, 1, false, &id, &err) == 0)
			n++;
		else
			fprintf(stderr, "# add: %s\n", err.msg);
	}
	return n;
}



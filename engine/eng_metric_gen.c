/*
 * eng_metric_gen.c - the what-part of MDL: clauses lowered to snippet
 * ASTs (x86_tramp.h) at the points of each function, handed to a sink
 * (eng_inst, or the cost predictor).
 *
 * Guards (MDL Figure 3): a constrained clause runs only while every
 * constraint's nesting counter is > 0, ANDed.  An object constraint
 * (`$argN == key`) that is not a replace constraint is applied to every
 * constrained clause too: at entry (and before a call) the argument is
 * compared directly; at points where arguments are gone (exit) the
 * comparison made at the function's entry is kept in a per-thread flag
 * (set, not incremented: the I/O and sync functions do not nest).
 */
#include "eng_metric_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "eng_funcreloc.h"
#include "eng_inst.h"
#include "eng_sampler.h"

#define MAX_EXPR 64
#define MAX_SNIP 16

/* Storage for one snippet list: the AST points into it. */
struct arena {
	struct x86_expr e[MAX_EXPR];
	size_t ne;
	struct x86_snip s[MAX_SNIP];
	size_t ns;
	struct x86_snip body[MAX_SNIP];
	size_t nbody;
};

static const struct x86_expr *ex(struct arena *a, enum x86_ex_kind k,
				 const struct x86_expr *l,
				 const struct x86_expr *r)
{
	struct x86_expr *e;

	if (a->ne == MAX_EXPR)
		return NULL;
	e = &a->e[a->ne++];
	memset(e, 0, sizeof *e);
	e->kind = k;
	e->l = l;
	e->r = r;
	/* A binary node over a failed allocation fails too. */
	return (k >= X86_EX_ADD && (l == NULL || r == NULL)) ? NULL : e;
}

static const struct x86_expr *ex_const(struct arena *a, int64_t v)
{
	struct x86_expr *e = (struct x86_expr *)ex(a, X86_EX_CONST, NULL, NULL);

	if (e != NULL)
		e->v = v;
	return e;
}

static const struct x86_expr *ex_var(struct arena *a, uint64_t h)
{
	struct x86_expr *e = (struct x86_expr *)ex(a, X86_EX_VAR, NULL, NULL);

	if (e != NULL)
		e->handle = h;
	return e;
}

static const struct x86_expr *ex_and(struct arena *a,
				     const struct x86_expr *l,
				     const struct x86_expr *r)
{
	if (l == NULL)
		return r;
	if (r == NULL)
		return l;
	return ex(a, X86_EX_AND, l, r);
}

/* What a point can see: arguments before it runs, %rax after. */
struct at {
	enum eng_mpoint point;
	bool after;
};

static bool args_known(const struct at *at)
{
	return at->point == ENG_MPT_ENTRY ||
	       (at->point == ENG_MPT_CALL && !at->after);
}

static int operand(struct mgen *g, struct arena *a, const struct at *at,
		   const struct eng_mopnd *o, const struct x86_expr **out,
		   struct hunch_err *err)
{
	*out = NULL;
	switch (o->kind) {
	case ENG_MO_CONST:
		*out = ex_const(a, o->c);
		break;
	case ENG_MO_ARG:
		if (!args_known(at) || o->arg < 0 || o->arg > 5)
			return hunch_err_set(err, -EINVAL,
					     "metric %s: $arg%d is "
					     "only known at entry or before a "
					     "call; move the primitive there",
					     g->def->name, o->arg);
		*out = ex(a, X86_EX_ARG, NULL, NULL);
		if (*out != NULL)
			((struct x86_expr *)*out)->arg = o->arg;
		break;
	case ENG_MO_RETURN:
		if (args_known(at))
			return hunch_err_set(
				err, -EINVAL,
				"metric %s: $return is "
				"only known at exit or after a call",
				g->def->name);
		*out = ex(a, X86_EX_RET, NULL, NULL);
		break;
	case ENG_MO_CONSTRAINT:
		*out = ex_const(a, 0);
		for (size_t i = 0; i < g->node->ncons; i++)
			if (strcmp(g->node->con_names[i], o->name) == 0)
				*out = ex_var(a, g->node->cons[i]->handle);
		break;
	case ENG_MO_KEY:
		if (!g->f->has_key)
			return hunch_err_set(
				err, -EINVAL,
				"metric %s: the focus "
				"names no object, so $resource.key "
				"has no value",
				g->def->name);
		*out = ex_const(a, (int64_t)g->f->key);
		break;
	}
	if (*out == NULL)
		return hunch_err_set(err, -E2BIG,
				     "metric %s: snippet too large",
				     g->def->name);
	return 0;
}

static const struct x86_expr *compare(struct arena *a, enum eng_mcmp c,
				      const struct x86_expr *l,
				      const struct x86_expr *r)
{
	switch (c) {
	case ENG_MC_EQ: return ex(a, X86_EX_EQ, l, r);
	case ENG_MC_NE: return ex(a, X86_EX_NE, l, r);
	case ENG_MC_LT: return ex(a, X86_EX_LT, l, r);
	case ENG_MC_GT: return ex(a, X86_EX_GT, l, r);
	/* a <= b is !(a > b); the comparisons give 0 or 1. */
	case ENG_MC_LE: return ex(a, X86_EX_EQ, ex(a, X86_EX_GT, l, r),
				  ex_const(a, 0));
	case ENG_MC_GE: return ex(a, X86_EX_EQ, ex(a, X86_EX_LT, l, r),
				  ex_const(a, 0));
	}
	return NULL;
}

static int preds(struct mgen *g, struct arena *a, const struct at *at,
		 const struct eng_mprim *p, const struct x86_expr **cond,
		 struct hunch_err *err)
{
	*cond = NULL;
	for (size_t i = 0; i < p->npreds; i++) {
		const struct x86_expr *l, *r, *c;
		int rc = operand(g, a, at, &p->preds[i].lhs, &l, err);

		if (rc == 0)
			rc = operand(g, a, at, &p->preds[i].rhs, &r, err);
		if (rc < 0)
			return rc;
		c = compare(a, p->preds[i].cmp, l, r);
		if (c == NULL)
			return hunch_err_set(err, -E2BIG,
					     "metric %s: predicate "
					     "too large",
					     g->def->name);
		*cond = ex_and(a, *cond, c);
	}
	return 0;
}

static int prim_kind(struct mgen *g, const struct eng_mprim *p,
		     enum x86_sn_kind *k, struct hunch_err *err)
{
	bool timer = g->type != ENG_MVAR_COUNTER;
	bool cpu = g->type == ENG_MVAR_CPU_TIMER;

	switch (p->op) {
	case ENG_MOP_ADD: case ENG_MOP_INC: case ENG_MOP_DEC:
		*k = X86_SN_ADD;
		break;
	case ENG_MOP_SET:
		*k = X86_SN_SET;
		break;
	case ENG_MOP_START:
		*k = cpu ? X86_SN_CPU_START : X86_SN_WALL_START;
		break;
	case ENG_MOP_STOP:
		*k = cpu ? X86_SN_CPU_STOP : X86_SN_WALL_STOP;
		break;
	}
	if ((p->op == ENG_MOP_START || p->op == ENG_MOP_STOP) != timer ||
	    ((p->op == ENG_MOP_INC || p->op == ENG_MOP_DEC) &&
	     !g->is_constraint))
		return hunch_err_set(err, -EINVAL,
				     "metric %s: primitive %d does "
				     "not fit its %s variable",
				     g->def->name, (int)p->op,
				     timer ? "timer" : "counter");
	return 0;
}

/* One primitive: the snippet itself, inside an IF when it has
 * predicates. */
static int prim(struct mgen *g, struct arena *a, const struct at *at,
		const struct eng_mprim *p, struct x86_snip *out,
		struct hunch_err *err)
{
	const struct x86_expr *cond = NULL;
	struct x86_snip s = { .handle = g->node->handle, .delta = 1 };
	int rc = prim_kind(g, p, &s.kind, err);

	if (rc == 0)
		rc = preds(g, a, at, p, &cond, err);
	if (rc < 0)
		return rc;
	if (p->op == ENG_MOP_DEC)
		s.delta = -1;
	if (p->op == ENG_MOP_ADD || p->op == ENG_MOP_SET) {
		rc = operand(g, a, at, &p->value, &s.value, err);
		if (rc < 0)
			return rc;
	}
	if (cond == NULL) {
		*out = s;
		return 0;
	}
	if (a->nbody == MAX_SNIP)
		return hunch_err_set(err, -E2BIG, "metric %s: too many "
				  "primitives", g->def->name);
	a->body[a->nbody] = s;
	*out = (struct x86_snip){ .kind = X86_SN_IF, .cond = cond,
				  .body = &a->body[a->nbody++], .nbody = 1 };
	return 0;
}

/* The guard of a constrained clause at one point. */
static const struct x86_expr *guard(struct mgen *g, struct arena *a,
				    const struct at *at)
{
	const struct x86_expr *c = NULL;

	for (size_t i = 0; i < g->node->ncons; i++)
		c = ex_and(a, c, ex(a, X86_EX_GT,
				    ex_var(a, g->node->cons[i]->handle),
				    ex_const(a, 0)));
	if (g->f->has_key && !g->is_replace && !g->is_constraint) {
		struct x86_expr *arg = (struct x86_expr *)
			ex(a, X86_EX_ARG, NULL, NULL);

		if (arg != NULL)
			arg->arg = g->f->key_arg;
		if (args_known(at))
			c = ex_and(a, c, ex(a, X86_EX_EQ, arg,
				   ex_const(a, (int64_t)g->f->key)));
		else
			c = ex_and(a, c, ex(a, X86_EX_GT,
				   ex_var(a, g->node->flag_h), ex_const(a, 0)));
	}
	return c;
}

static bool flag_needed(const struct mgen *g, const struct eng_mclause *c,
			const struct at *at)
{
	return c->constrained && g->f->has_key && !g->is_replace &&
	       !g->is_constraint && !args_known(at);
}

/* flag = ($argN == key) at the entry of fn, once per node and function. */
static int set_flag(struct mgen *g, const struct mfunc *fn,
		    const struct x86_func *xf, struct hunch_err *err)
{
	struct mnode *n = g->node;
	struct arena a = { .ne = 0 };
	struct x86_expr *arg;
	struct x86_snip s = { .kind = X86_SN_SET, .handle = n->flag_h };

	for (size_t i = 0; i < n->nflagged; i++)
		if (n->flagged[i] == fn->f)
			return 0;
	if (n->nflagged == n->capflagged) {
		size_t cap = n->capflagged ? n->capflagged * 2 : 8;
		const struct eng_func **v = realloc(n->flagged,
						    cap * sizeof *v);

		if (v == NULL)
			return hunch_err_set(err, -ENOMEM, "out of memory");
		n->flagged = v;
		n->capflagged = cap;
	}
	n->flagged[n->nflagged++] = fn->f;
	arg = (struct x86_expr *)ex(&a, X86_EX_ARG, NULL, NULL);
	arg->arg = g->f->key_arg;
	s.value = ex(&a, X86_EX_EQ, arg, ex_const(&a, (int64_t)g->f->key));
	for (size_t k = 0; k < xf->npoints; k++)
		if (xf->points[k].kind == X86_PT_ENTRY)
			return g->sink.emit(g->sink.arg, fn, &xf->points[k],
					    &s, 1, true, err);
	return 0;
}

static bool point_matches(struct mgen *g, const struct eng_mclause *c,
			  const struct mfunc *fn, const struct x86_point *xp)
{
	const char *callee;

	switch (c->point) {
	case ENG_MPT_ENTRY: return xp->kind == X86_PT_ENTRY;
	case ENG_MPT_EXIT:  return xp->kind == X86_PT_EXIT;
	case ENG_MPT_CALL:
		if (xp->kind != X86_PT_CALL)
			return false;
		if (c->callee == NULL)
			return true;
		if (xp->target == 0)
			return false;
		callee = eng_metric_funcs_name_at(g->m,
						  fn->mod->base + xp->target);
		return callee != NULL &&
		       (strcmp(callee, c->callee) == 0 ||
			(strncmp(callee, c->callee, strlen(c->callee)) == 0 &&
			 strcmp(callee + strlen(c->callee), "@plt") == 0));
	}
	return false;
}

/* Unguarded timer starts and constant adds at an entry can be run for
 * threads already inside the function (catchup); remember them. */
static int note_catchup(struct mgen *g, const struct mfunc *fn,
			const struct x86_snip *s, size_t n,
			struct hunch_err *err)
{
	struct mnode *nd = g->node;

	for (size_t i = 0; i < n && !g->sink.dry; i++) {
		/* A call counter does not count calls made before it was
		 * enabled; a constraint's nesting counter must know them. */
		bool ok = s[i].kind == X86_SN_WALL_START ||
			  s[i].kind == X86_SN_CPU_START ||
			  (s[i].kind == X86_SN_ADD && s[i].value == NULL &&
			   g->is_constraint);

		if (!ok)
			continue;
		if (nd->ncatch == nd->capcatch) {
			size_t cap = nd->capcatch ? nd->capcatch * 2 : 8;
			struct mcatch *v = realloc(nd->catch, cap * sizeof *v);

			if (v == NULL)
				return hunch_err_set(err, -ENOMEM,
						  "out of memory");
			nd->catch = v;
			nd->capcatch = cap;
		}
		nd->catch[nd->ncatch++] = (struct mcatch){
			.lo = fn->mod->base + fn->f->addr,
			.hi = fn->mod->base + fn->f->addr + fn->f->size,
			.s = s[i] };
	}
	return 0;
}

/* "after" a call site: the point at the call's return address in the
 * relocated copy of the function (calls there return into the copy:
 * eng_funcreloc_post_call), handed to the sink relative to the module
 * like any point.  The cost predictor keeps the call site's point (same
 * cost, nothing built).  0: no such point (*why). */
static int after_call(struct mgen *g, const struct mfunc *fn,
		      const struct x86_point *xp, struct x86_point *out,
		      enum eng_refusal *why, struct hunch_err *err)
{
	struct eng_inst_point cp, ap;
	int rc;

	*out = *xp;
	if (g->sink.dry)
		return 1;
	eng_inst_point_from(xp, fn->mod->base, &cp);
	if ((rc = eng_funcreloc_post_call(g->m->in, &cp, &ap, why, err)) <= 0)
		return rc;
	out->addr = ap.addr - fn->mod->base;
	out->patch_start = ap.patch_start - fn->mod->base;
	out->patch_len = ap.patch_len;
	out->insn_len = ap.insn_len;
	out->ok = true;
	return 1;
}

/* An exit clause's list (a->s, *n snippets, unguarded) under the
 * tail-call rules of its point (eng_metric_tail.c), T the node's
 * tail slot.  Wrappers go at the end of a->body, past the predicates. */
static int tail_wrap(struct mgen *g, struct arena *a, enum mtail_role role,
		     struct x86_snip **list, size_t *n, struct hunch_err *err)
{
	uint64_t t = g->node->tail_h;
	struct x86_snip *top = &a->body[MAX_SNIP - 2];
	struct x86_snip *aux = &a->body[MAX_SNIP - 4];
	const struct x86_expr *sp = ex(a, X86_EX_SP, NULL, NULL);
	const struct x86_expr *at_t = ex(a, X86_EX_EQ, sp, ex_var(a, t));
	const struct x86_expr *zero = ex(a, X86_EX_EQ, ex_var(a, t),
					 ex_const(a, 0));
	const struct x86_expr *off_t = ex(a, X86_EX_NE, sp, ex_var(a, t));
	struct x86_snip clear = { .kind = X86_SN_SET, .handle = t };

	if (a->nbody > MAX_SNIP - 4 || *n + 2 > MAX_SNIP || at_t == NULL ||
	    zero == NULL || off_t == NULL)
		return hunch_err_set(err, -E2BIG, "metric %s: too many "
				  "primitives", g->def->name);
	switch (role) {
	case MTAIL_F_EXIT:
		aux[0] = clear;
		a->s[(*n)++] = (struct x86_snip){ .kind = X86_SN_IF,
			.cond = at_t, .body = aux, .nbody = 1 };
		return 0;
	case MTAIL_F_TAIL:
		aux[0] = (struct x86_snip){ .kind = X86_SN_SET, .handle = t,
					    .value = sp };
		top[0] = (struct x86_snip){ .kind = X86_SN_IF, .cond = zero,
					    .body = aux, .nbody = 1 };
		top[1] = (struct x86_snip){ .kind = X86_SN_IF, .cond = off_t,
					    .body = a->s, .nbody = *n };
		*list = top;
		*n = 2;
		return 0;
	case MTAIL_G_EXIT:
		a->s[(*n)++] = clear;
		/* fall through */
	case MTAIL_G_TO_F:
		top[0] = (struct x86_snip){ .kind = X86_SN_IF, .cond = at_t,
					    .body = a->s, .nbody = *n };
		*list = top;
		*n = 1;
		return 0;
	case MTAIL_PLAIN:
	case MTAIL_G_ON:
		break;
	}
	return 0;
}

/* The snippet list of a clause at one point. */
static int clause_at(struct mgen *g, const struct eng_mclause *c,
		     const struct mfunc *fn, const struct x86_point *xp,
		     enum mtail_role role, struct hunch_err *err)
{
	struct arena *a = calloc(1, sizeof *a);
	struct at at = { c->point, c->after };
	struct x86_point post;
	const struct x86_expr *gd = NULL;
	struct x86_snip *list = a ? a->s : NULL;
	size_t n = 0;
	int rc = 0;

	if (a == NULL)
		return hunch_err_set(err, -ENOMEM, "out of memory");
	if (c->constrained)
		gd = guard(g, a, &at);
	if (gd != NULL) {
		a->s[0] = (struct x86_snip){ .kind = X86_SN_IF, .cond = gd };
		list = a->body + MAX_SNIP / 2;   /* the guarded body */
		a->nbody = 0;
	}
	for (size_t i = 0; rc == 0 && i < c->nprims; i++) {
		if (n == MAX_SNIP / 2 - 1)
			rc = hunch_err_set(err, -E2BIG, "metric %s: too many "
					"primitives", g->def->name);
		else
			rc = prim(g, a, &at, &c->prims[i], &list[n++], err);
		if (a->nbody > MAX_SNIP / 2)
			rc = hunch_err_set(err, -E2BIG, "metric %s: too many "
					"predicates", g->def->name);
	}
	if (rc == 0 && gd != NULL) {
		a->s[0].body = list;
		a->s[0].nbody = n;
		list = a->s;
		n = 1;
	}
	if (rc == 0 && gd == NULL && n > 0 && role != MTAIL_PLAIN)
		rc = tail_wrap(g, a, role, &list, &n, err);
	if (rc == 0 && n > 0 && c->point == ENG_MPT_CALL && c->after) {
		enum eng_refusal why = ENG_REFUSAL_NONE;

		rc = after_call(g, fn, xp, &post, &why, err);
		if (rc == 0 && g->node->why == ENG_REFUSAL_NONE)
			g->node->why = why;     /* that call site is left out */
		n = rc > 0 ? n : 0;
		rc = rc < 0 ? rc : 0;
		xp = &post;
	}
	if (rc == 0 && n > 0)
		rc = g->sink.emit(g->sink.arg, fn, xp, list, n, c->prepend,
				  err);
	if (rc == -EBUSY && xp == &post) {      /* left out, as above */
		if (g->node->why == ENG_REFUSAL_NONE)
			g->node->why = ENG_REFUSAL_POST_OVERLAP;
		rc = 0;
	}
	if (rc == 0 && gd == NULL && xp->kind == X86_PT_ENTRY)
		rc = note_catchup(g, fn, list, n, err);
	free(a);
	return rc;
}

/* The clause at every matching point of fn; t: the focus function's
 * tail closure when its exits follow tail calls (fn is its function or
 * one of the closure: then only the points, eng_metric_tail.c). */
static int clause_fn(struct mgen *g, const struct eng_mclause *c,
		     const struct mfunc *fn, const struct mtail *t,
		     struct hunch_err *err)
{
	struct at at = { c->point, c->after };
	const struct x86_func *xf = eng_points_of(g->m->pc, fn->mod->img,
						  fn->f, err);
	bool any = false, callee = t != NULL && fn->f != t->f.f;
	int rc = 0;

	if (xf == NULL)
		return -ENOMEM;
	for (size_t k = 0; rc == 0 && k < xf->npoints; k++) {
		enum mtail_role role = MTAIL_PLAIN;

		if (!point_matches(g, c, fn, &xf->points[k]))
			continue;
		if (t != NULL)
			role = eng_metric_tail_role(g->m, t, fn,
						    &xf->points[k]);
		if (role == MTAIL_G_ON)
			continue;
		if (!any && !callee && flag_needed(g, c, &at))
			rc = set_flag(g, fn, xf, err);
		if (rc == 0)
			rc = clause_at(g, c, fn, &xf->points[k], role, err);
		any = true;
	}
	if (callee)
		return rc;
	if (any && !g->sink.dry && !g->is_constraint)
		rc = rc < 0 ? rc : eng_metric_seen_watch(g->m, g->node, fn, xf,
							 err);
	if (any)
		g->nfuncs++;
	else if (g->node->why == ENG_REFUSAL_NONE && !xf->ok)
		g->node->why = eng_refusal_of_x86(xf->why);
	return rc;
}

/* A constrained clause over the start functions, under a code focus,
 * is over the focus' functions, unguarded (MDL's replace constraint for
 * timers: Paradyn's procedureConstraint "is replace processTimer").
 * Guarded at the start functions it could never run: a thread enters
 * main before it enters the focus, so the guard is false there, and
 * the timer would read 0 for every function but main.  Unguarded at the
 * focus, the timer's own nesting count handles recursion, and catchup
 * can start it for threads already inside. */
static struct eng_mclause clause_for_focus(const struct mgen *g,
					   const struct eng_mclause *c)
{
	struct eng_mclause r = *c;

	if (c->funcs == ENG_MF_START && c->constrained &&
	    g->f->code != ENG_CODE_ALL && !g->is_constraint &&
	    c->nprims > 0 && (c->prims[0].op == ENG_MOP_START ||
			      c->prims[0].op == ENG_MOP_STOP)) {
		r.funcs = ENG_MF_FOCUS;
		r.constrained = false;
	}
	return r;
}

/* An unguarded exit clause of the one focus function that stops a
 * timer or leaves a nesting count: it follows the function's tail calls
 * (eng_metric_tail.c). */
static bool follows_tails(const struct eng_mclause *c, size_t nf)
{
	if (nf != 1 || c->point != ENG_MPT_EXIT || c->constrained ||
	    c->funcs != ENG_MF_FOCUS || c->nprims == 0)
		return false;
	for (size_t i = 0; i < c->nprims; i++)
		if (c->prims[i].op != ENG_MOP_STOP &&
		    c->prims[i].op != ENG_MOP_DEC)
			return false;
	return true;
}

/* The exit clause at fn and at every function of its tail closure;
 * plain when fn makes no direct tail call. */
static int clause_tails(struct mgen *g, const struct eng_mclause *c,
			const struct mfunc *fn, struct hunch_err *err)
{
	struct mtail *t = calloc(1, sizeof *t);
	struct mnode *n = g->node;
	int rc;

	if (t == NULL)
		return hunch_err_set(err, -ENOMEM, "out of memory");
	rc = eng_metric_tail_closure(g->m, fn, t, err);
	if (rc == 0 && t->n == 0) {
		rc = clause_fn(g, c, fn, NULL, err);
		goto out;
	}
	if (rc == 0 && !g->sink.dry && !n->has_tail) {
		rc = eng_sampler_var_alloc(g->m->smp, ENG_VAR_COUNTER,
					   &n->tail_id, &n->tail_h, err);
		n->has_tail = rc == 0;
	}
	if (rc == 0)
		rc = clause_fn(g, c, fn, t, err);
	for (size_t i = 0; rc == 0 && i < t->n; i++)
		rc = clause_fn(g, c, &t->fn[i], t, err);
out:
	free(t);
	return rc;
}

static bool skipped(const struct mgen *g, const struct mfunc *fn)
{
	uint64_t a = fn->mod->base + fn->f->addr;

	for (size_t i = 0; i < g->nskip; i++)
		if (g->skip[i] == a)
			return true;
	return false;
}

int eng_metric_gen_clauses(struct mgen *g, const struct eng_mclause *c,
			   size_t n, struct hunch_err *err)
{
	for (size_t i = 0; i < n; i++) {
		struct eng_mclause cl = clause_for_focus(g, &c[i]);
		struct mfunc *fns = NULL;
		size_t nf = 0;
		int rc;

		rc = eng_metric_funcs_of(g->m, &cl, g->f, &fns, &nf, err);
		for (size_t k = 0; rc == 0 && k < nf; k++)
			if (skipped(g, &fns[k]))
				continue;
			else if (follows_tails(&cl, nf))
				rc = clause_tails(g, &cl, &fns[k], err);
			else
				rc = clause_fn(g, &cl, &fns[k], NULL, err);
		free(fns);
		if (rc < 0)
			return rc;
	}
	return 0;
}

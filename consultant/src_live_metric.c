/*
 * src_live_metric.c - pc_metric_def + focus -> eng_mdef + eng_mfocus
 * (see src_live_metric.h for the rules).
 */
#include "src_live_metric.h"
#include "src_live_kids.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct src_live_metric {
	struct eng_mdef def;
	struct eng_mfocus focus;
	struct eng_mconstraint cons[PC_SRC_NHIER];
	char *strs[8];           /* focus strings */
	size_t nstrs;
	void **mem;              /* everything else allocated */
	size_t nmem, capmem;
};

static void *src_live_metric_alloc(struct src_live_metric *s, size_t n,
				   size_t size)
{
	void *p;

	if (s->nmem == s->capmem) {
		size_t cap = s->capmem ? s->capmem * 2 : 16;
		void **v = realloc(s->mem, cap * sizeof *v);

		if (v == NULL)
			return NULL;
		s->mem = v;
		s->capmem = cap;
	}
	p = calloc(n ? n : 1, size);
	if (p != NULL)
		s->mem[s->nmem++] = p;
	return p;
}

void src_live_metric_free(struct src_live_metric *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->nmem; i++)
		free(s->mem[i]);
	for (size_t i = 0; i < s->nstrs; i++)
		free(s->strs[i]);
	free(s->mem);
	free(s);
}

const struct eng_mdef *src_live_metric_def(const struct src_live_metric *s)
{
	return &s->def;
}
const struct eng_mfocus *src_live_metric_focus(const struct src_live_metric *s)
{
	return &s->focus;
}

/* ---- operands, predicates, primitives ---- */

static int tr_opnd(const struct pc_operand *o, struct eng_mopnd *out)
{
	memset(out, 0, sizeof *out);
	switch (o->kind) {
	case PC_VAL_CONST:
		out->kind = ENG_MO_CONST;
		out->c = (int64_t)o->c;
		break;
	case PC_VAL_ARG:
		out->kind = ENG_MO_ARG;
		out->arg = o->arg;
		break;
	case PC_VAL_RETURN:
		out->kind = ENG_MO_RETURN;
		break;
	case PC_VAL_CONSTRAINT:
		out->kind = ENG_MO_CONSTRAINT;
		out->name = o->name;
		break;
	case PC_VAL_RESOURCE_ADDR:
		out->kind = ENG_MO_KEY;
		break;
	}
	return 0;
}

static int tr_cmp(const char *c, enum eng_mcmp *out)
{
	static const char *const names[] = { "==", "!=", "<", "<=", ">", ">=" };

	for (int i = 0; i < 6; i++)
		if (strcmp(c, names[i]) == 0) {
			*out = (enum eng_mcmp)i;
			return 0;
		}
	return -EINVAL;
}

static int tr_prim(struct src_live_metric *s, const char *owner,
		   const struct pc_prim *p, struct eng_mprim *out,
		   struct hunch_err *err)
{
	static const enum eng_mop ops[] = {
		[PC_OP_ADD] = ENG_MOP_ADD, [PC_OP_SET] = ENG_MOP_SET,
		[PC_OP_START] = ENG_MOP_START, [PC_OP_STOP] = ENG_MOP_STOP,
		[PC_OP_INC] = ENG_MOP_INC, [PC_OP_DEC] = ENG_MOP_DEC,
	};
	struct eng_mpred *pr = src_live_metric_alloc(s, p->npreds, sizeof *pr);

	if (p->var != NULL)
		return hunch_err_set(err, -ENOTSUP, "metric %s: a primitive on "
				  "another variable (\"var\": \"%s\") is not "
				  "supported by the metric compiler; remove "
				  "\"var\"", owner, p->var);
	if (pr == NULL)
		return hunch_err_set(err, -ENOMEM, "out of memory");
	out->op = ops[p->op];
	tr_opnd(&p->value, &out->value);
	for (size_t i = 0; i < p->npreds; i++) {
		tr_opnd(&p->preds[i].lhs, &pr[i].lhs);
		tr_opnd(&p->preds[i].rhs, &pr[i].rhs);
		if (tr_cmp(p->preds[i].cmp, &pr[i].cmp) < 0)
			return hunch_err_set(err, -EINVAL, "metric %s: unknown "
					  "comparison \"%s\"", owner,
					  p->preds[i].cmp);
	}
	out->preds = pr;
	out->npreds = p->npreds;
	return 0;
}

/* ---- clauses ---- */

static int tr_funcs(const struct pc_config *cfg, const char *owner,
		    const struct pc_instr *in, struct eng_mclause *c,
		    struct hunch_err *err)
{
	const char *ln = in->foreach_list;

	c->funcs = ENG_MF_NAMES;
	c->names = (const char *const *)in->foreach;
	c->nnames = in->nforeach;
	if (ln == NULL)
		return 0;
	if (strcmp(ln, "$procedures") == 0) {
		c->funcs = ENG_MF_PROCEDURES;
		return 0;
	}
	if (strcmp(ln, "$start_functions") == 0) {
		c->funcs = ENG_MF_START;
		return 0;
	}
	if (strcmp(ln, "$focus") == 0) {
		c->funcs = ENG_MF_FOCUS;
		return 0;
	}
	for (size_t i = 0; i < cfg->nlists; i++)
		if (strcmp(cfg->lists[i].name, ln) == 0) {
			c->names = (const char *const *)cfg->lists[i].items;
			c->nnames = cfg->lists[i].nitems;
			return 0;
		}
	return hunch_err_set(err, -ENOENT, "metric %s: unknown function list "
			  "\"%s\"; define it under $.lists", owner, ln);
}

static int tr_instr(struct src_live_metric *s, const struct pc_config *cfg,
		    const char *owner, const struct pc_instr *in,
		    struct eng_mclause *c, struct hunch_err *err)
{
	static const enum eng_mpoint pts[] = {
		[PC_PT_ENTRY] = ENG_MPT_ENTRY, [PC_PT_EXIT] = ENG_MPT_EXIT,
		[PC_PT_CALL] = ENG_MPT_CALL,
	};
	struct eng_mprim *pr = src_live_metric_alloc(s, in->nprims, sizeof *pr);
	int rc = tr_funcs(cfg, owner, in, c, err);

	if (pr == NULL)
		return hunch_err_set(err, -ENOMEM, "out of memory");
	c->point = pts[in->point];
	c->callee = in->callee;
	c->after = in->after;
	c->prepend = in->prepend;
	c->constrained = in->constrained;
	for (size_t i = 0; rc == 0 && i < in->nprims; i++)
		rc = tr_prim(s, owner, &in->prims[i], &pr[i], err);
	c->prims = pr;
	c->nprims = in->nprims;
	return rc;
}

static int tr_clauses(struct src_live_metric *s, const struct pc_config *cfg,
		      const char *owner, const struct pc_instr *in, size_t n,
		      const struct eng_mclause **out, size_t *nout,
		      struct hunch_err *err)
{
	struct eng_mclause *c = src_live_metric_alloc(s, n, sizeof *c);
	int rc = 0;

	if (c == NULL)
		return hunch_err_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = tr_instr(s, cfg, owner, &in[i], &c[i], err);
	*out = c;
	*nout = n;
	return rc;
}

/* ---- the focus ---- */

/* Components after the hierarchy root: "/Code/a/b" -> 2. */
static int depth(const char *path)
{
	int d = -1;

	for (const char *p = path; *p; p++)
		d += *p == '/';
	return d;
}

static const struct pc_constraint_def *con_find(const struct pc_config *c,
						const char *name)
{
	for (size_t i = 0; i < c->ncon; i++)
		if (strcmp(c->con[i].name, name) == 0)
			return &c->con[i];
	return NULL;
}

static const struct pc_constraint_def *con_depth(const struct pc_config *cfg,
						 const struct pc_metric_def *md,
						 const char *path, int d)
{
	for (size_t i = 0; i < md->nconstraints; i++) {
		const struct pc_constraint_def *cd =
			con_find(cfg, md->constraints[i]);
		size_t hl = cd ? strlen(cd->hierarchy) : 0;

		if (cd != NULL && strncmp(path, cd->hierarchy, hl) == 0 &&
		    path[hl] == '/' && depth(cd->match) == d)
			return cd;
	}
	return NULL;
}

/* The constraint of the metric that applies to `path`.  A source file
 * (/Code/<module>/<file>) has no constraint of its own in default.json:
 * the module's ("a function of the focus is on the stack") applies to
 * the file's functions, so the module -> file -> function refinement
 * works.  A file's resource is its whole path (/Files/tmp/x has two
 * components), and the one-component match (/Files/ and a star) stands for any
 * file however deep: a file is one object, keyed by its descriptor. */
static const struct pc_constraint_def *con_for(const struct pc_config *cfg,
					       const struct pc_metric_def *md,
					       const char *path)
{
	const struct pc_constraint_def *cd =
		con_depth(cfg, md, path, depth(path));

	if (cd == NULL && strncmp(path, "/Code/", 6) == 0 && depth(path) == 2)
		cd = con_depth(cfg, md, path, 1);
	if (cd == NULL && strncmp(path, "/Files/", 7) == 0 && depth(path) > 1)
		cd = con_depth(cfg, md, path, 1);
	return cd;
}

static char *keep(struct src_live_metric *s, const char *a, size_t n)
{
	char *p;

	if (s->nstrs == 8 || (p = strndup(a, n)) == NULL)
		return NULL;
	s->strs[s->nstrs++] = p;
	return p;
}

/* Component i (0-based) after the root. */
static char *comp(struct src_live_metric *s, const char *path, int i)
{
	const char *p = strchr(path + 1, '/');

	for (; p != NULL && i > 0; i--)
		p = strchr(p + 1, '/');
	if (p == NULL)
		return NULL;
	p++;
	return keep(s, p, strcspn(p, "/"));
}

static int code_focus(struct src_live_metric *s, const char *path,
		      struct hunch_err *err)
{
	struct eng_mfocus *f = &s->focus;
	int d = depth(path);

	f->module = comp(s, path, 0);
	if (d >= 2)
		f->srcfile = comp(s, path, 1);
	if (d >= 3)
		f->function = comp(s, path, 2);
	f->code = d == 1 ? ENG_CODE_MODULE : d == 2 ? ENG_CODE_FILE
						    : ENG_CODE_FUNCTION;
	if (f->module == NULL || (d >= 2 && f->srcfile == NULL) ||
	    (d >= 3 && f->function == NULL) || d > 3)
		return hunch_err_set(err, -EINVAL, "focus %s is not "
				  "/Code/<module>[/<file>[/<function>]]", path);
	if (f->code == ENG_CODE_FILE && strcmp(f->srcfile, "<unknown>") == 0)
		return hunch_err_set(
			err, -ENOTSUP,
			"focus %s: functions without "
			"a source file cannot be selected as a file; "
			"refine to a function",
			path);
	return 0;
}

/* `$argN == $resource.key` in a replace constraint tells which argument
 * holds the object. */
static int key_arg_of(const struct pc_constraint_def *cd)
{
	for (size_t i = 0; i < cd->ninstr; i++)
		for (size_t k = 0; k < cd->instr[i].nprims; k++) {
			const struct pc_prim *p = &cd->instr[i].prims[k];

			for (size_t j = 0; j < p->npreds; j++) {
				const struct pc_pred *q = &p->preds[j];

				if (q->lhs.kind == PC_VAL_ARG &&
				    q->rhs.kind == PC_VAL_RESOURCE_ADDR)
					return q->lhs.arg;
				if (q->rhs.kind == PC_VAL_ARG &&
				    q->lhs.kind == PC_VAL_RESOURCE_ADDR)
					return q->rhs.arg;
			}
		}
	return 0;
}

static int apply_con(struct src_live_metric *s, const struct pc_config *cfg,
		     const struct pc_metric_def *md,
		     const struct pc_constraint_def *cd, const char *path,
		     const struct src_live_metric_resolved *r,
		     struct hunch_err *err)
{
	struct eng_mfocus *f = &s->focus;
	enum pc_base_type mt = md->type;

	if (strcmp(cd->hierarchy, "/Code") == 0) {
		int rc = code_focus(s, path, err);

		if (rc < 0)
			return rc;
	}
	if (strcmp(cd->hierarchy, "/Process") == 0) {
		/* Threads are named "<tid>" or "<tid>:<start function>". */
		char *tc = comp(s, path, 1);

		f->tid = r->tid ? r->tid : tc ? (pid_t)atoi(tc) : 0;
	}
	if (strcmp(cd->hierarchy, "/SyncObject") == 0 ||
	    strcmp(cd->hierarchy, "/Files") == 0) {
		if (!r->has_key)
			return hunch_err_set(
				err, -ENOENT,
				"metric %s on %s: the "
				"object's address or descriptor is "
				"not known yet",
				md->name, path);
		f->has_key = true;
		f->key = r->key;
		f->key_arg = key_arg_of(cd);
	}
	if (cd->replace && cd->type == mt) {
		f->replace_name = cd->name;
		return tr_clauses(s, cfg, md->name, cd->instr, cd->ninstr,
				  &f->replace, &f->nreplace, err);
	}
	if (cd->replace || cd->ninstr == 0)
		return 0;   /* key compared in the base; thread view */
	struct eng_mconstraint *c = &s->cons[f->ncons++];

	c->name = cd->name;
	return tr_clauses(s, cfg, md->name, cd->instr, cd->ninstr,
			  &c->clauses, &c->nclauses, err);
}

static bool lists_hierarchy(const struct pc_config *cfg,
			    const struct pc_metric_def *md, const char *h)
{
	for (size_t i = 0; i < md->nconstraints; i++) {
		const struct pc_constraint_def *cd =
			con_find(cfg, md->constraints[i]);

		if (cd != NULL && strcmp(cd->hierarchy, h) == 0)
			return true;
	}
	return false;
}

/* Levels no constraint's match names but that restrict simply:
 * /Process/<pid> is the whole program (hunch follows one process), and
 * /SyncObject/<class> keeps the metric's functions of that class.
 * Returns 1 when handled, 0 when not such a level, < 0 refused. */
static int tr_level(struct src_live_metric *s, const struct pc_config *cfg,
		    const struct pc_metric_def *md, const char *path,
		    struct hunch_err *err)
{
	static const char *const classes[] = { "Mutex", "CondVar", "RWLock",
					       "Barrier", "Semaphore" };
	const char *cls;

	if (depth(path) != 1)
		return 0;
	if (strncmp(path, "/Process/", 9) == 0)
		return 1;
	if (strncmp(path, "/SyncObject/", 12) != 0 ||
	    !lists_hierarchy(cfg, md, "/SyncObject"))
		return 0;
	cls = path + 12;
	for (int i = 0; i < 5; i++)
		if (strcmp(cls, classes[i]) == 0) {
			s->focus.has_class = true;
			s->focus.cls = (enum eng_seen_class)i;
			return 1;
		}
	return hunch_err_set(err, -EINVAL, "metric %s: %s is not a sync object "
			  "class (Mutex, CondVar, RWLock, Barrier, Semaphore)",
			  md->name, path);
}

static int tr_focus(struct src_live_metric *s, const struct pc_config *cfg,
		    const struct pc_metric_def *md,
		    const struct pc_src_focus *f,
		    const struct src_live_metric_resolved *r,
		    struct hunch_err *err)
{
	s->focus.cons = s->cons;
	for (int h = 0; h < PC_SRC_NHIER; h++) {
		const char *path = f->path[h];
		const struct pc_constraint_def *cd;
		int rc;

		if (path == NULL || depth(path) <= 0)
			continue;    /* the root: not constrained */
		rc = tr_level(s, cfg, md, path, err);
		if (rc < 0)
			return rc;
		if (rc > 0)
			continue;
		cd = con_for(cfg, md, path);
		if (cd == NULL)
			return hunch_err_set(err, -ENOTSUP,
					     "metric %s cannot be "
					     "constrained to %s: none of its "
					     "constraints matches that level; "
					     "choose a focus its constraints "
					     "cover",
					     md->name, path);
		rc = apply_con(s, cfg, md, cd, path, r, err);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* ---- the kernel's CPU time and run-queue wait ---- */

static bool is_root(const char *path)
{
	return path == NULL || depth(path) <= 0;
}

/* The pid a /Process/<pid>... path names, 0 when none. */
static pid_t focus_pid(const char *p)
{
	return p != NULL && strncmp(p, "/Process/", 9) == 0 ?
	       (pid_t)strtol(p + 9, NULL, 10) : 0;
}

/* A wall timer on the program (the whole of it when it has no child,
 * its process, or one of its threads): k->can_sample_wall, with the
 * thread. */
static void program_wall(const struct pc_metric_def *md,
			 const struct pc_src_focus *f, pid_t pid,
			 const struct src_live_kids *kids,
			 struct src_live_metric_kernel *k)
{
	struct pc_metric_def cpu = *md;
	struct src_live_metric_kernel t;

	if (is_root(f->path[1]) && kids != NULL &&
	    src_live_kids_count(kids) > 0)
		return;
	cpu.kernel = PC_KERNEL_CPU;
	if (src_live_metric_kernel_focus(&cpu, &(struct pc_src_focus){
		    .path = { NULL, f->path[1], NULL, NULL } }, pid, kids, &t,
		    NULL) < 0 || t.child)
		return;
	k->can_sample_wall = true;
	k->pid = pid;
	k->tid = t.tid;
}

int src_live_metric_kernel_focus(const struct pc_metric_def *md,
				 const struct pc_src_focus *f, pid_t pid,
				 const struct src_live_kids *kids,
				 struct src_live_metric_kernel *k,
				 struct hunch_err *err)
{
	const char *p = f->path[1], *end;
	long fpid, tid;

	memset(k, 0, sizeof(*k));
	fpid = focus_pid(p);
	k->child =
		fpid > 0 && fpid != pid && src_live_kids_has(kids, (pid_t)fpid);
	if (k->child && md->kernel == PC_KERNEL_CPU && !is_root(f->path[0]) &&
	    is_root(f->path[2]) && is_root(f->path[3]) &&
	    src_live_kids_hint(kids, (pid_t)fpid) != NULL) {
		/* code in a child: only from its stack samples */
		struct src_live_metric_kernel t;
		int rc = src_live_metric_kernel_focus(md, &(struct pc_src_focus){
			.path = { NULL, f->path[1], NULL, NULL } }, pid, kids,
			&t, err);

		k->can_sample = rc == 0;
		k->tid = t.tid;
		k->pid = (pid_t)fpid;
		return rc;
	}
	if (k->child && md->kernel == PC_KERNEL_NONE &&
	    md->type == PC_BASE_WALL_TIMER && md->absent_is_zero &&
	    is_root(f->path[2]) &&
	    is_root(f->path[3]) && src_live_kids_hint(kids, (pid_t)fpid) != NULL) {
		/* a wall timer over library calls a child makes (MPI's
		 * waits): from its stack samples (src_live_setwall.h), on
		 * the process or a thread */
		struct pc_metric_def cpu = *md;
		struct src_live_metric_kernel t;
		int rc;

		cpu.kernel = PC_KERNEL_CPU;
		rc = src_live_metric_kernel_focus(&cpu, &(struct pc_src_focus){ .path = {
			NULL, f->path[1], NULL, NULL } }, pid, kids, &t, err);
		k->sample_wall = rc == 0;
		k->tid = t.tid;
		k->pid = (pid_t)fpid;
		return rc;
	}
	if (k->child && (md->kernel == PC_KERNEL_NONE ||
	    !is_root(f->path[0]) || !is_root(f->path[2]) ||
	    !is_root(f->path[3])))
		return hunch_err_set(err, -ENOTSUP, "metric %s cannot be "
			"measured in %s: hunch follows that child process "
			"with the kernel's measures (CPU time, run-queue "
			"wait, thread states) and the instrumentation it "
			"inherited at its fork, which had no %s there",
			md->name, f->path[1], md->name);
	if (md->kernel == PC_KERNEL_RUNQUEUE)
		for (int i = 0; i < 4; i++)
			if (i != 1 && !is_root(f->path[i]))
				return hunch_err_set(err, -ENOTSUP, "metric %s "
					"cannot be constrained to %s: the "
					"kernel counts a thread's run-queue "
					"wait, not the code or object it "
					"waits in; choose a focus on the "
					"program, its process or a thread",
					md->name, f->path[i]);
	if (md->kernel == PC_KERNEL_NONE && md->type == PC_BASE_WALL_TIMER &&
	    is_root(f->path[2]) && is_root(f->path[3]))
		program_wall(md, f, pid, kids, k);
	if (md->kernel == PC_KERNEL_NONE ||
	    !is_root(f->path[2]) || !is_root(f->path[3]))
		return 0;
	if (!is_root(f->path[0])) {
		/* /Code constrains it: instrumented, or estimated from
		 * the stack samples when the process part is ours. */
		struct src_live_metric_kernel t;

		if (src_live_metric_kernel_focus(md, &(struct pc_src_focus){
			    .path = { NULL, f->path[1], NULL, NULL } }, pid,
			    kids, &t, NULL) == 0) {
			k->can_sample = true;
			k->tid = t.tid;
			k->pid = t.pid;   /* 0: the whole job */
			k->job = t.job;
		}
		return 0;
	}
	k->use = true;
	if (is_root(p)) {
		k->job = true;
		return 0;
	}
	/* "/Process/<pid>[/<tid>[:<start function>]]" */
	fpid = strtol(p + 9, (char **)&end, 10);
	if (strncmp(p, "/Process/", 9) != 0 || end == p + 9 ||
	    (*end != '\0' && *end != '/'))
		return hunch_err_set(err, -EINVAL, "metric %s: focus %s is not "
				  "/Process/<pid>[/<tid>]", md->name, p);
	k->pid = (pid_t)fpid;
	if (fpid != pid && !k->child)
		return hunch_err_set(err, -ENOENT, "metric %s: focus %s is not "
				  "the process hunch follows (%d)", md->name,
				  p, (int)pid);
	if (*end == '\0')
		return 0;
	p = end + 1;
	tid = strtol(p, (char **)&end, 10);
	if (end == p || tid <= 0 || (*end != '\0' && *end != ':'))
		return hunch_err_set(err, -EINVAL, "metric %s: focus %s is not "
				  "/Process/<pid>/<tid>[:<start function>]",
				  md->name, f->path[1]);
	k->tid = (pid_t)tid;
	return 0;
}

static enum eng_mvar_type var_type(enum pc_base_type t)
{
	return t == PC_BASE_WALL_TIMER ? ENG_MVAR_WALL_TIMER :
	       t == PC_BASE_CPU_TIMER ? ENG_MVAR_CPU_TIMER : ENG_MVAR_COUNTER;
}

int src_live_metric_translate(const struct pc_config *cfg,
			      const struct pc_metric_def *md,
			      const struct pc_src_focus *f,
			      const struct src_live_metric_resolved *r,
			      struct src_live_metric **out,
			      struct hunch_err *err)
{
	static const struct src_live_metric_resolved none = { 0 };
	struct src_live_metric *s;
	int rc;

	*out = NULL;
	if (md->type == PC_BASE_INTERNAL)
		return hunch_err_set(
			err, -ENOTSUP,
			"metric %s is internal: hunch "
			"computes it itself (threads, cost), there "
			"is nothing to instrument",
			md->name);
	if (md->kernel == PC_KERNEL_RUNQUEUE)
		return hunch_err_set(err, -ENOTSUP, "metric %s is the kernel's "
				  "run-queue wait (schedstat): the live source "
				  "reads it, there is nothing to instrument",
				  md->name);
	s = calloc(1, sizeof *s);
	if (s == NULL)
		return hunch_err_set(err, -ENOMEM, "out of memory");
	s->def.name = md->name;
	s->def.type = var_type(md->type);
	s->def.absent_is_zero = md->absent_is_zero;
	rc = tr_clauses(s, cfg, md->name, md->instr, md->ninstr,
			&s->def.clauses, &s->def.nclauses, err);
	if (rc == 0)
		rc = tr_focus(s, cfg, md, f, r ? r : &none, err);
	if (rc < 0) {
		src_live_metric_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

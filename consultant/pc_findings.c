/*
 * pc_findings.c - findings from the most refined true nodes of a
 * search (see pc_findings.h): the relations between foci that grouping
 * them needs, then step 3, each joined group's cause, where, impact,
 * threads, chain and identity.  Steps 1 and 2, which nodes describe
 * one cause, are in pc_findings_group.c; the impact in
 * pc_findings_impact.c; the ranking in
 * pc_findings_rank.c; the words, the JSON and which findings were told
 * in pc_findings_text.c.
 */
#include "pc_findings.h"
#include "pc_findings_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct pc_res *pc_findings_res(const struct pc_findings_ctx *c,
				     pc_res_id id)
{
	return pc_res_get(c->pc->res, id);
}

static const struct pc_res *res(const struct pc_findings_ctx *c, pc_res_id id)
{
	return pc_findings_res(c, id);
}

int pc_findings_depth(const struct pc_findings_ctx *c, pc_res_id id)
{
	int d = 0;

	for (const struct pc_res *r = res(c, id);
	     r && r->kind != PC_RES_HIERARCHY && r->kind != PC_RES_ROOT;
	     r = res(c, r->parent))
		d++;
	return d;
}

bool pc_findings_is_root(const struct pc_findings_ctx *c, pc_res_id id)
{
	return res(c, id)->kind == PC_RES_HIERARCHY;
}

/* a is b or one of its ancestors in the resource tree. */
bool pc_findings_res_anc(const struct pc_findings_ctx *c, pc_res_id a,
			 pc_res_id b)
{
	for (const struct pc_res *r = res(c, b); r; r = r->parent ?
	     res(c, r->parent) : NULL) {
		if (r->id == a)
			return true;
		if (r->kind == PC_RES_ROOT)
			break;
	}
	return false;
}

/* A /Code resource refined on n's chain (the call graph search refines
 * a caller to its callees: they are not ancestors in the tree). */
bool pc_findings_on_chain(const struct pc_findings_ctx *c,
			  const struct pc_node *n, pc_res_id code)
{
	for (const struct pc_node *p = n; p && p->id != c->s->root;
	     p = pc_shg_node(c->s, p->orig_parent))
		if (p->focus.r[0] == code)
			return true;
	return false;
}

/* Two threads of one process: one cause may hold several threads (the
 * finding's threads are a set; its where is then the process). */
bool pc_findings_is_part(const struct pc_findings_ctx *c, pc_res_id r)
{
	const struct pc_res *x = res(c, r);

	return x->kind == PC_RES_THREAD ||
	       (x->kind == PC_RES_PROCESS && res(c, x->parent)->nchildren > 1);
}

pc_res_id pc_findings_process_of(const struct pc_findings_ctx *c,
				 pc_res_id r)
{
	const struct pc_res *x = res(c, r);

	if (x->kind == PC_RES_THREAD)
		return x->parent;
	return x->kind == PC_RES_HIERARCHY ? PC_RES_NONE : r;
}

bool pc_findings_sibling_parts(const struct pc_findings_ctx *c,
			       pc_res_id a, pc_res_id b)
{
	/* a thread is its own sibling (a finding's one thread is a set of
	 * one: its where the process); a process is not */
	if (res(c, a)->kind == PC_RES_THREAD)
		return res(c, b)->kind == PC_RES_THREAD &&
		       res(c, a)->parent == res(c, b)->parent;
	return a != b && pc_findings_is_part(c, a) &&
	       pc_findings_is_part(c, b) && res(c, b)->kind == PC_RES_PROCESS &&
	       res(c, a)->parent == res(c, b)->parent;
}

/* ---- step 3: one finding per joined group ---- */

/* A generic hypothesis: one measured with the kernel's CPU clock
 * (CPUbound): a wait or I/O cause seen in the same code is the more
 * specific explanation. */
bool pc_findings_is_generic(const struct pc_consult *pc, int hyp)
{
	const struct pc_hypothesis *h = &pc->cfg->hyp[hyp];

	for (int i = 0; i < h->nin; i++) {
		const struct pc_metric_def *m = pc_metric_def_find(pc->cfg,
							       h->in[i].metric);

		if (m && m->kernel == PC_KERNEL_CPU)
			return true;
	}
	return false;
}

/* Measured in seconds per second: its first input is in CPUs (CPU
 * time, or blocked time summed over threads, per second). */
bool pc_findings_in_seconds(const struct pc_consult *pc, int hyp)
{
	const struct pc_hypothesis *h = &pc->cfg->hyp[hyp];
	const struct pc_metric_def *m;

	if (h->is_virtual || h->nin == 0)
		return false;
	m = pc_metric_def_find(pc->cfg, h->in[0].metric);
	return m && m->units && strcmp(m->units, "CPUs") == 0;
}

static int why_depth(const struct pc_consult *pc, int hyp)
{
	int d = 0;

	for (int h = hyp; h >= 0 && d < 64; h = pc->cfg->hyp[h].parent_idx)
		d++;
	return d;
}

/* Better lead hypothesis: specific before generic, deeper in the why
 * axis, measured in seconds. */
static bool better_hyp(const struct pc_consult *pc, int a, int b)
{
	if (pc_findings_is_generic(pc, a) != pc_findings_is_generic(pc, b))
		return !pc_findings_is_generic(pc, a);
	if (why_depth(pc, a) != why_depth(pc, b))
		return why_depth(pc, a) > why_depth(pc, b);
	if (pc_findings_in_seconds(pc, a) != pc_findings_in_seconds(pc, b))
		return pc_findings_in_seconds(pc, a);
	return a < b;
}

/* Two CPU nodes (used, wanted: one measure): the deeper in /Code
 * leads, its where the finding's; otherwise by hypothesis. */
static bool better_lead(const struct pc_findings_ctx *c,
			const struct pc_node *a, const struct pc_node *b)
{
	int da = pc_findings_depth(c, a->focus.r[0]);
	int db = pc_findings_depth(c, b->focus.r[0]);

	if (pc_findings_is_generic(c->pc, a->hyp) &&
	    pc_findings_is_generic(c->pc, b->hyp) && da != db)
		return da > db;
	return better_hyp(c->pc, a->hyp, b->hyp);
}

void pc_findings_pool_add(struct pc_findings *fs, const struct pc_node *n)
{
	if (fs->npool == fs->cappool) {
		fs->cappool = fs->cappool ? 2 * fs->cappool : 256;
		fs->pool = realloc(fs->pool, fs->cappool * sizeof(*fs->pool));
		if (fs->pool == NULL)
			abort();
	}
	fs->pool[fs->npool++] = n;
}

bool pc_findings_pool_has(struct pc_findings *fs, size_t from,
			  const struct pc_node *n)
{
	for (size_t i = from; i < fs->npool; i++)
		if (fs->pool[i] == n)
			return true;
	return false;
}

static void members(struct pc_findings_ctx *c, int root, struct pc_findings_members *b)
{
	b->root = root;
	b->n = 0;
	for (int pass = 0; pass < 2; pass++)
		for (size_t l = 0; l < c->nl; l++) {
			int own = 0, any = 0;

			for (int g = 0; g < c->ng; g++) {
				if (pc_findings_group_root(c, g) != root || !c->mem[g][l])
					continue;
				any = 1;
				own |= c->mem[g][l] == 1;
			}
			/* Compatible with groups of this finding only:
			 * then it is this finding's own. */
			if (any && !own) {
				own = 1;
				for (int g = 0; g < c->ng; g++)
					if (c->mem[g][l] &&
					    pc_findings_group_root(c, g) != root)
						own = 0;
			}
			if (any && own == (pass == 0)) {
				b->own[b->n] = (unsigned char)own;
				b->leaves[b->n++] = l;
			}
		}
}

/* An own leaf of b of the finding's hypothesis names both where[0] and
 * where[1].  Another hypothesis's does not: the demo's lock operations
 * were true on one worker thread in demo_worker, and the finding, whose
 * value is the lock waiting of all four, read "thread 10122 spends 2.54
 * s per second waiting". */
static bool names_both(struct pc_findings_ctx *c, const struct pc_findings_members *b,
		       int hyp, const pc_res_id *where)
{
	for (size_t i = 0; i < b->n; i++) {
		const struct pc_node *n = c->leaf[b->leaves[i]];

		if (b->own[i] && n->hyp == hyp && n->focus.r[0] == where[0] &&
		    n->focus.r[1] == where[1])
			return true;
	}
	return false;
}

/* Two parts of the program (pc_findings_is_part) neither within the
 * other. */
static bool unrelated_parts(const struct pc_findings_ctx *c, pc_res_id a,
			    pc_res_id b)
{
	return pc_findings_is_part(c, a) && pc_findings_is_part(c, b) &&
	       !pc_findings_res_anc(c, a, b) && !pc_findings_res_anc(c, b, a);
}

/* The nearest resource that is a or b or an ancestor of both. */
static pc_res_id common(const struct pc_findings_ctx *c, pc_res_id a,
			pc_res_id b)
{
	for (const struct pc_res *r = res(c, a); r != NULL;
	     r = r->kind == PC_RES_HIERARCHY ? NULL : res(c, r->parent))
		if (pc_findings_res_anc(c, r->id, b))
			return r->id;
	return a;
}

static void pick_lead(struct pc_findings_ctx *c, const struct pc_findings_members *b,
		      struct pc_finding *f)
{
	bool set[PC_NHIER] = { false };   /* where[h] holds a set of parts */

	f->lead = NULL;
	for (size_t i = 0; i < b->n; i++) {
		const struct pc_node *n = c->leaf[b->leaves[i]];

		if (!b->own[i] && b->n > 1)
			continue;
		if (f->lead == NULL || better_lead(c, n, f->lead))
			f->lead = n;
	}
	if (f->lead == NULL)
		f->lead = c->leaf[b->leaves[0]];
	f->hyp = f->lead->hyp;
	memcpy(f->where, f->lead->focus.r, sizeof(f->where));
	for (size_t i = 0; i < b->n; i++) {
		const struct pc_node *n = c->leaf[b->leaves[i]];

		if (!b->own[i])
			continue;
		for (int h = 0; h < PC_NHIER; h++)
			if (set[h] && pc_findings_res_anc(c, f->where[h],
							  n->focus.r[h]))
				continue;   /* one more of the set */
			else if (pc_findings_sibling_parts(c, f->where[h],
							   n->focus.r[h])) {
				f->where[h] = res(c, n->focus.r[h])->parent;
				set[h] = true;
			} else if (unrelated_parts(c, f->where[h],
						   n->focus.r[h])) {
				/* threads of different processes, or a
				 * thread and another process: the job */
				f->where[h] = common(c, f->where[h],
						     n->focus.r[h]);
				set[h] = true;
			} else if (pc_findings_depth(c, n->focus.r[h]) >
				   pc_findings_depth(c, f->where[h]))
				f->where[h] = n->focus.r[h];
	}
	/* One thread is where the finding is only when a node names it
	 * with the finding's function: ESWT on thread 1161 and in
	 * demo_worker is 4 threads' cause seen in one. */
	if (res(c, f->where[1])->kind == PC_RES_THREAD &&
	    !pc_findings_is_root(c, f->where[0]) &&
	    !names_both(c, b, f->hyp, f->where))
		f->where[1] = res(c, f->where[1])->parent;
}

double pc_findings_value(const struct pc_consult *pc,
			 const struct pc_node *n)
{
	if (n->truth == PC_TRUE && !isnan(n->was_value) &&
	    !isnan(pc_shg_node_judged(n)) &&
	    !pc_shg_node_holds(n, pc_truth_node_hyp(pc, n)->cmp))
		return n->was_value;
	return pc_shg_node_judged(n);
}

/* A node's measure here is pc_findings_value, not its last interval's
 * value, which can read 0 as the program ends (the demo's hot loop once
 * ranked last at 0.00 CPUs for that).
 *
 * The cause's measure by hypothesis hyp among the finding's leaves:
 * each measures it restricted to its focus, so the smallest is the
 * tightest; leaves of parts (single threads, or single processes of a
 * job of several) measure a part of it each: their sum (one value a
 * part, its smallest; a process's threads only where the process has
 * none of its own), when no leaf covers the parts together.  NaN when
 * no leaf of hyp has a value. */
/* The threads of proc started in function `name` ("<tid>:<name>"). */
static int started_in(struct pc_findings_ctx *c, const struct pc_res *proc,
		      const char *name)
{
	int k = 0;

	for (size_t i = 0; i < proc->nchildren; i++) {
		const char *tname = res(c, proc->children[i])->name;
		const char *colon = strchr(tname, ':');

		k += colon && strcmp(colon + 1, name) == 0;
	}
	return k;
}

/* The threads of the finding's process started in its function, or
 * deeper down the call graph in the outermost function of its chain
 * (main, a thread's start function); 0 when it is in no function or
 * no process. */
static int started_count(struct pc_findings_ctx *c,
			 const struct pc_finding *f)
{
	const struct pc_res *fn = res(c, f->where[0]);
	const struct pc_res *proc = res(c, f->where[1]);
	int k;

	if (fn->kind != PC_RES_FUNCTION)
		return 0;
	if (proc->kind == PC_RES_THREAD)
		proc = res(c, proc->parent);
	if (proc->kind == PC_RES_HIERARCHY && proc->nchildren == 1)
		proc = res(c, proc->children[0]);
	if (proc->kind != PC_RES_PROCESS)
		return 0;
	k = started_in(c, proc, fn->name);
	for (const struct pc_node *p = f->lead; k == 0 && p &&
	     p->id != c->s->root; p = pc_shg_node(c->s, p->orig_parent))
		if (res(c, p->focus.r[0])->kind == PC_RES_FUNCTION &&
		    (p->orig_parent < 0 || res(c, pc_shg_node(c->s,
		     p->orig_parent)->focus.r[0])->kind != PC_RES_FUNCTION))
			k = started_in(c, proc, res(c, p->focus.r[0])->name);
	return k;
}

/* Threads: those its own leaves name (with its function, if any); else, where the finding is in a
 * function, the threads started there (named "<tid>:<function>").  A
 * finding on a function over a whole process counts every thread
 * started there even when only some of their own nodes have concluded
 * (a loaded machine: 2 of the demo's 4 lock workers' in 10 s): its
 * value is all of theirs, and "2 threads spend 110% of their time"
 * cannot be. */
static int threads(struct pc_findings_ctx *c, const struct pc_findings_members *b,
		   const struct pc_finding *f)
{
	pc_res_id seen[MAXL];
	int k = 0, started;
	const struct pc_res *fn = res(c, f->where[0]);

	for (size_t i = 0; i < b->n; i++) {
		pc_res_id t = c->leaf[b->leaves[i]]->focus.r[1];
		int dup = 0;

		/* A thread's node says where that thread is only when
		 * it names the function too (or the finding none), or the
		 * thread was started in it (the demo's lock workers, each
		 * true on the mutex before its demo_worker node is). */
		if (!b->own[i] || res(c, t)->kind != PC_RES_THREAD ||
		    (c->leaf[b->leaves[i]]->focus.r[0] != f->where[0] &&
		     !pc_findings_is_root(c, f->where[0]) &&
		     !(pc_findings_is_root(c,
					   c->leaf[b->leaves[i]]->focus.r[0]) &&
		       strchr(res(c, t)->name, ':') &&
		       strcmp(strchr(res(c, t)->name, ':') + 1,
			      fn->name) == 0)))
			continue;
		for (int j = 0; j < k; j++)
			dup |= seen[j] == t;
		if (!dup)
			seen[k++] = t;
	}
	if (k > 0 && res(c, f->where[1])->kind == PC_RES_THREAD)
		return k;
	started = started_count(c, f);
	return started > k ? started : k;
}

static void chain_of(struct pc_findings_ctx *c, struct pc_findings *fs,
		     struct pc_finding *f)
{
	const struct pc_node *ch[128];
	size_t k = 0;

	for (const struct pc_node *p = f->lead; p && p->id != c->s->root &&
	     k < 128; p = pc_shg_node(c->s, p->orig_parent))
		ch[k++] = p;
	f->nchain = k;
	while (k > 0)
		pc_findings_pool_add(fs, ch[--k]);
	f->id = -1;
	for (size_t i = fs->npool - f->nchain; i < fs->npool; i++)
		if (!fs->pool[i]->persistent || f->id < 0) {
			f->id = fs->pool[i]->id;
			if (!fs->pool[i]->persistent)
				break;
		}
}

/* The told identity: the chains of its own leaves below the top-level
 * nodes (pc_findings_text_tell). */
static void ident_of(struct pc_findings_ctx *c, const struct pc_findings_members *b,
		     struct pc_findings *fs, struct pc_finding *f)
{
	size_t from = fs->npool;

	for (size_t i = 0; i < b->n; i++) {
		if (!b->own[i])
			continue;
		for (const struct pc_node *p = c->leaf[b->leaves[i]];
		     p && p->id != c->s->root;
		     p = pc_shg_node(c->s, p->orig_parent))
			if (!p->persistent && !pc_findings_pool_has(fs, from, p))
				pc_findings_pool_add(fs, p);
	}
	f->nident = fs->npool - from;
}

static pc_res_id module_of(struct pc_findings_ctx *c, pc_res_id fn)
{
	const struct pc_res *r = res(c, fn);

	while (r->kind != PC_RES_MODULE && r->kind != PC_RES_HIERARCHY &&
	       r->kind != PC_RES_ROOT)
		r = res(c, r->parent);
	return r->id;
}

/* Along the chain of leaf (a node naming the finding's function),
 * the deepest function of the module its outermost function is in,
 * when that is not the finding's function's module (the program's own
 * function calling into a library), else PC_RES_NONE. */
static pc_res_id caller_on_chain(struct pc_findings_ctx *c,
				 const struct pc_finding *f,
				 const struct pc_node *leaf)
{
	const struct pc_node *p;
	pc_res_id outer = PC_RES_NONE;

	for (p = leaf; p && p->id != c->s->root;
	     p = pc_shg_node(c->s, p->orig_parent))
		if (res(c, p->focus.r[0])->kind == PC_RES_FUNCTION)
			outer = module_of(c, p->focus.r[0]);
	if (outer == PC_RES_NONE || outer == module_of(c, f->where[0]))
		return PC_RES_NONE;
	for (p = leaf; p && p->id != c->s->root;
	     p = pc_shg_node(c->s, p->orig_parent))
		if (res(c, p->focus.r[0])->kind == PC_RES_FUNCTION &&
		    module_of(c, p->focus.r[0]) == outer)
			return p->focus.r[0];
	return PC_RES_NONE;
}

/* The same from n's other parents, true and of its hypothesis, that
 * name a function: the demo's write(), reached from the top at once,
 * is also a refinement of demo_writer (a second edge, where the search
 * met it again among demo_writer's callees). */
static pc_res_id caller_of_parents(struct pc_findings_ctx *c,
				   const struct pc_finding *f,
				   const struct pc_node *n)
{
	for (size_t k = 0; k < n->nparents; k++) {
		const struct pc_node *p = pc_shg_node(c->s, n->parents[k]);
		pc_res_id r;

		if (p->hyp != n->hyp || p->truth != PC_TRUE ||
		    res(c, p->focus.r[0])->kind != PC_RES_FUNCTION)
			continue;
		if ((r = caller_on_chain(c, f, p)) != PC_RES_NONE)
			return r;
	}
	return PC_RES_NONE;
}

/* Did the Python function at `caller` call f's directly (no Python frame
 * between) in at least half of f's sampled frames?  Asked of the source
 * (the hint question PC_FINDINGS_CALLER_Q, journaled like the line). */
static bool py_calls(struct pc_findings_ctx *c, const struct pc_finding *f,
		     pc_res_id caller)
{
	char q[2200];

	if (c->pc->src == NULL)
		return false;
	snprintf(q, sizeof(q), "%s%s%s", res(c, f->where[0])->path,
		 PC_FINDINGS_CALLER_Q, res(c, caller)->path);
	return c->pc->src->ops->hint(c->pc->src, q) >= 0.5;
}

/* The Python function that calls the finding's, from a node's chain:
 * the nearest Python function above it that the samples show calling
 * it directly.  `<genexpr>` under `f`: f's own lines (the sum() that
 * drives the generator) hold the rest of the thread's CPU, which the
 * finding's "in all" counts.  Not a function further up: a pool's
 * `work`, reached from `BaseProcess.run` over the levels the search
 * skipped, was said to be "called from `Popen._launch`" (the frame
 * that forked the worker), where `mapstar` calls it. */
static pc_res_id py_caller_on_chain(struct pc_findings_ctx *c,
				    const struct pc_finding *f,
				    const struct pc_node *leaf)
{
	for (const struct pc_node *p = leaf; p && p->id != c->s->root;
	     p = pc_shg_node(c->s, p->orig_parent)) {
		pc_res_id r = p->focus.r[0];

		if (r != f->where[0] && res(c, r)->kind == PC_RES_FUNCTION &&
		    strcmp(res(c, module_of(c, r))->name,
			   PC_FINDINGS_PY_MODULE) == 0)
			return py_calls(c, f, r) ? r : PC_RES_NONE;
	}
	return PC_RES_NONE;
}

/* No Python function above the finding's on its chains (the interpreter
 * loop, refined at once to `<genexpr>`): a Python function the search
 * found true in the same hypothesis, which the samples show calling it
 * directly.  loop.py's `<genexpr>`, under `_PyEval_EvalFrameDefault`,
 * had no caller, though `f`, which sums it, tested true too. */
static pc_res_id py_caller_true(struct pc_findings_ctx *c,
				const struct pc_finding *f)
{
	for (size_t i = 0; i < c->s->nn; i++) {
		const struct pc_node *p = c->s->nodes[i];
		pc_res_id r = p->focus.r[0];

		if (p->hyp != f->lead->hyp || p->truth != PC_TRUE ||
		    r == f->where[0] || res(c, r)->kind != PC_RES_FUNCTION ||
		    strcmp(res(c, module_of(c, r))->name,
			   PC_FINDINGS_PY_MODULE) != 0)
			continue;
		if (py_calls(c, f, r))
			return r;
	}
	return PC_RES_NONE;
}

/* The program's own function that calls into a library where the
 * finding is (pc_finding.caller), from the first chain of a node naming
 * the finding's function that has one: a node reached at once (a
 * dominant descendant: the demo's write() under its I/O, tested from
 * the top) has none, while the same function refined from the
 * program's demo_writer has. */
static pc_res_id caller_of(struct pc_findings_ctx *c,
			   const struct pc_finding *f)
{
	pc_res_id found = PC_RES_NONE;

	if (res(c, f->where[0])->kind != PC_RES_FUNCTION)
		return PC_RES_NONE;
	/* A Python function is always entered through the interpreter's
	 * loop: "called from `_PyEval_EvalFrameDefault`" says nothing to
	 * the script's author; the Python function around it does. */
	if (strcmp(res(c, module_of(c, f->where[0]))->name,
		   PC_FINDINGS_PY_MODULE) == 0) {
		for (size_t i = 0; i < f->nnodes && found == PC_RES_NONE; i++)
			if (f->nodes[i]->focus.r[0] == f->where[0])
				found = py_caller_on_chain(c, f, f->nodes[i]);
		return found != PC_RES_NONE ? found : py_caller_true(c, f);
	}
	for (size_t i = 0; i < f->nnodes && found == PC_RES_NONE; i++)
		if (f->nodes[i]->focus.r[0] == f->where[0])
			found = caller_on_chain(c, f, f->nodes[i]);
	for (size_t i = 0; i < f->nnodes && found == PC_RES_NONE; i++)
		if (f->nodes[i]->focus.r[0] == f->where[0])
			found = caller_of_parents(c, f, f->nodes[i]);
	return found;
}

/* The processes of a job of several the finding's own leaves are in
 * (a process, or a thread's), 0 when none is a part of such a job. */
static int processes(struct pc_findings_ctx *c, const struct pc_findings_members *b)
{
	pc_res_id seen[MAXL];
	int k = 0;

	for (size_t i = 0; i < b->n; i++) {
		pc_res_id p = c->leaf[b->leaves[i]]->focus.r[1];
		bool dup = false;

		if (res(c, p)->kind == PC_RES_THREAD)
			p = res(c, p)->parent;
		if (!b->own[i] || res(c, p)->kind != PC_RES_PROCESS ||
		    !pc_findings_is_part(c, p))
			continue;
		for (int j = 0; j < k; j++)
			dup |= seen[j] == p;
		if (!dup)
			seen[k++] = p;
	}
	return k;
}

/* The line of a Python function's finding (pc_finding.line): asked of
 * the source when the finding is built, the one way the findings read
 * anything but the nodes.  The answer is journaled with the time it was
 * asked at, and a replay asks at the same moments (every tick, the
 * report), so it reads the same answer. */
static int line_of(const struct pc_findings_ctx *c, pc_res_id fn)
{
	const struct pc_res *r = pc_findings_res(c, fn);
	const struct pc_res *mod;
	char q[1100];
	double v;

	if (r->kind != PC_RES_FUNCTION || c->pc->src == NULL)
		return 0;
	mod = pc_findings_res(c, pc_findings_res(c, r->parent)->parent);
	if (strcmp(mod->name, PC_FINDINGS_PY_MODULE) != 0)
		return 0;
	snprintf(q, sizeof(q), "%s%s", r->path, PC_FINDINGS_LINE_Q);
	v = c->pc->src->ops->hint(c->pc->src, q);
	return v >= 1 ? (int)v : 0;
}

static void build_one(struct pc_findings_ctx *c, const struct pc_findings_members *b,
		      struct pc_findings *fs, struct pc_finding *f)
{
	memset(f, 0, sizeof(*f));
	f->symptom_of = -1;
	f->symptom_why = PC_SYMPTOM_NONE;
	pick_lead(c, b, f);
	f->since_s = INFINITY;
	f->unconfirmed = true;
	/* nodes: the lead, the other leaves, then evidence (impact) */
	pc_findings_pool_add(fs, f->lead);
	f->nnodes = 1;
	for (size_t i = 0; i < b->n; i++) {
		const struct pc_node *n = c->leaf[b->leaves[i]];

		if (n != f->lead) {
			pc_findings_pool_add(fs, n);
			f->nnodes++;
		}
		f->nown += b->own[i] && n != f->lead;
		if (!b->own[i] && n != f->lead)
			continue;
		if (n->t_true_since < f->since_s)
			f->since_s = n->t_true_since;
		f->sampled |= n->sampled;
		f->unconfirmed &= n->unconfirmed;
	}
	f->nown++;              /* the lead */
	f->nleaves = f->nnodes;
	pc_findings_impact(c, b, fs, f);
	pc_findings_impact_also(c, b, f);
	f->nodes = fs->pool + fs->npool - f->nnodes;
	f->caller = caller_of(c, f);
	f->line = line_of(c, f->where[0]);   /* /Code */
	f->nthreads = threads(c, b, f);
	f->nprocs = processes(c, b);
	chain_of(c, fs, f);
	ident_of(c, b, fs, f);
}

/* ---- symptoms and ranking ---- */

void pc_findings_free(struct pc_findings *fs)
{
	free(fs->f);
	free(fs->pool);
	memset(fs, 0, sizeof(*fs));
}

/* Pointers into the pool are set once it stops moving. */
static void fix_pointers(struct pc_findings *fs, const size_t *at)
{
	for (size_t i = 0; i < fs->n; i++) {
		struct pc_finding *f = &fs->f[i];

		f->nodes = fs->pool + at[3 * i];
		f->chain = fs->pool + at[3 * i + 1];
		f->ident = fs->pool + at[3 * i + 2];
	}
}

void pc_findings_build(const struct pc_consult *pc, const struct pc_search *s,
		       struct pc_findings *out)
{
	struct pc_findings_ctx *c = calloc(1, sizeof(*c));
	size_t *at;

	pc_findings_free(out);
	if (c == NULL)
		abort();
	c->pc = pc;
	c->s = s ? s : pc->global;
	if (c->s == NULL) {
		free(c);
		return;
	}
	pc_findings_group(c);
	out->f = calloc((size_t)c->ng + 1, sizeof(*out->f));
	at = calloc(3 * ((size_t)c->ng + 1), sizeof(*at));
	if (out->f == NULL || at == NULL)
		abort();
	for (int g = 0; g < c->ng; g++) {
		struct pc_findings_members b;
		struct pc_finding *f = &out->f[out->n];

		if (pc_findings_group_root(c, g) != g)
			continue;
		members(c, g, &b);
		at[3 * out->n] = out->npool;
		build_one(c, &b, out, f);
		at[3 * out->n + 1] = out->npool - f->nident - f->nchain;
		at[3 * out->n + 2] = out->npool - f->nident;
		/* nodes point into the pool too: fixed below, the evidence
		 * found by impact() included */
		f->nodes = out->pool + at[3 * out->n];
		out->n++;
		fix_pointers(out, at);
	}
	pc_findings_rank(c, out);
	free(at);
	free(c);
}

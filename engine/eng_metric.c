/*
 * eng_metric.c - metric instances: compile on enable, share identical
 * requests by reference counts, remove on the last disable, read values
 * (devguide §1.8: a metric-focus node has one code node for the metric
 * and one per constraint, shared by pointing at one internal object).
 */
#include "eng_metric_int.h"
#include "eng_inst_cost.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "eng_funcreloc.h"
#include "eng_proc.h"
#include "eng_sampler.h"

int eng_metric_create(struct eng_proc *p, struct eng_inst *in,
		      struct eng_sampler *smp, struct eng_points_cache *pc,
		      struct eng_metric **out, struct hunch_err *err)
{
	struct eng_metric *m = calloc(1, sizeof *m);
	int rc;

	if (m == NULL)
		return hunch_err_set(err, -ENOMEM,
				  "metric compiler: out of memory");
	m->p = p;
	m->in = in;
	m->smp = smp;
	m->pc = pc;
	if (pc == NULL) {
		rc = eng_points_cache_new(&m->pc, err);
		if (rc < 0) {
			free(m);
			return rc;
		}
		m->own_pc = true;
	}
	*out = m;
	return 0;
}

/* ---- nodes ---- */

static void node_free_vars(struct eng_metric *m, struct mnode *n)
{
	if (n->kind != ENG_VAR_NONE)
		eng_sampler_var_free(m->smp, n->var_id);
	if (n->has_flag)
		eng_sampler_var_free(m->smp, n->flag_id);
	if (n->has_tail)
		eng_sampler_var_free(m->smp, n->tail_id);
	n->kind = ENG_VAR_NONE;
	n->has_flag = n->has_tail = false;
}

static void node_free(struct mnode *n)
{
	free(n->key);
	free(n->reqs);
	free(n->flagged);
	free(n->catch);
	free(n->watch);
	free(n->cons);
	free(n->con_names);
	eng_metric_follow_free(n->follow);
	free(n);
}

static struct mnode *node_find(struct eng_metric *m, const char *key)
{
	for (struct mnode *n = m->nodes; n != NULL; n = n->next)
		if (strcmp(n->key, key) == 0)
			return n;
	return NULL;
}

static void node_unlink(struct eng_metric *m, struct mnode *n)
{
	for (struct mnode **pp = &m->nodes; *pp != NULL; pp = &(*pp)->next)
		if (*pp == n) {
			*pp = n->next;
			return;
		}
}

/* Drop a reference; the last one queues the removal of its requests
 * (the caller commits) and drops its constraint nodes in turn. */
void eng_metric_node_put(struct eng_metric *m, struct mnode *n,
		     struct mnode **dead)
{
	if (n == NULL || --n->refs > 0)
		return;
	for (size_t i = 0; i < n->nreqs; i++)
		eng_inst_remove(m->in, n->reqs[i]);
	eng_metric_seen_drop(m, n);
	for (size_t i = 0; i < n->ncons; i++)
		eng_metric_node_put(m, n->cons[i], dead);
	node_unlink(m, n);
	n->next = *dead;
	*dead = n;
}

/* After the commit that removed them: variables back to the sampler. */
void eng_metric_nodes_reap(struct eng_metric *m, struct mnode *dead)
{
	while (dead != NULL) {
		struct mnode *next = dead->next;

		node_free_vars(m, dead);
		node_free(dead);
		dead = next;
	}
	eng_metric_seen_reap(m);
}

static enum eng_var_kind var_kind(enum eng_mvar_type t)
{
	switch (t) {
	case ENG_MVAR_WALL_TIMER: return ENG_VAR_WALL_TIMER;
	case ENG_MVAR_CPU_TIMER: return ENG_VAR_CPU_TIMER;
	default: return ENG_VAR_COUNTER;
	}
}

static int node_new(struct eng_metric *m, char *key, enum eng_var_kind kind,
		    bool flag, bool dry, struct mnode **out,
		    struct hunch_err *err)
{
	struct mnode *n = calloc(1, sizeof *n);
	int rc = 0;

	if (n == NULL) {
		free(key);
		return hunch_err_set(err, -ENOMEM, "out of memory");
	}
	n->key = key;
	n->refs = 1;
	if (!dry) {
		rc = eng_sampler_var_alloc(m->smp, kind, &n->var_id,
					   &n->handle, err);
		if (rc == 0)
			n->kind = kind;
		if (rc == 0 && flag) {
			rc = eng_sampler_var_alloc(m->smp, ENG_VAR_COUNTER,
						   &n->flag_id, &n->flag_h, err);
			n->has_flag = rc == 0;
		}
	}
	if (rc < 0) {
		node_free_vars(m, n);
		node_free(n);
		return rc;
	}
	*out = n;
	return 0;
}

/* ---- sinks ---- */

int eng_metric_sink_insert(void *arg, const struct mfunc *fn,
		 const struct x86_point *xp, const struct x86_snip *s,
		 size_t ns, bool prepend, struct hunch_err *err)
{
	struct minsert_arg *ia = arg;
	struct mnode *n = ia->n;
	struct eng_inst_point pt;
	uint32_t id;
	int rc;

	if (n->nreqs == n->capreqs) {
		size_t cap = n->capreqs ? n->capreqs * 2 : 16;
		uint32_t *v = realloc(n->reqs, cap * sizeof *v);

		if (v == NULL)
			return hunch_err_set(err, -ENOMEM, "out of memory");
		n->reqs = v;
		n->capreqs = cap;
	}
	eng_inst_point_from(xp, fn->mod->base, &pt);
	rc = eng_inst_add(ia->m->in, &pt, s, ns, prepend, &id, err);
	if (rc < 0) {
		hunch_err_prefix(err, "%s at %#llx: ", fn->f->name,
				 (unsigned long long)pt.addr);
		return rc;
	}
	n->reqs[n->nreqs++] = id;
	n->traps += pt.trap;
	return 0;
}

struct cost_arg {
	struct eng_metric *m;
	struct eng_metric_cost *c;
	struct mprobe_wants wants;
	/* Exits per function: a call leaves by one of them, so the
	 * costliest is charged once per call, not every one (glibc's
	 * pthread_mutex_lock has three: its exit timer was predicted at
	 * three times its cost). */
	struct cost_exit { const struct eng_func *f; double ns, rate; } *ex;
	size_t nex, capex;
};

static int charge_exit(struct cost_arg *ca, const struct mfunc *fn,
		       double ns, double rate)
{
	for (size_t i = 0; i < ca->nex; i++)
		if (ca->ex[i].f == fn->f) {
			if (ns > ca->ex[i].ns)
				ca->ex[i].ns = ns;
			return 0;
		}
	if (ca->nex == ca->capex) {
		size_t cap = ca->capex ? 2 * ca->capex : 16;
		struct cost_exit *e = realloc(ca->ex, cap * sizeof *e);

		if (e == NULL)
			return -ENOMEM;
		ca->ex = e;
		ca->capex = cap;
	}
	ca->ex[ca->nex++] = (struct cost_exit){ fn->f, ns, rate };
	return 0;
}

/* A point without room for a jump is instrumented in a relocated copy
 * of its function when relocation works for it (eng_inst_add routes it
 * there), else by a trap: predict the one that will happen, since a
 * trap costs ~30,000 times more. */
static bool relocates(struct eng_metric *m, const struct mfunc *fn)
{
	enum eng_refusal why;
	struct mreloc *r;
	bool ok;

	for (size_t i = 0; i < m->nrel; i++)
		if (m->rel[i].f == fn->f)
			return m->rel[i].ok;
	if (m->frc == NULL && eng_funcreloc_check_new(&m->frc) < 0)
		return false;
	ok = fn->mod->img != NULL && m->pc != NULL &&
	     eng_funcreloc_check(m->frc, m->pc, fn->mod->img, fn->f,
				 &why) == ENG_FUNCRELOC_RELOCATED;
	if (m->nrel == m->caprel) {
		size_t cap = m->caprel ? 2 * m->caprel : 16;

		if ((r = realloc(m->rel, cap * sizeof *r)) == NULL)
			return ok;
		m->rel = r;
		m->caprel = cap;
	}
	m->rel[m->nrel++] = (struct mreloc){ fn->f, ok };
	return ok;
}

/* The discovery ring an enable adds at the entry of a sync or I/O
 * function not watched yet (eng_metric_seen.c; not built by a dry
 * run; it shares the metric's base trampoline): its test, and its body
 * on a quarter of the calls (it runs when the argument changes).
 * Without it FrequentSyncOperations on sqlite3 was predicted at 4.9%
 * and observed at 7.7%; with the body on every call, at 30%. */
static double seen_cost(struct eng_metric *m, const struct mfunc *fn,
			const struct x86_point *xp)
{
	const struct eng_inst_cost *c = eng_inst_costs(m->in);

	if (xp->kind != X86_PT_ENTRY || m->no_discovery ||
	    eng_metric_seen_class(fn->f->name) < 0)
		return 0;
	for (const struct mwatch *w = m->watches; w != NULL; w = w->next)
		if (w->f == fn->f)
			return 0;
	return c->test_ns +
	       (3 * c->add_ns + MSEEN_SLOTS * (c->test_ns + c->add_ns)) / 4;
}

static int sink_cost(void *arg, const struct mfunc *fn,
		     const struct x86_point *xp, const struct x86_snip *s,
		     size_t ns, bool prepend, struct hunch_err *err)
{
	struct cost_arg *ca = arg;
	bool jump = xp->ok || relocates(ca->m, fn);
	double ns_call =
		eng_metric_cal_cost(ca->m, s, ns) +
		(jump ? eng_metric_cal_base(ca->m) : ENG_METRIC_TRAP_COST_NS) +
		seen_cost(ca->m, fn, xp);

	(void)prepend;
	(void)err;
	/* A trap costs so much that the guess already rules it out; a
	 * probe would be a trap too. */
	if (jump && eng_metric_probe_want(ca->m, &ca->wants, fn) < 0)
		return -ENOMEM;
	ca->c->points++;
	if (xp->kind == X86_PT_EXIT)
		return charge_exit(ca, fn, ns_call,
				   eng_metric_funcs_rate(ca->m, fn));
	ca->c->ns_per_s += ns_call * eng_metric_funcs_rate(ca->m, fn);
	return 0;
}

/* ---- building ---- */

static char *key_of(const char *what, const char *name,
		    const struct eng_mclause *c, size_t nc,
		    const struct eng_mfocus *f, bool object,
		    const struct eng_mfocus *cons_of)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	if (fp == NULL)
		return NULL;
	fprintf(fp, "%s %s ", what, name ? name : "");
	eng_metric_key_clauses(fp, c, nc);
	eng_metric_key_code(fp, f);
	if (object)
		eng_metric_key_object(fp, f);
	for (size_t i = 0; cons_of != NULL && i < cons_of->ncons; i++) {
		fprintf(fp, "[con %s ", cons_of->cons[i].name);
		eng_metric_key_clauses(fp, cons_of->cons[i].clauses,
			     cons_of->cons[i].nclauses);
		fputc(']', fp);
	}
	if (fclose(fp) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Build or find a code node; `sink` NULL inserts, else only costs. */
static int build_node(struct eng_metric *m, const struct eng_mdef *def,
		      const struct eng_mfocus *f,
		      const struct eng_mconstraint *con,
		      const struct mgen_sink *cost, struct mnode **out,
		      struct hunch_err *err);

static int build_cons(struct eng_metric *m, const struct eng_mdef *def,
		      const struct eng_mfocus *f, struct mnode *n,
		      const struct mgen_sink *cost, struct hunch_err *err)
{
	n->cons = calloc(f->ncons + 1, sizeof *n->cons);
	n->con_names = calloc(f->ncons + 1, sizeof *n->con_names);
	if (n->cons == NULL || n->con_names == NULL)
		return hunch_err_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < f->ncons; i++) {
		int rc = build_node(m, def, f, &f->cons[i], cost,
				    &n->cons[n->ncons], err);

		if (rc < 0)
			return rc;
		/* Predicting: only the handles are read, and they are 0. */
		if (cost != NULL)
			n->cons[n->ncons] = n;
		n->con_names[n->ncons++] = f->cons[i].name;
	}
	return 0;
}

static int gen_node(struct eng_metric *m, const struct eng_mdef *def,
		    const struct eng_mfocus *f,
		    const struct eng_mconstraint *con, struct mnode *n,
		    const struct mgen_sink *cost, struct hunch_err *err)
{
	struct minsert_arg ia = { m, n };
	struct mgen g = { .m = m, .def = def, .f = f, .node = n,
			  .type = con ? ENG_MVAR_COUNTER : def->type,
			  .is_constraint = con != NULL,
			  .is_replace = con == NULL && f->nreplace > 0 };
	int rc;

	g.sink = cost ? *cost
		      : (struct mgen_sink){ .emit = eng_metric_sink_insert,
					    .arg = &ia };
	if (con != NULL)
		rc = eng_metric_gen_clauses(&g, con->clauses, con->nclauses,
					    err);
	else if (g.is_replace)
		rc = eng_metric_gen_clauses(&g, f->replace, f->nreplace, err);
	else
		rc = eng_metric_gen_clauses(&g, def->clauses, def->nclauses,
					    err);
	n->functions = g.nfuncs;
	if (rc == 0 && con == NULL && !g.is_replace && cost == NULL)
		rc = eng_metric_follow_init(m, n, def, f);
	if (rc == 0 && con != NULL && g.nfuncs == 0) {
		char fo[256];

		eng_metric_key_focus_name(f, fo, sizeof fo);
		rc = hunch_err_set(err, -ENOENT, "metric %s on %s: constraint "
				"%s finds no function to instrument%s%s; check "
				"the focus names a function of the program",
				def->name, fo, con->name, n->why ? ": " : "",
				n->why ? eng_refusal_str(n->why) : "");
	}
	return rc;
}

static int build_node(struct eng_metric *m, const struct eng_mdef *def,
		      const struct eng_mfocus *f,
		      const struct eng_mconstraint *con,
		      const struct mgen_sink *cost, struct mnode **out,
		      struct hunch_err *err)
{
	char *key = con ? key_of("constraint", con->name, con->clauses,
				 con->nclauses, f, false, NULL)
			: key_of("metric", def->name, def->clauses,
				 def->nclauses, f, true, f);
	struct mnode *n = key ? node_find(m, key) : NULL;
	bool flag = con == NULL && f->has_key && f->nreplace == 0;
	struct mnode *dead = NULL;
	int rc;

	if (key == NULL)
		return hunch_err_set(err, -ENOMEM, "out of memory");
	if (n != NULL) {
		free(key);
		n->refs += cost == NULL;
		*out = cost ? NULL : n;
		return 0;
	}
	rc = node_new(m, key, con ? ENG_VAR_COUNTER : var_kind(def->type),
		      flag, cost != NULL, &n, err);
	if (rc < 0)
		return rc;
	if (con == NULL)
		rc = build_cons(m, def, f, n, cost, err);
	if (rc == 0)
		rc = gen_node(m, def, f, con, n, cost, err);
	if (cost != NULL || rc < 0) {
		/* Predicting, or failed: queued requests go again. */
		n->refs = 1;
		if (cost == NULL) {
			n->next = m->nodes;
			m->nodes = n;
			eng_metric_node_put(m, n, &dead);
			eng_metric_nodes_reap(m, dead);
		} else {
			node_free(n);
		}
		*out = NULL;
		return rc;
	}
	n->fresh = true;
	n->next = m->nodes;
	m->nodes = n;
	*out = n;
	return 0;
}

/* ---- after the commit ---- */

static int check_built(struct eng_metric *m, const struct eng_mdef *def,
		       const struct eng_mfocus *f, struct mnode *n,
		       struct hunch_err *err)
{
	struct mcheck c;

	eng_metric_check_of(def, f, &c);
	return eng_metric_check(m, &c, n, err);
}

/* Threads already inside the functions of freshly inserted code missed
 * their entry snippets: run those now (every thread is stopped), then
 * read the values of what catchup started at an activation's beginning. */
void eng_metric_catchup_fresh(struct eng_metric *m)
{
	for (struct mnode *n = m->nodes; n != NULL; n = n->next) {
		for (size_t i = 0; n->fresh && i < n->ncatch; i++) {
			struct eng_catchup_info ci;

			if (eng_inst_catchup_info(m->in, n->catch[i].lo,
						  n->catch[i].hi,
						  &n->catch[i].s, 1, &ci,
						  NULL) < 0)
				continue;
			n->from_begin += ci.from_begin;
			n->from_samples += ci.from_samples;
			n->from_enable += ci.from_enable;
		}
		/* The value as of enabling, so a rate taken from here on
		 * (the consultant's samples) does not put time caught up
		 * from before enabling into its first interval. */
		if (n->fresh && n->from_begin + n->from_samples > 0)
			eng_sampler_var_refresh(m->smp, n->var_id);
		n->fresh = false;
	}
}

/* Insert and catch up in one stop of the program (it is left as it was
 * found: stopped, or running). */
static int commit_new(struct eng_metric *m, const struct eng_mdef *def,
		      const struct eng_mfocus *f, struct mnode *n,
		      struct hunch_err *err)
{
	bool was_stopped, fresh = false;
	int rc;

	for (struct mnode *k = m->nodes; k != NULL && !fresh; k = k->next)
		fresh = k->fresh;
	if (!fresh)      /* all shared: nothing to insert, no stop */
		return check_built(m, def, f, n, err);
	was_stopped = eng_proc_stopped(m->p);
	rc = was_stopped ? 0 : eng_ptrace_stop_all(m->p, err);

	if (rc == 0)
		rc = eng_inst_commit(m->in, err);
	if (rc >= 0)
		rc = check_built(m, def, f, n, err);
	if (rc == 0)
		eng_metric_catchup_fresh(m);
	if (!was_stopped && eng_proc_stopped(m->p) &&
	    eng_ptrace_resume_all(m->p, rc < 0 ? NULL : err) < 0 && rc == 0)
		rc = -ESRCH;
	return rc;
}

/* ---- instances ---- */

static char *inst_key(const struct eng_mdef *def, const struct eng_mfocus *f)
{
	char *k = key_of("metric", def->name, def->clauses, def->nclauses, f,
			 true, f);
	char *out = NULL;

	if (k != NULL && asprintf(&out, "%s[tid %d]", k, (int)f->tid) < 0)
		out = NULL;
	free(k);
	return out;
}

int eng_metric_enable(struct eng_metric *m, const struct eng_mdef *def,
		      const struct eng_mfocus *f, struct eng_minst **out,
		      struct hunch_err *err)
{
	char *key = inst_key(def, f);
	struct eng_minst *mi;
	struct mnode *n = NULL, *dead = NULL;
	int rc;

	if (key == NULL)
		return hunch_err_set(err, -ENOMEM, "out of memory");
	for (mi = m->insts; mi != NULL; mi = mi->next)
		if (strcmp(mi->key, key) == 0) {
			free(key);
			mi->refs++;
			*out = mi;
			return 0;
		}
	mi = calloc(1, sizeof *mi);
	if (mi == NULL) {
		free(key);
		return hunch_err_set(err, -ENOMEM, "out of memory");
	}
	rc = build_node(m, def, f, NULL, NULL, &n, err);
	if (rc == 0 && m->batch) {   /* committed and checked at its end */
		eng_metric_inst_link(m, mi, key, n, f->tid);
		eng_metric_batch_defer(m, def, f, mi);
		*out = mi;
		return 0;
	}
	if (rc == 0)
		rc = commit_new(m, def, f, n, err);
	if (rc < 0) {
		eng_metric_node_put(m, n, &dead);
		eng_inst_commit(m->in, NULL);
		eng_metric_nodes_reap(m, dead);
		free(key);
		free(mi);
		return rc;
	}
	eng_metric_inst_link(m, mi, key, n, f->tid);
	*out = mi;
	return 0;
}

struct eng_minst *eng_metric_share(struct eng_metric *m,
				   const struct eng_mdef *def,
				   const struct eng_mfocus *f)
{
	char *key = inst_key(def, f);
	struct eng_minst *mi = NULL;

	if (key == NULL)
		return NULL;
	for (mi = m->insts; mi != NULL; mi = mi->next)
		if (strcmp(mi->key, key) == 0) {
			mi->refs++;
			break;
		}
	free(key);
	return mi;
}

void eng_metric_inst_link(struct eng_metric *m, struct eng_minst *mi,
			  char *key, struct mnode *n, pid_t tid)
{
	mi->key = key;
	mi->refs = 1;
	mi->code = n;
	mi->tid = tid;
	mi->next = m->insts;
	m->insts = mi;
}

void eng_metric_inst_unlink(struct eng_metric *m, struct eng_minst *mi)
{
	for (struct eng_minst **pp = &m->insts; *pp != NULL; pp = &(*pp)->next)
		if (*pp == mi) {
			*pp = mi->next;
			return;
		}
}

int eng_metric_disable(struct eng_metric *m, struct eng_minst *mi,
		       struct hunch_err *err)
{
	struct mnode *dead = NULL;
	int rc;

	if (mi == NULL || mi->refs == 0)
		return hunch_err_set(err, -EINVAL, "metric compiler: disabling "
				  "an instance that is not enabled");
	if (--mi->refs > 0)
		return 0;
	eng_metric_inst_unlink(m, mi);
	if (m->batch) {   /* removed by the batch's commit */
		eng_metric_batch_forget(m, mi);
		eng_metric_node_put(m, mi->code, &m->batch_dead);
		free(mi->key);
		free(mi);
		return 0;
	}
	eng_metric_node_put(m, mi->code, &dead);
	rc = eng_inst_commit(m->in, err);
	/* The removal is committed: nothing writes the handles any more
	 * (a thread already inside a mini finishes it before it can see
	 * the slot reused, since a reused slot is handed out only later). */
	eng_metric_nodes_reap(m, dead);
	free(mi->key);
	free(mi);
	return rc < 0 ? rc : 0;
}

void eng_metric_destroy(struct eng_metric *m)
{
	if (m == NULL)
		return;
	if (m->batch)   /* a batch left open: its changes go now */
		eng_metric_batch_end(m, NULL, NULL);
	while (m->insts != NULL) {
		m->insts->refs = 1;
		eng_metric_disable(m, m->insts, NULL);
	}
	for (size_t i = 0; i < m->nmods; i++) {
		if (m->mods[i].img != NULL && !m->own_pc)
			eng_points_forget(m->pc, m->mods[i].img);
		free(m->mods[i].path);
		eng_image_close(m->mods[i].img);
	}
	free(m->mods);
	for (size_t i = 0; i < m->nold; i++)
		eng_image_close(m->old_imgs[i]);
	free(m->old_imgs);
	if (m->own_pc)
		eng_points_cache_free(m->pc);
	for (size_t i = 0; i < m->nrates; i++) {
		free(m->rates[i].module);
		free(m->rates[i].function);
	}
	free(m->rates);
	free(m->rel);
	eng_metric_probe_free(m);
	eng_funcreloc_check_free(m->frc);
	eng_metric_seen_free(m);
	free(m->batch_new);
	free(m);
}

static int thread_value(const struct eng_metric *m, uint32_t id, pid_t tid,
			int64_t *v)
{
	const struct eng_sampler_stats *st = eng_sampler_stats(m->smp);

	for (uint32_t i = 0; i <= st->max_index; i++) {
		struct eng_thread_info ti;

		if (eng_sampler_thread(m->smp, i, &ti) == 0 && ti.tid == tid)
			return eng_sampler_var_thread(m->smp, id, i, v);
	}
	*v = 0;
	return -ENOENT;
}

int eng_metric_value(const struct eng_metric *m, const struct eng_minst *mi,
		     int64_t *v)
{
	struct eng_var_agg a;
	int rc;

	if (mi->tid != 0)
		return thread_value(m, mi->code->var_id, mi->tid, v);
	rc = eng_sampler_var_agg(m->smp, mi->code->var_id, &a);
	*v = rc == 0 ? a.sum : 0;
	return rc;
}

bool eng_metric_stale(const struct eng_metric *m, const struct eng_minst *mi)
{
	const struct eng_sampler_stats *st = eng_sampler_stats(m->smp);
	struct eng_var_agg a;

	if (mi->tid == 0)
		return eng_sampler_var_agg(m->smp, mi->code->var_id, &a) == 0 &&
		       a.nstale > 0;
	for (uint32_t i = 0; i <= st->max_index; i++) {
		struct eng_thread_info ti;

		if (eng_sampler_thread(m->smp, i, &ti) == 0 && ti.tid == mi->tid)
			return eng_sampler_var_stale(m->smp, mi->code->var_id,
						     i);
	}
	return false;
}

int eng_metric_refresh(struct eng_metric *m, const struct eng_minst *mi)
{
	return eng_sampler_var_refresh(m->smp, mi->code->var_id);
}

void eng_metric_info(const struct eng_metric *m, const struct eng_minst *mi,
		     struct eng_minst_info *o)
{
	const struct mnode *n = mi->code;

	(void)m;
	memset(o, 0, sizeof *o);
	o->refs = mi->refs;
	o->functions = n->functions;
	o->caught_from_begin = n->from_begin;
	o->caught_from_samples = n->from_samples;
	o->caught_from_enable = n->from_enable;
	o->points = eng_metric_check_active(n);
	o->refused = n->refused;
	o->traps = n->traps;
	o->why = n->why;
	for (size_t i = 0; i < n->ncons; i++) {
		o->points += eng_metric_check_active(n->cons[i]);
		o->refused += n->cons[i]->refused;
		o->traps += n->cons[i]->traps;
	}
	o->var_id = n->var_id;
	o->var_handle = n->handle;
}

/* ---- cost ---- */

int eng_metric_set_call_rate(struct eng_metric *m, const char *module,
			     const char *function, double calls_per_s)
{
	struct mrate *r = realloc(m->rates, (m->nrates + 1) * sizeof *r);
	char *mod = module ? strdup(module) : NULL, *fn = strdup(function);

	if (r != NULL)
		m->rates = r;
	if (r == NULL || fn == NULL || (module != NULL && mod == NULL)) {
		free(mod);
		free(fn);
		return -ENOMEM;
	}
	/* The newest estimate wins: it is looked up first. */
	memmove(m->rates + 1, m->rates, m->nrates * sizeof *r);
	m->rates[0] = (struct mrate){ mod, fn, calls_per_s };
	m->nrates++;
	return 0;
}

int eng_metric_predict(struct eng_metric *m, const struct eng_mdef *def,
		       const struct eng_mfocus *f, struct eng_metric_cost *c,
		       struct hunch_err *err)
{
	struct cost_arg ca = { m, c, { NULL, 0, 0 }, NULL, 0, 0 };
	struct mgen_sink sink = { .emit = sink_cost, .arg = &ca, .dry = true };
	struct mnode *n = NULL;
	int rc;

	memset(c, 0, sizeof *c);
	rc = build_node(m, def, f, NULL, &sink, &n, err);
	for (size_t i = 0; i < ca.nex; i++)
		c->ns_per_s += ca.ex[i].ns * ca.ex[i].rate;
	free(ca.ex);
	c->slowdown = c->ns_per_s / 1e9;
	/* After the dry build: a probe is an instance of its own. */
	c->probing = rc == 0 ? eng_metric_probe_queue(m, &ca.wants) : 0;
	free(ca.wants.f);
	return rc;
}

/*
 * pc_findings_text.c - findings in words and JSON, and which were told
 * (see pc_findings.h).  The shipped hypotheses have their own sentences;
 * one loaded from a user's file is said by its name, value and
 * threshold.
 */
#include "pc_findings.h"
#include "pc_findings_int.h"
#include "xmalloc.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

struct words {
	char *buf;
	size_t len, n;
};

static void say(struct words *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void say(struct words *w, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (w->n >= w->len)
		return;
	va_start(ap, fmt);
	k = vsnprintf(w->buf + w->n, w->len - w->n, fmt, ap);
	va_end(ap);
	if (k > 0)
		w->n += (size_t)k;
	if (w->n >= w->len)
		w->n = w->len - 1;
}

static const struct pc_res *rs(const struct pc_consult *pc, pc_res_id id)
{
	return pc_res_get(pc->res, id);
}

static const char *hyp_name(const struct pc_consult *pc, int hyp)
{
	return pc->cfg->hyp[hyp].name;
}

static bool is(const struct pc_consult *pc, int hyp, const char *name)
{
	return strcmp(hyp_name(pc, hyp), name) == 0;
}

/* What a function's parenthesis names: its source file, or its module
 * where the file is unknown (stripped code: "python3.11", not
 * "<unknown>"). */
static const char *fn_home(const struct pc_consult *pc, pc_res_id fn)
{
	const struct pc_res *up = rs(pc, rs(pc, fn)->parent);

	if (up->kind == PC_RES_SRCFILE && strcmp(up->name, "<unknown>") == 0)
		return rs(pc, up->parent)->name;
	return up->name;
}

/* ", in `f` (file.c)" for the /Code where, "" when unconstrained;
 * with the line the samples put most of it at when known: ", in `f`
 * (loop.py:4)". */
/* Python names the code of `python -c '...'` "<string>" and of a script
 * read from standard input "<stdin>": no file to open, so the finding
 * says what it is. */
static const char *home_words(const char *home)
{
	if (strcmp(home, "<string>") == 0)
		return "the program given with -c";
	if (strcmp(home, "<stdin>") == 0)
		return "the program read from standard input";
	return NULL;
}

static void say_code(const struct pc_consult *pc, pc_res_id id, int line,
		     struct words *w)
{
	const struct pc_res *r = rs(pc, id);
	const char *home = r->kind == PC_RES_FUNCTION ? fn_home(pc, id) : "";
	const char *words = home_words(home);

	if (r->kind == PC_RES_FUNCTION && words != NULL && line > 0)
		say(w, ", in `%s` (%s, line %d)", r->name, words, line);
	else if (r->kind == PC_RES_FUNCTION && words != NULL)
		say(w, ", in `%s` (%s)", r->name, words);
	else if (r->kind == PC_RES_FUNCTION && line > 0)
		say(w, ", in `%s` (%s:%d)", r->name, home, line);
	else if (r->kind == PC_RES_FUNCTION)
		say(w, ", in `%s` (%s)", r->name, home);
	else if (r->kind == PC_RES_SRCFILE || r->kind == PC_RES_MODULE)
		say(w, ", in %s `%s`", r->kind == PC_RES_MODULE ? "module" :
		    "source file", r->name);
}

/* "mutex `demo_lock`", "a mutex", "synchronization objects". */
static void say_object(const struct pc_consult *pc, pc_res_id id,
		       struct words *w)
{
	const struct pc_res *r = rs(pc, id);
	char cls[64];

	snprintf(cls, sizeof(cls), "%s",
		 r->kind == PC_RES_SYNCOBJ ? rs(pc, r->parent)->name :
		 r->name);
	for (char *p = cls; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	if (r->kind == PC_RES_SYNCOBJ)
		say(w, "%s `%s`", cls, r->name);
	else if (r->kind == PC_RES_SYNCCLASS)
		say(w, "a %s", cls);
	else
		say(w, "locks");
}

/* " on `/tmp/x`" for the /Files where. */
static void say_file(const struct pc_consult *pc, pc_res_id id,
		     struct words *w)
{
	const struct pc_res *r = rs(pc, id);

	if (r->kind == PC_RES_FILE)
		say(w, " on `%s`", r->path + strlen("/Files"));
}

/* The process a finding's where names, when the job has more than one:
 * its MPI rank ("rank 2") or "process 6499"; NULL for a program of one
 * process, where "the program" says it. */
static const char *which_process(const struct pc_res *p, char *buf,
				 size_t len, const struct pc_res *root)
{
	if (p == NULL || p->kind != PC_RES_PROCESS)
		return NULL;
	if (p->label[0] != '\0')
		return p->label;
	if (root == NULL || root->nchildren < 2)
		return NULL;
	snprintf(buf, len, "process %s", p->name);
	return buf;
}

/* Who: "4 threads", "thread `26555:main`", "the program", and in a job
 * of several processes "3 processes", "3 threads of process 6499",
 * "rank 2". */
static void say_who(const struct pc_consult *pc, const struct pc_finding *f,
		    struct words *w, const char *one, const char *many)
{
	const struct pc_res *t = rs(pc, f->where[1]);
	const struct pc_res *p = t->kind == PC_RES_THREAD ? rs(pc, t->parent) : t;
	char buf[48];
	const char *proc = which_process(p, buf, sizeof(buf),
					 p ? rs(pc, p->parent) : NULL);

	if (f->nprocs > 1 && t->kind == PC_RES_HIERARCHY)
		say(w, "%d processes %s", f->nprocs, many);   /* a job's */
	else if (t->kind == PC_RES_HIERARCHY && t->nchildren > 1)
		say(w, "the job's %zu processes %s", t->nchildren, many);
	else if (proc != NULL && p->label[0] != '\0' && f->nthreads <= 1)
		say(w, "%s %s", proc, one);   /* an MPI rank */
	else if (f->nthreads > 1)
		say(w, "%d threads%s%s %s", f->nthreads, proc ? " of " : "",
		    proc ? proc : "", many);
	else if (t->kind == PC_RES_THREAD)
		say(w, "thread `%s` %s", t->name, one);
	else if (f->nthreads == 1)
		say(w, "1 thread%s%s %s", proc ? " of " : "", proc ? proc : "",
		    one);
	else if (proc != NULL)
		say(w, "%s %s", proc, one);
	else
		say(w, "the program's threads %s", many);
}

static double measure(const struct pc_consult *pc, const struct pc_finding *f)
{
	return pc_findings_in_seconds(pc, f->hyp) && !isnan(f->impact) ?
	       f->impact : pc_findings_value(pc, f->lead);
}

/* "69% of their time" per thread when threads are known and it fits,
 * else "2.55 s per second". */
static void say_time(const struct pc_finding *f, double v, struct words *w)
{
	if (f->nthreads > 0 && v / f->nthreads <= 1.0)
		say(w, "%.0f%% of %s time", 100 * v / f->nthreads,
		    f->nthreads > 1 ? "their" : "its");
	else
		say(w, "%.2f s per second", v);
}

/* A short measure of a node, for the evidence of another hypothesis. */
static void say_short(const struct pc_consult *pc, const struct pc_node *n,
		      double v, struct words *w)
{
	if (is(pc, n->hyp, "FrequentSyncOperations"))
		say(w, "%.0f lock operations per second", v);
	else if (is(pc, n->hyp, "CPUbound"))
		say(w, "using %.2f CPUs", v);
	else if (is(pc, n->hyp, "CPUdemand"))
		say(w, "wanting %.2f CPUs", v);
	else if (is(pc, n->hyp, "CPUstarved"))
		say(w, "%.2f s per second waiting for a CPU", v);
	else if (is(pc, n->hyp, "TooManySmallIOOps"))
		say(w, "%.0f bytes per I/O operation", v);
	else if (is(pc, n->hyp, "ExcessiveIOBlockingTime"))
		say(w, "%.2f s per second blocked in I/O", v);
	else if (is(pc, n->hyp, "ExcessiveSyncWaitingTime"))
		say(w, "%.2f s per second waiting for locks", v);
	else if (is(pc, n->hyp, "ExcessiveMessageWaitingTime"))
		say(w, "%.2f s per second waiting in MPI calls", v);
	else
		say(w, "%s %.4g", hyp_name(pc, n->hyp), v);
}

/* Is r the finding's process or thread: the lead's, the most specific
 * its nodes name, or the one thread of that process it is seen in; and
 * not the whole program? */
static bool own_threads(const struct pc_consult *pc,
			const struct pc_finding *f, pc_res_id r)
{
	return rs(pc, r)->kind != PC_RES_HIERARCHY &&
	       (r == f->lead->focus.r[1] || r == f->where[1] ||
		(f->nthreads == 1 && rs(pc, r)->parent == f->where[1]));
}

/* A CPU finding in one function: the CPUs its process or threads use
 * in all (a node of its own or of its chain with the code
 * unconstrained), when more, so that "0.57 CPUs in `work`" is not read
 * as the program using half a CPU: the rest is in its callers and in
 * code the samples did not place.  Not on the whole program: "in all"
 * would be every thread's, beside "1 thread". */
static double cpu_in_all(const struct pc_consult *pc,
			 const struct pc_finding *f, double v)
{
	double all = NAN;

	if (rs(pc, f->where[0])->kind == PC_RES_HIERARCHY)
		return NAN;
	for (size_t i = 0; i < f->nnodes + f->nchain; i++) {
		const struct pc_node *n = i < f->nnodes ? f->nodes[i] :
					  f->chain[i - f->nnodes];
		double nv = pc_findings_value(pc, n);

		if (n->hyp == f->hyp &&
		    rs(pc, n->focus.r[0])->kind == PC_RES_HIERARCHY &&
		    own_threads(pc, f, n->focus.r[1]) && nv >= v + 0.05 &&
		    (isnan(all) || nv > all))
			all = nv;
	}
	return all;
}

static void say_main(const struct pc_consult *pc, const struct pc_finding *f,
		     struct words *w)
{
	double v = measure(pc, f), all;
	const struct pc_hypothesis *h = &pc->cfg->hyp[f->hyp];
	const struct pc_tunable *t = pc_tunables_find(pc->cfg, h->threshold);

	if (is(pc, f->hyp, "CPUbound")) {
		say_who(pc, f, w, "uses", "use");
		say(w, " %.2f CPUs computing", v);
	} else if (is(pc, f->hyp, "CPUdemand")) {
		/* under load: CPU used plus CPU waited for */
		say_who(pc, f, w, "wants", "want");
		say(w, " %.2f CPUs computing (used, or waited for while other "
		    "load held the CPUs)", v);
	} else if (is(pc, f->hyp, "CPUstarved")) {
		say_who(pc, f, w, "waits", "wait");
		say(w, " %.2f s per second for a CPU: other load on this "
		    "machine starves the program", v);
	} else if (is(pc, f->hyp, "ExcessiveSyncWaitingTime")) {
		say_who(pc, f, w, "spends", "spend");
		say(w, " ");
		say_time(f, v, w);
		say(w, " waiting for ");
		say_object(pc, f->where[2], w);
	} else if (is(pc, f->hyp, "FrequentSyncOperations")) {
		say_who(pc, f, w, "makes", "make");
		say(w, " %.0f lock operations per second on ", v);
		say_object(pc, f->where[2], w);
	} else if (is(pc, f->hyp, "ExcessiveIOBlockingTime")) {
		say_who(pc, f, w, "spends", "spend");
		say(w, " ");
		say_time(f, v, w);
		say(w, " blocked in I/O");
		say_file(pc, f->where[3], w);
	} else if (is(pc, f->hyp, "TooManySmallIOOps")) {
		say_who(pc, f, w, "does", "do");
		say(w, " I/O in %.0f-byte operations",
		    pc_findings_value(pc, f->lead));
		say_file(pc, f->where[3], w);
	} else if (is(pc, f->hyp, "ExcessiveMessageWaitingTime")) {
		say_who(pc, f, w, "spends", "spend");
		say(w, " ");
		say_time(f, v, w);
		say(w, " waiting in MPI calls (receives, waits, barriers, "
		    "collectives)");
	} else if (is(pc, f->hyp, "ExcessiveAllocationTime")) {
		say_who(pc, f, w, "spends", "spend");
		say(w, " ");
		say_time(f, v, w);
		say(w, " in malloc and free");
	} else {
		say(w, "%s: %.4g %s %s %.4g", h->name,
		    pc_findings_value(pc, f->lead),
		    t && t->units ? t->units : "",
		    h->cmp == PC_CMP_GT ? ">" : "<", f->lead->threshold);
	}
	say_code(pc, f->where[0], f->line, w);
	if (f->caller != PC_RES_NONE)
		say(w, ", called from `%s` (%s)", rs(pc, f->caller)->name,
		    home_words(fn_home(pc, f->caller)) ?
		    home_words(fn_home(pc, f->caller)) :
		    fn_home(pc, f->caller));
	if (is(pc, f->hyp, "CPUbound") && !isnan(all = cpu_in_all(pc, f, v)))
		say(w, ", of %.2f CPUs in all", all);
}

char *pc_findings_text_line(const struct pc_consult *pc,
			    const struct pc_finding *f, char *buf, size_t len)
{
	struct words w = { buf, len, 0 };
	bool told[PC_FINDINGS_MAXHYP] = { false };

	if (len == 0)
		return buf;
	buf[0] = '\0';
	say_main(pc, f, &w);
	/* The other hypotheses' measures of the same cause, once each: as
	 * the impact is taken (f->also), else the smallest (the most
	 * restricted focus) of each. */
	for (size_t i = 0; i < f->nnodes; i++) {
		const struct pc_node *n = f->nodes[i];

		if (n->hyp == f->hyp || n->hyp >= PC_FINDINGS_MAXHYP ||
		    told[n->hyp] ||
		    (i >= f->nown && i < f->nleaves))
			continue;
		told[n->hyp] = true;
		for (size_t j = i + 1; j < f->nnodes; j++)
			if (f->nodes[j]->hyp == n->hyp &&
			    (j < f->nown || j >= f->nleaves) &&
			    pc_findings_value(pc, f->nodes[j]) <
			    pc_findings_value(pc, n))
				n = f->nodes[j];
		say(&w, "; ");
		say_short(pc, n, isnan(f->also[n->hyp]) ?
			  pc_findings_value(pc, n) : f->also[n->hyp], &w);
	}
	if (f->sampled)
		say(&w, " (estimated from stack samples)");
	if (f->unconfirmed)
		say(&w, " (unconfirmed: shed for cost before measured again)");
	return buf;
}

char *pc_findings_text_impact(const struct pc_finding *f, char *buf, size_t len)
{
	if (isnan(f->impact))
		snprintf(buf, len, "not measured in seconds");
	else
		snprintf(buf, len, "%.2f s/s", f->impact);
	return buf;
}

/* ---- JSON ---- */

static json_t *num_or_null(double v)
{
	return isnan(v) || isinf(v) ? json_null() : json_real(v);
}

static json_t *path_or_null(const struct pc_consult *pc, pc_res_id id)
{
	const struct pc_res *r = rs(pc, id);

	return r->kind == PC_RES_HIERARCHY ? json_null() :
	       json_string(r->path);
}

static json_t *focus_json(const struct pc_consult *pc, const struct pc_node *n)
{
	json_t *a = json_array();

	for (int i = 0; i < PC_NHIER; i++)
		json_array_append_new(a, json_string(
			rs(pc, n->focus.r[i])->path));
	return a;
}

static json_t *evidence_json(const struct pc_consult *pc,
			     const struct pc_node *n)
{
	const struct pc_hypothesis *h = pc_truth_node_hyp(pc, n);

	return json_pack("{s:i, s:s, s:o, s:s, s:o, s:o, s:s, s:b, s:b}",
			 "node", n->id, "hypothesis", h->name, "focus",
			 focus_json(pc, n), "truth",
			 pc_shg_truth_name(n->truth), "value",
			 num_or_null(pc_findings_value(pc, n)), "threshold",
			 num_or_null(n->threshold), "compare",
			 h->cmp == PC_CMP_GT ? "gt" : "lt", "sampled",
			 n->sampled, "unconfirmed", n->unconfirmed);
}

json_t *pc_findings_text_json(const struct pc_consult *pc,
			const struct pc_search *s,
			const struct pc_finding *f)
{
	json_t *ev = json_array(), *chain = json_array();
	char line[1024];

	(void)s;
	for (size_t i = 0; i < f->nnodes; i++)
		json_array_append_new(ev, evidence_json(pc, f->nodes[i]));
	for (size_t i = 0; i < f->nchain; i++)
		json_array_append_new(chain, json_string(f->chain[i]->name));
	return json_pack("{s:i, s:s, s:s, s:o, s:{s:o, s:o, s:o, s:o, s:o, s:o}, "
			 "s:o, s:o, s:o, s:f, s:b, s:b, s:o, s:o, s:o, s:o}",
		"id", f->id, "hypothesis", hyp_name(pc, f->hyp),
		"text", pc_findings_text_line(pc, f, line, sizeof(line)),
		"impact_s_per_s", num_or_null(f->impact),
		"where",
		"function", path_or_null(pc, f->where[0]),
		"threads", path_or_null(pc, f->where[1]),
		"object", path_or_null(pc, f->where[2]),
		"file", path_or_null(pc, f->where[3]),
		"caller", f->caller == PC_RES_NONE ? json_null() :
			  json_string(rs(pc, f->caller)->path),
		"line", f->line > 0 ? json_integer(f->line) : json_null(),
		"nthreads", f->nthreads ? json_integer(f->nthreads) :
			    json_null(),
		"nprocesses", f->nprocs ? json_integer(f->nprocs) :
			      json_null(),
		"value", num_or_null(pc_findings_value(pc, f->lead)),
		"since_s", f->since_s,
		"sampled", f->sampled, "unconfirmed", f->unconfirmed,
		"symptom_of", f->symptom_of >= 0 ?
			      json_integer(f->symptom_of + 1) : json_null(),
		"symptom_why", f->symptom_of >= 0 ?
			       json_string(pc_findings_text_symptom(
				       f->symptom_why)) : json_null(),
		"evidence", ev, "chain", chain);
}

static const char *const symptom_words[] = {
	[PC_SYMPTOM_NONE] = "",
	[PC_SYMPTOM_IN_FUNCTION] = "not concluded false in this function",
	[PC_SYMPTOM_WAIT_PATH] = "CPU inside a lock's wait path or an I/O call",
	[PC_SYMPTOM_OTHER_PROCESS] =
		"a wait for another process of the job, which computes",
};

const char *pc_findings_text_symptom(enum pc_findings_symptom why)
{
	return symptom_words[why];
}

/* ---- told ---- */

/* The told node's index in t, or -1. */
static ssize_t told_find(const struct pc_findings_told *t, int id)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->ids[i] == id)
			return (ssize_t)i;
	return -1;
}

static bool told_has(const struct pc_findings_told *t, int id)
{
	return told_find(t, id) >= 0;
}

/* Was id told with its finding in the function code? */
static bool told_in(const struct pc_findings_told *t, int id, pc_res_id code)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->ids[i] == id && t->code[i] == code)
			return true;
	return false;
}

/* Remembers id as told, with the function its finding was told in: every
 * function it was told in, so that a finding whose function flaps
 * between two is told once in each, not at every flap. */
static void told_add(struct pc_findings_told *t, int id, pc_res_id code)
{
	if (told_in(t, id, code))
		return;
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 64;
		t->ids = xreallocarray(t->ids, t->cap, sizeof(*t->ids));
		t->code = xreallocarray(t->code, t->cap, sizeof(*t->code));
	}
	t->ids[t->n] = id;
	t->code[t->n++] = code;
}

/* A node's refinements still to conclude. */
static bool refining(const struct pc_search *s, const struct pc_node *n)
{
	for (size_t i = 0; i < n->nkids; i++) {
		const struct pc_node *k = pc_shg_node(s, n->kids[i].child);

		if (k->queued || k->pending || k->active)
			return true;
	}
	return false;
}

/* f's function, PC_RES_NONE when it names none (its /Code is the
 * root, which its chain's top-level node has). */
static pc_res_id told_code(const struct pc_finding *f)
{
	if (f->nchain == 0 || f->where[0] == f->chain[0]->focus.r[0])
		return PC_RES_NONE;
	return f->where[0];
}

/* A finding told before, now in another function than it was told in,
 * whose search has stopped there (its lead has nothing left to
 * conclude): told again, once per function it comes to rest in.  "1
 * thread uses 0.91 CPUs computing", told when the thread was true, is
 * then said in `f.<locals>.<genexpr>` too, where the search ends; not
 * at each level the search passes on its way down. */
static bool told_narrowed(const struct pc_findings_told *t,
			  const struct pc_search *s,
			  const struct pc_finding *f)
{
	pc_res_id code = told_code(f);

	if (code == PC_RES_NONE || refining(s, f->lead))
		return false;
	for (size_t i = 0; i < f->nident; i++)
		if (told_in(t, f->ident[i]->id, code))
			return false;
	return true;
}

bool pc_findings_text_tell(struct pc_findings_told *t,
		      const struct pc_search *s, const struct pc_finding *f)
{
	bool seen = false;

	if (f->symptom_of >= 0)
		return false;   /* told when it stands alone, if it does */
	if (f->nident == 0) {
		if (refining(s, f->lead) || told_has(t, f->lead->id))
			return false;
		told_add(t, f->lead->id, PC_RES_NONE);
		return true;
	}
	for (size_t i = 0; i < f->nident; i++)
		seen |= told_has(t, f->ident[i]->id);
	if (seen && !told_narrowed(t, s, f))
		return false;
	for (size_t i = 0; i < f->nident; i++)
		told_add(t, f->ident[i]->id, told_code(f));
	return true;
}

void pc_findings_text_told_free(struct pc_findings_told *t)
{
	free(t->ids);
	free(t->code);
	memset(t, 0, sizeof(*t));
}

/*
 * pc_report.c - the report model, JSON and text (see pc_report.h and
 * docs/report-schema.md).  Numbers that do not exist (a node never
 * evaluated, a share with no comparable parent) are JSON null, never 0:
 * a reader must be able to tell "measured zero" from "not measured".
 */
#include "pc_report.h"
#include "pc_report_procs.h"
#include "pc_report_samples.h"
#include "pc_config_diff.h"

#include "pc_findings.h"
#include "pc_spread.h"
#include "pc_untested.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A most refined true node: true, not virtual, no child true.  Listed
 * as a bottleneck when measured so since it last ran; apart, as
 * unconfirmed, when it was shed (or skipped) for cost after it tested
 * true and has not been measured since.  A parent whose refinement is
 * unconfirmed is not a bottleneck: the refinement, listed apart, is the
 * finding. */
static bool is_listed(const struct pc_search *s, const struct pc_node *n,
		      bool unconfirmed)
{
	if (n->truth != PC_TRUE || n->is_virtual ||
	    n->unconfirmed != unconfirmed)
		return false;
	for (size_t i = 0; i < n->nkids; i++)
		if (pc_shg_node(s, n->kids[i].child)->truth == PC_TRUE)
			return false;
	return true;
}

/* An earlier finding: true for a while, false at the end (the program
 * changed behaviour, e.g. a phase of it ended).  Listed when it is the
 * most refined such node: not virtual, not true now, and no child of
 * it ever true (now or earlier). */
static bool is_earlier(const struct pc_search *s, const struct pc_node *n)
{
	if (n->truth == PC_TRUE || n->is_virtual || n->t_was_to < 0)
		return false;
	for (size_t i = 0; i < n->nkids; i++) {
		const struct pc_node *c = pc_shg_node(s, n->kids[i].child);

		if (c->truth == PC_TRUE || c->t_was_to >= 0)
			return false;
	}
	return true;
}

/* The time a listed node is ordered by: when it (last) became true. */
static double listed_since(const struct pc_node *n, bool earlier)
{
	return earlier ? n->t_was_from : n->t_true_since;
}

enum listing { L_BOTTLENECK, L_UNCONFIRMED, L_EARLIER };

static size_t listed(const struct pc_search *s, enum listing l,
		     const struct pc_node **out, size_t max)
{
	bool earlier = l == L_EARLIER;
	size_t k = 0;

	for (size_t i = 0; s && i < s->nn && k < max; i++)
		if (earlier ? is_earlier(s, s->nodes[i]) :
		    is_listed(s, s->nodes[i], l == L_UNCONFIRMED))
			out[k++] = s->nodes[i];
	/* Insertion sort by time true, then id: small lists. */
	for (size_t i = 1; i < k; i++) {
		const struct pc_node *x = out[i];
		double tx = listed_since(x, earlier);
		size_t j = i;

		while (j > 0 && (listed_since(out[j - 1], earlier) > tx ||
				 (listed_since(out[j - 1], earlier) == tx &&
				  out[j - 1]->id > x->id))) {
			out[j] = out[j - 1];
			j--;
		}
		out[j] = x;
	}
	return k;
}

size_t pc_report_bottlenecks(const struct pc_consult *pc,
			     const struct pc_search *s,
			     const struct pc_node **out, size_t max)
{
	(void)pc;
	return listed(s, L_BOTTLENECK, out, max);
}

size_t pc_report_unconfirmed(const struct pc_consult *pc,
			     const struct pc_search *s,
			     const struct pc_node **out, size_t max)
{
	(void)pc;
	return listed(s, L_UNCONFIRMED, out, max);
}

/* Earlier findings: nodes that were true and turned false (the program
 * changed behaviour), the most refined of them (no child ever true),
 * ordered by the time they became true. */
static size_t pc_report_earlier(const struct pc_consult *pc,
				const struct pc_search *s,
				const struct pc_node **out, size_t max)
{
	(void)pc;
	return listed(s, L_EARLIER, out, max);
}

/* A share of a parent only means something for a metric that adds up
 * over a focus' parts: one measured at the node's focus, or divided by
 * a whole-program normaliser.  A ratio of two of the focus' own counts
 * (bytes per operation) has no share. */
static bool additive(const struct pc_hypothesis *h)
{
	for (int i = 1; i < h->nin; i++)
		if (!h->in[i].top_focus && h->op != PC_PM_ADD)
			return false;
	return true;
}

/* value / the parent's value when the parent tests the same hypothesis
 * on a wider focus (a where-refinement); NaN otherwise. */
static double pc_report_share(const struct pc_consult *pc,
			      const struct pc_search *s,
			      const struct pc_node *n)
{
	const struct pc_node *p = pc_shg_node(s, n->orig_parent);

	if (p == NULL || p->hyp != n->hyp || p->t_start < 0 ||
	    !additive(pc_truth_node_hyp(pc, n)) ||
	    !(pc_shg_node_judged(p) > 0) || isnan(pc_shg_node_judged(n)))
		return NAN;
	return pc_shg_node_judged(n) / pc_shg_node_judged(p);
}

static json_t *num_or_null(double v)
{
	return isnan(v) || isinf(v) ? json_null() : json_real(v);
}

static json_t *focus_json(const struct pc_consult *pc, const struct pc_node *n)
{
	json_t *a = json_array();

	for (int i = 0; i < PC_NHIER; i++)
		json_array_append_new(a, json_string(
			pc_res_get(pc->res, n->focus.r[i])->path));
	return a;
}

static json_t *chain_json(const struct pc_search *s, const struct pc_node *n)
{
	json_t *a = json_array();

	for (const struct pc_node *p = n; p && p->id != s->root;
	     p = pc_shg_node(s, p->orig_parent))
		json_array_insert_new(a, 0, json_string(p->name));
	return a;
}

/* A value of the current run, or for a node not measured since it was
 * shed, the last one it had. */
static double evaluated(const struct pc_node *n, double v)
{
	return n->guess < 0 && !n->unconfirmed ? NAN : v;
}

/* The rank (from 1) of the finding that groups the node, 0 if none:
 * the one it is its own node of, else the first that shares it (not a
 * finding that only took its impact from it). */
static int finding_of(const struct pc_findings *fs, const struct pc_node *n)
{
	for (int shared = 0; shared < 2; shared++)
		for (size_t i = 0; fs != NULL && i < fs->n; i++) {
			const struct pc_finding *f = &fs->f[i];

			for (size_t k = 0; k < (shared ? f->nleaves : f->nown);
			     k++)
				if (f->nodes[k] == n)
					return (int)i + 1;
		}
	return 0;
}

/* A bottleneck, with the rank of the finding that groups it: its
 * hypothesis and focus are the evidence, the finding's text the answer
 * a reader wants printed. */
static json_t *bottleneck_json(const struct pc_consult *pc,
			       const struct pc_search *s,
			       const struct pc_node *n,
			       const struct pc_findings *fs)
{
	const struct pc_hypothesis *h = pc_truth_node_hyp(pc, n);
	int rank = finding_of(fs, n);

	return json_pack("{s:s, s:o, s:o, s:o, s:s, s:f, s:f, s:o, s:s, s:o, "
			 "s:o, s:o}",
		"hypothesis", h->name,
		"focus", focus_json(pc, n),
		"value", num_or_null(evaluated(n, pc_shg_node_judged(n))),
		"threshold", num_or_null(evaluated(n, n->threshold)),
		"compare", h->cmp == PC_CMP_GT ? "gt" : "lt",
		"since_s", n->t_true_since,
		"held_s", pc->now - n->t_true_since,
		"share_of_parent", num_or_null(pc_report_share(pc, s, n)),
		"concluded_by", n->how,
		"sampled", json_boolean(n->sampled),
		"chain", chain_json(s, n),
		"finding", rank > 0 ? json_integer(rank) : json_null());
}

static json_t *earlier_json(const struct pc_consult *pc,
			    const struct pc_search *s,
			    const struct pc_node *n)
{
	const struct pc_hypothesis *h = pc_truth_node_hyp(pc, n);

	return json_pack("{s:s, s:o, s:o, s:o, s:s, s:f, s:f, s:o}",
		"hypothesis", h->name,
		"focus", focus_json(pc, n),
		"value", num_or_null(n->was_value),
		"threshold", num_or_null(n->threshold),
		"compare", h->cmp == PC_CMP_GT ? "gt" : "lt",
		"since_s", n->t_was_from,
		"until_s", n->t_was_to,
		"chain", chain_json(s, n));
}

const char *pc_report_node_state(const struct pc_node *n)
{
	if (n->is_virtual)
		return "virtual";
	if (n->active)
		return "active";
	if (n->pending)
		return "pending";
	if (n->queued)
		return "queued";
	if (n->skipped)
		return "skipped";
	if (n->failed)
		return "failed";
	return n->t_start < 0 ? "never run" : "inactive";
}

/* Why a node was not tested (pc_untested.h): kind, the kind's message,
 * and the detail the source or the search gave (null when none). */
static json_t *untested_json(const struct pc_consult *pc,
			     const struct pc_search *s,
			     const struct pc_node *n, const char *stop)
{
	char detail[512];
	enum pc_untested k = pc_untested_why(pc, s, n, stop, detail,
					     sizeof(detail));

	if (k == PC_UNTESTED_NONE)
		return json_null();
	return json_pack("{s:s, s:s, s:o}", "kind", pc_untested_key(k),
			 "reason", pc_untested_message(k),
			 "detail", detail[0] ? json_string(detail) :
			 json_null());
}

/* A not-tested entry of a phase: the node and why. */
static json_t *not_tested_json(const struct pc_consult *pc,
			       const struct pc_search *s,
			       const struct pc_node *n, const char *stop)
{
	json_t *o = untested_json(pc, s, n, stop);

	json_object_set_new(o, "node", json_integer(n->id));
	json_object_set_new(o, "hypothesis",
			    json_string(pc_truth_node_hyp(pc, n)->name));
	json_object_set_new(o, "focus", focus_json(pc, n));
	json_object_set_new(o, "top_level",
			    json_boolean(pc_untested_top_level(s, n)));
	json_object_set_new(o, "chain", chain_json(s, n));
	return o;
}

static json_t *node_json(const struct pc_consult *pc,
			 const struct pc_search *s, const struct pc_node *n,
			 const char *stop)
{
	json_t *parents = json_array(), *shadow = json_array();
	json_t *o;

	for (size_t i = 0; i < n->nparents; i++) {
		int p = n->parents[i];

		json_array_append_new(p == n->orig_parent ? parents : shadow,
				      json_integer(p));
	}
	o = json_pack("{s:i, s:s, s:s, s:o, s:s, s:s, s:b, s:o, s:o, s:o, "
		      "s:o, s:o, s:o, s:o, s:s}",
		"id", n->id, "name", n->name,
		"hypothesis", pc_truth_node_hyp(pc, n)->name,
		"focus", focus_json(pc, n),
		"truth", pc_shg_truth_name(n->truth),
		"state", pc_report_node_state(n),
		"persistent", n->persistent,
		"parents", parents, "shadow_parents", shadow,
		"value", num_or_null(evaluated(n, pc_shg_node_judged(n))),
		"threshold", num_or_null(evaluated(n, n->threshold)),
		"since_s", num_or_null(n->truth == PC_TRUE ?
				       n->t_true_since : NAN),
		"concluded_s", num_or_null(n->t_concluded < 0 ? NAN :
					   n->t_concluded),
		"predicted_cost", num_or_null(n->pred_cost),
		"trace", n->trace);
	json_object_set_new(o, "not_tested", untested_json(pc, s, n, stop));
	return o;
}

static const char *stop_of(const struct pc_report_meta *m)
{
	return m ? m->stop : NULL;
}

/* The result when bottlenecks were found: the lead finding in its own
 * words and where, so that the one line a user reads first says what
 * to look at ("bottleneck: 1 thread uses 0.98 CPUs computing, in `f`
 * (loop.py:4)"), not only that something was found.  The findings are
 * built from the nodes alone: a replay says the same. */
static void lead_result(const struct pc_consult *pc,
			const struct pc_search *s, char *buf, size_t len)
{
	struct pc_findings fs = { 0 };
	char line[400];

	pc_findings_build(pc, s, &fs);
	if (fs.n > 0)
		snprintf(buf, len, "bottleneck: %s",
			 pc_findings_text_line(pc, &fs.f[0], line,
					       sizeof(line)));
	else
		snprintf(buf, len, "bottlenecks found");
	pc_findings_free(&fs);
}

const char *pc_report_result(const struct pc_consult *pc,
			     const struct pc_search *s, const char *stop,
			     char *buf, size_t len)
{
	const struct pc_node *b[1];
	int running, k = pc_untested_top(pc, s, stop, &running);

	if (k > 0)
		snprintf(buf, len, "incomplete: %d hypothes%s could not be "
			 "tested", k, k == 1 ? "is" : "es");
	else if (pc_report_bottlenecks(pc, s, b, 1) > 0)
		lead_result(pc, s, buf, len);
	else if (running > 0)
		snprintf(buf, len, "not concluded yet: %d hypothes%s still "
			 "being tested", running, running == 1 ? "is" : "es");
	else
		snprintf(buf, len, "no bottleneck found");
	return buf;
}

int pc_report_incomplete(const struct pc_consult *pc,
			 const struct pc_report_meta *m)
{
	int running;

	return pc_untested_top(pc, pc->global, stop_of(m), &running);
}

static json_t *search_json(const struct pc_consult *pc,
			   const struct pc_search *s, const char *stop)
{
	const struct pc_node *b[256];
	size_t nb = pc_report_bottlenecks(pc, s, b, 256);
	json_t *bj = json_array(), *uj = json_array(), *nj = json_array();
	json_t *ej = json_array(), *tj = json_array(), *o;
	static const char *const states[] = { "running", "paused", "ended" };
	char result[512];
	struct pc_findings fs = { 0 };
	json_t *fj = json_array();

	pc_findings_build(pc, s, &fs);
	for (size_t i = 0; i < fs.n; i++) {
		json_t *e = pc_findings_text_json(pc, s, &fs.f[i]);

		json_object_set_new(e, "rank", json_integer((json_int_t)i + 1));
		json_array_append_new(fj, e);
	}
	for (size_t i = 0; i < nb; i++)
		json_array_append_new(bj, bottleneck_json(pc, s, b[i], &fs));
	nb = pc_report_unconfirmed(pc, s, b, 256);
	for (size_t i = 0; i < nb; i++)
		json_array_append_new(uj, bottleneck_json(pc, s, b[i], &fs));
	pc_findings_free(&fs);
	nb = pc_report_earlier(pc, s, b, 256);
	for (size_t i = 0; i < nb; i++)
		json_array_append_new(ej, earlier_json(pc, s, b[i]));
	nb = pc_untested_list(pc, s, stop, b, 256);
	for (size_t i = 0; i < nb; i++)
		json_array_append_new(tj, not_tested_json(pc, s, b[i], stop));
	for (size_t i = 0; i < s->nn; i++)
		json_array_append_new(nj, node_json(pc, s, s->nodes[i], stop));
	o = json_pack("{s:i, s:s, s:f, s:o, s:s, s:o, s:s, s:o, s:o, s:o, "
		      "s:o, s:o}",
		"id", s->id, "label", s->label, "start_s", s->t_start,
		"end_s", num_or_null(s->t_end < 0 ? NAN : s->t_end),
		"state", states[s->state],
		"end_reason", s->end_reason[0] ? json_string(s->end_reason) :
			      json_null(),
		"result", pc_report_result(pc, s, stop, result,
					   sizeof(result)),
		"bottlenecks", bj, "unconfirmed", uj, "earlier", ej,
		"not_tested", tj, "nodes", nj);
	json_object_set_new(o, "findings", fj);
	return o;
}

static json_t *tunables_json(const struct pc_config *cfg)
{
	json_t *o = json_object();

	for (size_t i = 0; i < cfg->ntun; i++)
		json_object_set_new(o, cfg->tun[i].name,
				    cfg->tun[i].type == PC_TUN_BOOL ?
				    json_boolean(cfg->tun[i].value != 0) :
				    cfg->tun[i].type == PC_TUN_INT ?
				    json_integer((json_int_t)cfg->tun[i].value) :
				    json_real(cfg->tun[i].value));
	return o;
}

static const char *search_outcome(const struct pc_consult *pc,
				  const struct pc_report_meta *m)
{
	if (pc->target_ended)
		return "target ended";
	if (m && m->stop)
		return "stopped";
	return pc_consult_idle(pc) ? "completed" : "running";
}

json_t *pc_report_json(const struct pc_consult *pc,
		       const struct pc_report_meta *m)
{
	json_t *phases = json_array(), *root, *top_b, *top_u, *top_t, *top_f;
	json_t *samples;
	const char *stop = stop_of(m);
	char result[512];

	if (pc->global)
		json_array_append_new(phases, search_json(pc, pc->global,
							  stop));
	for (size_t i = 0; i < pc->nended; i++)
		json_array_append_new(phases, search_json(pc, pc->ended[i],
							  stop));
	if (pc->current)
		json_array_append_new(phases, search_json(pc, pc->current,
							  stop));
	/* The global phase's bottlenecks (and what it could not test)
	 * again at the top level: what most readers want, without walking
	 * the phases. */
	top_b = json_object_get(json_array_get(phases, 0), "bottlenecks");
	top_b = top_b ? json_incref(top_b) : json_array();
	top_u = json_object_get(json_array_get(phases, 0), "unconfirmed");
	top_u = top_u ? json_incref(top_u) : json_array();
	top_t = json_object_get(json_array_get(phases, 0), "not_tested");
	top_t = top_t ? json_incref(top_t) : json_array();
	top_f = json_object_get(json_array_get(phases, 0), "findings");
	top_f = top_f ? json_incref(top_f) : json_array();
	root = json_pack("{s:s, s:i, s:{s:o, s:o, s:s}, s:f, s:{s:s, s:o, s:o}, "
			 "s:s, s:o, s:{s:f, s:f, s:f, s:f, s:i, s:i, s:i, s:I, "
			 "s:f}, "
			 "s:o, s:o, s:o, s:o}",
		"schema", "hunch-report", "version", PC_REPORT_SCHEMA_VERSION,
		"target",
		"command", m && m->target ? json_string(m->target) : json_null(),
		"pid", m && m->pid ? json_integer(m->pid) : json_null(),
		"mode", m && m->mode ? m->mode : "run",
		"duration_s", pc->now,
		"end", "search", search_outcome(pc, m),
		"target", pc->target_ended ? json_string(pc->target_end) :
			  json_null(),
		"stop", m && m->stop ? json_string(m->stop) : json_null(),
		"result", pc_report_result(pc, pc->global, stop, result,
					   sizeof(result)),
		"tunables", tunables_json(pc->cfg),
		"cost",
		"limit", pc_tunables_get(pc->cfg, "costLimit"),
		"peak_observed", pc->peak_observed,
		"mean_observed", pc->ncost_samples ?
				 pc->sum_observed / pc->ncost_samples : 0.0,
		"prediction_factor", pc->cost_factor,
		"experiments_run", pc->runs, "skipped", pc->skipped,
		"shed", pc->shed, "holds", (json_int_t)pc->holds,
		"held_s", pc->held_s,
		"bottlenecks", top_b,
		"unconfirmed", top_u,
		"not_tested", top_t,
		"phases", phases);
	json_object_set_new(root, "findings", top_f);
	json_object_set_new(root, "processes", pc_report_procs_json(pc));
	json_object_set_new(root, "spread", pc_spread_json(pc, pc->global));
	samples = pc_report_samples_get(pc);   /* sampled, not concluded */
	json_object_set_new(root, "samples", samples ? samples : json_null());
	if (m && m->config)
		json_object_set_new(root, "configuration",
				    json_deep_copy(m->config));
	if (pc->nexec > 0)   /* the program exec'ed: hunch followed it */
		json_object_set_new(json_object_get(root, "target"), "exec",
			json_pack("{s:i, s:s}", "count", pc->nexec, "measures",
				  pc->exec_kernel_only ? "kernel" :
				  "instrumented"));
	return root;
}

int pc_report_write_json(const struct pc_consult *pc,
			 const struct pc_report_meta *m, FILE *f)
{
	json_t *j = pc_report_json(pc, m);
	int r = j ? json_dumpf(j, f, JSON_INDENT(2) | JSON_REAL_PRECISION(6))
		  : -1;

	json_decref(j);
	if (r == 0)
		fputc('\n', f);
	return r == 0 ? 0 : -EIO;
}

/* Whether the node's hypothesis measures a wall timer (a sampled one is
 * estimated from CPU samples and switch-outs: msg_wait in MPI ranks). */
static bool wall_timed(const struct pc_consult *pc, const struct pc_node *n)
{
	const struct pc_hypothesis *h = pc_truth_node_hyp(pc, n);
	const struct pc_metric_def *md = h->nin > 0 ?
		pc_metric_def_find(pc->cfg, h->in[0].metric) : NULL;

	return md != NULL && md->type == PC_BASE_WALL_TIMER;
}

static void text_bottleneck(const struct pc_consult *pc,
			    const struct pc_search *s, const struct pc_node *n,
			    int k, FILE *f)
{
	const struct pc_hypothesis *h = pc_truth_node_hyp(pc, n);
	double share = pc_report_share(pc, s, n);

	fprintf(f, " %d. %s: %.4g %s %.4g since %.1f s (held %.1f s", k,
		h->name, pc_shg_node_judged(n), h->cmp == PC_CMP_GT ? ">" : "<",
		n->threshold, n->t_true_since, pc->now - n->t_true_since);
	if (!isnan(share))
		fprintf(f, ", %.0f%% of its parent%s", share * 100,
			share > 1.005 ? ": more than it, because the two "
			"were measured over different intervals" : "");
	fprintf(f, ")\n    where:");
	for (int i = 0; i < PC_NHIER; i++) {
		char shown[1024];   /* a ranked process as "rank N" */

		pc_res_shown_path(pc->res, n->focus.r[i], shown, sizeof(shown));
		fprintf(f, "%s %s", i ? "," : "", shown);
	}
	fprintf(f, "\n    chain:");
	{
		const struct pc_node *chain[64];
		int nc = 0;

		for (const struct pc_node *p = n; p && p->id != s->root &&
		     nc < 64; p = pc_shg_node(s, p->orig_parent))
			chain[nc++] = p;
		for (int i = nc - 1; i >= 0; i--)
			fprintf(f, " %s%s", chain[i]->name, i ? " ->" : "");
	}
	fputc('\n', f);
	if (n->sampled && wall_timed(pc, n))
		fprintf(f, "    sampled: estimated from stack samples (CPU "
			"samples and switch-outs of the child processes, "
			"which hunch follows without instrumenting them)\n");
	else if (n->sampled)
		fprintf(f, "    sampled: estimated from CPU stack samples (the "
			"code could not be instrumented within the cost "
			"limit, or runs inside an outer function's "
			"recursion)\n");
}

static void text_earlier(const struct pc_consult *pc,
			 const struct pc_node *n, int k, FILE *f)
{
	const struct pc_hypothesis *h = pc_truth_node_hyp(pc, n);

	fprintf(f, " %d. %s: %.4g %s %.4g from %.1f s to %.1f s\n    where:",
		k, h->name, n->was_value, h->cmp == PC_CMP_GT ? ">" : "<",
		n->threshold, n->t_was_from, n->t_was_to);
	for (int i = 0; i < PC_NHIER; i++) {
		char shown[1024];   /* a ranked process as "rank N" */

		pc_res_shown_path(pc->res, n->focus.r[i], shown, sizeof(shown));
		fprintf(f, "%s %s", i ? "," : "", shown);
	}
	fputc('\n', f);
}

/* What the search could not test: neither true nor false.  One line a
 * node, the top-level ones all, refinements at most TEXT_UNTESTED_MAX:
 * its name, the kind's message, the detail in parentheses.  The
 * refinements past those are counted by kind in one line (python3.11
 * listed 62, a refinement of main for each function it calls at start-up
 * that the program's end left untested); the JSON report lists each. */
#define TEXT_UNTESTED_MAX 10

static void text_untested_more(const size_t *more, size_t n, FILE *f)
{
	const char *sep = "";

	fprintf(f, " and %zu more refinement%s not tested (each in the JSON "
		"report's not_tested):", n, n == 1 ? "" : "s");
	for (int k = 0; k < PC_UNTESTED_NKINDS; k++) {
		if (more[k] == 0)
			continue;
		fprintf(f, "%s %zu because %s", sep, more[k],
			pc_untested_message((enum pc_untested)k));
		sep = ";";
	}
	fputc('\n', f);
}

static void text_not_tested(const struct pc_consult *pc,
			    const struct pc_search *s, const char *stop,
			    FILE *f)
{
	const struct pc_node *t[256];
	size_t nt = pc_untested_list(pc, s, stop, t, 256);
	size_t more[PC_UNTESTED_NKINDS] = { 0 }, nmore = 0, shown = 0;
	char detail[512];

	if (nt > 0)
		fprintf(f, " not tested (neither true nor false: nothing is "
			"known of these):\n");
	for (size_t i = 0; i < nt; i++) {
		enum pc_untested k = pc_untested_why(pc, s, t[i], stop,
						     detail, sizeof(detail));
		bool top = pc_untested_top_level(s, t[i]);

		if (!top && shown >= TEXT_UNTESTED_MAX) {
			more[k]++;
			nmore++;
			continue;
		}
		fprintf(f, " %zu. %s%s: %s", ++shown, t[i]->name,
			top ? " (top level)" : "", pc_untested_message(k));
		fprintf(f, detail[0] ? " (%s)\n" : "\n", detail);
	}
	if (nmore > 0)
		text_untested_more(more, nmore, f);
}

static void text_search(const struct pc_consult *pc,
			const struct pc_search *s, const char *stop, FILE *f)
{
	const struct pc_node *b[256], *u[256], *e[256];
	size_t nb = pc_report_bottlenecks(pc, s, b, 256);
	size_t nu = pc_report_unconfirmed(pc, s, u, 256);
	size_t ne = pc_report_earlier(pc, s, e, 256);
	size_t tested = 0;
	char result[512];

	for (size_t i = 0; i < s->nn; i++)
		tested += s->nodes[i]->t_start >= 0;
	if (s->id == 0)
		fprintf(f, "\nGlobal phase (%.1f s - %.1f s):", s->t_start,
			s->t_end < 0 ? pc->now : s->t_end);
	else
		fprintf(f, "\nPhase %d, %s (%.1f s - %.1f s):", s->id, s->label,
			s->t_start, s->t_end < 0 ? pc->now : s->t_end);
	fprintf(f, " %zu experiments tested, %zu nodes\n", tested, s->nn);
	pc_report_result(pc, s, stop, result, sizeof(result));
	if (strncmp(result, "incomplete", 10) == 0)
		fprintf(f, " %s%s\n", result, nb || nu ? "" :
			"; of the others none tested true above its "
			"threshold");
	else if (nb == 0 && nu == 0 && strncmp(result, "not ", 4) == 0)
		fprintf(f, " %s\n", result);
	else if (nb == 0 && nu == 0)
		fprintf(f, " no bottleneck found: no hypothesis tested true "
			"above its threshold\n");
	else if (nb == 0)
		fprintf(f, " no bottleneck confirmed: what tested true was "
			"shed for cost before it was measured again\n");
	for (size_t i = 0; i < nb; i++)
		text_bottleneck(pc, s, b[i], (int)i + 1, f);
	if (nu > 0)
		fprintf(f, " unconfirmed: true when last measured, then shed "
			"for cost and not measured since:\n");
	for (size_t i = 0; i < nu; i++)
		text_bottleneck(pc, s, u[i], (int)i + 1, f);
	if (ne > 0)
		fprintf(f, " earlier: true for a while, false at the end "
			"(the program changed behaviour):\n");
	for (size_t i = 0; i < ne; i++)
		text_earlier(pc, e[i], (int)i + 1, f);
	text_not_tested(pc, s, stop, f);
}

/* The text report's head: "findings, most impact first:", each finding
 * in plain words and its impact, then the line that announces the
 * details; nothing when there is no finding (the dashboard prints it
 * after `q`).  What the stack samples saw (`samples`, may be NULL) is
 * evidence under the findings when there are some, and leads the report
 * when the search concluded none. */
static void pc_report_findings_text(const struct pc_consult *pc,
				    const json_t *samples, FILE *f)
{
	struct pc_findings fs = { 0 };
	char line[1024], imp[64];

	pc_findings_build(pc, pc->global, &fs);
	if (fs.n == 0)
		pc_report_samples_text(samples, f);
	if (fs.n > 0)
		fprintf(f, "\nfindings, most impact first:\n");
	for (size_t i = 0; i < fs.n; i++) {
		const struct pc_finding *x = &fs.f[i];

		fprintf(f, " %zu. %s\n    impact %s, true since %.1f s", i + 1,
			pc_findings_text_line(pc, x, line, sizeof(line)),
			pc_findings_text_impact(x, imp, sizeof(imp)),
			x->since_s);
		if (x->symptom_of >= 0)
			fprintf(f, "; may be the time of finding %d (%s)",
				x->symptom_of + 1,
				pc_findings_text_symptom(x->symptom_why));
		fprintf(f, "\n");
	}
	pc_spread_text(pc, pc->global, f);
	if (fs.n > 0)
		pc_report_samples_text(samples, f);
	if (fs.n > 0)
		fprintf(f, "\ndetails (every most refined true node, what was "
			"not tested):\n");
	pc_findings_free(&fs);
}

/* The hypotheses in effect, when they are not the shipped defaults
 * alone: a run under a user's overlay must not pass for a default one. */
static void text_config(const struct pc_report_meta *m, FILE *f)
{
	char *line = m ? pc_config_diff_summary_line(m->config) : NULL;
	const json_t *d = m ? json_object_get(m->config, "differs") : NULL;
	size_t i;
	json_t *v;

	if (line == NULL)
		return;
	fprintf(f, "hypotheses: %s\n", line);
	json_array_foreach(d, i, v)
		fprintf(f, "  %s\n", json_string_value(v));
	free(line);
}

void pc_report_text(const struct pc_consult *pc,
		    const struct pc_report_meta *m, FILE *f)
{
	json_t *samples;

	fprintf(f, "hunch report: %s", m && m->target ? m->target : "(target)");
	if (m && m->pid)
		fprintf(f, " (pid %d)", m->pid);
	fprintf(f, ", %.1f s\n", pc->now);
	fprintf(f, "search: %s", search_outcome(pc, m));
	if (pc->target_ended)
		fprintf(f, " (%s)", pc->target_end);
	else if (m && m->stop)
		fprintf(f, " (%s)", m->stop);
	if (pc->nexec > 0)
		fprintf(f, "\nexec: the program replaced its image %d time%s; "
			"hunch followed it%s", pc->nexec,
			pc->nexec == 1 ? "" : "s", pc->exec_kernel_only ?
			" with kernel-side measures only (the new program "
			"cannot be instrumented)" : "");
	fprintf(f, "\ncost: limit %.1f%%, peak %.1f%%, %d experiments, "
		"%d skipped, %d shed\n",
		pc_tunables_get(pc->cfg, "costLimit") * 100,
		pc->peak_observed * 100, pc->runs, pc->skipped, pc->shed);
	/* not in the limit: the pause of tracing, not of instrumentation */
	if (pc->holds > 0)
		fprintf(f, "  the program was held stopped %ld time%s, %.2f s "
			"in all (%.1f%% of the run): to patch it and call "
			"into it, apart from the limit\n", pc->holds,
			pc->holds == 1 ? "" : "s", pc->held_s,
			pc->now > 0 ? 100 * pc->held_s / pc->now : 0.0);
	text_config(m, f);
	pc_report_procs_text(pc, f);
	samples = pc_report_samples_get(pc);
	if (pc->global)
		pc_report_findings_text(pc, samples, f);
	else
		pc_report_samples_text(samples, f);
	json_decref(samples);
	if (pc->global)
		text_search(pc, pc->global, stop_of(m), f);
	for (size_t i = 0; i < pc->nended; i++)
		text_search(pc, pc->ended[i], stop_of(m), f);
	if (pc->current)
		text_search(pc, pc->current, stop_of(m), f);
}

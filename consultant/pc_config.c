/*
 * pc_config.c - loading hypotheses files: the top level, the why axis,
 * and the checks that need the whole merged configuration (parents,
 * cycles, metric and tunable names).
 *
 * Files load in order (shipped defaults, the XDG user file, --hypotheses)
 * and each may override or extend what came before by name.  Errors are
 * collected, not stopped at, so one `hunch check` shows them all.
 */
#include "pc_load_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char *const pc_hier_names[PC_NHIER] = {
	"/Code", "/Process", "/SyncObject", "/Files"
};
const char *const pc_expand_names[6] = {
	"whyAndWhere", "whereAndWhy", "whyBeforeWhere", "whereBeforeWhy",
	"whyOnly", "whereOnly"
};

/* The tunables the search itself reads; a merged configuration without
 * them cannot run (pc_consult.c uses these names). */
static const char *const required_tunables[] = {
	"costLimit", "hysteresisRange", "minObservationTime", "sufficientTime",
	"samplePeriod", "maxActiveExperiments", "maxPendingEnables",
	"confidenceZ", "useCallGraphSearch", NULL
};

static const char *const top_fields[] = {
	"version", "description", "tunables", "lists", "constraints",
	"metrics", "hypotheses", "set", NULL
};
static const char *const hyp_fields[] = {
	"parent", "description", "metric", "threshold", "compare", "expand",
	"prune", "suppress", NULL
};
static const char *const cmp_names[] = { "gt", "lt", NULL };
static const char *const expand_names[] = {
	"whyAndWhere", "whereAndWhy", "whyBeforeWhere", "whereBeforeWhy",
	"whyOnly", "whereOnly", NULL
};
static const char *const pm_ops[] = { "id", "+", "-", "*", "/", "max", NULL };
static const char *const input_fields[] = { "metric", "focus", NULL };
static const char *const focus_names[] = { "current", "top", NULL };

int pc_config_hier_index(const char *name)
{
	for (int i = 0; i < PC_NHIER; i++)
		if (strcmp(pc_hier_names[i], name) == 0)
			return i;
	return -1;
}

struct pc_config *pc_config_new(void)
{
	struct pc_config *c = calloc(1, sizeof(*c));

	if (c == NULL)
		abort();
	c->version = PC_CONFIG_VERSION;
	return c;
}

static void hyp_free(struct pc_hypothesis *h)
{
	free(h->name);
	free(h->parent);
	free(h->desc);
	free(h->threshold);
	for (int i = 0; i < h->nin; i++)
		free(h->in[i].metric);
	for (size_t i = 0; i < h->nsuppress; i++)
		free(h->suppress[i]);
	free(h->suppress);
}

void pc_config_free(struct pc_config *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < c->ntun; i++)
		pc_tunables_free(&c->tun[i]);
	for (size_t i = 0; i < c->nmet; i++)
		pc_metric_def_free(&c->met[i]);
	for (size_t i = 0; i < c->ncon; i++)
		pc_metric_def_constraint_free(&c->con[i]);
	for (size_t i = 0; i < c->nlists; i++)
		pc_metric_def_list_free(&c->lists[i]);
	for (size_t i = 0; i < c->nhyp; i++)
		hyp_free(&c->hyp[i]);
	for (size_t i = 0; i < c->nfiles; i++)
		free(c->files[i]);
	free(c->tun);
	free(c->met);
	free(c->con);
	free(c->lists);
	free(c->hyp);
	free(c->files);
	free(c);
}

int pc_config_hypo_find(const struct pc_config *c, const char *name)
{
	for (size_t i = 0; i < c->nhyp; i++)
		if (strcmp(c->hyp[i].name, name) == 0)
			return (int)i;
	return -1;
}

bool pc_config_lctx_is_threshold(const struct pc_lctx *l, const char *name)
{
	for (size_t i = 0; i < l->nthr; i++)
		if (strcmp(l->thr[i], name) == 0)
			return true;
	for (size_t i = 0; i < l->c->nhyp; i++)
		if (l->c->hyp[i].threshold &&
		    strcmp(l->c->hyp[i].threshold, name) == 0)
			return true;
	return false;
}

/* Names used as thresholds in this file, known before tunables are parsed
 * so that a range error can say "threshold". */
static void collect_thresholds(struct pc_lctx *l, json_t *hyps)
{
	const char *name;
	json_t *v, *t;

	json_object_foreach(hyps, name, v) {
		t = json_is_object(v) ? json_object_get(v, "threshold") : NULL;
		if (json_is_string(t))
			*PC_APPEND(l->thr, l->nthr) = json_string_value(t);
	}
}

static bool parse_input(struct pc_lctx *l, json_t *v, const char *path,
			struct pc_pm_input *in)
{
	const char *s;
	int k;

	pc_jx_loc_set(l, &in->loc, path);
	if (json_is_string(v)) {
		in->metric = pc_jx_strdup(json_string_value(v));
		return true;
	}
	if (!json_is_object(v)) {
		pc_jx_err(l, path, "expected a metric name or {\"metric\", "
			"\"focus\"}, got %s", pc_jx_type_name(v));
		return false;
	}
	pc_jx_fields(l, v, path, input_fields);
	if (!pc_jx_str(l, v, path, "metric", true, &s))
		return false;
	in->metric = pc_jx_strdup(s);
	pc_jx_path(in->loc.path, sizeof(in->loc.path), "%s.metric", path);
	pc_jpos_find(&l->jp, in->loc.path, &in->loc.line, &in->loc.col);
	k = pc_jx_enum(l, v, path, "focus", focus_names, 0);
	in->top_focus = k == 1;
	return k >= 0;
}

/* "metric": "name" or {"op": "/", "inputs": [a, b]} (a PC metric). */
static bool parse_pcmetric(struct pc_lctx *l, json_t *v, const char *path,
			   struct pc_hypothesis *h)
{
	static const char *const pm_fields[] = { "op", "inputs", NULL };
	json_t *a, *x;
	char sub[256];
	size_t i;
	int k;
	bool ok = true;

	if (json_is_string(v)) {
		h->op = PC_PM_ID;
		h->nin = 1;
		return parse_input(l, v, path, &h->in[0]);
	}
	if (!json_is_object(v)) {
		pc_jx_err(l, path, "expected a metric name or an object "
			"{\"op\", \"inputs\"}, got %s", pc_jx_type_name(v));
		return false;
	}
	pc_jx_fields(l, v, path, pm_fields);
	k = pc_jx_enum(l, v, path, "op", pm_ops, 0);
	if (k < 0)
		return false;
	h->op = (enum pc_pm_op)k;
	a = pc_jx_arr(l, v, path, "inputs");
	if (a == NULL) {
		if (json_object_get(v, "inputs") == NULL)
			pc_jx_err(l, path, "missing field \"inputs\"");
		return false;
	}
	pc_jx_path(sub, sizeof(sub), "%s.inputs", path);
	if (json_array_size(a) < 1 || json_array_size(a) > PC_MAX_INPUTS ||
	    (h->op == PC_PM_ID) != (json_array_size(a) == 1)) {
		pc_jx_err(l, sub, "expected %s", h->op == PC_PM_ID ?
			"exactly one input for \"id\"" :
			"2 to 4 inputs for an operator");
		return false;
	}
	json_array_foreach(a, i, x) {
		pc_jx_path(sub, sizeof(sub), "%s.inputs[%zu]", path, i);
		ok &= parse_input(l, x, sub, &h->in[h->nin++]);
	}
	return ok;
}

static bool parse_prune(struct pc_lctx *l, json_t *o, const char *path,
			struct pc_hypothesis *h)
{
	char **names;
	size_t n;
	bool ok = true;

	if (!pc_jx_strlist(l, o, path, "prune", &names, &n))
		return json_object_get(o, "prune") == NULL;
	for (size_t i = 0; i < n; i++) {
		int k = pc_config_hier_index(names[i]);
		char sub[256];
		struct pc_loc loc;

		if (k >= 0) {
			h->prune[k] = true;
			continue;
		}
		pc_jx_path(sub, sizeof(sub), "%s.prune[%zu]", path, i);
		pc_jx_loc_set(l, &loc, sub);
		pc_jx_err_unknown(
			l, &loc, "hierarchy", names[i],
			"one of /Code, "
			"/Process, /SyncObject, /Files in a prune list",
			pc_hier_names, PC_NHIER);
		ok = false;
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return ok;
}

static bool parse_hyp(struct pc_lctx *l, const char *name, json_t *o,
		      const char *path, struct pc_hypothesis *h)
{
	const char *s;
	char sub[256];
	json_t *m;
	int k;
	bool ok = true;

	h->name = pc_jx_strdup(name);
	h->parent_idx = -1;
	pc_jx_loc_set(l, &h->loc, path);
	pc_jx_fields(l, o, path, hyp_fields);
	if (pc_jx_str(l, o, path, "parent", false, &s)) {
		h->parent = pc_jx_strdup(s);
		pc_jx_path(sub, sizeof(sub), "%s.parent", path);
		pc_jx_loc_set(l, &h->loc_parent, sub);
	}
	if (pc_jx_str(l, o, path, "description", false, &s))
		h->desc = pc_jx_strdup(s);
	m = json_object_get(o, "metric");
	pc_jx_path(sub, sizeof(sub), "%s.metric", path);
	h->is_virtual = m == NULL;
	if (m)
		ok &= parse_pcmetric(l, m, sub, h);
	if (pc_jx_str(l, o, path, "threshold", !h->is_virtual, &s)) {
		h->threshold = pc_jx_strdup(s);
		pc_jx_path(sub, sizeof(sub), "%s.threshold", path);
		pc_jx_loc_set(l, &h->loc_threshold, sub);
	} else if (!h->is_virtual) {
		ok = false;
	}
	k = pc_jx_enum(l, o, path, "compare", cmp_names, 0);
	h->cmp = k == 1 ? PC_CMP_LT : PC_CMP_GT;
	ok &= k >= 0;
	k = pc_jx_enum(l, o, path, "expand", expand_names, 0);
	h->expand = k < 0 ? PC_EXP_WHY_AND_WHERE : (enum pc_expand)k;
	ok &= k >= 0;
	ok &= parse_prune(l, o, path, h);
	pc_jx_strlist(l, o, path, "suppress", &h->suppress, &h->nsuppress);
	return ok;
}

static void parse_hyps(struct pc_lctx *l, json_t *obj)
{
	const char *name;
	json_t *v;
	char path[256];

	json_object_foreach(obj, name, v) {
		struct pc_hypothesis h = { 0 };
		int old;

		pc_jx_path(path, sizeof(path), "$.hypotheses.%s", name);
		if (!json_is_object(v)) {
			pc_jx_err(l, path, "expected an object, got %s",
				pc_jx_type_name(v));
			continue;
		}
		if (!parse_hyp(l, name, v, path, &h)) {
			hyp_free(&h);
			continue;
		}
		old = pc_config_hypo_find(l->c, name);
		if (old >= 0) {
			hyp_free(&l->c->hyp[old]);
			l->c->hyp[old] = h;
		} else {
			*PC_APPEND(l->c->hyp, l->c->nhyp) = h;
		}
	}
}

static const char **hyp_names(const struct pc_config *c)
{
	const char **n = calloc(c->nhyp + 1, sizeof(char *));

	for (size_t i = 0; i < c->nhyp; i++)
		n[i] = c->hyp[i].name;
	return n;
}

static void check_parents(struct pc_lctx *l)
{
	const char **names = hyp_names(l->c);

	for (size_t i = 0; i < l->c->nhyp; i++) {
		struct pc_hypothesis *h = &l->c->hyp[i];

		h->parent_idx =
			h->parent ? pc_config_hypo_find(l->c, h->parent) : -1;
		if (h->loc.file != l->file)
			continue;
		if (h->parent == NULL && !h->is_virtual)
			pc_jx_err_at(l, &h->loc, "hypothesis \"%s\" has no "
				   "\"parent\"; only a virtual hypothesis (one "
				   "without \"metric\") may be a root", h->name);
		else if (h->parent && h->parent_idx < 0) {
			const char *s = pc_jx_suggest(h->parent, names, l->c->nhyp);

			pc_jx_err_at(l, &h->loc_parent, "missing parent: "
				   "hypothesis \"%s\" names parent \"%s\", "
				   "which is not defined%s%s%s", h->name,
				   h->parent, s ? " (did you mean \"" : "",
				   s ? s : "", s ? "\"?)" : "");
		}
	}
	free(names);
}

static void check_cycles(struct pc_lctx *l)
{
	size_t n = l->c->nhyp;
	bool *reported = calloc(n + 1, sizeof(bool));

	for (size_t i = 0; i < n; i++) {
		int p = l->c->hyp[i].parent_idx;
		size_t steps = 0;
		char chain[512];

		while (p >= 0 && (size_t)p != i && steps++ < n)
			p = l->c->hyp[p].parent_idx;
		if ((size_t)p != i || reported[i])
			continue;
		/* Write the cycle once, starting from this member. */
		snprintf(chain, sizeof(chain), "%s", l->c->hyp[i].name);
		p = l->c->hyp[i].parent_idx;
		reported[i] = true;
		while ((size_t)p != i) {
			reported[p] = true;
			snprintf(chain + strlen(chain),
				 sizeof(chain) - strlen(chain), " -> %s",
				 l->c->hyp[p].name);
			p = l->c->hyp[p].parent_idx;
		}
		snprintf(chain + strlen(chain), sizeof(chain) - strlen(chain),
			 " -> %s", l->c->hyp[i].name);
		pc_jx_err_at(l, &l->c->hyp[i].loc_parent, "cycle in the "
			   "hypothesis tree: %s (following \"parent\"); a "
			   "hypothesis cannot be its own ancestor", chain);
	}
	free(reported);
}

static void check_hyp_refs(struct pc_lctx *l)
{
	const char **mn = calloc(l->c->nmet + 1, sizeof(char *));
	const char **tn = calloc(l->c->ntun + 1, sizeof(char *));

	for (size_t i = 0; i < l->c->nmet; i++)
		mn[i] = l->c->met[i].name;
	for (size_t i = 0; i < l->c->ntun; i++)
		tn[i] = l->c->tun[i].name;
	for (size_t i = 0; i < l->c->nhyp; i++) {
		struct pc_hypothesis *h = &l->c->hyp[i];
		struct pc_tunable *t;

		if (h->loc.file != l->file)
			continue;
		for (int j = 0; j < h->nin; j++)
			if (!pc_metric_def_find(l->c, h->in[j].metric))
				pc_jx_err_unknown(l, &h->in[j].loc, "metric",
						h->in[j].metric, "a metric "
						"defined under $.metrics", mn,
						l->c->nmet);
		if (h->threshold == NULL)
			continue;
		t = pc_tunables_find(l->c, h->threshold);
		if (t == NULL)
			pc_jx_err_unknown(l, &h->loc_threshold, "tunable",
					h->threshold, "a tunable defined under "
					"$.tunables", tn, l->c->ntun);
		else
			t->used_as_threshold = true;
	}
	free(mn);
	free(tn);
}

static void check_roots(struct pc_lctx *l)
{
	int roots = 0;

	for (size_t i = 0; i < l->c->nhyp; i++)
		roots += l->c->hyp[i].parent == NULL;
	if (roots > 1)
		pc_jx_err(l, "$.hypotheses", "%d hypotheses have no parent; "
			"the why axis has exactly one (virtual) root", roots);
}

static bool check_version(struct pc_lctx *l, json_t *root)
{
	json_t *v = json_object_get(root, "version");

	if (v == NULL) {
		pc_jx_err(l, "$", "missing field \"version\"; expected "
			"\"version\": %d", PC_CONFIG_VERSION);
		return false;
	}
	if (!json_is_integer(v)) {
		pc_jx_err(l, "$.version", "expected an integer, got %s",
			pc_jx_type_name(v));
		return false;
	}
	if (json_integer_value(v) != PC_CONFIG_VERSION) {
		pc_jx_err(l, "$.version",
			  "unsupported version %lld; this hunch "
			  "reads version %d",
			  (long long)json_integer_value(v), PC_CONFIG_VERSION);
		return false;
	}
	return true;
}

static json_t *section(struct pc_lctx *l, json_t *root, const char *key)
{
	return pc_jx_obj(l, root, "$", key, false);
}

static void load_json(struct pc_lctx *l, json_t *root)
{
	json_t *s;

	if (!json_is_object(root)) {
		pc_jx_err(l, "$", "expected an object at the top level, got %s",
			pc_jx_type_name(root));
		return;
	}
	pc_jx_fields(l, root, "$", top_fields);
	if (!check_version(l, root))
		return;
	if ((s = section(l, root, "hypotheses")))
		collect_thresholds(l, s);
	if ((s = section(l, root, "tunables")))
		pc_tunables_parse(l, s);
	if ((s = section(l, root, "lists")))
		pc_metric_def_lists_parse(l, s);
	if ((s = section(l, root, "constraints")))
		pc_metric_def_constraints_parse(l, s);
	if ((s = section(l, root, "metrics")))
		pc_metric_def_parse(l, s);
	if ((s = section(l, root, "hypotheses")))
		parse_hyps(l, s);
	if ((s = section(l, root, "set")))
		pc_tunables_apply_set(l, s);
	pc_metric_def_check_refs(l);
	check_parents(l);
	check_cycles(l);
	check_roots(l);
	check_hyp_refs(l);
}

static const char *keep_name(struct pc_config *c, const char *name)
{
	for (size_t i = 0; i < c->nfiles; i++)
		if (strcmp(c->files[i], name) == 0)
			return c->files[i];
	return *PC_APPEND(c->files, c->nfiles) = pc_jx_strdup(name);
}

int pc_config_load_string(struct pc_config *c, const char *name,
			  const char *text, struct pc_diags *ds,
			  struct hunch_err *e)
{
	struct pc_lctx l = { .c = c, .ds = ds };
	json_error_t jerr;
	json_t *root;
	size_t first = ds ? ds->n : 0;

	l.file = keep_name(c, name);
	pc_jpos_scan(&l.jp, text);
	root = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
	if (root == NULL) {
		struct pc_loc loc = { .file = l.file, .line = jerr.line,
				      .col = jerr.column };

		pc_jx_path(loc.path, sizeof(loc.path), "%s",
			 l.jp.stop_path[0] ? l.jp.stop_path : "$");
		pc_jx_err_at(&l, &loc, "syntax error: %s", jerr.text);
	} else {
		load_json(&l, root);
		json_decref(root);
	}
	pc_jpos_free(&l.jp);
	free(l.thr);
	if (l.nerr == 0)
		return 0;
	if (ds && ds->n > first)
		hunch_err_set(e, -EINVAL, "%s", ds->d[first].msg);
	else
		hunch_err_set(e, -EINVAL, "%s: %d errors", name, l.nerr);
	return -EINVAL;
}

static char *read_all(const char *file, struct hunch_err *e)
{
	FILE *f = fopen(file, "r");
	char *buf = NULL;
	size_t len = 0;
	FILE *m;
	char chunk[4096];
	size_t r;

	struct stat st;

	if (f == NULL) {
		hunch_err_set(e, -errno, "cannot read hypotheses file %s: %s",
			   file, strerror(errno));
		return NULL;
	}
	/* fopen opens a directory for reading; fread then fails */
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
		fclose(f);
		hunch_err_set(e, -EISDIR,
			      "cannot read hypotheses file %s: it is "
			      "a directory; name a .json file in it",
			      file);
		return NULL;
	}
	m = open_memstream(&buf, &len);
	while ((r = fread(chunk, 1, sizeof(chunk), f)) > 0)
		fwrite(chunk, 1, r, m);
	fclose(f);
	fclose(m);
	return buf;
}

int pc_config_load_file(struct pc_config *c, const char *file,
			struct pc_diags *ds, struct hunch_err *e)
{
	char *text = read_all(file, e);
	int r;

	if (text == NULL) {
		if (ds)
			*PC_APPEND(ds->d, ds->n) =
				(struct pc_diag){ pc_jx_strdup(e ? e->msg : file) };
		return -ENOENT;
	}
	r = pc_config_load_string(c, file, text, ds, e);
	free(text);
	return r;
}

int pc_config_xdg_path(char *buf, size_t len)
{
	const char *x = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");

	if (x && x[0] == '/')
		snprintf(buf, len, "%s/hunch/hypotheses.json", x);
	else if (home)
		snprintf(buf, len, "%s/.config/hunch/hypotheses.json", home);
	else
		return -ENOENT;
	return 0;
}

/* A merged configuration the search can run on: the tunables it reads. */
static int check_required(struct pc_config *c, struct pc_diags *ds,
			  struct hunch_err *e)
{
	for (size_t i = 0; required_tunables[i]; i++) {
		if (pc_tunables_find(c, required_tunables[i]))
			continue;
		hunch_err_set(e, -EINVAL,
			      "the hypotheses files define no tunable "
			      "\"%s\", which the search needs; the shipped "
			      "default.json has it",
			      required_tunables[i]);
		if (ds)
			*PC_APPEND(ds->d, ds->n) = (struct pc_diag){
				pc_jx_strdup(e ? e->msg : "")
			};
		return -EINVAL;
	}
	if (pc_config_hypo_find(c, "topLevelHypothesis") < 0 && c->nhyp) {
		return hunch_err_set(e, -EINVAL, "no hypothesis is the virtual "
				  "root \"topLevelHypothesis\"");
	}
	return 0;
}

int pc_config_load_all(struct pc_config *c, const char *default_file,
		       const char *user_file, struct pc_diags *ds,
		       struct hunch_err *e)
{
	char xdg[4096];
	struct stat st;
	int r = pc_config_load_file(c, default_file, ds, e);

	if (r == 0 && pc_config_xdg_path(xdg, sizeof(xdg)) == 0 &&
	    stat(xdg, &st) == 0)
		r = pc_config_load_file(c, xdg, ds, e);
	if (r == 0 && user_file)
		r = pc_config_load_file(c, user_file, ds, e);
	if (r == 0)
		r = check_required(c, ds, e);
	return r;
}

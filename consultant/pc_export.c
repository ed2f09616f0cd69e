/* pc_export.c - SHG, where axis and histograms for other tools (see
 * pc_export.h; formats in docs/export-formats.md). */
#include "pc_export.h"
#include "pc_report.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>

/* A dot string body: quotes and backslashes escaped (C++ names have
 * neither often, but file paths may). */
static void dot_str(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
}

static const char *truth_color(enum pc_truth t)
{
	return t == PC_TRUE ? "palegreen" : t == PC_FALSE ? "mistyrose"
							    : "white";
}

static void dot_node(FILE *f, int sid, const struct pc_node *n)
{
	fprintf(f, "    s%dn%d [label=\"", sid, n->id);
	dot_str(f, n->name);
	fprintf(f, "\\n%s, %s\", style=filled, fillcolor=%s%s];\n",
		pc_shg_truth_name(n->truth), pc_report_node_state(n), truth_color(n->truth),
		n->is_virtual ? ", shape=ellipse" : "");
}

/* Why-refinements solid, where-refinements dashed, shadow edges (a
 * second path to a node) dotted and grey, as the dashboard draws them. */
static void dot_edges(FILE *f, int sid, const struct pc_node *n)
{
	for (size_t k = 0; k < n->nkids; k++) {
		const struct pc_edge *e = &n->kids[k];

		fprintf(f, "    s%dn%d -> s%dn%d [style=%s%s];\n", sid, n->id,
			sid, e->child, e->shadow ? "dotted" :
			e->why ? "solid" : "dashed",
			e->shadow ? ", color=grey" : "");
	}
}

void pc_export_dot(const struct pc_consult *pc, FILE *f)
{
	fputs("digraph shg {\n  rankdir=TB;\n  node [shape=box];\n", f);
	for (int sid = 0; sid <= pc->nphases; sid++) {
		const struct pc_search *s = pc_consult_search(pc, sid);

		if (s == NULL)
			continue;
		fprintf(f, "  subgraph cluster_s%d {\n    label=\"", sid);
		dot_str(f, s->label);
		fputs("\";\n", f);
		for (size_t i = 0; i < s->nn; i++)
			dot_node(f, sid, s->nodes[i]);
		for (size_t i = 0; i < s->nn; i++)
			dot_edges(f, sid, s->nodes[i]);
		fputs("  }\n", f);
	}
	fputs("}\n", f);
}

static json_t *num_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *node_json(const struct pc_consult *pc, const struct pc_node *n)
{
	json_t *kids = json_array(), *parents = json_array();
	char focus[1024];

	for (size_t k = 0; k < n->nkids; k++)
		json_array_append_new(kids, json_pack("{s:i,s:b,s:b}",
			"id", n->kids[k].child, "why", n->kids[k].why,
			"shadow", n->kids[k].shadow));
	for (size_t k = 0; k < n->nparents; k++)
		json_array_append_new(parents, json_integer(n->parents[k]));
	return json_pack("{s:i,s:s,s:s,s:s,s:s,s:s,s:s,s:o,s:o,s:o,s:o,s:o}",
		"id", n->id, "name", n->name,
		"hypothesis", pc->cfg->hyp[n->hyp].name,
		"focus", pc_focus_name(pc->res, &n->focus, focus, sizeof(focus)),
		"truth", pc_shg_truth_name(n->truth), "activity", pc_report_node_state(n),
		"trace", n->trace, "parents", parents, "children", kids,
		"value", num_or_null(n->value),
		"threshold", num_or_null(n->threshold),
		"created_s", num_or_null(n->t_created));
}

json_t *pc_export_shg_json(const struct pc_consult *pc)
{
	json_t *searches = json_array();

	for (int sid = 0; sid <= pc->nphases; sid++) {
		const struct pc_search *s = pc_consult_search(pc, sid);
		json_t *nodes = json_array();

		if (s == NULL)
			continue;
		for (size_t i = 0; i < s->nn; i++)
			json_array_append_new(nodes, node_json(pc, s->nodes[i]));
		json_array_append_new(searches, json_pack("{s:i,s:s,s:i,s:o}",
			"id", s->id, "label", s->label, "root", s->root,
			"nodes", nodes));
	}
	return json_pack("{s:s,s:i,s:f,s:o}", "schema", "hunch-shg",
			 "version", PC_EXPORT_VERSION, "now_s", pc->now,
			 "searches", searches);
}

static json_t *res_json(const struct pc_restree *t, pc_res_id id, int depth)
{
	const struct pc_res *r = pc_res_get(t, id);
	json_t *kids = json_array();

	/* Paths have at most a handful of levels; the bound only guards a
	 * corrupt tree against unbounded recursion. */
	for (size_t i = 0; r && depth < 64 && i < r->nchildren; i++)
		json_array_append_new(kids, res_json(t, r->children[i],
						     depth + 1));
	if (r == NULL)
		return json_null();
	return json_pack("{s:I,s:s,s:s,s:b,s:o}", "id", (json_int_t)r->id,
			 "name", r->name, "path", r->path, "retired",
			 r->retired, "children", kids);
}

json_t *pc_export_where_json(const struct pc_restree *t)
{
	json_t *h = json_array();

	for (int i = 0; i < PC_NHIER; i++)
		json_array_append_new(h, res_json(t,
			pc_res_find(t, pc_hier_names[i]), 0));
	return json_pack("{s:s,s:i,s:I,s:o}", "schema", "hunch-where",
			 "version", PC_EXPORT_VERSION, "resources",
			 (json_int_t)pc_res_tree_count(t), "hierarchies", h);
}

/* A file name from any text: letters, digits, '.', '-' kept, the rest
 * '_' (paths, commas and angle brackets of a focus name). */
static void sanitize(char *dst, size_t len, const char *src)
{
	size_t i = 0;

	for (; *src && i + 1 < len; src++) {
		char c = *src;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '.' || c == '-';

		dst[i++] = ok ? c : '_';
	}
	dst[i] = '\0';
}

char *pc_export_csv_name(const struct pc_consult *pc,
			 const struct pc_minst *m, char *buf, size_t len)
{
	char focus[1024], sf[160], sm[64];

	pc_focus_name(pc->res, &m->focus, focus, sizeof(focus));
	sanitize(sf, sizeof(sf), focus);
	sanitize(sm, sizeof(sm), m->metric);
	snprintf(buf, len, "%d_%s_%s.csv", m->id, sm, sf);
	return buf;
}

/* bucket,t0_s,t1_s,value: the rate over each bucket, empty when no
 * sample fell in it. */
static int write_csv(const struct pc_consult *pc, const struct pc_minst *m,
		     const char *path)
{
	FILE *f = fopen(path, "w");
	const struct pc_hist *h = &m->global;
	int used = pc_hist_used(h, pc->now);

	if (f == NULL)
		return -errno;
	fputs("bucket,t0_s,t1_s,value\n", f);
	for (int i = 0; i < used; i++) {
		double v = pc_hist_rate(h, i);

		fprintf(f, "%d,%.6f,%.6f,", i, h->start + i * h->width,
			h->start + (i + 1) * h->width);
		if (isfinite(v))
			fprintf(f, "%.9g", v);
		fputc('\n', f);
	}
	return fclose(f) == 0 ? 0 : -errno;
}

int pc_export_csv(const struct pc_consult *pc, const char *dir,
		  struct hunch_err *err)
{
	char name[256], path[4096];
	int n = 0, rc;

	if (mkdir(dir, 0755) != 0 && errno != EEXIST)
		return hunch_err_set(err, -errno,
				     "cannot create directory %s: %s", dir,
				     strerror(errno));
	for (size_t i = 0; i < pc->dm.n; i++) {
		const struct pc_minst *m = pc->dm.mi[i];

		snprintf(path, sizeof(path), "%s/%s", dir,
			 pc_export_csv_name(pc, m, name, sizeof(name)));
		if ((rc = write_csv(pc, m, path)) != 0)
			return hunch_err_set(err, rc, "cannot write %s: %s",
					     path, strerror(-rc));
		n++;
	}
	return n;
}

/*
 * pc_report_procs.c - the report's processes (see pc_report_procs.h):
 * each process of the job and its end, as the where axis has them (the
 * program first, then its children as they were found), in JSON and in
 * the text report's `processes:` section.
 */
#include "pc_report_procs.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

/* A signal's name ("SIGKILL"), or its number. */
static const char *sigabbrev(int sig, char *buf, size_t len)
{
	const char *a = sigabbrev_np(sig);

	if (a != NULL)
		snprintf(buf, len, "SIG%s", a);
	else
		snprintf(buf, len, "%d", sig);
	return buf;
}

json_t *pc_report_procs_json(const struct pc_consult *pc)
{
	const struct pc_res *root = pc_res_get(pc->res,
		pc_res_tree_hierarchy(pc->res, "Process"));
	json_t *a = json_array();

	for (size_t i = 0; root != NULL && i < root->nchildren; i++) {
		const struct pc_res *r = pc_res_get(pc->res, root->children[i]);
		json_t *o = json_pack("{s:i, s:s}", "pid", (int)r->tag, "end",
			!r->retired ? "running" : r->end == 'x' ? "exited" :
			r->end == 's' ? "killed" : "unseen");

		if (r->retired && (r->end == 'x' || r->end == 's'))
			json_object_set_new(o, r->end == 'x' ? "status" :
				"signal", json_integer(r->end_code));
		json_object_set_new(o, "end_s", r->retired && r->end ?
				    json_real(r->end_t) : json_null());
		json_array_append_new(a, o);
	}
	return a;
}

void pc_report_procs_text(const struct pc_consult *pc, FILE *f)
{
	const struct pc_res *root = pc_res_get(pc->res,
		pc_res_tree_hierarchy(pc->res, "Process"));
	char sig[32];

	if (root == NULL || root->nchildren < 2)
		return;   /* the program alone: "search:" said its end */
	fprintf(f, "processes:\n");
	for (size_t i = 0; i < root->nchildren; i++) {
		const struct pc_res *r = pc_res_get(pc->res, root->children[i]);

		fprintf(f, "  pid %d: ", (int)r->tag);
		if (!r->retired) {
			fprintf(f, "running at the end of the search\n");
			continue;
		}
		if (r->end == 'x')
			fprintf(f, "exited with status %d", r->end_code);
		else if (r->end == 's')
			fprintf(f, "killed by %s",
				sigabbrev(r->end_code, sig, sizeof(sig)));
		else
			fprintf(f, "ended (its exit status was not seen: its "
				"parent reaped it first)");
		if (r->end)
			fprintf(f, " at %.1f s", r->end_t);
		fputc('\n', f);
	}
}

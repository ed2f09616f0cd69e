/*
 * test_spread.c - the spread across processes and processes' ends on
 * the sim source: a job of 3 processes where one computes and two idle
 * gives CPUbound's min, mean and max with the process of each end and a
 * load imbalance, in the model, the JSON and the text; a balanced job
 * gives no imbalance; a process that ends mid-search ends its
 * experiments (cut short, not tested) and the report lists its end; a
 * finding in one process of the job names that process, and one in
 * each of three is one finding for the three, their sum.
 */
#include <math.h>

#include "pc_findings.h"
#include "pc_report.h"
#include "pc_spread.h"
#include "sim_world.h"

#define AT_P(p) "</Code," p ",/SyncObject,/Files>"

static char *text_of(struct world *w)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	pc_report_text(w->pc, NULL, f);
	fclose(f);
	return buf;
}

/* Processes 200 and 300 beside the world's 100. */
static struct world *job(double p100, double p200, double p300)
{
	struct world *w = world_new(NULL, NULL);

	src_sim_thread(w->sim, 200, 200, "main");
	src_sim_thread(w->sim, 300, 300, "main");
	src_sim_script(w->sim, "cpu_inclusive", "*", 0, 0.01, 0);
	src_sim_script(w->sim, "cpu_inclusive", TOP, 0, p100 + p200 + p300,
		       0);
	src_sim_script(w->sim, "cpu_inclusive", AT_P("/Process/100"), 0,
		       p100, 0);
	src_sim_script(w->sim, "cpu_inclusive", AT_P("/Process/200"), 0,
		       p200, 0);
	src_sim_script(w->sim, "cpu_inclusive", AT_P("/Process/300"), 0,
		       p300, 0);
	return w;
}

static const struct pc_spread *cpu_spread(struct world *w,
					  struct pc_spread *sp, size_t *n)
{
	*n = pc_spread_list(w->pc, w->pc->global, sp, 16);
	for (size_t i = 0; i < *n; i++)
		if (strcmp(sp[i].node->name, "CPUbound" TOP) == 0)
			return &sp[i];
	return NULL;
}

static void test_imbalance(void)
{
	struct world *w = job(0.1, 0.2, 0.9);
	struct pc_spread sp[16];
	const struct pc_spread *c;
	json_t *j, *o;
	char *text;
	size_t n;

	world_run(w, 10.0);
	c = cpu_spread(w, sp, &n);
	tap_ok(c != NULL, "imbalance: CPUbound on /Process has a spread");
	tap_eq(c ? c->nproc : 0, 3, "imbalance: over the 3 processes");
	tap_ok(c && fabs(c->min - 0.1) < 1e-9 && c->min_pid == 100,
	       "imbalance: min 0.1 in process 100");
	tap_ok(c && fabs(c->max - 0.9) < 1e-9 && c->max_pid == 300,
	       "imbalance: max 0.9 in process 300");
	tap_ok(c && fabs(c->mean - 0.4) < 1e-9, "imbalance: mean 0.4");
	tap_ok(c && c->imbalanced, "imbalance: a load imbalance");
	j = pc_report_json(w->pc, NULL);
	o = NULL;
	for (size_t i = 0; i < json_array_size(json_object_get(j, "spread"));
	     i++) {
		json_t *x = json_array_get(json_object_get(j, "spread"), i);

		if (strcmp(json_string_value(json_object_get(x, "node")),
			   "CPUbound" TOP) == 0)
			o = x;
	}
	tap_ok(o != NULL && json_integer_value(json_object_get(
		json_object_get(o, "max"), "pid")) == 300 &&
	       json_is_true(json_object_get(o, "imbalanced")),
	       "imbalance: the JSON spread names process 300 at its max");
	text = text_of(w);
	tap_ok(strstr(text, " CPUbound" TOP ": 3 processes, min 0.1 (pid "
		      "100), mean 0.4, max 0.9 (pid 300)\n    load imbalance: "
		      "process 300 has 2.2x the mean of the 3\n") != NULL,
	       "imbalance: the text says the spread and the imbalance");
	tap_ok(strstr(text, "processes:\n  pid 100: running at the end of "
		      "the search\n  pid 200: running at the end of the "
		      "search\n  pid 300: running at the end of the "
		      "search\n") != NULL,
	       "imbalance: the text lists the 3 processes, running");
	free(text);
	json_decref(j);
	world_free(w);
}

static void test_balanced(void)
{
	struct world *w = job(0.4, 0.4, 0.45);
	struct pc_spread sp[16];
	const struct pc_spread *c;
	size_t n;

	world_run(w, 10.0);
	c = cpu_spread(w, sp, &n);
	tap_ok(c != NULL && c->nproc == 3, "balanced: a spread over 3");
	tap_ok(c && !c->imbalanced, "balanced: no load imbalance");
	world_free(w);
}

static void test_end(void)
{
	struct world *w = job(0.1, 0.1, 0.9);
	json_t *j, *p;
	char *text;
	int cut = 0, active = 0;

	world_run(w, 3.0);
	src_sim_process_end(w->sim, 300, 'x', 0, 3.0);
	src_sim_process_end(w->sim, 200, 's', 9, 3.0);
	world_run(w, 3.3);
	for (size_t i = 0; i < w->pc->global->nn; i++) {
		const struct pc_node *n = w->pc->global->nodes[i];
		const char *pp = pc_res_get(w->res, n->focus.r[1])->path;

		if (strncmp(pp, "/Process/300", 12) != 0 &&
		    strncmp(pp, "/Process/200", 12) != 0)
			continue;
		cut += n->cut_short;
		active += n->active || n->pending || n->queued;
	}
	tap_ok(cut > 0, "end: the ended processes' experiments were cut "
	       "short");
	tap_eq(active, 0, "end: none of them runs or waits any more");
	world_run(w, 8.0);
	j = pc_report_json(w->pc, NULL);
	p = json_object_get(j, "processes");
	tap_eq(json_array_size(p), 3, "end: the JSON lists 3 processes");
	tap_ok(strcmp(json_string_value(json_object_get(json_array_get(p, 0),
		"end")), "running") == 0, "end: process 100 runs");
	tap_ok(strcmp(json_string_value(json_object_get(json_array_get(p, 2),
		"end")), "exited") == 0 &&
	       json_integer_value(json_object_get(json_array_get(p, 2),
		"status")) == 0 &&
	       json_real_value(json_object_get(json_array_get(p, 2),
		"end_s")) == 3.0, "end: process 300 exited 0 at 3 s");
	tap_ok(strcmp(json_string_value(json_object_get(json_array_get(p, 1),
		"end")), "killed") == 0 &&
	       json_integer_value(json_object_get(json_array_get(p, 1),
		"signal")) == 9, "end: process 200 killed by signal 9");
	text = text_of(w);
	tap_ok(strstr(text, "  pid 200: killed by SIGKILL at 3.0 s\n  pid 300: "
		      "exited with status 0 at 3.0 s\n") != NULL,
	       "end: the text says each end");
	free(text);
	json_decref(j);
	world_free(w);
}

/* In a job of several processes a finding on one of them says which:
 * "process 300 uses ...", never "the program's threads". */
static void test_named(void)
{
	struct world *w = job(0.01, 0.01, 0.9);
	struct pc_findings fs = { 0 };
	char buf[1024];
	int named = 0, program = 0;

	world_run(w, 10.0);
	pc_findings_build(w->pc, NULL, &fs);
	for (size_t i = 0; i < fs.n; i++) {
		const char *l = pc_findings_text_line(w->pc, &fs.f[i], buf,
						      sizeof(buf));

		named += strncmp(l, "process 300 uses 0.90 CPUs computing",
				 36) == 0;
		program += strstr(l, "the program's threads") != NULL;
		tap_diag("finding %zu: %s", i + 1, l);
	}
	tap_eq(named, 1, "named: one finding says \"process 300 uses 0.90 "
	       "CPUs computing\"");
	tap_eq(program, 0, "named: none says \"the program's threads\" of "
	       "one process of the job");
	pc_findings_free(&fs);
	world_free(w);
}

/* Three processes computing: one finding for the three, its impact the
 * sum of theirs, "3 processes use 2.40 CPUs computing". */
static void test_job(void)
{
	struct world *w = job(0.7, 0.8, 0.9);
	struct pc_findings fs = { 0 };
	char buf[1024];
	const char *l;

	world_run(w, 10.0);
	pc_findings_build(w->pc, NULL, &fs);
	l = fs.n ? pc_findings_text_line(w->pc, &fs.f[0], buf, sizeof(buf)) :
		   "(none)";
	tap_eq(fs.n, 1, "job: one finding for the three processes' CPU");
	tap_ok(strcmp(l, "3 processes use 2.40 CPUs computing") == 0,
	       "job: \"3 processes use 2.40 CPUs computing\" (%s)", l);
	tap_ok(fs.n && fabs(fs.f[0].impact - 2.4) < 1e-9 &&
	       fs.f[0].nprocs == 3, "job: impact 2.40 s/s, the sum of the "
	       "three, in 3 processes");
	tap_ok(fs.n && strcmp(pc_res_get(w->res, fs.f[0].where[1])->path,
			      "/Process") == 0, "job: where: the whole job");
	pc_findings_free(&fs);
	world_free(w);
}

/* The same when the leaves are the processes' threads (one each): the
 * set is the job's, not "3 threads of process 300". */
static void test_job_threads(void)
{
	struct world *w = job(0.7, 0.8, 0.9);
	struct pc_findings fs = { 0 };
	char buf[1024];
	const char *l;

	src_sim_script(w->sim, "cpu_inclusive",
		       AT_P("/Process/100/100:main"), 0, 0.7, 0);
	src_sim_script(w->sim, "cpu_inclusive",
		       AT_P("/Process/200/200:main"), 0, 0.8, 0);
	src_sim_script(w->sim, "cpu_inclusive",
		       AT_P("/Process/300/300:main"), 0, 0.9, 0);
	world_run(w, 10.0);
	pc_findings_build(w->pc, NULL, &fs);
	l = fs.n ? pc_findings_text_line(w->pc, &fs.f[0], buf, sizeof(buf)) :
		   "(none)";
	tap_ok(fs.n == 1 && strcmp(l, "3 processes use 2.40 CPUs computing")
	       == 0, "job threads: one finding, \"3 processes use 2.40 CPUs "
	       "computing\" (%s)", l);
	tap_ok(fs.n && strcmp(pc_res_get(w->res, fs.f[0].where[1])->path,
			      "/Process") == 0, "job threads: where: the job");
	pc_findings_free(&fs);
	world_free(w);
}

int main(void)
{
	test_job_threads();
	test_job();
	test_named();
	test_imbalance();
	test_balanced();
	test_end();
	return tap_done();
}

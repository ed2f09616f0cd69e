/*
 * test_report.c - the report model on the sim source: the bottleneck is
 * the most refined true experiment, with its evidence and chain; every
 * node appears with its final state; the text says when nothing is true;
 * what the search could not test is listed with its reason's kind, and
 * makes the result "incomplete", never "no bottleneck found".
 */
#include <math.h>

#include "pc_report.h"
#include "sim_world.h"

#define AT(f) "<" f ",/Process,/SyncObject,/Files>"

static char *text_of(struct world *w, const struct pc_report_meta *m)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	pc_report_text(w->pc, m, f);
	fclose(f);
	return buf;
}

static void test_cpu_report(void)
{
	struct world *w = world_new(NULL, NULL);
	struct pc_report_meta m = { .target = "demo", .pid = 100,
				    .mode = "sim" };
	json_t *j, *b, *phase0;
	char *text;
	size_t nb;

	/* Cold everywhere except the chain main -> compute -> work. */
	src_sim_script(w->sim, "cpu_inclusive", "*", 0, 0.05, 0);
	src_sim_script(w->sim, "cpu_inclusive", TOP, 0, 0.9, 0.05);
	src_sim_script(w->sim, "cpu_inclusive", AT(F_MAIN), 0, 0.9, 0.05);
	src_sim_script(w->sim, "cpu_inclusive", AT(F_COMPUTE), 0, 0.85, 0.05);
	src_sim_script(w->sim, "cpu_inclusive", AT(F_WORK), 0, 0.8, 0.05);
	world_run(w, 8.0);
	j = pc_report_json(w->pc, &m);
	tap_ok(j != NULL, "the report builds");
	tap_ok(strcmp(json_string_value(json_object_get(j, "schema")),
		      "hunch-report") == 0, "schema hunch-report");
	tap_eq(json_integer_value(json_object_get(j, "version")), 8,
	       "report version 8");
	tap_ok(strcmp(json_string_value(json_object_get(j, "result")),
		      "bottleneck: 1 thread uses 0.80 CPUs computing, in `work` (demo.c)") == 0,
	       "the result: the lead finding in its words");
	nb = json_array_size(json_object_get(j, "bottlenecks"));
	tap_eq(nb, 1, "one bottleneck: CPU in work");
	b = json_array_get(json_object_get(j, "bottlenecks"), 0);
	tap_ok(b && strcmp(json_string_value(json_object_get(b,
			"hypothesis")), "CPUbound") == 0, "hypothesis");
	tap_ok(b && strcmp(json_string_value(json_array_get(
			json_object_get(b, "focus"), 0)), F_WORK) == 0 &&
	       strcmp(json_string_value(json_array_get(
			json_object_get(b, "focus"), 1)), "/Process") == 0,
	       "focus: one path per hierarchy, work in /Code");
	tap_ok(b && fabs(json_real_value(json_object_get(b, "since_s")) -
			 4.8) < 1e-9, "since 4.8 s");
	tap_ok(b && fabs(json_real_value(json_object_get(b, "threshold")) -
			 0.3) < 1e-9, "threshold 0.3");
	tap_ok(b && fabs(json_real_value(json_object_get(b, "value")) - 0.8)
	       < 0.051, "value about 0.8");
	tap_ok(b && fabs(json_real_value(json_object_get(b,
			"share_of_parent")) - 0.8 / 0.85) < 0.12,
	       "share of compute's value");
	tap_eq(b ? json_array_size(json_object_get(b, "chain")) : 0, 4,
	       "chain: top, main, compute, work");
	tap_ok(b && strcmp(json_string_value(json_array_get(json_object_get(b,
			"chain"), 0)), "CPUbound" TOP) == 0, "chain starts at the top");
	phase0 = json_array_get(json_object_get(j, "phases"), 0);
	tap_eq(json_array_size(json_object_get(phase0, "nodes")),
	       pc_consult_search(w->pc, 0)->nn, "every node is in the report");
	tap_ok(json_object_get(json_object_get(j, "tunables"), "costLimit") &&
	       json_object_get(json_object_get(j, "cost"), "peak_observed"),
	       "tunables and cost statistics present");
	text = text_of(w, &m);
	tap_ok(strstr(text, " 1. CPUbound: ") != NULL &&
	       strstr(text, "    where: " F_WORK ", /Process, /SyncObject, "
		      "/Files\n") != NULL, "the text names the bottleneck");
	if (tap_failed)
		tap_diag("%s", text);
	free(text);
	json_decref(j);
	world_free(w);
}

static void test_nothing(void)
{
	struct world *w = world_new(NULL, NULL);
	struct pc_report_meta m = { .target = "sleeper", .mode = "sim" };
	json_t *j;
	char *text;

	world_run(w, 3.0);
	tap_ok(pc_consult_idle(w->pc), "idle: everything concluded");
	LOGGED(w, "+1.2) Search idle: nothing left to test, every active "
	       "experiment has concluded.");
	src_sim_end(w->sim, PC_TARGET_EXITED, 0);
	world_run(w, 3.4);
	j = pc_report_json(w->pc, &m);
	tap_ok(strcmp(json_string_value(json_object_get(j, "result")),
		      "no bottleneck found") == 0, "no bottleneck found");
	tap_ok(strcmp(json_string_value(json_object_get(json_object_get(j,
			"end"), "target")), "target exited with status 0") == 0,
	       "end.target says how the target ended");
	text = text_of(w, &m);
	tap_ok(strstr(text, " no bottleneck found: no hypothesis tested true "
		      "above its threshold\n") != NULL, "the text says so");
	tap_ok(strstr(text, "search: target ended (target exited with status "
		      "0)\n") != NULL, "and why the search ended");
	free(text);
	json_decref(j);
	world_free(w);
}

/* A program that changes behaviour: CPU bound in work until 10 s, cold
 * after.  At the end nothing is true; the CPU finding is listed as
 * earlier, the most refined node only, with the value it was concluded
 * with and when it held. */
static void test_earlier(void)
{
	struct world *w = world_new(NULL, NULL);
	struct pc_report_meta m = { .target = "demo", .pid = 100,
				    .mode = "sim" };
	const char *hot[] = { TOP, AT(F_MAIN), AT(F_COMPUTE), AT(F_WORK) };
	json_t *j, *ph, *e;
	char *text;

	src_sim_script(w->sim, "cpu_inclusive", "*", 0, 0.05, 0);
	for (size_t i = 0; i < 4; i++) {
		src_sim_script(w->sim, "cpu_inclusive", hot[i], 0, 0.9, 0);
		src_sim_script(w->sim, "cpu_inclusive", hot[i], 10, 0.05, 0);
	}
	world_run(w, 20.0);
	j = pc_report_json(w->pc, &m);
	ph = json_array_get(json_object_get(j, "phases"), 0);
	tap_eq(json_array_size(json_object_get(ph, "bottlenecks")), 0,
	       "earlier: no bottleneck at the end");
	tap_eq(json_array_size(json_object_get(ph, "earlier")), 1,
	       "earlier: one finding, the most refined");
	e = json_array_get(json_object_get(ph, "earlier"), 0);
	tap_ok(e && strcmp(json_string_value(json_array_get(
			json_object_get(e, "focus"), 0)), F_WORK) == 0 &&
	       strcmp(json_string_value(json_object_get(e, "hypothesis")),
		      "CPUbound") == 0, "earlier: CPUbound in work");
	tap_ok(e && fabs(json_real_value(json_object_get(e, "value")) - 0.9)
		    < 1e-9, "earlier: the value it was concluded with");
	tap_ok(e && fabs(json_real_value(json_object_get(e, "since_s")) - 4.8)
		    < 1e-9, "earlier: true since 4.8 s");
	/* The sim is deterministic: one evaluation interval (0.8 s) after
	 * the change, the value is clearly under the threshold. */
	tap_ok(e && fabs(json_real_value(json_object_get(e, "until_s")) -
			 10.8) < 1e-9, "earlier: false again at 10.8 s");
	text = text_of(w, &m);
	tap_ok(strstr(text, " earlier: true for a while, false at the end") &&
	       strstr(text, " 1. CPUbound: 0.9 > 0.3 from 4.8 s to "),
	       "earlier: in the text report");
	free(text);
	json_decref(j);
	world_free(w);
}

/* not_tested[i] of phase ph: "kind|detail|top_level|node name". */
static void untested_is(json_t *ph, size_t i, const char *want,
			const char *what)
{
	json_t *t = json_array_get(json_object_get(ph, "not_tested"), i);
	json_t *chain = json_object_get(t, "chain");
	char got[1024];

	snprintf(got, sizeof(got), "%s|%s|%s|%s",
		 json_string_value(json_object_get(t, "kind")),
		 json_string_value(json_object_get(t, "detail")),
		 json_is_true(json_object_get(t, "top_level")) ? "top" : "-",
		 json_string_value(json_array_get(chain,
			json_array_size(chain) - 1)));
	tap_ok(strcmp(got, want) == 0, "%s", what);
	if (tap_failed)
		tap_diag("got  %s\nwant %s", got, want);
}

static const char *str(json_t *o, const char *key)
{
	const char *v = json_string_value(json_object_get(o, key));

	return v ? v : "(null)";
}

/* Three top-level hypotheses the search cannot test, each for its own
 * reason: the source refuses CPUbound's metric, FrequentSyncOperations'
 * predicted cost is over the limit, ExcessiveIOBlockingTime's metric
 * never has a value.  The other two test false: incomplete, exit 3. */
static void test_not_tested(void)
{
	struct world *w = world_new(NULL, NULL);
	struct pc_report_meta m = { .target = "demo", .mode = "sim" };
	json_t *j, *ph, *node;
	char *text;

	src_sim_fail(w->sim, "cpu_inclusive", "none of its functions is in "
		     "the program");
	src_sim_cost(w->sim, "sync_ops", 0.2, 1.0);
	src_sim_script(w->sim, "io_wait", TOP, 0, NAN, 0);
	world_run(w, 8.0);
	tap_ok(pc_consult_idle(w->pc), "not tested: the search is idle");
	j = pc_report_json(w->pc, &m);
	ph = json_array_get(json_object_get(j, "phases"), 0);
	tap_ok(strcmp(str(j, "result"), "incomplete: 3 hypotheses could not "
		      "be tested") == 0, "result: incomplete, 3 hypotheses");
	tap_ok(strcmp(str(ph, "result"), str(j, "result")) == 0,
	       "the global phase's result is the report's");
	tap_eq(pc_report_incomplete(w->pc, &m), 3,
	       "pc_report_incomplete: 3 top-level hypotheses not tested");
	tap_eq(json_array_size(json_object_get(j, "not_tested")), 3,
	       "three not tested, at the top level too");
	untested_is(ph, 0, "refused|none of its functions is in the program|"
		    "top|CPUbound" TOP, "CPUbound: refused, the source's text");
	untested_is(ph, 1, "cost_limit|predicted cost 20.00%, over the limit "
		    "5.0%|top|FrequentSyncOperations" TOP,
		    "FrequentSyncOperations: over the cost limit");
	untested_is(ph, 2, "no_data|no value of io_wait in 6.2 s of "
		    "measurement|top|ExcessiveIOBlockingTime" TOP,
		    "ExcessiveIOBlockingTime: no data");
	node = json_array_get(json_object_get(ph, "nodes"), 1);
	tap_ok(strcmp(str(json_object_get(node, "not_tested"), "reason"),
		      "the source could not enable it") == 0,
	       "the node says why too, with the kind's message");
	node = json_array_get(json_object_get(ph, "nodes"), 2);
	tap_ok(json_is_null(json_object_get(node, "not_tested")) &&
	       strcmp(str(node, "truth"), "false") == 0,
	       "a tested node's not_tested is null");
	text = text_of(w, &m);
	tap_ok(strstr(text, "\n incomplete: 3 hypotheses could not be tested; "
		      "of the others none tested true above its threshold\n"
		      " not tested (neither true nor false: nothing is known "
		      "of these):\n"
		      " 1. CPUbound" TOP " (top level): the source could not "
		      "enable it (none of its functions is in the program)\n"
		      " 2. FrequentSyncOperations" TOP " (top level): the cost "
		      "limit did not allow it (predicted cost 20.00%, over "
		      "the limit 5.0%)\n"
		      " 3. ExcessiveIOBlockingTime" TOP " (top level): "
		      "enabled, but its metric never had a value (no value "
		      "of io_wait in 6.2 s of measurement)\n") != NULL &&
	       strstr(text, "no bottleneck found") == NULL,
	       "the text: incomplete, and each with its reason");
	if (tap_failed)
		tap_diag("%s", text);
	free(text);
	json_decref(j);
	world_free(w);
}

/* Cut short: the target ends, the caller stops the search, a phase
 * ends, each before the top-level experiments concluded; while the
 * search runs they are not concluded yet (not "not tested"). */
static void test_cut_short(void)
{
	struct world *w = world_new(NULL, NULL);
	struct pc_report_meta m = { .target = "demo", .mode = "sim" };
	json_t *j, *ph;
	char *text;

	world_run(w, 0.6);
	j = pc_report_json(w->pc, &m);
	tap_ok(strcmp(str(j, "result"), "not concluded yet: 7 hypotheses "
		      "still being tested") == 0 &&
	       json_array_size(json_object_get(j, "not_tested")) == 0,
	       "running: not concluded yet, none listed as not tested");
	json_decref(j);
	m.stop = "time limit";
	j = pc_report_json(w->pc, &m);
	ph = json_array_get(json_object_get(j, "phases"), 0);
	tap_ok(strcmp(str(j, "result"), "incomplete: 7 hypotheses could not "
		      "be tested") == 0, "stopped: incomplete, 7 hypotheses");
	untested_is(ph, 0, "stopped|time limit|top|CPUbound" TOP,
		    "stopped by the time limit while it ran");
	json_decref(j);
	m.stop = NULL;
	tap_eq(pc_consult_phase_start(w->pc, "one"), 1, "phase 1 started");
	world_run(w, 1.0);
	tap_eq(pc_consult_phase_start(w->pc, "two"), 2, "phase 2 ends it");
	src_sim_end(w->sim, PC_TARGET_EXITED, 0);
	world_run(w, 1.4);
	j = pc_report_json(w->pc, &m);
	ph = json_array_get(json_object_get(j, "phases"), 0);
	untested_is(ph, 5, "target_ended|target exited with status 0|top|"
		    "ExcessiveAllocationTime" TOP,
		    "the target ended while it ran");
	ph = json_array_get(json_object_get(j, "phases"), 1);
	untested_is(ph, 0, "phase_ended|end of phase|top|CPUbound" TOP,
		    "its phase ended while it ran");
	text = text_of(w, &m);
	tap_ok(strstr(text, " 6. ExcessiveAllocationTime" TOP " (top level): "
		      "the target ended before it concluded (target exited "
		      "with status 0)\n") != NULL,
	       "the text: the target ended before it concluded");
	if (tap_failed)
		tap_diag("%s", text);
	free(text);
	json_decref(j);
	world_free(w);
}

/* Many refinements not tested (the target ends as every top-level
 * hypothesis has refined): the text lists ten and counts the rest by
 * kind in one line; the JSON lists each. */
static void test_untested_many(void)
{
	struct world *w = world_new(NULL, NULL);
	struct pc_report_meta m = { .target = "demo", .mode = "sim" };
	char want[256], *text;
	size_t nj;
	json_t *j;

	src_sim_script(w->sim, "cpu_inclusive", "*", 0, 0.9, 0);
	src_sim_script(w->sim, "sync_wait", "*", 0, 0.5, 0);
	src_sim_script(w->sim, "io_wait", "*", 0, 0.9, 0);
	src_sim_script(w->sim, "sync_ops", "*", 0, 1e6, 0);
	world_run(w, 1.4);
	src_sim_end(w->sim, PC_TARGET_EXITED, 0);
	world_run(w, 1.6);
	j = pc_report_json(w->pc, &m);
	nj = json_array_size(json_object_get(j, "not_tested"));
	tap_ok(nj > 10, "the JSON lists every refinement not tested (%zu)",
	       nj);
	text = text_of(w, &m);
	tap_ok(strstr(text, "\n 10. ") != NULL &&
	       strstr(text, "\n 11. ") == NULL, "the text lists ten");
	snprintf(want, sizeof(want), "\n and %zu more refinements not tested "
		 "(each in the JSON report's not_tested): %zu because the "
		 "target ended before it concluded\n", nj - 10, nj - 10);
	tap_ok(strstr(text, want) != NULL, "and counts the other %zu by "
	       "kind in one line", nj - 10);
	if (tap_failed)
		tap_diag("%s", text);
	free(text);
	json_decref(j);
	world_free(w);
}

/* Shares of a parent: both values are means over their own intervals.
 * The program computes at 0.5 CPUs for 3 s, then 0.9, all of it in
 * main: main, refined once the top was true and measured at 0.9 only,
 * reads more than the top's mean since it turned true (~0.76), and the
 * text says why.  Bytes per operation do not add up over parts: a
 * TooManySmallIOOps refinement has no share. */
static void test_shares(void)
{
	struct world *w = world_new(NULL, NULL);
	struct pc_report_meta m = { .target = "demo", .mode = "sim" };
	json_t *j, *b;
	const char *h, *c;
	double share;
	int over = 0, ratio = 0, ratio_null = 0;
	char *text;

	src_sim_script(w->sim, "cpu_inclusive", "*", 0, 0.05, 0);
	src_sim_script(w->sim, "cpu_inclusive", TOP, 0, 0.5, 0);
	src_sim_script(w->sim, "cpu_inclusive", TOP, 3.0, 0.9, 0);
	src_sim_script(w->sim, "cpu_inclusive", AT(F_MAIN), 0, 0.9, 0);
	src_sim_script(w->sim, "io_wait", "*", 0, 0.5, 0);
	src_sim_script(w->sim, "io_ops", "*", 0, 1000, 0);
	src_sim_script(w->sim, "io_bytes", "*", 0, 1000, 0);
	world_run(w, 8.0);
	j = pc_report_json(w->pc, &m);
	for (size_t i = 0; i < json_array_size(json_object_get(j,
						"bottlenecks")); i++) {
		b = json_array_get(json_object_get(j, "bottlenecks"), i);
		h = json_string_value(json_object_get(b, "hypothesis"));
		c = json_string_value(json_array_get(json_object_get(b,
							"focus"), 0));
		share = json_real_value(json_object_get(b, "share_of_parent"));
		if (strcmp(h, "CPUbound") == 0 && strcmp(c, F_MAIN) == 0)
			over += share > 1.1;
		if (strcmp(h, "TooManySmallIOOps") == 0 &&
		    strcmp(c, "/Code") != 0) {
			ratio++;
			ratio_null += json_is_null(json_object_get(b,
						"share_of_parent"));
		}
	}
	tap_eq(over, 1, "CPUbound at main: more than its parent's mean");
	text = text_of(w, &m);
	tap_ok(strstr(text, "% of its parent: more than it, because the two "
		      "were measured over different intervals)") != NULL,
	       "the text says why a share is over 100%%");
	tap_ok(ratio > 0 && ratio_null == ratio, "bytes per operation: no "
	       "share of a parent (%d of %d refinements)", ratio_null, ratio);
	if (tap_failed)
		tap_diag("%s", text);
	free(text);
	json_decref(j);
	world_free(w);
}

int main(void)
{
	test_cpu_report();
	test_shares();
	test_nothing();
	test_earlier();
	test_not_tested();
	test_cut_short();
	test_untested_many();
	return tap_done();
}

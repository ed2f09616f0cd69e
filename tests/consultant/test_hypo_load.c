/*
 * test_hypo_load.c - the hypotheses loader: the shipped defaults load
 * clean; each broken file in bad/ (loaded on top of the defaults, as a
 * user file would be) gives exactly its expected first message, with
 * file, line, column and JSON path; --set parsing and range checks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pc_config.h"
#include "tap.h"

static char defaults[4096], bad_dir[4096];

struct bad_case {
	const char *file;
	const char *msg;   /* after "bad/FILE:" */
};

static const struct bad_case bad_cases[] = {
	{ "syntax.json", "4:56: $.hypotheses.Slow: syntax error: "
	  "'}' expected near '\"threshold\"'" },
	{ "wrong_type.json", "4:18: $.tunables.myLimit.default: expected a "
	  "number, got a string" },
	{ "unknown_field.json", "7:7: $.hypotheses.CPUbound.threshhold: "
	  "unknown field \"threshhold\"; expected one of: parent, "
	  "description, metric, threshold, compare, expand, prune, suppress "
	  "(did you mean \"threshold\"?)" },
	{ "misspelt_metric.json", "6:42: $.hypotheses.HotLoop.metric."
	  "inputs[0]: unknown metric \"cpu_inclusve\"; expected a metric "
	  "defined under $.metrics (did you mean \"cpu_inclusive\"?)" },
	{ "misspelt_tunable.json", "7:7: $.hypotheses.HotLoop.threshold: "
	  "unknown tunable \"PC_CPUTreshold\"; expected a tunable defined "
	  "under $.tunables (did you mean \"PC_CPUThreshold\"?)" },
	{ "cycle.json", "5:7: $.hypotheses.LockConvoy.parent: cycle in the "
	  "hypothesis tree: LockConvoy -> LockStorm -> LockConvoy (following "
	  "\"parent\"); a hypothesis cannot be its own ancestor" },
	{ "missing_parent.json", "5:7: $.hypotheses.SlowDisk.parent: missing "
	  "parent: hypothesis \"SlowDisk\" names parent "
	  "\"ExcessiveIOBlockingTim\", which is not defined (did you mean "
	  "\"ExcessiveIOBlockingTime\"?)" },
	{ "prune_hierarchy.json", "8:33: $.hypotheses.SlowDisk.prune[1]: "
	  "unknown hierarchy \"/Machine\"; expected one of /Code, /Process, "
	  "/SyncObject, /Files in a prune list" },
	{ "threshold_range.json", "4:5: $.set.PC_CPUThreshold: threshold "
	  "PC_CPUThreshold = 1.5 is out of its tunable's range [0, 1]" },
	{ "wrong_version.json", "2:3: $.version: unsupported version 2; this "
	  "hunch reads version 1" },
	{ "kernel_value.json", "4:53: $.metrics.busy.kernel: unknown kernel "
	  "\"cpus\"; expected one of: cpu, runqueue (did you mean \"cpu\"?)" },
	{ "kernel_type.json", "4:57: $.metrics.waiting.kernel: \"kernel\": "
	  "\"cpu\" reads threads' CPU time from the kernel in place of a CPU "
	  "timer; metric \"waiting\" is of type \"wall_timer\": use "
	  "\"type\": \"cpu_timer\" or remove \"kernel\"" },
	{ "kernel_runqueue_type.json", "4:59: $.metrics.starved.kernel: "
	  "\"kernel\": \"runqueue\" reads threads' run-queue wait from the "
	  "kernel in place of a wall timer; metric \"starved\" is of type "
	  "\"cpu_timer\": use \"type\": \"wall_timer\" or remove "
	  "\"kernel\"" },
};

static struct pc_config *load_defaults(void)
{
	struct pc_config *c = pc_config_new();
	struct pc_diags ds = { 0 };
	struct hunch_err e = { 0 };

	if (pc_config_load_file(c, defaults, &ds, &e) != 0)
		tap_diag("defaults: %s", e.msg);
	pc_jx_diags_free(&ds);
	return c;
}

static void test_defaults(void)
{
	struct pc_config *c = pc_config_new();
	struct pc_diags ds = { 0 };
	struct hunch_err e = { 0 };
	int r = pc_config_load_all(c, defaults, NULL, &ds, &e);
	int cpu, io, small;

	tap_ok(r == 0, "default.json loads with no error%s%s",
	       r ? ": " : "", r ? e.msg : "");
	tap_eq(ds.n, 0, "no diagnostics for the defaults");
	tap_eq(c->nhyp, 10, "ten hypotheses (root + nine)");
	cpu = pc_config_hypo_find(c, "CPUbound");
	io = pc_config_hypo_find(c, "ExcessiveIOBlockingTime");
	small = pc_config_hypo_find(c, "TooManySmallIOOps");
	tap_ok(cpu >= 0 && io >= 0 && small >= 0, "the issue's hypotheses exist");
	tap_ok(c->hyp[pc_config_hypo_find(c, "topLevelHypothesis")].is_virtual,
	       "topLevelHypothesis is virtual");
	tap_ok(small >= 0 && c->hyp[small].parent_idx == io,
	       "TooManySmallIOOps is a child of ExcessiveIOBlockingTime");
	tap_ok(small >= 0 && c->hyp[small].cmp == PC_CMP_LT,
	       "TooManySmallIOOps compares with lt");
	tap_ok(io >= 0 && c->hyp[io].expand == PC_EXP_WHY_AND_WHERE &&
	       c->hyp[io].prune[2], "I/O blocking: whyAndWhere, prunes "
	       "/SyncObject");
	{
		int st = pc_config_hypo_find(c, "CPUstarved");
		int dm = pc_config_hypo_find(c, "CPUdemand");
		const struct pc_metric_def *w =
			pc_metric_def_find(c, "cpu_wait");

		tap_ok(st >= 0 && c->hyp[st].parent_idx ==
		       pc_config_hypo_find(c, "topLevelHypothesis") &&
		       c->hyp[st].expand == PC_EXP_WHY_ONLY &&
		       strcmp(c->hyp[st].in[0].metric, "cpu_wait") == 0 &&
		       strcmp(c->hyp[st].threshold, "PC_CPUStarvedThreshold")
		       == 0, "CPUstarved: cpu_wait against "
		       "PC_CPUStarvedThreshold, top level, whyOnly");
		tap_ok(dm >= 0 && c->hyp[dm].parent_idx == st &&
		       strcmp(c->hyp[dm].in[1].metric, "cpu_share") == 0,
		       "CPUdemand: under CPUstarved, divided by cpu_share");
		tap_ok(cpu >= 0 && strcmp(c->hyp[cpu].in[1].metric,
					  "active_processes") == 0,
		       "CPUbound: CPUs used, divided by active_processes");
		tap_ok(w && w->kernel == PC_KERNEL_RUNQUEUE &&
		       w->type == PC_BASE_WALL_TIMER && w->ninstr == 0,
		       "cpu_wait: the kernel's run-queue wait, no base");
		tap_ok(pc_tunables_get(c, "PC_CPUStarvedThreshold") == 0.25,
		       "starved 0.25");
	}
	tap_ok(pc_tunables_get(c, "costLimit") == 0.05, "cost limit 5%%");
	tap_ok(pc_tunables_get(c, "PC_CPUThreshold") == 0.30, "CPU 0.30");
	tap_ok(pc_tunables_get(c, "PC_IOOpThreshold") == 4096, "4096 bytes");
	tap_ok(pc_metric_def_find(c, "cpu_inclusive") &&
		       pc_metric_def_find(c, "cpu_inclusive")->type ==
			       PC_BASE_CPU_TIMER,
	       "cpu_inclusive is a CPU timer");
	tap_ok(pc_metric_def_find(c, "cpu_inclusive") &&
	       pc_metric_def_find(c, "cpu_inclusive")->kernel == PC_KERNEL_CPU,
	       "read from the kernel where /Code is not constrained");
	tap_ok(pc_metric_def_find(c, "sync_wait") &&
	       pc_metric_def_find(c, "sync_wait")->kernel == PC_KERNEL_NONE,
	       "sync_wait is not");
	pc_jx_diags_free(&ds);
	pc_config_free(c);
}

static void test_bad_files(void)
{
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *bc = &bad_cases[i];
		struct pc_config *c = load_defaults();
		struct pc_diags ds = { 0 };
		struct hunch_err e = { 0 };
		char path[4200], want[8400];
		int r;

		snprintf(path, sizeof(path), "%s/%s", bad_dir, bc->file);
		snprintf(want, sizeof(want), "%s:%s", path, bc->msg);
		r = pc_config_load_file(c, path, &ds, &e);
		tap_ok(r < 0, "%s is rejected", bc->file);
		if (!tap_ok(ds.n >= 1 && strcmp(ds.d[0].msg, want) == 0,
			    "%s: exact message", bc->file)) {
			tap_diag("got:  %s", ds.n ? ds.d[0].msg : "(none)");
			tap_diag("want: %s", want);
		}
		tap_ok(strcmp(e.msg, ds.n ? ds.d[0].msg : "") == 0,
		       "%s: the error carries the first message", bc->file);
		pc_jx_diags_free(&ds);
		pc_config_free(c);
	}
}

static void test_all_errors_reported(void)
{
	struct pc_config *c = load_defaults();
	struct pc_diags ds = { 0 };
	const char *text =
		"{\"version\": 1, \"hypotheses\": {\n"
		" \"A\": {\"parent\": \"CPUbound\", \"metric\": \"nope\",\n"
		"       \"threshold\": \"nope2\", \"expand\": \"whyFirst\"}}}\n";

	pc_config_load_string(c, "multi.json", text, &ds, NULL);
	tap_eq(ds.n, 1, "a hypothesis with a bad enum is dropped: one error");
	if (ds.n)
		tap_ok(strcmp(ds.d[0].msg, "multi.json:3:30: $.hypotheses.A."
			      "expand: unknown expand \"whyFirst\"; expected "
			      "one of: whyAndWhere, whereAndWhy, "
			      "whyBeforeWhere, whereBeforeWhy, whyOnly, "
			      "whereOnly") == 0, "enum message: %s",
		       ds.d[0].msg);
	pc_jx_diags_free(&ds);
	text = "{\"version\": 1, \"hypotheses\": {\n"
	       " \"A\": {\"parent\": \"CPUbound\", \"metric\": \"nope\",\n"
	       "       \"threshold\": \"nope2\"}}}\n";
	pc_config_load_string(c, "multi.json", text, &ds, NULL);
	tap_eq(ds.n, 2, "unknown metric and unknown tunable: both reported");
	pc_jx_diags_free(&ds);
	pc_config_free(c);
}

/* MDL-in-JSON checks that need no program. */
static void test_metric_errors(void)
{
	struct pc_config *c = load_defaults();
	struct pc_diags ds = { 0 };
	const char *text =
		"{\"version\": 1, \"metrics\": {\n"
		" \"m1\": {\"units\": \"x\", \"type\": \"counter\", \"base\": [\n"
		"   {\"foreach\": \"io_funks\", \"at\": \"entry\",\n"
		"    \"do\": [{\"op\": \"add\", \"value\": \"$return\"}]}]},\n"
		" \"m2\": {\"units\": \"x\", \"type\": \"wall_timer\", \"base\": [\n"
		"   {\"foreach\": [\"read\"], \"at\": \"exit\",\n"
		"    \"do\": [{\"op\": \"add\"}]}]},\n"
		" \"m3\": {\"units\": \"x\", \"type\": \"counter\",\n"
		"        \"constraints\": [\"procedur\"], \"base\": [\n"
		"   {\"foreach\": \"io_funcs\", \"at\": \"exit\",\n"
		"    \"do\": [{\"op\": \"add\", \"value\": \"$arg0\"}]}]}}}\n";
	const char *want[] = {
		"m.json:4:26: $.metrics.m1.base[0].do[0].value: $return is only "
		"known at \"exit\" or after a \"call\"",
		"m.json:7:13: $.metrics.m2.base[0].do[0].op: \"add\" does not "
		"apply to a wall_timer variable",
		"m.json:11:26: $.metrics.m3.base[0].do[0].value: $arg0 is only "
		"known at \"entry\" or before a \"call\"",
	};

	pc_config_load_string(c, "m.json", text, &ds, NULL);
	tap_eq(ds.n, 3, "three metric errors, each reported");
	for (size_t i = 0; i < 3 && i < ds.n; i++)
		if (!tap_ok(strcmp(ds.d[i].msg, want[i]) == 0, "%s", want[i]))
			tap_diag("got: %s", ds.d[i].msg);
	pc_jx_diags_free(&ds);
	/* Cross-references: an unknown list and an unknown constraint. */
	text = "{\"version\": 1, \"metrics\": {\n"
	       " \"m4\": {\"units\": \"x\", \"type\": \"counter\",\n"
	       "   \"constraints\": [\"procedur\"], \"base\": [\n"
	       "   {\"foreach\": \"io_funks\", \"at\": \"entry\",\n"
	       "    \"do\": [{\"op\": \"add\"}]}]}}}\n";
	pc_config_load_string(c, "m.json", text, &ds, NULL);
	tap_eq(ds.n, 2, "unknown list and unknown constraint");
	if (ds.n == 2) {
		tap_ok(strcmp(ds.d[0].msg, "m.json:4:5: $.metrics.m4.base[0]."
			      "foreach: unknown function list \"io_funks\"; "
			      "expected a list defined under $.lists, or "
			      "$procedures, $start_functions, $focus (did you "
			      "mean \"io_funcs\"?)") == 0, "%s", ds.d[0].msg);
		tap_ok(strcmp(ds.d[1].msg, "m.json:3:20: $.metrics.m4."
			      "constraints[0]: unknown constraint \"procedur\"; "
			      "expected a constraint defined under $.constraints "
			      "(did you mean \"procedure\"?)") == 0, "%s",
		       ds.d[1].msg);
	}
	pc_jx_diags_free(&ds);
	pc_config_free(c);
}

static void test_override(void)
{
	struct pc_config *c = load_defaults();
	struct pc_diags ds = { 0 };
	const char *text =
		"{\"version\": 1, \"set\": {\"PC_CPUThreshold\": 0.5},\n"
		" \"hypotheses\": {\"CPUbound\": {\"parent\": "
		"\"topLevelHypothesis\", \"metric\": \"cpu_inclusive\", "
		"\"threshold\": \"PC_CPUThreshold\", \"prune\": [\"/Files\"]},\n"
		" \"HotLoop\": {\"parent\": \"CPUbound\", \"metric\": "
		"\"cpu_inclusive\", \"threshold\": \"PC_CPUThreshold\"}}}\n";
	int r = pc_config_load_string(c, "user.json", text, &ds, NULL);
	int cpu = pc_config_hypo_find(c, "CPUbound");

	tap_eq(r, 0, "a user file extends and overrides the defaults");
	tap_eq(c->nhyp, 11, "HotLoop added, CPUbound replaced");
	tap_ok(cpu >= 0 && !c->hyp[cpu].prune[2] && c->hyp[cpu].prune[3],
	       "the override's prune list replaces the default one");
	tap_ok(pc_tunables_get(c, "PC_CPUThreshold") == 0.5,
	       "\"set\" changes a tunable's value");
	pc_jx_diags_free(&ds);
	pc_config_free(c);
}

static void test_set(void)
{
	struct pc_config *c = load_defaults();
	struct hunch_err e = { 0 };

	tap_eq(pc_tunables_set_str(c, "costLimit=0.1", &e), 0, "--set costLimit=0.1");
	tap_ok(pc_tunables_get(c, "costLimit") == 0.1, "the value is set");
	tap_ok(pc_tunables_set_str(c, "costLimt=0.1", &e) < 0 &&
	       strcmp(e.msg, "--set: unknown tunable \"costLimt\" (did you "
		      "mean \"costLimit\"?)") == 0, "misspelt: %s", e.msg);
	tap_ok(pc_tunables_set_str(c, "PC_CPUThreshold=2", &e) < 0 &&
	       strcmp(e.msg, "--set: threshold PC_CPUThreshold = 2 is out of "
		      "its tunable's range [0, 1]") == 0, "range: %s", e.msg);
	tap_ok(pc_tunables_set_str(c, "maxPendingEnables=2.5", &e) < 0,
	       "an int tunable refuses 2.5: %s", e.msg);
	tap_ok(pc_tunables_set_str(c, "useCallGraphSearch=false", &e) == 0 &&
	       pc_tunables_get(c, "useCallGraphSearch") == 0, "bool false");
	tap_ok(pc_tunables_set_str(c, "sufficientTime", &e) < 0 &&
	       strcmp(e.msg, "--set: expected NAME=VALUE, got "
		      "\"sufficientTime\"") == 0, "no '=': %s", e.msg);
	tap_ok(pc_tunables_set_str(c, "sufficientTime=abc", &e) < 0,
	       "not a number: %s", e.msg);
	pc_config_free(c);
}

int main(void)
{
	const char *src = getenv("HUNCH_SOURCE_ROOT");

	if (src == NULL)
		src = ".";
	snprintf(defaults, sizeof(defaults), "%s/hypotheses/default.json", src);
	snprintf(bad_dir, sizeof(bad_dir), "%s/tests/consultant/bad", src);
	test_defaults();
	test_bad_files();
	test_all_errors_reported();
	test_metric_errors();
	test_override();
	test_set();
	return tap_done();
}

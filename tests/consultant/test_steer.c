/*
 * test_steer.c - the dashboard's hand on the search (pc_steer.c), on the
 * sim source: a metric enabled for display fills its histogram; an
 * experiment started by hand runs outside the automatic search; the
 * user's hypotheses file is made from the defaults; a reload with an
 * error changes nothing and names file, line and column; a valid reload
 * adds a hypothesis to the running search and applies a new threshold;
 * a value set live survives a reload; a file that drops a hypothesis is
 * refused.
 */
#include <errno.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pc_steer.h"
#include "sim_world.h"

#define AT(f) "<" f ",/Process,/SyncObject,/Files>"

#define tap_str(got, want, ...) do {                                     \
	const char *g_ = (got), *w_ = (want);                            \
	if (!tap_ok(strcmp(g_, w_) == 0, __VA_ARGS__))                   \
		tap_diag("  got:  %s\n#   want: %s", g_, w_);           \
} while (0)

static char dir[] = "/tmp/hunch-test-steer-XXXXXX";

static void focus_of(struct world *w, const char *fn, struct pc_focus *f)
{
	pc_focus_top(w->res, f);
	f->r[0] = pc_res_find(w->res, fn);
}

static int used_buckets(const struct pc_hist *h)
{
	int n = 0;

	for (int i = 0; i < PC_HIST_BUCKETS; i++)
		n += !isnan(h->b[i]);
	return n;
}

/* 0.2 s periods: the instance enabled at 1.0 gets its reply by the next
 * tick and a sample per period from then on. */
static void test_enable(void)
{
	struct world *w = world_new(NULL, NULL);
	struct hunch_err e = { 0 };
	struct pc_focus f;
	struct pc_minst *m;
	int id;

	src_sim_script(w->sim, "cpu_inclusive", AT(F_WORK), 0, 0.75, 0);
	world_run(w, 1.0);
	focus_of(w, F_WORK, &f);
	tap_eq(pc_steer_enable(w->pc, "cpu_inclusiv", &f, &e), -ENOENT,
	       "an unknown metric is refused");
	tap_str(e.msg, "no metric cpu_inclusiv (did you mean cpu_inclusive?)",
		"the error names the nearest metric");
	id = pc_steer_enable(w->pc, "cpu_inclusive", &f, &e);
	tap_ok(id > 0, "cpu_inclusive enabled on work (instance %d)", id);
	LOGGED(w, "+1.0) Metric cpu_inclusive enabled on " AT(F_WORK)
	       " for display.");
	world_run(w, 2.0);
	m = pc_datamgr_get(&w->pc->dm, id);
	tap_eq(m->state, PC_MI_ENABLED, "the instance is enabled");
	tap_eq(used_buckets(&m->global), 4, "4 buckets of data by 2.0 s");
	world_run(w, 2.4);
	tap_eq(used_buckets(&m->global), 6, "2 more after two more periods");
	tap_ok(fabs(pc_hist_rate(&m->global, 9) - 0.75) < 1e-9,
	       "the bucket at 1.8 s reads the scripted 0.75");
	pc_steer_release(w->pc, id);
	tap_eq(m->state, PC_MI_RELEASED, "released: the display held the "
	       "only reference");
	world_free(w);
}

/* CPUbound on `work` by hand while the automatic search is still at the
 * top: it runs (queued, launched, concluded) under the root. */
static void test_experiment(void)
{
	struct world *w = world_new(NULL, NULL);
	struct hunch_err e = { 0 };
	struct pc_focus f;
	bool existed;
	int id;

	src_sim_script(w->sim, "cpu_inclusive", "*", 0, 0.05, 0);
	src_sim_script(w->sim, "cpu_inclusive", AT(F_WORK), 0, 0.9, 0);
	world_run(w, 0.4);
	focus_of(w, F_WORK, &f);
	tap_eq(pc_steer_experiment(w->pc, "topLevelHypothesis", &f, &existed,
				   &e), -EINVAL, "a virtual hypothesis is "
	       "refused");
	tap_str(e.msg, "topLevelHypothesis has no metric of its own (it is "
		"true when one of its children is): start one of its "
		"children", "with the reason");
	tap_eq(pc_steer_experiment(w->pc, "CPUbund", &f, &existed, &e),
	       -ENOENT, "an unknown hypothesis is refused");
	id = pc_steer_experiment(w->pc, "CPUbound", &f, &existed, &e);
	tap_ok(id > 0 && !existed, "CPUbound on work started (node %d)", id);
	LOGGED(w, "+0.4) Experiment CPUbound" AT(F_WORK) " started by hand.");
	tap_eq(pc_steer_experiment(w->pc, "CPUbound", &f, &existed, &e), id,
	       "asked again: the same node");
	tap_ok(existed, "and it says it existed");
	world_run(w, 3.0);
	TRACE_IS(w, 0, "CPUbound", AT(F_WORK), "queued pending active true");
	TRACE_IS(w, 0, "CPUbound", TOP, "queued pending active false");
	world_free(w);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;

	if (f == NULL)
		return strdup("(missing)");
	if (getdelim(&buf, &len, '\0', f) < 0)
		buf = strdup("");
	fclose(f);
	return buf;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	fputs(text, f);
	fclose(f);
}

/* No user file: the defaults are copied into the XDG config dir. */
static void test_user_file(void)
{
	struct world *w = world_new(NULL, NULL);
	struct hunch_err e = { 0 };
	char path[4096], want[4096];
	char *a, *b;
	bool made;

	setenv("XDG_CONFIG_HOME", dir, 1);
	snprintf(want, sizeof(want), "%s/hunch/hypotheses.json", dir);
	tap_eq(pc_steer_user_file(w->cfg, path, sizeof(path), &made, &e), 0,
	       "a user file is found or made");
	tap_ok(made, "made");
	tap_str(path, want, "in $XDG_CONFIG_HOME/hunch");
	a = slurp(path);
	b = slurp(w->cfg->files[0]);
	tap_ok(strcmp(a, b) == 0, "it is a copy of the defaults (%zu bytes)",
	       strlen(a));
	free(a);
	free(b);
	tap_eq(pc_steer_user_file(w->cfg, path, sizeof(path), &made, &e), 0,
	       "asked again");
	tap_ok(!made, "the file is there: not made again");
	world_free(w);
}

static const char *bad_json =
	"{\n"
	"  \"version\": 1,\n"
	"  \"hypotheses\": {\n"
	"    \"HotLoop\": {\n"
	"      \"parent\": \"CPUbound\", \"description\": \"x\",\n"
	"      \"metric\": \"cpu_inclusive\",\n"
	"      \"threshold\": \"PC_CPUThreshld\", \"compare\": \"gt\"\n"
	"    }\n"
	"  }\n"
	"}\n";

static const char *good_json =
	"{\n"
	"  \"version\": 1,\n"
	"  \"set\": { \"PC_CPUThreshold\": 0.5 },\n"
	"  \"hypotheses\": {\n"
	"    \"HotLoop\": {\n"
	"      \"parent\": \"topLevelHypothesis\", \"description\": \"x\",\n"
	"      \"metric\": \"cpu_inclusive\",\n"
	"      \"threshold\": \"PC_CPUThreshold\", \"compare\": \"gt\"\n"
	"    }\n"
	"  }\n"
	"}\n";

static void test_reload(void)
{
	struct world *w = world_new(NULL, NULL);
	struct pc_diags ds = { 0 };
	struct hunch_err e = { 0 };
	char user[4096];
	int added = -1;

	snprintf(user, sizeof(user), "%s/edit.json", dir);
	write_file(user, "{ \"version\": 1 }\n");
	pc_config_load_file(w->cfg, user, NULL, &e);
	src_sim_script(w->sim, "cpu_inclusive", "*", 0, 0.4, 0);
	world_run(w, 2.0);
	TRACE_IS(w, 0, "CPUbound", TOP, "queued pending active true");

	write_file(user, bad_json);
	tap_eq(pc_steer_reload(w->pc, NULL, &ds, &added, &e), -EINVAL,
	       "a file with an error is refused");
	tap_eq(ds.n, 1, "one error");
	if (ds.n > 0) {
		char want[4400];

		snprintf(want, sizeof(want), "%s:7:7: $.hypotheses.HotLoop."
			 "threshold: unknown tunable \"PC_CPUThreshld\"; "
			 "expected a tunable defined under $.tunables (did "
			 "you mean \"PC_CPUThreshold\"?)", user);
		tap_str(ds.d[0].msg, want, "it names file, line, column, "
			"path and the nearest name");
	}
	pc_jx_diags_free(&ds);
	tap_eq(pc_config_hypo_find(w->cfg, "HotLoop"), -1, "nothing changed");

	write_file(user, good_json);
	tap_eq(pc_steer_reload(w->pc, NULL, &ds, &added, &e), 0,
	       "the fixed file is applied");
	tap_eq(added, 1, "one new hypothesis");
	tap_eq(ds.n, 0, "no errors");
	LOGGED(w, "+2.0) Tunable PC_CPUThreshold set to 0.5.");
	LOGGED(w, "+2.0) Hypotheses reloaded: 11 hypotheses, 1 new.");
	world_run(w, 6.0);
	TRACE_IS(w, 0, "HotLoop", TOP, "queued pending active false");
	tap_ok(pc_tunables_get(w->cfg, "PC_CPUThreshold") == 0.5,
	       "the threshold is the file's");
	pc_jx_diags_free(&ds);

	/* A live edit survives a reload that does not touch its tunable. */
	tap_eq(pc_consult_set_tunable(w->pc, "PC_SyncThreshold", 0.35, &e), 0,
	       "PC_SyncThreshold set live");
	tap_eq(pc_steer_reload(w->pc, NULL, &ds, &added, &e), 0,
	       "the same file again");
	tap_eq(added, 0, "nothing new");
	tap_ok(pc_tunables_get(w->cfg, "PC_SyncThreshold") == 0.35,
	       "the live value is kept");

	/* A hypothesis removed from the file: refused, nothing changes. */
	write_file(user, "{ \"version\": 1 }\n");
	tap_eq(pc_steer_reload(w->pc, NULL, &ds, &added, &e), -EINVAL,
	       "a file that drops a hypothesis is refused");
	tap_str(e.msg, "hypothesis HotLoop is no longer defined: a running "
		"search can gain and change hypotheses but not lose one "
		"(restart hunch to drop it)", "with the reason");
	tap_ok(pc_config_hypo_find(w->cfg, "HotLoop") >= 0,
	       "HotLoop is still there");
	pc_jx_diags_free(&ds);
	pc_steer_forget(w->pc);
	world_free(w);
}

int main(void)
{
	if (mkdtemp(dir) == NULL)
		return 1;
	test_enable();
	test_experiment();
	test_user_file();
	test_reload();
	return tap_done();
}

/*
 * test_journal_steer.c - the dashboard's steering journaled and replayed,
 * on the sim source: a tunable changed by hand, an
 * experiment started by hand, a metric enabled and released by hand,
 * and a hypotheses file reloaded are written as `action` records with
 * exact fields (pc_steer_jnl.c), and a replay of the journal applies
 * them at the same tick: the same nodes, traces, log and report as the
 * live steered search; without those records it is the unsteered one.
 */
#include <errno.h>

#include "pc_diff.h"
#include "pc_steer.h"
#include "replay_world.h"

static void sc_sync(struct src_sim *sim)
{
	src_sim_script(sim, "sync_wait", "*", 0, 0.6, 0.05);
	src_sim_script(sim, "cpu_inclusive", "*", 0, 0.3, 0.02);
	src_sim_script(sim, "cpu_inclusive", TOP, 0, 0.9, 0.02);
	src_sim_script(sim, "cpu_inclusive", AT(F_MAIN), 0, 0.9, 0.02);
	src_sim_script(sim, "io_wait", "*", 0, 0.4, 0.02);
}

/* String equality with both in the message on failure. */
static void tap_str(const char *got, const char *want, const char *what)
{
	if (!tap_ok(got != NULL && strcmp(got, want) == 0, "%s", what))
		tap_diag("  got \"%s\", want \"%s\"", got ? got : "(null)",
			 want);
}

static const struct scenario scenario = { "steered", sc_sync, 8.0 };
static const struct pc_report_meta meta = { .target = "demo", .pid = 100,
					    .mode = "run" };
static char dir[] = "/tmp/hunch-steer-XXXXXX";
static char user[4200];

/* The focus whose hierarchy `h` is `path`, the others unconstrained. */
static struct pc_focus focus_at(const struct world *w, int h, const char *path)
{
	struct pc_focus f;

	pc_focus_top(w->res, &f);
	f.r[h] = pc_res_find(w->res, path);
	return f;
}

/* The journal's `action` records, in order (a new reference). */
static json_t *actions(const char *path)
{
	FILE *f = fopen(path, "r");
	json_t *all = json_array();
	char *line = NULL;
	size_t cap = 0;

	while (f && getline(&line, &cap, f) > 0) {
		json_t *j = json_loads(line, 0, NULL);

		if (j && strcmp(json_string_value(json_object_get(j, "t")),
				"action") == 0) {
			json_object_del(j, "ts");   /* the one live field */
			json_array_append(all, j);
		}
		json_decref(j);
	}
	free(line);
	if (f)
		fclose(f);
	return all;
}

/* `rec` has exactly the fields of the JSON text `want` (ts aside). */
static void record_is(const json_t *rec, const char *want, const char *what)
{
	json_t *w = json_loads(want, 0, NULL);
	char *got = json_dumps(rec, JSON_SORT_KEYS | JSON_COMPACT);

	tap_ok(w != NULL && json_equal(rec, w), "%s: %s", what,
	       got ? got : "(none)");
	free(got);
	json_decref(w);
}

/* A copy of the journal without its `action` lines but the first `keep`. */
static void strip_actions(const char *from, const char *to, int keep)
{
	FILE *in = fopen(from, "r"), *out = fopen(to, "w");
	char *line = NULL;
	size_t cap = 0;

	while (in && out && getline(&line, &cap, in) > 0)
		if (strstr(line, "{\"t\":\"action\"") != line || keep-- > 0)
			fputs(line, out);
	free(line);
	if (in)
		fclose(in);
	if (out)
		fclose(out);
}

/* The replay of `path` against the live world: same nodes, log, text. */
static void same_as_live(const struct world *live, const char *path,
			 const char *what)
{
	struct replayed *r = rw_replay(path, NULL);
	char *a = rw_text(live->pc, &meta), *b = rw_text(r->pc, &meta);

	tap_eq(rw_diff(live->pc, r->pc), 0, "%s: the replay has the same "
	       "nodes, traces and log", what);
	tap_ok(strcmp(a, b) == 0, "%s: and the same report (%zu bytes)",
	       what, strlen(a));
	free(a);
	free(b);
	rw_replayed_free(r);
}

/* ---- a tunable at second 3 ---- */

static void user_tunable(struct world *w, struct jnl_writer *jw, int sec)
{
	struct hunch_err e = { 0 };

	if (sec == 1)
		pc_steer_jnl_write(w->pc, jw);
	if (sec == 3 && pc_steer_jnl_set_tunable(w->pc, "PC_CPUThreshold", 0.5,
					     &e) != 0)
		tap_diag("%s", e.msg);
}

/* Every cpu_inclusive but the program's and main's is 0.3, the
 * threshold: those CPUbound nodes hover and stay unknown; at 0.5 (from
 * second 3) they conclude false.  Nothing concluded before changes. */
static const char *want_changes =
	"CPUbound</Code,/Process/100,/SyncObject,/Files> unknown -> false\n"
	"CPUbound</Code/demo/demo.c/compute,/Process,/SyncObject,/Files> "
	"unknown -> false\n"
	"CPUbound</Code/demo/io.c/writer,/Process,/SyncObject,/Files> "
	"unknown -> false\n"
	"CPUbound</Code/demo/demo.c/locker,/Process,/SyncObject,/Files> "
	"unknown -> false\n"
	"CPUbound</Code/demo/demo.c/main,/Process/100,/SyncObject,/Files> "
	"unknown -> false\n";

static void tunable(void)
{
	char p1[4300], p2[4300], p3[4300];
	struct world *live, *plain;
	struct replayed *r, *r2;
	struct pc_change *c;
	json_t *acts;
	char got[4096] = "";
	size_t n, len = 0;

	snprintf(p1, sizeof(p1), "%s/tunable.jsonl", dir);
	snprintf(p2, sizeof(p2), "%s/plain.jsonl", dir);
	snprintf(p3, sizeof(p3), "%s/stripped.jsonl", dir);
	live = rw_record_with(&scenario, p1, NULL, user_tunable);
	plain = rw_record(&scenario, p2, NULL);
	acts = actions(p1);
	tap_eq(json_array_size(acts), (size_t)1, "tunable: one action record");
	record_is(json_array_get(acts, 0), "{\"t\":\"action\",\"action\":"
		  "\"tunable\",\"name\":\"PC_CPUThreshold\",\"old\":0.3,"
		  "\"value\":0.5}", "tunable: its fields");
	json_decref(acts);
	same_as_live(live, p1, "tunable");

	/* What the change did: the conclusions that differ from the
	 * unsteered search, each one reached after second 3. */
	r = rw_replay(p1, NULL);
	n = pc_diff_conclusions(plain->pc, r->pc, &c);
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(got + len, sizeof(got) - len,
					"%s %s -> %s\n", c[i].name,
					pc_shg_truth_name(c[i].was),
					pc_shg_truth_name(c[i].now));
	tap_ok(strcmp(got, want_changes) == 0, "tunable: exactly the CPUbound "
	       "refinements at 0.3 conclude false under 0.5 (not unknown)");
	if (strcmp(got, want_changes) != 0)
		tap_diag("got:\n%s", got);
	pc_diff_changes_free(c, n);

	/* Without the record, the replay is the unsteered search. */
	strip_actions(p1, p3, 0);
	r2 = rw_replay(p3, NULL);
	tap_eq(pc_diff_conclusions(plain->pc, r2->pc, &c), (size_t)0,
	       "tunable: without its record the replay concludes as the "
	       "unsteered search");
	tap_ok(pc_tunables_get(r->cfg, "PC_CPUThreshold") == 0.5,
	       "tunable: the replay ends with the user's value");
	rw_replayed_free(r2);
	rw_replayed_free(r);
	world_free(plain);
	world_free(live);
}

/* ---- an experiment and a metric by hand ---- */

static int metric_inst;

static void user_hand(struct world *w, struct jnl_writer *jw, int sec)
{
	struct hunch_err e = { 0 };
	struct pc_focus f;
	bool existed;

	if (sec == 1)
		pc_steer_jnl_write(w->pc, jw);
	if (sec == 2) {
		f = focus_at(w, 3, "/Files/tmp/data.bin");
		if (pc_steer_experiment(w->pc, "CPUbound", &f,
					&existed, &e) < 0)
			tap_diag("%s", e.msg);
		f = focus_at(w, 0, F_WORK);
		metric_inst = pc_steer_enable(w->pc, "cpu_inclusive", &f, &e);
	}
	if (sec == 5)
		pc_steer_release(w->pc, metric_inst);
}

static void by_hand(void)
{
	char p1[4300], p2[4300], want[1024];
	struct world *live;
	struct replayed *r;
	json_t *acts;

	snprintf(p1, sizeof(p1), "%s/hand.jsonl", dir);
	snprintf(p2, sizeof(p2), "%s/hand-stripped.jsonl", dir);
	live = rw_record_with(&scenario, p1, NULL, user_hand);
	acts = actions(p1);
	tap_eq(json_array_size(acts), (size_t)3, "by hand: three action "
	       "records");
	record_is(json_array_get(acts, 0), "{\"t\":\"action\",\"action\":"
		  "\"experiment\",\"hyp\":\"CPUbound\","
		  "\"focus\":\"</Code,/Process,/SyncObject,/Files/tmp/data.bin>\","
		  "\"paths\":[\"/Code\",\"/Process\",\"/SyncObject\","
		  "\"/Files/tmp/data.bin\"],\"node\":"
		  "19,\"phase\":0}", "by hand: the experiment");
	snprintf(want, sizeof(want), "{\"t\":\"action\",\"action\":"
		 "\"metric_enable\",\"name\":\"cpu_inclusive\",\"inst\":%d,"
		 "\"focus\":\"<" F_WORK ",/Process,/SyncObject,/Files>\","
		 "\"paths\":[\"" F_WORK "\",\"/Process\",\"/SyncObject\","
		 "\"/Files\"]}", metric_inst);
	record_is(json_array_get(acts, 1), want, "by hand: the metric");
	snprintf(want, sizeof(want), "{\"t\":\"action\",\"action\":"
		 "\"metric_disable\",\"name\":\"cpu_inclusive\",\"inst\":%d,"
		 "\"focus\":\"<" F_WORK ",/Process,/SyncObject,/Files>\","
		 "\"paths\":[\"" F_WORK "\",\"/Process\",\"/SyncObject\","
		 "\"/Files\"]}", metric_inst);
	record_is(json_array_get(acts, 2), want, "by hand: its release");
	json_decref(acts);
	same_as_live(live, p1, "by hand");

	r = rw_replay(p1, NULL);
	tap_ok(pc_shg_lookup(r->pc->global, r->cfg, "CPUbound",
			     "</Code,/Process,/SyncObject,/Files/tmp/data.bin>")
	       >= 0, "by hand: the replay has the experiment");
	rw_replayed_free(r);
	strip_actions(p1, p2, 0);
	r = rw_replay(p2, NULL);
	tap_ok(rw_diff(live->pc, r->pc) != 0, "by hand: without the records "
	       "the replay diverges");
	rw_replayed_free(r);
	world_free(live);
}

/* ---- an experiment by hand, stopped at second 4, started again at 6 ---- */

static int stop_rc[4];

static void user_stop(struct world *w, struct jnl_writer *jw, int sec)
{
	struct hunch_err e = { 0 };
	struct pc_focus f = focus_at(w, 3, "/Files/tmp/data.bin");
	bool existed;
	int id = pc_shg_find(w->pc->global,
			     pc_config_hypo_find(w->cfg, "CPUbound"), &f);

	if (sec == 1)
		pc_steer_jnl_write(w->pc, jw);
	if (sec == 2 || sec == 6)
		stop_rc[sec == 6 ? 3 : 0] = pc_steer_experiment(w->pc,
			"CPUbound", &f, &existed, &e) >= 0 && !existed;
	if (sec == 4) {
		stop_rc[1] = pc_steer_stop(w->pc, 0, w->pc->global->root, &e);
		stop_rc[2] = pc_steer_stop(w->pc, 0, id, &e);
		if (stop_rc[2] == 0)   /* a second time: not running */
			stop_rc[2] = pc_steer_stop(w->pc, 0, id, &e) ==
				     -EALREADY ? 0 : -1;
	}
}

static void stop(void)
{
	char p1[4300];
	const char *exp = "\"hyp\":\"CPUbound\",\"focus\":\"</Code,/Process,"
		"/SyncObject,/Files/tmp/data.bin>\",\"paths\":[\"/Code\","
		"\"/Process\",\"/SyncObject\",\"/Files/tmp/data.bin\"],"
		"\"node\":19,\"phase\":0}";
	char want[1024];
	struct world *live;
	struct replayed *r;
	json_t *acts;
	int id;

	snprintf(p1, sizeof(p1), "%s/stop.jsonl", dir);
	live = rw_record_with(&scenario, p1, NULL, user_stop);
	tap_ok(stop_rc[0] == 1, "stop: CPUbound on data.bin started by hand");
	tap_eq(stop_rc[1], -EPERM, "stop: the search's own root is refused");
	tap_eq(stop_rc[2], 0, "stop: the experiment stops (then: not running)");
	tap_ok(stop_rc[3] == 1, "stop: x on it again starts it again");
	acts = actions(p1);
	tap_eq(json_array_size(acts), (size_t)3, "stop: three action records");
	snprintf(want, sizeof(want), "{\"t\":\"action\",\"action\":"
		 "\"experiment_stop\",%s", exp);
	record_is(json_array_get(acts, 1), want, "stop: the stop record");
	snprintf(want, sizeof(want), "{\"t\":\"action\",\"action\":"
		 "\"experiment\",%s", exp);
	record_is(json_array_get(acts, 2), want, "stop: started again");
	json_decref(acts);
	id = pc_shg_lookup(live->pc->global, live->cfg, "CPUbound",
			   "</Code,/Process,/SyncObject,/Files/tmp/data.bin>");
	tap_ok(id >= 0 && strstr(pc_shg_node(live->pc->global, id)->trace,
				 "stopped by hand") != NULL,
	       "stop: the node's trace says 'stopped by hand' (%s)",
	       id >= 0 ? pc_shg_node(live->pc->global, id)->trace : "");
	same_as_live(live, p1, "stop");
	r = rw_replay(p1, NULL);
	id = pc_shg_lookup(r->pc->global, r->cfg, "CPUbound",
			   "</Code,/Process,/SyncObject,/Files/tmp/data.bin>");
	tap_ok(id >= 0 && strcmp(pc_shg_node(r->pc->global, id)->trace,
		pc_shg_node(live->pc->global, pc_shg_lookup(live->pc->global,
		live->cfg, "CPUbound", "</Code,/Process,/SyncObject,"
		"/Files/tmp/data.bin>"))->trace) == 0,
	       "stop: the replayed node's trace is the live one's");
	rw_replayed_free(r);
	world_free(live);
}

/* ---- a hypotheses file reloaded at second 4 ---- */

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

static void user_reload(struct world *w, struct jnl_writer *jw, int sec)
{
	struct pc_diags ds = { 0 };
	struct hunch_err e = { 0 };
	FILE *f;
	int added;

	if (sec == 1)
		pc_steer_jnl_write(w->pc, jw);
	if (sec != 4)
		return;
	f = fopen(user, "w");
	fputs(good_json, f);
	fclose(f);
	if (pc_steer_reload(w->pc, user, &ds, &added, &e) != 0)
		tap_diag("%s", e.msg);
	pc_jx_diags_free(&ds);
}

static void reload(void)
{
	char p1[4300], def[4096];
	const char *src = getenv("HUNCH_SOURCE_ROOT");
	struct world *live;
	struct replayed *r;
	json_t *acts, *rec, *files, *want;
	size_t nhyp;

	snprintf(p1, sizeof(p1), "%s/reload.jsonl", dir);
	snprintf(user, sizeof(user), "%s/user.json", dir);
	snprintf(def, sizeof(def), "%s/hypotheses/default.json",
		 src ? src : ".");
	live = rw_record_with(&scenario, p1, NULL, user_reload);
	acts = actions(p1);
	rec = json_array_get(acts, 0);
	files = json_object_get(rec, "files");
	tap_eq(json_array_size(acts), (size_t)1, "reload: one action record");
	tap_str(json_string_value(json_object_get(rec, "action")),
		"hypotheses", "reload: action hypotheses");
	tap_eq(json_integer_value(json_object_get(rec, "added")), 1,
	       "reload: added 1");
	tap_eq(json_array_size(files), (size_t)2, "reload: both files");
	tap_str(json_string_value(json_object_get(json_array_get(files, 0),
						  "file")), def,
		"reload: the defaults first");
	tap_str(json_string_value(json_object_get(json_array_get(files, 1),
						  "file")), user,
		"reload: then the user's file");
	want = json_loads(good_json, 0, NULL);
	tap_ok(json_equal(json_object_get(json_array_get(files, 1),
					  "document"), want),
	       "reload: the user's whole document");
	json_decref(want);
	want = json_load_file(def, 0, NULL);
	tap_ok(json_equal(json_object_get(json_array_get(files, 0),
					  "document"), want),
	       "reload: and the defaults' whole document");
	json_decref(want);
	json_decref(acts);

	unlink(user);   /* the replay reads the journal, not the file */
	same_as_live(live, p1, "reload");
	r = rw_replay(p1, NULL);
	nhyp = r->cfg->nhyp;
	tap_ok(pc_config_hypo_find(r->cfg, "HotLoop") >= 0,
	       "reload: the replay "
	       "has HotLoop");
	tap_ok(pc_tunables_get(r->cfg, "PC_CPUThreshold") == 0.5,
	       "reload: and the file's threshold");
	/* A rebuilt search (the dashboard's backward seek) starts from the
	 * header's hypotheses again. */
	pc_consult_free(r->pc);
	pc_steer_forget(r->pc);
	src_replay_rewind(r->rp);
	r->pc = NULL;
	tap_eq(r->cfg->nhyp, nhyp - 1, "reload: forgetting the replayed "
	       "search gives the configuration back");
	tap_eq(pc_config_hypo_find(r->cfg, "HotLoop"), -1,
	       "reload: without HotLoop");
	tap_ok(pc_tunables_get(r->cfg, "PC_CPUThreshold") == 0.3,
	       "reload: and with the recorded threshold");
	rw_replayed_free(r);
	world_free(live);
}

/* A record this hunch cannot redo is said in the log, never invented. */
static void bad_record(void)
{
	struct world *w = world_new(NULL, NULL);
	json_t *rec = json_pack("{s:s,s:s,s:[ssss]}", "action", "experiment",
				"hyp", "CPUbound", "paths", "/Code/nowhere",
				"/Process", "/SyncObject", "/Files");

	world_run(w, 1.0);
	tap_eq(pc_steer_jnl_replay(w->pc, rec), -ENOENT,
	       "unknown focus: refused");
	tap_str(w->pc->log[w->pc->nlog - 1], "+1.0) Recorded action "
		"experiment not replayed: /Code/nowhere is not a known "
		"resource.", "and logged");
	json_decref(rec);
	world_free(w);
}

int main(void)
{
	if (mkdtemp(dir) == NULL)
		return 1;
	tunable();
	by_hand();
	stop();
	reload();
	bad_record();
	if (fork() == 0)
		execlp("rm", "rm", "-rf", dir, (char *)NULL);
	return tap_done();
}

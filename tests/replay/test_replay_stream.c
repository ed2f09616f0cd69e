/*
 * test_replay_stream.c - the replay source streams: it plays the
 * journal a tick at a time from an index, so it must be the same search
 * however it is driven.  A search journaled with target output (as the
 * dashboard's test journal, rw_journal.c) is replayed, rewound and
 * replayed again on the same source (the dashboard's backward seek): the
 * same nodes, traces, log and report; rewound in the middle too.  The
 * recorded output comes back line for line, each at the tick it was
 * recorded in.  The reader's rewind gives the same records, skipped
 * lines and end message again; a journal of garbage keeps 1,000 messages.
 */
#include <math.h>

#include "jnl_read.h"
#include "replay_world.h"

static char path[] = "/tmp/hunch-replay-stream-XXXXXX";

static void sc_sync(struct src_sim *sim)
{
	src_sim_script(sim, "sync_wait", "*", 0, 0.6, 0.05);
	src_sim_script(sim, "cpu_inclusive", "*", 0, 0.3, 0.02);
	src_sim_script(sim, "cpu_inclusive", TOP, 0, 0.9, 0.02);
	src_sim_script(sim, "cpu_inclusive", AT(F_MAIN), 0, 0.9, 0.02);
}

static const struct scenario scenario = { "sync and cpu", sc_sync, 8.0 };

static void output(struct world *w, struct jnl_writer *jw, int second)
{
	char line[64];
	int n = snprintf(line, sizeof(line), "demo: second %d", second);

	(void)w;
	jnl_write_output(jw, jnl_write_ts_now(jw), JNL_STDOUT, line, (size_t)n,
			 true);
	if (second == 3)
		jnl_write_output(jw, jnl_write_ts_now(jw), JNL_STDERR,
				 "demo: warning at 3 s", 20, true);
}

/* What the output callback saw: "N:stream:text@now" per line. */
struct seen {
	struct src_replay *rp;
	char lines[16][96];
	int n;
};

static void on_output(void *arg, double ts, int stream, const char *bytes,
		      size_t len)
{
	struct seen *s = arg;
	long t = src_replay_tick(s->rp);

	(void)ts;
	if (s->n < 16)
		snprintf(s->lines[s->n++], 96, "%d:%.*s@%.1f", stream,
			 (int)len, bytes, src_replay_tick_now(s->rp, (size_t)t));
}

/* A consultant on `rp` from its first tick, played up to tick `upto`
 * (or the end). */
static struct pc_consult *play(struct src_replay *rp, struct pc_config *cfg,
			       struct pc_restree *res, long upto)
{
	struct pc_consult *pc = pc_consult_new(cfg, src_replay_source(rp), res);

	pc_consult_start(pc);
	src_replay_actions(rp, pc);
	while (!src_replay_done(rp) && !pc_consult_ended(pc) &&
	       (upto < 0 || src_replay_tick(rp) < upto)) {
		pc_consult_tick(pc);
		src_replay_actions(rp, pc);
	}
	return pc;
}

static void same_search_again(void)
{
	struct pc_report_meta m = { .target = "demo", .pid = 100,
				    .mode = "replay" };
	struct replayed *first = rw_replay(path, NULL);
	struct pc_restree *res = pc_res_tree_new(), *res2 = pc_res_tree_new();
	struct pc_consult *again, *half;
	char *a, *b;

	tap_ok(src_replay_rewind(first->rp) == 0, "rewind: 0");
	tap_eq(src_replay_tick(first->rp), -1L, "rewind: no tick played");
	again = play(first->rp, first->cfg, res, -1);
	tap_eq(rw_diff(first->pc, again), 0,
	       "replayed again after a rewind: the same nodes, traces and log");
	a = rw_text(first->pc, &m);
	b = rw_text(again, &m);
	tap_ok(strcmp(a, b) == 0, "and the same text report (%zu bytes)",
	       strlen(a));
	free(b);
	pc_consult_free(again);
	/* half way, then rewound: as if that half never happened */
	src_replay_rewind(first->rp);
	half = play(first->rp, first->cfg, res2, 20);
	tap_eq(src_replay_tick(first->rp), 20L, "played to tick 20");
	pc_consult_free(half);
	pc_res_tree_free(res2);
	src_replay_rewind(first->rp);
	res2 = pc_res_tree_new();
	again = play(first->rp, first->cfg, res2, -1);
	tap_eq(rw_diff(first->pc, again), 0,
	       "rewound from tick 20 and played to the end: the same search");
	b = rw_text(again, &m);
	tap_ok(strcmp(a, b) == 0, "and the same text report");
	free(a);
	free(b);
	pc_consult_free(again);
	pc_res_tree_free(res);
	pc_res_tree_free(res2);
	rw_replayed_free(first);
}

static void output_at_its_tick(void)
{
	struct replayed *r = rw_replay(path, NULL);
	struct seen s = { .rp = r->rp };
	struct pc_restree *res = pc_res_tree_new();
	struct pc_consult *pc;
	static const char *const want[] = {
		"0:demo: second 1@1.0", "0:demo: second 2@2.0",
		"0:demo: second 3@3.0", "1:demo: warning at 3 s@3.0",
		"0:demo: second 4@4.0", "0:demo: second 5@5.0",
		"0:demo: second 6@6.0", "0:demo: second 7@7.0",
	};

	src_replay_rewind(r->rp);
	src_replay_set_output(r->rp, on_output, &s);
	pc = play(r->rp, r->cfg, res, -1);
	tap_eq(s.n, 8, "output: 8 recorded lines come back");
	for (int i = 0; i < 8; i++)
		tap_ok(i < s.n && strcmp(s.lines[i], want[i]) == 0,
		       "output %d: '%s' (got '%s')", i, want[i],
		       i < s.n ? s.lines[i] : "");
	/* rewound, the lines come again, and only up to where it plays */
	s.n = 0;
	src_replay_rewind(r->rp);
	pc_consult_free(pc);
	pc_res_tree_free(res);
	res = pc_res_tree_new();
	pc = play(r->rp, r->cfg, res, 16);   /* tick 16: now 3.2 */
	tap_eq(s.n, 4, "rewound and played to 3.2 s: the 4 lines up to 3 s");
	pc_consult_free(pc);
	pc_res_tree_free(res);
	rw_replayed_free(r);
}

/* Every record's (line, kind) and the end message, as one string. */
static char *read_all(struct jnl_reader *rd)
{
	struct jnl_record jr;
	struct hunch_err e = { 0 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	const char *end;
	int rc;

	while ((rc = jnl_read_next(rd, &jr, &e)) != JNL_NEXT_END)
		if (rc == JNL_NEXT_BAD)
			fprintf(f, "bad %s\n", e.msg);
		else
			fprintf(f, "%llu %s\n", (unsigned long long)jr.line,
				jr.kind_name);
	jnl_read_end(rd, &end);
	fprintf(f, "end %s\n", end ? end : "complete");
	fclose(f);
	return buf;
}

static void reader_rewind(void)
{
	char *text = NULL, *a, *b;
	size_t len = 0;
	FILE *f = fopen(path, "r");
	FILE *m = open_memstream(&text, &len);
	struct jnl_reader *rd;
	struct hunch_err e = { 0 };
	char line[1 << 16];
	int n = 0;

	/* the journal with a bad line 5 and its last line cut in half */
	while (fgets(line, sizeof(line), f))
		fputs(++n == 5 ? "not json\n" : line, m);
	fclose(f);
	fclose(m);
	len -= 20;
	tap_ok(jnl_read_open_mem(&rd, text, len, "cut.jsonl", &e) == 0,
	       "reader: opens the damaged journal");
	a = read_all(rd);
	tap_ok(jnl_read_rewind(rd) == 0, "reader: rewind: 0");
	b = read_all(rd);
	tap_ok(strcmp(a, b) == 0 && strstr(a, "bad cut.jsonl: line 5") &&
	       strstr(a, "is incomplete"),
	       "reader: after a rewind the same records, bad line 5 and cut "
	       "end again (%zu bytes of listing)", strlen(a));
	free(a);
	free(b);
	jnl_read_close(rd);
	free(text);
}

/* A file of garbage after a good header keeps 1,000 messages, counts
 * the rest, and still replays what is good. */
static void many_bad_lines(void)
{
	char *text = NULL, line[1 << 16];
	size_t len = 0;
	FILE *f = fopen(path, "r"), *m = open_memstream(&text, &len);
	struct src_replay *rp;
	struct hunch_err e = { 0 };
	int n = 0;

	while (fgets(line, sizeof(line), f)) {
		fputs(line, m);
		if (++n == 1)   /* after the header */
			for (int i = 0; i < 1500; i++)
				fprintf(m, "garbage %d\n", i);
	}
	fclose(f);
	fclose(m);
	tap_ok(src_replay_open_mem(&rp, text, len, "bad.jsonl", &e) == 0,
	       "1,500 bad lines: the journal opens");
	tap_eq(src_replay_nbad(rp), (size_t)1000, "1,000 messages kept");
	tap_eq(src_replay_nbad_total(rp), (size_t)1500, "1,500 counted");
	tap_ok(strstr(src_replay_bad(rp, 999), "bad.jsonl: line 1001 ") != NULL,
	       "the last kept names line 1001 (%.60s)", src_replay_bad(rp, 999));
	tap_eq(src_replay_ticks(rp), (size_t)42, "and all 42 ticks are there");
	src_replay_free(rp);
	free(text);
}

/* What the dashboard does on p and P (ui_search.c): the action, then
 * its record (as ui_consult_journal_action writes it). */
static void act(struct jnl_writer *jw, const char *action, const char *name,
		int phase, double value)
{
	json_t *o = json_pack("{s:s}", "action", action);

	if (value >= 0)
		json_object_set_new(o, "value", json_real(value));
	if (name)
		json_object_set_new(o, "name", json_string(name));
	if (phase >= 0)
		json_object_set_new(o, "phase", json_integer(phase));
	jnl_write_json(jw, "action", jnl_write_ts_now(jw), o);
	json_decref(o);
}

static void user(struct world *w, struct jnl_writer *jw, int second)
{
	if (second == 2 && pc_consult_pause(w->pc, 0, true) == 0)
		act(jw, "pause", NULL, 0, -1);
	if (second == 3 && pc_consult_pause(w->pc, 0, false) == 0)
		act(jw, "resume", NULL, 0, -1);
	if (second == 4) {
		int ph = pc_consult_phase_start(w->pc, NULL);

		act(jw, "phase_start", w->pc->current->label, ph, -1);
	}
	if (second == 5 && pc_consult_set_tunable(w->pc, "minObservationTime",
						  2.0, NULL) == 0)
		act(jw, "tunable", "minObservationTime", -1, 2.0);
}

/* The user's pause, resume, phase and tunable, journaled live, are
 * applied again at their ticks: the same search, phases included. */
static void user_actions(void)
{
	char apath[] = "/tmp/hunch-replay-actions-XXXXXX";
	int fd = mkstemp(apath);
	struct world *live;
	struct replayed *r;
	struct pc_report_meta m = { .target = "demo", .pid = 100,
				    .mode = "run" };
	char *a, *b;
	double before;

	close(fd);
	live = rw_record_with(&scenario, apath, NULL, user);
	tap_eq(live->pc->nphases, 1, "actions: the live search has a phase");
	r = rw_replay(apath, NULL);
	before = pc_tunables_get(r->cfg, "minObservationTime");
	tap_eq(r->pc->nphases, 1, "actions: so has the replayed one");
	tap_eq(rw_diff(live->pc, r->pc), 0,
	       "actions: pause, resume, phase and tunable replayed at their "
	       "ticks: the same nodes, traces and log");
	a = rw_text(live->pc, &m);
	b = rw_text(r->pc, &m);
	tap_ok(strcmp(a, b) == 0, "actions: the same text report, phases "
	       "included (%zu bytes)", strlen(a));
	tap_ok(strstr(a, "Phase 1") != NULL || strstr(a, "phase 1") != NULL,
	       "actions: the report has the phase");
	tap_eq(before, 2.0, "actions: the tunable as the user set it");
	src_replay_rewind(r->rp);
	tap_ok(pc_tunables_get(r->cfg, "minObservationTime") != 2.0,
	       "actions: a rewind gives the tunable its value back (%g)",
	       pc_tunables_get(r->cfg, "minObservationTime"));
	free(a);
	free(b);
	rw_replayed_free(r);
	world_free(live);
	unlink(apath);
}

int main(void)
{
	int fd = mkstemp(path);
	struct world *w;

	close(fd);
	w = rw_record_with(&scenario, path, NULL, output);
	world_free(w);
	same_search_again();
	output_at_its_tick();
	reader_rewind();
	many_bad_lines();
	user_actions();
	unlink(path);
	return tap_done();
}

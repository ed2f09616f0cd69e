/*
 * test_journal_source.c - the journaling source around a real search.
 *
 * The same scripted program (tests/consultant/sim_world.h) is searched
 * twice: once on the sim source, once on the sim source wrapped by
 * jnl_source_wrap.  The wrapper must be invisible (same node traces,
 * same log), and the journal must hold every call and answer the
 * consultant exchanged with its source: one tick per now(), every
 * prediction, enable and reply, the samples tick by tick, observed cost,
 * the call graph, hints, the sample period, resources and the end.
 */
#include "jnl_source.h"
#include "jtest.h"
#include "sim_world.h"

#define AT(f) "<" f ",/Process,/SyncObject,/Files>"

static void script(struct src_sim *sim)
{
	src_sim_script(sim, "cpu_inclusive", "*", 0, 0.9, 0.05);
	src_sim_script(sim, "cpu_inclusive", AT(F_WRITER), 0, 0.05, 0);
	src_sim_hint(sim, F_COMPUTE, 0.8);
	src_sim_hint(sim, F_WRITER, 0.05);
	src_sim_enable_delay(sim, 1);
}

/* world_new with the source wrapped. */
static struct world *world_wrapped(struct jnl_writer *jw)
{
	struct world *w = world_new(NULL, NULL);

	pc_consult_free(w->pc);
	w->pc = pc_consult_new(w->cfg, jnl_source_wrap(src_sim_source(w->sim),
						       jw, 100), w->res);
	return w;
}

static void run(struct world *w, double t)
{
	struct pc_source *s = src_sim_source(w->sim);

	if (!w->pc->started)
		pc_consult_start(w->pc);
	while (s->ops->now(s) + 1e-9 < t && !pc_consult_ended(w->pc)) {
		src_sim_advance(w->sim);
		pc_consult_tick(w->pc);
	}
}

static void run_to_end(struct world *w)
{
	script(w->sim);
	run(w, 6.0);
	src_sim_end(w->sim, PC_TARGET_EXITED, 0);
	src_sim_advance(w->sim);
	pc_consult_tick(w->pc);
}

static int same_search(struct world *a, struct world *b)
{
	struct pc_search *sa = pc_consult_search(a->pc, 0);
	struct pc_search *sb = pc_consult_search(b->pc, 0);
	int diff = sa->nn != sb->nn;

	for (size_t i = 0; !diff && i < sa->nn; i++)
		if (strcmp(sa->nodes[i]->name, sb->nodes[i]->name) != 0 ||
		    strcmp(sa->nodes[i]->trace, sb->nodes[i]->trace) != 0) {
			tap_diag("%s: %s / %s", sa->nodes[i]->name,
				 sa->nodes[i]->trace, sb->nodes[i]->trace);
			diff++;
		}
	diff += a->pc->nlog != b->pc->nlog;
	for (size_t i = 0; !diff && i < a->pc->nlog; i++)
		diff += strcmp(a->pc->log[i], b->pc->log[i]) != 0;
	return diff;
}

struct counts {
	int kind[JNL_REC_NKINDS];
	int samples;        /* values in sample records */
	int bad_t1;         /* sample intervals not ending at the tick's now */
	int replies_failed;
	int exits;
	int unanswered_old;  /* enables without a reply, made > 2 ticks before the end */
};

#define MAX_REQ 4096

static void count(const char *path, struct counts *c)
{
	struct jnl_reader *r;
	struct jnl_record rec;
	struct hunch_err err = { 0 };
	struct jnl_read_stats st;
	double now = -1;
	int rc, ticks = 0;
	static int req_tick[MAX_REQ];
	static bool replied[MAX_REQ];

	memset(c, 0, sizeof(*c));
	if (jnl_read_open(&r, path, &err) != 0) {
		tap_diag("%s", err.msg);
		return;
	}
	while ((rc = jnl_read_next(r, &rec, &err)) != JNL_NEXT_END) {
		if (rc != JNL_NEXT_RECORD) {
			tap_diag("%s", err.msg);
			continue;
		}
		c->kind[rec.kind]++;
		if (rec.kind == JNL_REC_TICK) {
			now = json_number_value(json_object_get(rec.json, "now"));
			ticks++;
		}
		long long req = json_integer_value(json_object_get(rec.json, "req"));
		if (rec.kind == JNL_REC_ENABLE && req >= 0 && req < MAX_REQ)
			req_tick[req] = ticks;
		if (rec.kind == JNL_REC_REPLY && req >= 0 && req < MAX_REQ)
			replied[req] = true;
		if (rec.kind == JNL_REC_SAMPLE) {
			struct jnl_sample s;

			jnl_record_sample_decode(rec.json, &s, NULL);
			c->samples += (int)s.n;
			c->bad_t1 += s.t1 > now + 1e-9;
			jnl_record_sample_free(&s);
		}
		if (rec.kind == JNL_REC_REPLY)
			c->replies_failed += json_integer_value(
				json_object_get(rec.json, "status")) != 0;
		if (rec.kind == JNL_REC_TARGET)
			c->exits += strcmp(json_string_value(json_object_get(
				rec.json, "event")), "exit") == 0;
	}
	for (int q = 0; q < MAX_REQ; q++)
		c->unanswered_old += req_tick[q] > 0 && req_tick[q] < ticks - 2 &&
				     !replied[q];
	jnl_read_get_stats(r, &st);
	c->kind[JNL_REC_UNKNOWN] += (int)st.bad_lines;   /* must stay 0 */
	jnl_read_close(r);
}

int main(void)
{
	json_t *hyp, *tun;
	struct jnl_header h = jt_header(&hyp, &tun);
	struct world *plain = world_new(NULL, NULL), *wrapped;
	struct jnl_writer *jw;
	struct pc_source *src;
	struct counts c;
	char path[300];

	jt_path(path, sizeof(path), "search.jsonl");
	jnl_write_open(&jw, path, &h, NULL, NULL);
	wrapped = world_wrapped(jw);
	run_to_end(plain);
	run_to_end(wrapped);
	tap_ok(pc_consult_ended(wrapped->pc) && same_search(plain, wrapped) == 0,
	       "the wrapped search is the same search: %zu nodes, every trace and log line equal",
	       pc_consult_search(plain->pc, 0)->nn);
	jnl_write_end(jw, jnl_write_ts_now(jw), "target_exited", NULL);
	tap_eq(jnl_write_close(jw, NULL), 0, "journal written without error");
	count(path, &c);
	tap_eq(c.kind[JNL_REC_UNKNOWN], 0, "every record valid, no unknown kinds");
	tap_ok(c.kind[JNL_REC_TICK] >= 30, "one tick record per now(): %d",
	       c.kind[JNL_REC_TICK]);
	tap_eq(c.kind[JNL_REC_RESOURCE], 13,
	       "13 resources as the sim gives them (5 functions, a process and a thread per thread, 2 sync objects, 2 files)");
	tap_eq(c.kind[JNL_REC_ENABLE], src_sim_enables(wrapped->sim),
	       "an enable record per enable the source saw (%d)",
	       src_sim_enables(wrapped->sim));
	tap_ok(c.unanswered_old == 0 && c.kind[JNL_REC_REPLY] > 0,
	       "a reply for every enable made more than 2 ticks before the end (%d replies, %d enables)",
	       c.kind[JNL_REC_REPLY], c.kind[JNL_REC_ENABLE]);
	tap_ok(c.kind[JNL_REC_PREDICT] > 0 && c.kind[JNL_REC_DISABLE] > 0 &&
	       c.kind[JNL_REC_COST] > 0 && c.kind[JNL_REC_PERIOD] > 0 &&
	       c.kind[JNL_REC_CALLEES] > 0 && c.kind[JNL_REC_HINT] > 0,
	       "predictions %d, disables %d, costs %d, periods %d, callees %d, hints %d",
	       c.kind[JNL_REC_PREDICT], c.kind[JNL_REC_DISABLE],
	       c.kind[JNL_REC_COST], c.kind[JNL_REC_PERIOD],
	       c.kind[JNL_REC_CALLEES], c.kind[JNL_REC_HINT]);
	tap_ok(c.samples > 100 && c.bad_t1 == 0,
	       "%d samples in %d records, each interval ending at its tick's now",
	       c.samples, c.kind[JNL_REC_SAMPLE]);
	tap_eq(c.exits, 1, "the target's exit, once");
	src = jnl_source_unwrap(wrapped->pc->src);
	tap_ok(src == src_sim_source(wrapped->sim), "unwrap gives the inner source back");
	wrapped->pc->src = src;
	world_free(plain);
	world_free(wrapped);
	json_decref(hyp);
	json_decref(tun);
	jt_rm_tmpdir();
	return tap_done();
}

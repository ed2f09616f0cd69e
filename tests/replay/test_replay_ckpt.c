/*
 * test_replay_ckpt.c - a backward seek through a checkpoint reaches the
 * state that playing forward reaches (src_replay_ckpt.h).
 *
 * A sim search journaled with output and a user's pause, resume, phase
 * and tunable change is played once with a checkpoint at every tick,
 * dumping the whole state after each tick: every field of the
 * consultant, of every node, every data manager instance with its
 * histograms' buckets (bit for bit), the resource tree (every resource's
 * flags, address, tag and children), the tunables and the source's
 * tick.  Then, going back to every tick from the last to the first, the
 * restored state is the dump byte for byte; restoring an earlier
 * checkpoint and playing on gives it too; and after going back the
 * search played to the end has the same report.  A small budget keeps
 * few checkpoints, spaced wider, and they are exact too.
 */
#include <math.h>

#include "replay_world.h"
#include "pc_steer.h"
#include "src_replay_ckpt.h"

static char path[] = "/tmp/hunch-replay-ckpt-XXXXXX";

static void sc_sync(struct src_sim *sim)
{
	src_sim_script(sim, "sync_wait", "*", 0, 0.6, 0.05);
	src_sim_script(sim, "cpu_inclusive", "*", 0, 0.3, 0.02);
	src_sim_script(sim, "cpu_inclusive", TOP, 0, 0.9, 0.02);
	src_sim_script(sim, "cpu_inclusive", AT(F_MAIN), 0, 0.9, 0.02);
}

static const struct scenario scenario = { "sync and cpu", sc_sync, 8.0 };

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

/* Output every second, and a user who pauses, resumes, starts a phase
 * and changes a tunable: all of it must come back after a seek. */
static void user(struct world *w, struct jnl_writer *jw, int second)
{
	char line[64];
	int n = snprintf(line, sizeof(line), "demo: second %d", second);

	jnl_write_output(jw, jnl_write_ts_now(jw), JNL_STDOUT, line, (size_t)n,
			 true);
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

/* A user who reloads the hypotheses (adding one) at second 5 and
 * enables a metric by hand at second 6: state a checkpoint cannot copy
 * (pc_steer_holds), so seeks back past them go to an earlier one. */
static char extra[] = "/tmp/hunch-replay-ckpt-hyp-XXXXXX";

static void user_steers(struct world *w, struct jnl_writer *jw, int second)
{
	struct hunch_err e = { 0 };
	struct pc_diags ds = { 0 };
	struct pc_focus f;
	int added;

	if (second == 4)
		pc_steer_jnl_write(w->pc, jw);
	if (second == 5 &&
	    pc_steer_reload(w->pc, extra, &ds, &added, &e) != 0)
		tap_diag("reload: %s", e.msg);
	if (second == 6) {
		pc_focus_top(w->res, &f);
		if (pc_steer_enable(w->pc, "io_ops", &f, &e) < 0)
			tap_diag("enable: %s", e.msg);
	}
	pc_jx_diags_free(&ds);
}

static void write_extra(void)
{
	int fd = mkstemp(extra);
	FILE *f = fdopen(fd, "w");

	fputs("{ \"version\": 1, \"hypotheses\": { \"Watched\": {\n"
	      "  \"parent\": \"topLevelHypothesis\",\n"
	      "  \"description\": \"test: true while cpu > 0.1\",\n"
	      "  \"metric\": { \"op\": \"/\", \"inputs\": [ "
	      "\"cpu_inclusive\", { \"metric\": \"active_processes\", "
	      "\"focus\": \"top\" } ] },\n"
	      "  \"threshold\": \"PC_CPUThreshold\", \"compare\": \"gt\",\n"
	      "  \"expand\": \"whyOnly\" } } }\n", f);
	fclose(f);
}

/* --- the dump --- */

static void dump_hist(FILE *f, const char *what, const struct pc_hist *h)
{
	fprintf(f, " %s %a %a %d:", what, h->start, h->width, h->folds);
	for (int i = 0; i < PC_HIST_BUCKETS; i++)
		if (!isnan(h->b[i]))
			fprintf(f, " %d=%a", i, h->b[i]);
	fputc('\n', f);
}

static void dump_dm(FILE *f, const struct pc_datamgr *dm)
{
	fprintf(f, "dm %zu %llu %a %a %a\n", dm->n,
		(unsigned long long)dm->next_req, dm->global_width,
		dm->current_start, dm->current_width);
	for (size_t i = 0; i < dm->n; i++) {
		const struct pc_minst *m = dm->mi[i];

		fprintf(f, "mi %d %s", m->id, m->metric);
		for (int h = 0; h < PC_NHIER; h++)
			fprintf(f, ",%u", m->focus.r[h]);
		fprintf(f, " %d %d %llu %llu %s %a %a %a %a %a\n", m->refs,
			m->state, (unsigned long long)m->req,
			(unsigned long long)m->handle,
			m->fail_reason ? m->fail_reason : "-",
			m->predicted_cost, m->acc, m->acc_t, m->last,
			m->last_t1);
		dump_hist(f, "global", &m->global);
		dump_hist(f, "current", &m->current);
	}
}

static void dump_node(FILE *f, const struct pc_node *n)
{
	fprintf(f, "node %d %d %s %d %d%d%d%d%d%d%d%d%d %d %d %d %d %llu %d "
		"%d %a %a", n->id, n->hyp, n->name, n->orig_parent,
		n->is_virtual, n->persistent, n->expanded, n->queued,
		n->pending, n->active, n->skipped, n->failed, n->unconfirmed,
		n->truth, n->ntrue_parents, n->ntrue_children, n->priority,
		(unsigned long long)n->seq, n->narrow, n->tried_hier,
		n->pred_cost, n->charged_cost);
	for (int i = 0; i < n->nin; i++)
		fprintf(f, " in%d", n->inst[i]);
	fprintf(f, " %a %a %a %a %a %d %a %a %a %a %a %a %a %s %d %a %a %a",
		n->t_created, n->t_start, n->t_concluded, n->t_true_since,
		n->hys, n->guess, n->accum, n->wn, n->wmean, n->wm2,
		n->value, n->threshold, n->held_s, n->how, n->times_shed,
		n->t_was_from, n->t_was_to, n->was_value);
	for (size_t i = 0; i < n->nparents; i++)
		fprintf(f, " p%d", n->parents[i]);
	for (size_t i = 0; i < n->nkids; i++)
		fprintf(f, " k%d%c%c", n->kids[i].child,
			n->kids[i].why ? 'w' : 'h', n->kids[i].shadow ? 's' : '-');
	fprintf(f, " [%s]\n", n->trace);
}

static void dump_search(FILE *f, const char *what, const struct pc_search *s)
{
	if (s == NULL) {
		fprintf(f, "%s none\n", what);
		return;
	}
	fprintf(f, "%s %d %s %d %s %a %a %d %zu\n", what, s->id, s->label,
		s->state, s->end_reason, s->t_start, s->t_end, s->root, s->nn);
	for (size_t i = 0; i < s->nn; i++)
		dump_node(f, s->nodes[i]);
}

static void dump_tree(FILE *f, const struct pc_restree *t)
{
	for (size_t id = 1; id <= pc_res_tree_count(t); id++) {
		const struct pc_res *r = pc_res_get(t, (pc_res_id)id);

		fprintf(f, "res %s %d %llx %llu", r->path, r->retired,
			(unsigned long long)r->addr,
			(unsigned long long)r->tag);
		for (size_t i = 0; i < r->nchildren; i++)
			fprintf(f, " %u", r->children[i]);
		fputc('\n', f);
	}
	fprintf(f, "found %u\n", pc_res_find(t, "/Code"));
}

static char *dump(const struct pc_consult *pc, struct src_replay *rp)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	fprintf(f, "tick %ld unrecorded %d\n", src_replay_tick(rp),
		src_replay_unrecorded(rp));
	fprintf(f, "pc %d %llu %d %d %d %d %a %a %a %a %d %a %a %d %a %a %a "
		"%d %d %d %s %d %d %d %zu\n", pc->nphases,
		(unsigned long long)pc->seq, pc->fair, pc->throttle,
		pc->npending, pc->nactive, pc->pending_cost, pc->observed,
		pc->peak_observed, pc->sum_observed, pc->ncost_samples,
		pc->cost_factor, pc->shed_t, pc->tight, pc->eval_interval,
		pc->next_eval, pc->now, pc->started, pc->target_ended,
		pc->idle_told, pc->target_end, pc->runs, pc->skipped,
		pc->shed, pc->nended);
	for (size_t i = 0; i < pc->cfg->ntun; i++)
		fprintf(f, "tun %s %a\n", pc->cfg->tun[i].name,
			pc->cfg->tun[i].value);
	for (size_t i = 0; i < pc->nhyp_factor; i++)   /* learnt costs */
		fprintf(f, "hyp_factor %zu %a\n", i, pc->hyp_factor[i]);
	fprintf(f, "probe %d %d %a %a\n", pc->probe ? pc->probe->id : -1,
		pc->probe_sign, pc->probe_before, pc->probe_t);
	for (size_t i = 0; i < pc->nlog; i++)
		fprintf(f, "log %s\n", pc->log[i]);
	dump_dm(f, &pc->dm);
	dump_search(f, "global", pc->global);
	dump_search(f, "current", pc->current == pc->global ? NULL :
		    pc->current);
	for (size_t i = 0; i < pc->nended; i++)
		dump_search(f, "ended", pc->ended[i]);
	dump_tree(f, pc->res);
	fclose(f);
	return buf;
}

/* --- playing --- */

#define MAXT 4096

static char *at[MAXT];     /* the dump after tick i, played forward */
static long nat;

static void tick(struct pc_consult *pc, struct src_replay *rp,
		 struct src_replay_ckpt *ck)
{
	pc_consult_tick(pc);
	src_replay_actions(rp, pc);
	if (ck)
		src_replay_ckpt_tick(ck, pc, 1, 0);
}

static bool more(const struct pc_consult *pc, struct src_replay *rp)
{
	return !src_replay_done(rp) && !pc_consult_ended(pc);
}

/* Back from the last tick to every earlier one: restored = forward. */
static int back_to_every_tick(struct pc_consult **pcp, struct src_replay *rp,
			      struct src_replay_ckpt *ck, int *through)
{
	int bad = 0;

	for (long t = nat - 1; t >= 0; t--) {
		const struct rp_ckpt *k = src_replay_ckpt_find(ck, t);
		struct pc_consult *pc;
		char *d;

		if (k == NULL) {
			bad++;
			continue;
		}
		pc = src_replay_ckpt_restore(ck, k);
		pc_consult_free(*pcp);
		pc_steer_forget(*pcp);   /* as the dashboard does */
		*pcp = pc;
		(*through) += src_replay_ckpt_taken_at(k) < t;
		while (src_replay_tick(rp) < t && more(pc, rp))
			tick(pc, rp, ck);
		d = dump(pc, rp);
		if (strcmp(d, at[t]) != 0) {
			if (bad++ == 0)
				tap_diag("tick %ld differs (from the "
					 "checkpoint at %ld)",
					 t, src_replay_ckpt_taken_at(k));
		}
		free(d);
	}
	return bad;
}

static void exact(size_t budget, double spacing, const char *what)
{
	struct replayed *r = rw_replay(path, NULL);
	struct pc_report_meta m = { .target = "demo", .pid = 100,
				    .mode = "replay" };
	char *report = rw_text(r->pc, &m), *again;
	struct src_replay_ckpt *ck = src_replay_ckpt_new(r->rp, budget,
							 spacing);
	struct pc_restree *res = pc_res_tree_new();
	struct pc_consult *pc;
	int through = 0, bad;

	src_replay_rewind(r->rp);
	pc_steer_forget(r->pc);   /* the header's hypotheses again */
	pc = pc_consult_new(r->cfg, src_replay_source(r->rp), res);
	pc_consult_start(pc);
	src_replay_actions(r->rp, pc);
	src_replay_ckpt_tick(ck, pc, 1, 0);
	nat = 0;
	at[nat++] = dump(pc, r->rp);
	while (more(pc, r->rp) && nat < MAXT) {
		tick(pc, r->rp, ck);
		at[nat++] = dump(pc, r->rp);
	}
	tap_ok(nat > 30, "%s: %ld ticks played, %zu checkpoints, %zu bytes",
	       what, nat, src_replay_ckpt_count(ck), src_replay_ckpt_bytes(ck));
	bad = back_to_every_tick(&pc, r->rp, ck, &through);
	tap_eq(bad, 0, "%s: back to each of the %ld ticks, from the last to "
	       "the first: the state is the one played forward, byte for "
	       "byte (%d through an earlier checkpoint)", what, nat, through);
	while (more(pc, r->rp))
		tick(pc, r->rp, ck);
	again = rw_text(pc, &m);
	tap_ok(strcmp(report, again) == 0, "%s: then played to the end: the "
	       "same report (%zu bytes)", what, strlen(report));
	tap_eq(rw_diff(r->pc, pc), 0, "%s: the same nodes, traces and log",
	       what);
	if (budget < RP_CKPT_BUDGET)
		tap_ok(src_replay_ckpt_bytes(ck) <= budget && src_replay_ckpt_count(ck) < 10,
		       "%s: within the budget: %zu bytes in %zu checkpoints",
		       what, src_replay_ckpt_bytes(ck), src_replay_ckpt_count(ck));
	for (long i = 0; i < nat; i++)
		free(at[i]);
	free(again);
	free(report);
	pc_consult_free(pc);
	src_replay_ckpt_free(ck);
	pc_res_tree_free(res);
	rw_replayed_free(r);
}

int main(void)
{
	int fd = mkstemp(path);
	struct world *w;

	close(fd);
	w = rw_record_with(&scenario, path, NULL, user);
	world_free(w);
	exact(RP_CKPT_BUDGET, 0, "a checkpoint every tick");
	exact(RP_CKPT_BUDGET, 4, "one every 4 ticks");
	exact(2000000, 0, "a 2 MB budget");
	write_extra();
	w = rw_record_with(&scenario, path, NULL, user_steers);
	world_free(w);
	exact(RP_CKPT_BUDGET, 4,
	      "a reload and a metric by hand recorded, one every 4 ticks");
	unlink(extra);
	unlink(path);
	return tap_done();
}

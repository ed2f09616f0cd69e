/*
 * test_search_room.c - the search under a cost limit too small for what
 * is true (consultant/README.md, "Where hunch differs"): a true node
 * hands its room down to its refinements when the queue is blocked for
 * good, and launches then go one at a time; an experiment with no data
 * concludes false; true nodes shed for cost are reported apart
 * (unconfirmed), never as bottlenecks; a narrower why's refinements
 * take the room of a wider why's unconcluded experiments
 * (narrowerWhyFirst), each stopped once at most.
 */
#include <math.h>

#include "pc_report.h"
#include "sim_world.h"

#define AT(f) "<" f ",/Process,/SyncObject,/Files>"

static void test_make_room(void)
{
	struct world *w = world_write_heavy(NULL);
	const struct pc_node *b[64];
	struct pc_search *s;
	size_t nb;
	int io_top = 0;

	world_run(w, 8.0);
	LOGGED(w, "+1.2) Cost limit: stopped ExcessiveIOBlockingTime for "
	       TOP " (true since 1.2 s) to make room for its refinements");
	TRACE_IS(w, 0, "ExcessiveIOBlockingTime", TOP,
		 "queued pending active true stopped");
	LOGGED(w, "+3.2) TooManySmallIOOps tested true for " TOP);
	LOGGED(w, "+4.4) Cost limit: stopped TooManySmallIOOps for " TOP
	       " (true since 3.2 s) to make room for its refinements");
	LOGGED(w, "+4.4) TooManySmallIOOps tested true for " AT(F_MAIN));
	LOGGED(w, "+6.0) TooManySmallIOOps tested true for "
	       "</Code,/Process/100,/SyncObject,/Files>");
	tap_ok(w->pc->peak_observed <= 0.05 + 1e-9, "one at a time: peak "
	       "cost %.3f within the limit", w->pc->peak_observed);
	tap_eq(w->pc->shed, 0, "nothing shed");
	s = pc_consult_search(w->pc, 0);
	tap_ok(world_node(w, 0, "ExcessiveIOBlockingTime", TOP)->truth ==
	       PC_TRUE, "the stopped node's conclusion stands");
	nb = pc_report_bottlenecks(w->pc, s, b, 64);
	for (size_t i = 0; i < nb; i++)
		io_top += b[i] == world_node(w, 0, "ExcessiveIOBlockingTime",
					     TOP);
	tap_ok(nb > 0 && io_top == 0, "bottlenecks are its refinements "
	       "(%zu), not the stopped top node", nb);
	world_free(w);
}

/* With room for everything, the budget is never blocked for good: no
 * true node is stopped (Paradyn's rule: true nodes stay instrumented). */
static void test_no_room_needed(void)
{
	const char *sets[] = { "costLimit=1", NULL };
	struct world *w = world_write_heavy(sets);
	size_t stops = 0;

	world_run(w, 8.0);
	for (size_t i = 0; i < w->pc->nlog; i++)
		stops += strstr(w->pc->log[i], "to make room") != NULL;
	tap_eq(stops, 0, "a 100%% limit: no node stopped to make room");
	TRACE_IS(w, 0, "ExcessiveIOBlockingTime", TOP,
		 "queued pending active true");
	world_free(w);
}

/* bytes / operations where there are no operations: no value at all;
 * after sufficientTime (6 s) of none, false. */
static void test_no_data(void)
{
	const char *sets[] = { "costLimit=1", NULL };
	struct world *w = world_write_heavy(sets);
	struct pc_node *n;

	src_sim_script(w->sim, "io_ops", AT(F_LOCKER), 0, 0, 0);
	src_sim_script(w->sim, "io_bytes", AT(F_LOCKER), 0, 0, 0);
	world_run(w, 20.0);
	n = world_node(w, 0, "TooManySmallIOOps", AT(F_LOCKER));
	tap_ok(n != NULL && n->truth == PC_FALSE && !n->active,
	       "TooManySmallIOOps where there is no I/O: false, stopped");
	tap_ok(n != NULL && strcmp(n->how, "no data") == 0,
	       "concluded by: no data (%s)", n ? n->how : "-");
	tap_ok(n != NULL && n->t_concluded - n->t_start >= 6.0 - 1e-9,
	       "after sufficientTime (%.1f s)",
	       n ? n->t_concluded - n->t_start : -1);
	world_free(w);
}

/* test_search_cost's shedding: at 3.0 s the instrumentation costs twice
 * its prediction and three experiments are shed at 3.2 s; those that had
 * tested true are listed apart until measured again. */
static void test_unconfirmed(void)
{
	struct world *w = world_new(NULL, NULL);
	const struct pc_node *b[64], *u[64];
	struct pc_search *s;
	size_t nb, nu, shed_true = 0, overlap = 0;

	src_sim_cost(w->sim, "cpu_inclusive", 0.01, 1);
	src_sim_script(w->sim, "cpu_inclusive", "*", 0, 0.9, 0.05);
	world_run(w, 3.0);
	src_sim_cost(w->sim, "cpu_inclusive", 0.01, 2);
	world_run(w, 3.2);
	s = pc_consult_search(w->pc, 0);
	for (size_t i = 0; i < s->nn; i++)
		shed_true += s->nodes[i]->times_shed > 0 &&
			     s->nodes[i]->truth == PC_TRUE;
	nb = pc_report_bottlenecks(w->pc, s, b, 64);
	nu = pc_report_unconfirmed(w->pc, s, u, 64);
	for (size_t i = 0; i < nb; i++)
		for (size_t j = 0; j < nu; j++)
			overlap += b[i] == u[j];
	tap_ok(shed_true > 0, "%zu true nodes shed", shed_true);
	tap_ok(nu > 0 && nu <= shed_true, "%zu listed as unconfirmed", nu);
	tap_eq(overlap, 0, "none of them is a bottleneck");
	for (size_t j = 0; j < nu; j++)
		tap_ok(!isnan(u[j]->value), "%s keeps its last value %.2f",
		       u[j]->name, u[j]->value);
	world_run(w, 20.0);
	nu = pc_report_unconfirmed(w->pc, s, u, 64);
	tap_eq(nu, 0, "measured again after relaunch: none unconfirmed");
	world_free(w);
}

/* ExcessiveIOBlockingTime's where-refinements, each near a third of
 * the budget and borderline (they hold no side for long), fill the
 * room; TooManySmallIOOps, its narrower why, then tests true at the top
 * and its refinements wait for that room. */
static struct world *narrower_world(bool on)
{
	const char *sets[] = { on ? "narrowerWhyFirst=true"
				  : "narrowerWhyFirst=false", NULL };
	struct world *w = world_new(NULL, sets);
	static const char *const wide[] = {
		AT(F_MAIN), AT(F_WRITER), "</Code,/Process/100,/SyncObject,/Files>",
		"</Code,/Process,/SyncObject,/Files/tmp/out.log>",
		"</Code,/Process,/SyncObject,/Files/tmp/data.bin>",
	};

	world_writes(w, 0.012, 0.002, 1);
	for (size_t i = 0; i < sizeof(wide) / sizeof(wide[0]); i++)
		src_sim_script(w->sim, "io_wait", wide[i], 0, 0.2, 0.1);
	return w;
}

#define TMS_LOG "TooManySmallIOOps tested true for </Code,/Process," \
	"/SyncObject,/Files/tmp/out.log>"

static void test_narrower_first(void)
{
	struct world *w = narrower_world(true);
	struct pc_search *s;
	int stops = 0, twice = 0;

	world_run(w, 8.0);
	LOGGED(w, "+2.6) Cost limit: stopped ExcessiveIOBlockingTime for "
	       "</Code,/Process/100,/SyncObject,/Files> (not concluded) to "
	       "make room for TooManySmallIOOps for </Code,/Process,"
	       "/SyncObject,/Files/tmp/out.log>, a narrower why");
	TRACE_IS(w, 0, "ExcessiveIOBlockingTime",
		 "</Code,/Process/100,/SyncObject,/Files>",
		 "queued pending active preempted queued");
	LOGGED(w, "+4.4) " TMS_LOG);
	s = pc_consult_search(w->pc, 0);
	for (size_t i = 0; i < w->pc->nlog; i++)
		stops += strstr(w->pc->log[i], ", a narrower why") != NULL;
	for (size_t i = 0; i < s->nn; i++) {
		const char *p = strstr(s->nodes[i]->trace, "preempted");

		twice += p != NULL && strstr(p + 1, "preempted") != NULL;
	}
	tap_eq(stops, 2, "two wider experiments stopped for narrower ones");
	tap_eq(twice, 0, "none stopped so twice");
	tap_ok(w->pc->peak_observed <= 0.05 + 1e-9, "peak cost %.3f within "
	       "the limit", w->pc->peak_observed);
	world_free(w);

	/* off: the narrower why's refinements wait for the wider ones */
	w = narrower_world(false);
	world_run(w, 8.0);
	stops = 0;
	for (size_t i = 0; i < w->pc->nlog; i++)
		stops += strstr(w->pc->log[i], ", a narrower why") != NULL;
	tap_eq(stops, 0, "narrowerWhyFirst=false: nothing stopped so");
	tap_ok(!world_logged(w, "+4.4) " TMS_LOG), "and TooManySmallIOOps on "
	       "the file is not true at 4.4 s (%s)",
	       world_trace(w, 0, "TooManySmallIOOps",
			   "</Code,/Process,/SyncObject,/Files/tmp/out.log>"));
	world_free(w);
}

int main(void)
{
	test_make_room();
	test_no_room_needed();
	test_no_data();
	test_unconfirmed();
	test_narrower_first();
	tap_done();
}

/*
 * test_search_deep.c - skipDominantLevels on the sim source: when the
 * source's evidence shows one child holding nearly all of its parent's
 * share, level after level, the deepest such descendant is tested at
 * once beside the level's ordinary refinements (consultant/README.md,
 * "Dominant descendants"):
 *  - the chain main -> compute -> work, work 0.9 of the samples: work
 *    is a refinement of the top node, tested with main, and concluded
 *    true a whole level before main's refinements could reach it; the
 *    ordinary refinements still run and find it again (shadow edges);
 *    the busy thread likewise, past /Process/100;
 *  - a guess that tests false: the level-by-level search still finds
 *    compute;
 *  - no dominant child (compute 0.5 of main, work 0.5 of compute): no
 *    deep node;
 *  - CPU evidence below the second-ranked kid (main behind a locker
 *    thread that holds every sync observation): work tested from the
 *    top node, its chain's only busy callees at 0.93 of their parent;
 *  - skipDominantLevels=0: level by level, as Paradyn;
 *  - in the queue, dominant descendants first and the kids on the path
 *    to them after their siblings;
 *  - a configuration without the tunable (an older journal's): off;
 *  - a chain that leaves the program for libc's write(): the program's
 *    function calling it tested at once too (I/O), or instead (CPU).
 * The findings while the levels between are still walked: one, in work.
 * Exact node-state sequences; every conclusion comes from the sim's
 * scripted metric values, never from the hints.
 */
#include "pc_findings.h"
#include "sim_world.h"

#define AT(f) "<" f ",/Process,/SyncObject,/Files>"
#define THREAD(t) "</Code,/Process/100/" t ",/SyncObject,/Files>"
#define BOTH(f, t) "<" f ",/Process/100/" t ",/SyncObject,/Files>"

static const char *dominant_on[] = { "skipDominantLevels=0.9", NULL };

/* The program spends 0.9 of its samples in work, through compute, on
 * the main thread (work_share, compute_share: other shares). */
static void hint_chain(struct world *w, double compute_share,
		       double work_share)
{
	src_sim_hint(w->sim, F_MAIN, 1.0);
	src_sim_hint(w->sim, F_COMPUTE, compute_share);
	src_sim_hint(w->sim, F_WORK, work_share);
	src_sim_hint(w->sim, F_WRITER, 0.02);
	src_sim_hint(w->sim, F_LOCKER, 0.03);
	src_sim_hint(w->sim, "/Process/100", 1.0);
	src_sim_hint(w->sim, "/Process/100/100:main", 0.95);
	src_sim_hint(w->sim, "/Process/100/101:worker", 0.05);
}

static void hint_deep_chain(struct world *w, double compute_share)
{
	hint_chain(w, compute_share, 0.9);
}

static struct pc_node *cpu(struct world *w, const char *focus)
{
	return world_node(w, 0, "CPUbound", focus);
}

/* The CPU is one finding, in work: main, on the path to work (its
 * dominant descendant, true), and the levels still walked below it are
 * work's finding, not findings of their own. */
static void one_finding_in_work(struct world *w, const char *when)
{
	struct pc_findings fs = { 0 };
	int n = 0, in_work = 0;

	pc_findings_build(w->pc, NULL, &fs);
	for (size_t i = 0; i < fs.n; i++) {
		if (strcmp(w->cfg->hyp[fs.f[i].hyp].name, "CPUbound") != 0)
			continue;
		n++;
		in_work += strcmp(pc_res_get(w->res, fs.f[i].where[0])->path,
				  F_WORK) == 0;
	}
	tap_ok(n == 1 && in_work == 1, "%s: one CPU finding, in work (%d "
	       "CPU findings, %d in work)", when, n, in_work);
	pc_findings_free(&fs);
}

static void test_deep_first(void)
{
	struct world *w = world_new(NULL, dominant_on);
	struct pc_node *top, *work, *main_, *thr, *cp;

	hint_deep_chain(w, 0.95);
	src_sim_script(w->sim, "cpu_inclusive", "*", 0, 0.9, 0.02);
	world_run(w, 2.4);
	top = cpu(w, TOP);
	work = cpu(w, AT(F_WORK));
	main_ = cpu(w, AT(F_MAIN));
	thr = cpu(w, THREAD("100:main"));
	tap_ok(top && work && main_ && thr, "top, work, main and the main "
	       "thread have nodes at 2.4 s");
	if (!(top && work && main_ && thr)) {
		world_dump(w);
		world_free(w);
		return;
	}
	tap_eq(work->orig_parent, top->id, "work is a refinement of the "
	       "top node");
	tap_eq(thr->orig_parent, top->id, "the main thread too, past "
	       "/Process/100");
	tap_ok(work->seq < main_->seq, "work was queued before main");
	tap_ok(work->truth == PC_TRUE && main_->truth == PC_TRUE &&
	       work->t_true_since == main_->t_true_since,
	       "work concluded true with main, at %.1f s",
	       work->t_true_since);
	tap_ok(cpu(w, AT(F_COMPUTE)) != NULL &&
	       cpu(w, AT(F_COMPUTE))->truth == PC_UNKNOWN,
	       "compute, the level between, is still testing");
	one_finding_in_work(w, "at 2.4 s, main true and compute testing");
	/* Found again, the same tick, under /Process/100 (true too). */
	TRACE_IS(w, 0, "CPUbound", THREAD("100:main"),
		 "queued pending active true shadow");
	world_run(w, 8.0);
	cp = cpu(w, AT(F_COMPUTE));
	tap_ok(cp && cp->truth == PC_TRUE, "compute is true");
	/* Found again under main (its own dominant descendant) and under
	 * compute (its ordinary refinement); a trace does not repeat a
	 * state. */
	TRACE_IS(w, 0, "CPUbound", AT(F_WORK),
		 "queued pending active true shadow");
	tap_eq((int)work->nparents, 3, "work has three parents: the top "
	       "node, main and compute");
	/* Created as the main thread's dominant descendant, found again
	 * as work's (past /Process/100) before it launched. */
	TRACE_IS(w, 0, "CPUbound", BOTH(F_WORK, "100:main"),
		 "queued shadow pending active true shadow");
	tap_ok(cpu(w, "</Code,/Process/100,/SyncObject,/Files>") &&
	       cpu(w, "</Code,/Process/100,/SyncObject,/Files>")->truth ==
	       PC_TRUE, "/Process/100 is tested and true too");
	world_free(w);
}

/* work reads 0: the guess is false, and the level-by-level search
 * concludes compute (work found false again below it). */
static void test_deep_false(void)
{
	struct world *w = world_new(NULL, dominant_on);
	struct pc_node *cp, *work;

	hint_deep_chain(w, 0.95);
	src_sim_script(w->sim, "cpu_inclusive", "*", 0, 0.9, 0.02);
	src_sim_script(w->sim, "cpu_inclusive", AT(F_WORK), 0, 0, 0);
	world_run(w, 8.0);
	cp = cpu(w, AT(F_COMPUTE));
	work = cpu(w, AT(F_WORK));
	tap_ok(cp && cp->truth == PC_TRUE, "compute is true");
	tap_ok(work && work->truth == PC_FALSE, "work is false");
	TRACE_IS(w, 0, "CPUbound", AT(F_WORK),
		 "queued pending active false stopped shadow");
	tap_ok(cp && work && work->t_concluded < cp->t_true_since,
	       "work was found false before compute was found true");
	world_free(w);
}

/* compute holds half of main's samples and work half of compute's:
 * nothing is dominant below main, and work is reached through compute
 * only. */
static void test_not_dominant(void)
{
	struct world *w = world_new(NULL, dominant_on);
	struct pc_node *work, *cp;

	hint_chain(w, 0.5, 0.25);
	src_sim_script(w->sim, "cpu_inclusive", "*", 0, 0.9, 0.02);
	world_run(w, 2.4);
	tap_ok(cpu(w, AT(F_WORK)) == NULL, "no node for work at 2.4 s");
	world_run(w, 8.0);
	work = cpu(w, AT(F_WORK));
	cp = cpu(w, AT(F_COMPUTE));
	tap_ok(work && cp && work->orig_parent == cp->id,
	       "work is a refinement of compute");
	TRACE_IS(w, 0, "CPUbound", AT(F_WORK), "queued pending active true");
	world_free(w);
}

/* Below main, locker ranks first (0.6: its sync waits, say) and
 * compute second with 0.3, all of it in work (0.28: compute's only busy
 * callee, under 0.9 of compute by a sample or two): for CPUbound the
 * chain below compute is followed too, and work is tested as a
 * refinement of main, beside compute. */
static void test_second_kid(void)
{
	struct world *w = world_new(NULL, dominant_on);
	struct pc_node *main_, *work;

	src_sim_hint(w->sim, F_MAIN, 1.0);
	src_sim_hint(w->sim, F_LOCKER, 0.6);
	src_sim_hint(w->sim, F_COMPUTE, 0.3);
	src_sim_hint(w->sim, F_WORK, 0.28);
	src_sim_hint(w->sim, F_WRITER, 0.02);
	src_sim_script(w->sim, "cpu_inclusive", "*", 0, 0.9, 0.02);
	world_run(w, 4.0);
	main_ = cpu(w, AT(F_MAIN));
	work = cpu(w, AT(F_WORK));
	tap_ok(main_ && work && work->orig_parent == main_->id &&
	       work->dominant, "second kid: work is a dominant refinement "
	       "of main");
	tap_ok(work && work->truth == PC_TRUE, "second kid: work is true");
	world_free(w);
}

/* The same evidence with skipDominantLevels=0: one level at a time. */
static void test_off(void)
{
	struct world *w = world_new(NULL, NULL);
	struct pc_node *work, *cp, *thr, *proc;

	hint_deep_chain(w, 0.95);
	src_sim_script(w->sim, "cpu_inclusive", "*", 0, 0.9, 0.02);
	world_run(w, 2.4);
	tap_ok(cpu(w, AT(F_WORK)) == NULL, "no node for work at 2.4 s");
	world_run(w, 8.0);
	work = cpu(w, AT(F_WORK));
	cp = cpu(w, AT(F_COMPUTE));
	thr = cpu(w, THREAD("100:main"));
	proc = cpu(w, "</Code,/Process/100,/SyncObject,/Files>");
	tap_ok(work && cp && work->orig_parent == cp->id,
	       "work is a refinement of compute");
	tap_ok(thr && proc && thr->orig_parent == proc->id,
	       "the main thread is a refinement of /Process/100");
	TRACE_IS(w, 0, "CPUbound", AT(F_WORK), "queued pending active true");
	world_free(w);
}

/* One enable at a time, two ticks each: the top node's refinements
 * launch dominant descendants first (work, then the main thread), then
 * the kids on the path to them (main, /Process/100), whose tests theirs
 * mostly answer. */
static void test_dominant_first_in_queue(void)
{
	const char *sets[] = { "skipDominantLevels=0.9",
			       "maxPendingEnables=1", NULL };
	struct world *w = world_new(NULL, sets);
	struct pc_node *work, *thr, *main_, *proc;

	hint_deep_chain(w, 0.95);
	src_sim_enable_delay(w->sim, 2);
	src_sim_script(w->sim, "cpu_inclusive", "*", 0, 0.9, 0.02);
	world_run(w, 6.0);
	work = cpu(w, AT(F_WORK));
	thr = cpu(w, THREAD("100:main"));
	main_ = cpu(w, AT(F_MAIN));
	proc = cpu(w, "</Code,/Process/100,/SyncObject,/Files>");
	tap_ok(work && thr && main_ && proc, "the four refinements exist");
	if (!(work && thr && main_ && proc)) {
		world_free(w);
		return;
	}
	tap_ok(work->dominant && thr->dominant && main_->implied &&
	       proc->implied && !work->implied && !main_->dominant,
	       "work and the main thread dominant, main and /Process/100 "
	       "on their paths");
	tap_ok(main_->seq < thr->seq, "main was queued before the thread");
	tap_ok(work->t_start >= 0 && work->t_start < thr->t_start &&
	       thr->t_start < main_->t_start &&
	       main_->t_start < proc->t_start,
	       "launched work, the thread, main, /Process/100 (%.1f, %.1f, "
	       "%.1f, %.1f s)", work->t_start, thr->t_start, main_->t_start,
	       proc->t_start);
	world_free(w);
}

/* A journal recorded before skipDominantLevels existed carries
 * hypotheses without it: its replay runs with the skip off (the search
 * it recorded), never stops on the missing tunable.  Here the tunable is
 * renamed away from the loaded configuration. */
static void test_absent_tunable(void)
{
	struct world *w = world_new(NULL, dominant_on);
	struct pc_tunable *t = pc_tunables_find(w->cfg, "skipDominantLevels");
	char *name = t ? t->name : NULL;
	char other[] = "notSkipDominantLevels";
	struct pc_node *work, *cp;

	if (t)
		t->name = other;
	hint_deep_chain(w, 0.95);
	src_sim_script(w->sim, "cpu_inclusive", "*", 0, 0.9, 0.02);
	world_run(w, 8.0);
	work = cpu(w, AT(F_WORK));
	cp = cpu(w, AT(F_COMPUTE));
	tap_ok(t && work && cp && work->orig_parent == cp->id,
	       "no skipDominantLevels: work is a refinement of compute");
	if (t)
		t->name = name;
	world_free(w);
}

/* The writer's samples all lie in libc's write(), called from the
 * program's writer: main -> writer -> write, every level 0.95 of its
 * parent.  The chain leaves the program's module at write(): */
#define F_WRITE "/Code/libc.so.6/write.c/write"

static struct world *world_libc_write(void)
{
	struct world *w = world_new(NULL, dominant_on);

	src_sim_function(w->sim, "libc.so.6", "write.c", "write");
	src_sim_call(w->sim, F_WRITER, F_WRITE);
	src_sim_hint(w->sim, F_MAIN, 1.0);
	src_sim_hint(w->sim, F_WRITER, 0.95);
	src_sim_hint(w->sim, F_WRITE, 0.95);
	src_sim_hint(w->sim, F_COMPUTE, 0.02);
	src_sim_hint(w->sim, "/Process/100", 1.0);
	src_sim_hint(w->sim, "/Process/100/100:main", 0.95);
	src_sim_hint(w->sim, "/Process/100/101:worker", 0.05);
	return w;
}

/*  - an I/O hypothesis tests the leaf (write) and the program's function
 *    calling it (writer) at once, both refinements of the top node;
 *  - a CPU hypothesis tests the leaf: testing writer instead (the same
 *    CPU, one timer instead of one per call) left the demo's CPU
 *    finding short of `demo_hot_loop` in 3 of 6 batch runs. */
static void test_chain_edge(void)
{
	struct world *w = world_libc_write();
	struct pc_node *top, *wr, *lw, *cw;

	world_writes(w, 0.001, 0.001, 1);
	src_sim_script(w->sim, "cpu_inclusive", "*", 0, 0.9, 0.02);
	world_run(w, 4.0);
	top = world_node(w, 0, "ExcessiveIOBlockingTime", TOP);
	wr = world_node(w, 0, "ExcessiveIOBlockingTime", AT(F_WRITER));
	lw = world_node(w, 0, "ExcessiveIOBlockingTime", AT(F_WRITE));
	tap_ok(top && wr && lw, "I/O: the top node, writer and write have "
	       "nodes at 4 s");
	tap_ok(top && wr && wr->orig_parent == top->id && wr->dominant,
	       "I/O: writer, the program's function calling write(), is a "
	       "dominant refinement of the top node");
	tap_ok(top && lw && lw->orig_parent == top->id && lw->dominant,
	       "I/O: write, the leaf, too");
	tap_ok(wr && wr->truth == PC_TRUE, "I/O: writer is true");
	top = cpu(w, TOP);
	cw = cpu(w, AT(F_WRITE));
	tap_ok(top && cw && cw->orig_parent == top->id && cw->dominant,
	       "CPU: write, the leaf, is a dominant refinement of the top "
	       "node");
	tap_ok(cpu(w, AT(F_WRITER)) == NULL ||
	       cpu(w, AT(F_WRITER))->orig_parent != top->id,
	       "CPU: writer, above the leaf, is not");
	world_free(w);
}

int main(void)
{
	test_deep_first();
	test_deep_false();
	test_not_dominant();
	test_second_kid();
	test_off();
	test_dominant_first_in_queue();
	test_absent_tunable();
	test_chain_edge();
	return tap_done();
}

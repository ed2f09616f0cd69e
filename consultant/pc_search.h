/*
 * pc_search.h - the Performance Consultant: the W3 search (why x where x
 * when) over a source, with Paradyn's rules (devguide §1.5,
 * pc_source_facts.md §3) and hunch's additions (a slowdown cost limit
 * enforced before and after launch, statistical conclusions, parallel
 * siblings, evidence on every conclusion).
 *
 * One struct pc_consult per target.  The caller's loop calls
 * pc_consult_tick() after each sample period; everything happens inside
 * it: resources, enable replies, samples, evaluation, truth changes,
 * expansion, the cost gate.  Nothing blocks.
 *
 * Searches: id 0 is the global phase's; a current phase the user starts
 * gets its own search (id = phase number) with its own SHG and queue;
 * both share the data manager and the cost budget.
 */
#ifndef PC_SEARCH_H
#define PC_SEARCH_H

#include <stdbool.h>
#include <stddef.h>

#include "pc_config.h"
#include "pc_datamgr.h"
#include "pc_res.h"
#include "pc_shg.h"
#include "pc_source.h"

enum pc_throttle { PC_THR_NONE, PC_THR_COST, PC_THR_ACTIVE,
		   PC_THR_PENDING };

typedef void (*pc_log_fn)(void *arg, double t, const char *line);

struct pc_consult {
	struct pc_config *cfg;
	struct pc_source *src;
	struct pc_restree *res;
	struct pc_datamgr dm;
	struct pc_search *global, *current;
	struct pc_search **ended;     /* finished current-phase searches */
	size_t nended;
	int nphases;                  /* current phases started so far */
	uint64_t seq;
	int fair;                     /* which queue goes first next */
	enum pc_throttle throttle;
	int npending, nactive;
	double pending_cost;
	double observed, peak_observed, sum_observed;
	long holds;                   /* the source held the program stopped */
	double held_s;                /* so often, so long in all (s) */
	int ncost_samples;
	double cost_factor;           /* observed / predicted, >= 1 */
	double shed_t;                /* last shedding, -1 never */
	bool rates_measured;          /* the source measured call rates, */
	double rates_t;               /* last at rates_t (pc_cost.c) */
	bool tight;                   /* room was made: launch one at a time */
	/* Since when the observed cost has stayed well under the limit
	 * (-1: it is not), and the last time the learnt factors relaxed
	 * (pc_cost_relax). */
	double calm_since, relax_t;
	double unseen_t;              /* last sweep of pc_unseen.c */
	/* The largest observed cost of the last PC_HOLD_S (pc_cost_relax):
	 * what launching by measurement counts on. */
	double obs_hold, obs_hold_t;
	int unseen;                   /* nodes it concluded false */
	/* Cost learnt per hypothesis (index): observed / predicted for one
	 * of its experiments, measured when it alone started or stopped
	 * (pc_cost_learn_probe_next).  1 until measured. */
	double *hyp_factor;
	size_t nhyp_factor;
	struct pc_node *probe;        /* the change being measured, or NULL */
	int probe_sign;               /* +1 launched, -1 stopped */
	double probe_before, probe_t; /* observed cost before it; when */
	int batch_n;                  /* charged launches not yet shown by */
	double batch_t;               /* the observed cost; the last one's */
	double eval_interval, next_eval;
	double now;
	bool started, target_ended;
	bool idle_told;               /* the idle line was logged */
	char target_end[160];
	int nexec;                    /* images the program exec'ed */
	struct pc_search **gone;      /* searches over images exec replaced */
	size_t ngone;
	bool exec_kernel_only;        /* the last one: kernel measures only */
	int runs, skipped, shed;      /* experiments launched, dropped, shed */
	char **log;
	size_t nlog, caplog;
	pc_log_fn log_fn;
	void *log_arg;
};

struct pc_consult *pc_consult_new(struct pc_config *cfg,
				  struct pc_source *src,
				  struct pc_restree *res);
void pc_consult_free(struct pc_consult *pc);
void pc_consult_set_log(struct pc_consult *pc, pc_log_fn fn, void *arg);

/* Start the global search: one persistent node per top-level hypothesis
 * at the top-level focus. */
int pc_consult_start(struct pc_consult *pc);
void pc_consult_tick(struct pc_consult *pc);

/* Start a current phase now (ends the previous one's search) and its
 * search.  Returns the phase number. */
int pc_consult_phase_start(struct pc_consult *pc, const char *label);
/* Pause/resume a search (0 global, else the current phase's): a paused
 * search launches nothing and evaluates nothing. */
int pc_consult_pause(struct pc_consult *pc, int search_id, bool pause);

/* Change a tunable while searching (the dashboard, --set after start).
 * A changed threshold re-queues the inactive children of the true nodes
 * that use it (Paradyn's retestAllChildren); useCallGraphSearch is locked
 * once a search exists (the graph already follows one kind). */
int pc_consult_set_tunable(struct pc_consult *pc, const char *name,
			   double value, struct hunch_err *e);

/* Nothing queued or pending, and every active experiment has concluded:
 * the search has nothing left to learn (batch mode may stop). */
bool pc_consult_idle(const struct pc_consult *pc);
bool pc_consult_ended(const struct pc_consult *pc);
/* The sampling period the source should use (follows the histograms). */
double pc_consult_sample_period(const struct pc_consult *pc);
struct pc_search *pc_consult_search(const struct pc_consult *pc, int id);

/* Internal, shared by the pc_search*.c, pc_truth.c, pc_cost.c files. */
void pc_consult_logf(struct pc_consult *pc, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
const struct pc_hypothesis *pc_truth_node_hyp(const struct pc_consult *pc,
					const struct pc_node *n);
void pc_cost_queue(struct pc_consult *pc, struct pc_search *s,
		   struct pc_node *n, int priority);
void pc_cost_node_stop(struct pc_consult *pc, struct pc_node *n,
		       const char *st);
bool pc_truth_has_true_parent(const struct pc_search *s,
			     const struct pc_node *n);
void pc_truth_change(struct pc_consult *pc, struct pc_search *s,
		     struct pc_node *n, enum pc_truth t);
/* refineEarly (pc_early.c): n's refinements queued before n concludes
 * when its guess holds clearly (after each evaluation); an early
 * refinement without a true parent is held (concludes nothing), and
 * withdrawn when its parents turn false. */
void pc_early_consider(struct pc_consult *pc, struct pc_search *s,
		       struct pc_node *n);
bool pc_early_held(const struct pc_search *s, const struct pc_node *n);
void pc_early_withdraw(struct pc_consult *pc, struct pc_search *s,
		       struct pc_node *n);
void pc_truth_expand(struct pc_consult *pc, struct pc_search *s,
		     struct pc_node *n);
int pc_truth_add_node(struct pc_consult *pc, struct pc_search *s, int parent,
		int hyp, const struct pc_focus *f, bool why);
void pc_cost_gate(struct pc_consult *pc);
void pc_cost_shed(struct pc_consult *pc);
void pc_cost_learn_probe_next(struct pc_consult *pc);
void pc_cost_relax(struct pc_consult *pc);
/* pc_cost_room.c: when the cost limit blocks the queue, true nodes
 * hand their room down, as many as free `need` of charged cost (true if
 * one did); nothing will ever free room. */
bool pc_cost_room_make(struct pc_consult *pc, double need);
bool pc_cost_room_stuck(const struct pc_consult *pc);
/* narrowerWhyFirst: the queue's head, a refinement of a narrower why,
 * lacks `need`: experiments of a wider why of its branch that have not
 * concluded, on its focus or on one a narrower why tests already, stop
 * and queue again behind it, as many as free `need` (true if some
 * did). */
bool pc_cost_room_narrower(struct pc_consult *pc, struct pc_search *s,
			   const struct pc_node *head, double need);
/* Every input of n is read from the kernel or computed by hunch: no
 * instrumentation to pay for, none freed by its stop. */
bool pc_cost_room_frees_nothing(const struct pc_consult *pc,
				const struct pc_node *n);
/* pc_cost_order.c: the queue's next node to launch (NULL when empty);
 * has the source seen no sign at all of n's resource? */
struct pc_node *pc_cost_order_head(const struct pc_consult *pc,
				   const struct pc_search *s);
bool pc_cost_order_no_evidence(const struct pc_node *n);
/* How far n's hypothesis is below the why axis's root; the top-level
 * hypothesis whose branch it is in. */
int pc_cost_order_why_depth(const struct pc_consult *pc,
			    const struct pc_node *n);
int pc_cost_order_why_root(const struct pc_consult *pc,
			   const struct pc_node *n);
/* What the active experiments were charged (since > 0: only those
 * started less than `since` s ago), and what they are predicted to
 * cost, scaled by their hypotheses' factors. */
double pc_cost_charged_active(const struct pc_consult *pc, double since);
double pc_cost_predicted_active(const struct pc_consult *pc);
/* pc_cost_learn.c: has a change of the hypothesis' experiments been
 * measured; learn factor f for it (kept at its largest); measure the
 * change n makes (sign +1 launched, -1 stopped). */
bool pc_cost_learn_measured(const struct pc_consult *pc, int hyp);
void pc_cost_learn_factor(struct pc_consult *pc, int hyp, double f);
void pc_cost_learn_probe(struct pc_consult *pc, struct pc_node *n, int sign);
/* Refinements on code no recent stack sample shows: false, from the
 * samples (pc_unseen.c). */
void pc_unseen_conclude(struct pc_consult *pc);
double pc_cost_learn_hyp_factor(const struct pc_consult *pc, int hyp);
bool pc_cost_launch_done(struct pc_consult *pc, struct pc_search *s,
		    struct pc_node *n);
void pc_experiment_evaluate(struct pc_consult *pc, struct pc_search *s,
		 struct pc_node *n, double len);

#endif

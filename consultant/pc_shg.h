/*
 * pc_shg.h - the search history graph: a DAG of experiments (hypothesis x
 * focus), one per search (phase).
 *
 * A (hypothesis, focus) reached along a second path is the same node with
 * a second parent; the new edge is marked `shadow` so the dashboard can
 * draw it as Paradyn's italic shadow node.  Refinement is a partial order
 * (why: down the hypothesis tree; where: down a resource hierarchy), so
 * the graph cannot have a cycle.
 *
 * Each node carries its experiment's state (evaluation, hysteresis,
 * statistics) and a trace: the space-separated sequence of states it went
 * through, which the tests compare exactly.
 */
#ifndef PC_SHG_H
#define PC_SHG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pc_config.h"
#include "pc_focus.h"

enum pc_truth { PC_UNKNOWN, PC_TRUE, PC_FALSE };

struct pc_edge {
	int child;
	bool why;       /* why-refinement (else where) */
	bool shadow;    /* a second path to an existing node */
};

struct pc_node {
	int id;
	int hyp;                    /* index into cfg->hyp */
	struct pc_focus focus;
	char *name;                 /* "CPUbound</Code,/Process,...>" */
	int orig_parent;            /* -1 for the root */
	int *parents;
	size_t nparents;
	struct pc_edge *kids;
	size_t nkids;
	bool is_virtual, persistent, expanded;
	bool queued, pending, active;
	bool skipped;               /* dropped: its own cost is over the limit */
	bool rate_wait;             /* this tick: the source measures call
				       rates for its prediction */
	bool rate_logged;           /* said so once */
	bool given_up;              /* shed and not run again (pc_cost.c) */
	bool failed;                /* the source could not enable it */
	char refused[256];          /* the source's reason, when failed */
	bool by_hand;               /* started by hand (pc_steer.h): may be stopped so */
	bool cut_short;             /* in progress when its search ended */
	bool cut_waiting;           /* and queued, waiting for cost room */
	bool sampled;               /* judged on an input the source estimated
				       from stack samples (pc_src_reply) */
	enum pc_truth truth;
	int ntrue_parents, ntrue_children;
	int priority;               /* smaller runs first: 1 top, 5 why, 10 where */
	uint64_t seq;               /* FIFO among equal priorities */
	int narrow;                 /* call-graph search: hierarchy refined, -1 wide */
	int tried_hier;             /* bit set of hierarchies refined so far */
	double pred_cost;
	double charged_cost;        /* what the cost gate counted at launch */
	/* The source's cheap evidence for the resource this node refined
	 * its parent along (pc_cost_queue, first time queued): orders the queue
	 * among equals.  -1 unknown (no hint, a why-child, a top node). */
	double hint;
	bool hinted;
	/* skipDominantLevels (pc_kids.c): a dominant descendant, tested
	 * first among equals; a refinement on the path to one, whose test
	 * the descendant's mostly answers, tested after the others. */
	bool dominant, implied;
	int implied_by;          /* implied: the dominant descendant's node
				  * it lies on the path to, -1 none */
	/* The why-parent's verdict on the same focus (pc_truth.c): +1 it
	 * tested true there, -1 false, 0 not yet (or no such node).
	 * Orders the queue among equals: TooManySmallIOOps where
	 * ExcessiveIOBlockingTime tested false waits behind the rest. */
	int why_ev;
	int nodata_retries;         /* enabled again for having no data */
	/* refineEarly (pc_early.c): queued by its parent's early
	 * expansion, before that parent concluded; it concludes nothing
	 * until a parent is true (pc_early_held), and is withdrawn when
	 * its parents all turn false first. */
	bool early;

	/* the experiment */
	int inst[PC_MAX_INPUTS];
	int nin;
	/* the instances it had when last stopped (released, their
	 * histograms kept): what the dashboard's detail shows of a node
	 * stopped to make room or concluded at the program's end */
	int was_inst[PC_MAX_INPUTS];
	int nwas;
	double t_created, t_start, t_concluded, t_true_since;
	double hys;                 /* Paradyn's hysteresis factor */
	int guess;                  /* -1 none yet, 0 false, 1 true */
	double accum;               /* seconds the current guess has held */
	double wn, wmean, wm2;      /* statistics since the guess last flipped */
	/* a true node whose guess left the true side: the mean of the
	 * true window it left (held_set), what its truth rests on */
	double held_mean;
	bool held_set;
	int wlooks;                 /* statistical tests of them (pc_experiment.c) */
	double run_sum, run_len;    /* value x seconds, seconds: since started */
	double value, threshold;    /* last interval's value; threshold used */
	double held_s;              /* how long the guess had held at conclusion */
	char how[16];               /* "statistics" or "sufficient time" */
	/* Concluded "no data" because input this (index) never had a
	 * value from the source, -1 otherwise (a ratio over nothing is
	 * a measured nothing: tested).  The reports list the node as
	 * not tested (pc_report.h). */
	int no_input;
	int times_shed;
	bool preempted;             /* stopped once, not concluded, for a
				       narrower why (pc_cost_room.c) */
	bool unconfirmed;           /* true when shed or skipped for cost,
				       not measured since (listed apart) */
	/* The last time it was true and then turned false (a program
	 * that changes behaviour: a phase of it ended): when, and the
	 * value it was concluded true with.  t_was_to < 0: never. */
	double t_was_from, t_was_to, was_value;
	char trace[320];
};

enum pc_search_state { PC_SEARCH_RUNNING, PC_SEARCH_PAUSED,
		       PC_SEARCH_ENDED };

struct pc_search {
	int id;                     /* 0: global phase; N: current phase N */
	char label[64];
	enum pc_search_state state;
	char end_reason[160];
	double t_start, t_end;
	struct pc_node **nodes;
	size_t nn, cap;
	int root;
};

struct pc_search *pc_shg_new(int id, const char *label, double t);
void pc_shg_free(struct pc_search *s);
struct pc_node *pc_shg_node(const struct pc_search *s, int id);
/* The node for (hyp, focus), or -1. */
int pc_shg_find(const struct pc_search *s, int hyp, const struct pc_focus *f);
/* Find-or-create under `parent` (-1 for the root).  `*created` tells
 * whether the node is new; an existing one gains a shadow edge. */
int pc_shg_add(struct pc_search *s, int parent, int hyp,
	       const struct pc_focus *f, bool why, const char *name, double t,
	       bool *created);
/* Append a state to a node's trace (consecutive repeats collapse). */
void pc_shg_node_trace(struct pc_node *n, const char *state);
/* Find by hypothesis name and focus name (tests, the dashboard). */
int pc_shg_lookup(const struct pc_search *s, const struct pc_config *cfg,
		  const char *hyp, const char *focus_name);
const char *pc_shg_truth_name(enum pc_truth t);

/* The value a node's truth rests on: the mean of its interval values
 * since its guess last flipped (what the statistics judged), or over
 * its whole run when it was concluded by maxConclusionTime; the last
 * interval's value (n->value) when it has no such mean.  n->value alone
 * can sit inside the hysteresis band, on the other side of the
 * threshold from the truth ("0.9407 > 0.95"): reports give this one.
 * A node still true whose guess has turned false gives the mean of the
 * true window it left (held_mean). */
double pc_shg_node_judged(const struct pc_node *n);
/* Is the judged value strictly on the true side of the threshold
 * (above it for `gt`, below for `lt`)?  A node is only true while it
 * is (pc_experiment.c). */
bool pc_shg_node_holds(const struct pc_node *n, enum pc_cmp cmp);

#endif

/*
 * pc_datamgr.h - the data manager: metric instances (metric x focus),
 * shared by reference count between experiments (and later the
 * dashboard), each with a histogram for the global phase and one for the
 * current phase.
 *
 * Instance ids are never reused (devguide §1.2 handle rules): enabling a
 * pair again after it was released gives a new instance and a new source
 * handle.  Enabling is asynchronous: an instance is PENDING until the
 * source replies.
 */
#ifndef PC_DATAMGR_H
#define PC_DATAMGR_H

#include "pc_focus.h"
#include "pc_hist.h"
#include "pc_source.h"

enum pc_mi_state { PC_MI_PENDING, PC_MI_ENABLED, PC_MI_FAILED,
		   PC_MI_RELEASED };

struct pc_minst {
	int id;
	char *metric;
	struct pc_focus focus;
	int refs;
	enum pc_mi_state state;
	bool sampled;        /* the source estimated it from stack samples */
	uint64_t req;
	pc_src_handle handle;
	char *fail_reason;
	double predicted_cost;
	struct pc_hist global, current;
	double acc, acc_t;   /* amount and seconds since the interval began */
	double last;         /* the last closed interval's mean, NaN if none */
	double last_t1;      /* its end */
};

/* A prediction asked this tick (pc_datamgr_predict). */
struct pc_datamgr_pred {
	char *metric;
	struct pc_focus f;
	double v;
};

struct pc_datamgr {
	struct pc_source *src;
	const struct pc_restree *res;
	struct pc_minst **mi;
	size_t n, cap;
	/* Predictions asked since the tick began: each (metric, focus) is
	 * asked of the source once per tick.  The journal answers a replay
	 * by key and tick, so a second, different answer in the same tick
	 * (after a launch shared code) would replay as the first's. */
	struct pc_datamgr_pred *pred;
	size_t npred, cappred;
	uint64_t gen, pred_gen;
	uint64_t next_req;
	double global_width;    /* shared by every global histogram */
	double current_start, current_width;
};

void pc_datamgr_init(struct pc_datamgr *dm, struct pc_source *src,
		const struct pc_restree *res);
void pc_datamgr_fini(struct pc_datamgr *dm);
/* A reference to the live instance of (metric, focus), enabling a new
 * one when there is none.  Returns the instance id (> 0), or a negative
 * errno when the source refused the request outright. */
int pc_datamgr_acquire(struct pc_datamgr *dm, const char *metric,
		  const struct pc_focus *f, double now);
void pc_datamgr_release(struct pc_datamgr *dm, int id);
/* The program replaced its image (exec): the source dropped every
 * instance with the old image's metric side (a pending one is answered
 * as refused, then ignored), so none is live, and none may be shared by
 * an experiment of the search that starts over. */
void pc_datamgr_image_gone(struct pc_datamgr *dm);
struct pc_minst *pc_datamgr_get(const struct pc_datamgr *dm, int id);
/* The source's prediction, asked once per tick; 0 while the source is
 * still measuring for it (pc_datamgr_measuring says so). */
double pc_datamgr_predict(struct pc_datamgr *dm, const char *metric,
		     const struct pc_focus *f);
bool pc_datamgr_measuring(struct pc_datamgr *dm, const char *metric,
		     const struct pc_focus *f);
/* A new tick: predictions are asked of the source again. */
void pc_datamgr_new_tick(struct pc_datamgr *dm);
/* Feed from the source. */
void pc_datamgr_reply(struct pc_datamgr *dm, const struct pc_src_reply *r);
void pc_datamgr_sample(struct pc_datamgr *dm, const struct pc_src_sample *s);
/* Close the evaluation interval: every live instance's `last` becomes
 * its mean since the previous close (NaN when it had no samples). */
void pc_datamgr_close_interval(struct pc_datamgr *dm, double t);
/* Fold every histogram whose end `now` passed.  Returns true when the
 * global width changed (the sampling period follows it). */
bool pc_datamgr_fold(struct pc_datamgr *dm, double now);
/* A new current phase: every live instance's current histogram restarts. */
void pc_datamgr_phase_start(struct pc_datamgr *dm, double now);

#endif

/*
 * pc_steer.h - steering a running search from the dashboard: what a user
 * does by hand next to the automatic search.
 *
 *  - enable a metric on a focus only to watch it (a histogram curve):
 *    an instance of the data manager held by the dashboard, shared with
 *    any experiment that measures the same pair;
 *  - start an experiment (hypothesis x focus) by hand: a persistent node
 *    under the root, so it runs whatever its would-be parents concluded;
 *    and stop it again;
 *  - reload the hypotheses files after an edit and apply them to the
 *    running search: changed thresholds and tunables take effect (with
 *    Paradyn's re-test of the refinements they gate), new hypotheses
 *    join the search under their parents.
 *
 * The dashboard never reaches into the consultant's files; everything it
 * does to the search goes through here or pc_search.h.
 */
#ifndef PC_STEER_H
#define PC_STEER_H

#include <jansson.h>

#include "pc_config.h"
#include "pc_search.h"

struct jnl_writer;

/* Enable `metric` on `f` for display.  Returns the instance id (> 0,
 * pc_datamgr_get) holding one reference, or a negative errno with the reason
 * in `e` (unknown metric: the nearest name; the source refused). */
int pc_steer_enable(struct pc_consult *pc, const char *metric,
		    const struct pc_focus *f, struct hunch_err *e);
/* Drop the display's reference (the instance goes when no experiment
 * needs it either). */
void pc_steer_release(struct pc_consult *pc, int inst);

/* Start hypothesis `hyp` on focus `f` in the running search (the current
 * phase's when there is one).  Returns the node id, or a negative errno
 * with the reason in `e`.  A node that exists already is left as it is
 * and its id returned (`*existed` true). */
int pc_steer_experiment(struct pc_consult *pc, const char *hyp,
			const struct pc_focus *f, bool *existed,
			struct hunch_err *e);

/* Stop node `node` of search `search` (pc_consult_search: 0 global, N
 * phase N), an experiment started by hand: its instances released, its
 * conclusion so far kept, journaled as "experiment_stop".  The search's
 * own nodes are refused (-EPERM), as is one not running (-EALREADY);
 * pc_steer_experiment on it starts it again. */
int pc_steer_stop(struct pc_consult *pc, int search, int node,
		  struct hunch_err *e);

/* The file a user edits to change the hypotheses: the last file loaded
 * after the shipped defaults, or, when only the defaults were loaded, a
 * copy of them written to $XDG_CONFIG_HOME/hunch/hypotheses.json (made
 * on the first call, `*made` true then; that file is loaded by every
 * later hunch too). */
int pc_steer_user_file(const struct pc_config *cfg, char *buf, size_t len,
		       bool *made, struct hunch_err *e);

/* Load every file of pc->cfg again, in order (one of them edited, maybe
 * `extra`, a new file appended when not NULL), validate, and apply the
 * result to the running search.  On error nothing changes and every
 * loader error ("FILE:LINE:COL: $.path: what") is in `ds`, or, for what
 * loads but cannot be applied live (a hypothesis removed), in `e`.
 * Returns 0 or a negative errno; `*added` counts new hypotheses. */
int pc_steer_reload(struct pc_consult *pc, const char *extra,
		    struct pc_diags *ds, int *added, struct hunch_err *e);

/* Apply `c` (a configuration loaded afresh: every file, maybe edited)
 * to the running search, as pc_steer_reload does once it has loaded the
 * files; `c` is taken (freed on error).  `replayed`: the reload is a
 * recorded one that a replay applies, undone by pc_steer_forget (a
 * rebuilt search starts from the header's hypotheses again). */
int pc_steer_apply_config(struct pc_consult *pc, struct pc_config *c,
			  bool replayed, int *added, struct hunch_err *e);

/* A tunable set by hand (the Tunables pane): pc_consult_set_tunable,
 * journaled when it took. */
int pc_steer_jnl_set_tunable(struct pc_consult *pc, const char *name,
			 double value, struct hunch_err *e);

/* Journal every steering action on `pc` into `w` (NULL: no more) as an
 * `action` record at the moment it takes effect, with what a replay
 * needs to redo it (docs/journal-format.md): "tunable" (name, old,
 * value), "experiment" (hyp, focus, paths, node, phase),
 * "experiment_stop" (the same),
 * "metric_enable" / "metric_disable" (name, focus, paths, inst),
 * "hypotheses" (files: every file's document, in load order). */
void pc_steer_jnl_write(const struct pc_consult *pc, struct jnl_writer *w);

/* Redo one recorded `action` record (the replay, after the tick it
 * follows): experiment, metric_enable, metric_disable, hypotheses.
 * Returns 1 applied, 0 not one of these, or a negative errno (the
 * search's log says why: a focus no longer known, a document that does
 * not load). */
int pc_steer_jnl_replay(struct pc_consult *pc, const json_t *rec);

/* The configuration's files as a journal holds them: an array of
 * {"file": path, "document": its JSON}, in load order (a hypotheses
 * reload record; the header's hypotheses_files). */
json_t *pc_steer_jnl_config_files(const struct pc_config *cfg);
/* A journal header's configuration (jnl_header): the hypotheses
 * document when there is one file (the shipped defaults, the common
 * case), every file's document in load order when there are several,
 * and every tunable's value in effect (--set, a file's "set"), which a
 * replay sets again.  The caller json_decref()s the three (NULLs ok). */
void pc_steer_jnl_header_config(const struct pc_config *cfg, json_t **hyp,
			    json_t **files, json_t **tun);
/* Load such an array into c, in order; an empty one is an error. */
int pc_steer_jnl_load_files(struct pc_config *c, const json_t *files,
			struct hunch_err *e);

/* Free what reloads kept alive for `pc` (the replaced definitions, which
 * the live source may still point into until the search ends).  Call
 * after pc_consult_free. */
void pc_steer_forget(const struct pc_consult *pc);

/* The instances a replay holds for display because the recording
 * enabled them by hand (metric_enable not yet undone by a
 * metric_disable), in the order enabled: at most `max` into `inst`.
 * The replay dashboard shows them as curves, as the live one did. */
size_t pc_steer_jnl_held(const struct pc_consult *pc, int *inst, size_t max);

/* Does `pc` have steering state kept here, outside the consultant
 * (definitions a reload replaced, instances held for display)?  A
 * replay's checkpoint cannot copy it. */
bool pc_steer_holds(const struct pc_consult *pc);

#endif

/*
 * pc_steer_int.h - between pc_steer.c (steering) and pc_steer_jnl.c
 * (steering journaled and replayed): the hooks pc_steer.c calls once an
 * action has taken effect.  Each does nothing unless pc_steer_jnl_write
 * gave `pc` a writer.
 */
#ifndef PC_STEER_INT_H
#define PC_STEER_INT_H

#include "pc_steer.h"

void pc_steer_jnl_enable(const struct pc_consult *pc, const char *metric,
			 const struct pc_focus *f, int inst);
void pc_steer_jnl_release(const struct pc_consult *pc, int inst);
void pc_steer_jnl_experiment(const struct pc_consult *pc,
			     const struct pc_search *s, const char *hyp,
			     const struct pc_focus *f, int node);
void pc_steer_jnl_stop(const struct pc_consult *pc,
		       const struct pc_search *s, const char *hyp,
		       const struct pc_focus *f, int node);
void pc_steer_jnl_reload(const struct pc_consult *pc, int added);
/* Instances held for display by a replayed metric_enable. */
bool pc_steer_jnl_holds(const struct pc_consult *pc);
void pc_steer_jnl_forget(const struct pc_consult *pc);

#endif

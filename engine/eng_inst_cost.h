/*
 * eng_inst_cost.h - what one pass through instrumentation costs the
 * target: the figures every trampoline adds to its thread's observed
 * cost counter (DESIGN §5) and that predictions are made of.
 *
 * Each part of a pass (the base trampoline, a counter add, a predicate's
 * test, an rdtsc wall timer start or stop) is measured once per process
 * by running the code hunch generates for the target, in hunch, between
 * calls of a small stand-in for a library function (a locked add and a
 * few loads and stores), as the marginal CPU time it adds.  Parts that
 * call the runtime library (CPU timers, software-level wall timers)
 * cannot run in hunch and keep a figure from bench/inst.
 *
 * A predicate's body is charged only when it runs: the body ends with
 * its own add to the observed-cost counter (eng_inst_cost_charge_bodies),
 * so the fixed figure at the base trampoline holds the test alone.
 *
 * A trap point's base also charges, per pass, what the trap that sent
 * the thread there cost it (trap_ns): no trampoline code runs for that.
 */
#ifndef ENG_INST_COST_H
#define ENG_INST_COST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "x86_tramp.h"

struct eng_inst;

struct eng_inst_cost {
	double base_ns;     /* base trampoline: save, guard, cost add, back */
	double add_ns;      /* counter add or set */
	double test_ns;     /* a predicate's test (its body not taken) */
	double wall_ns;     /* one wall timer start or stop */
	double cpu_ns;      /* one CPU timer start or stop (rtlib call) */
	double trap_ns;     /* the target's CPU per trap-point hit, traced */
	bool measured;      /* base/add/test/wall measured (else model) */
};

/* The model, before (or without) measuring: safe-side figures. */
void eng_inst_cost_model(struct eng_inst_cost *c,
			 const struct x86_tramp_env *env);
/* Measure the inline parts by running generated code here (~50 ms,
 * once per hunch process and kind of code: later calls copy it).
 * On failure c keeps the model and a negative errno is returned. */
int eng_inst_cost_measure(struct eng_inst_cost *c,
			  const struct x86_tramp_env *env);

/* The target's own CPU time per hit of a trap point while hunch traces
 * it (eng_inst_trapcost.c): measured once per hunch process on a traced
 * child; a negative errno, *ns untouched, if that cannot be done. */
int eng_inst_trapcost_measure(double *ns);

/* ns of one pass through the snippet list s[n]: with bodies false, a
 * predicate counts its test only (what the base trampoline charges);
 * with bodies true, its test and body (a prediction's upper bound). */
double eng_inst_cost_snips(const struct eng_inst_cost *c,
			   const struct x86_tramp_env *env,
			   const struct x86_snip *s, size_t n, bool bodies);

/* A copy of s[n] in which the body of every predicate (nested ones too)
 * ends by adding its own cost, in native units (native_per_ns per ns),
 * to the observed-cost counter of the thread's block.  *out is one
 * allocation holding everything (free it); *nout its length. */
int eng_inst_cost_charge_bodies(const struct eng_inst_cost *c,
				const struct x86_tramp_env *env,
				double native_per_ns,
				const struct x86_snip *s, size_t n,
				struct x86_snip **out, size_t *nout);

/* A cost of x native units as the whole units a pass adds: the nearest,
 * at least 1 (0 for x <= 0), without libm (the engine does not link
 * it).  Not rounded up: a pass of 1.57 ns is 4.07 TSC ticks at 2.6 GHz,
 * and charged 5 it read 23% over its cost; the nearest errs by half a
 * tick either way. */
uint64_t eng_inst_cost_native(double x);

/* The instrumentation manager's figures (measured at its creation). */
const struct eng_inst_cost *eng_inst_costs(const struct eng_inst *in);

#endif

/*
 * eng_metric.h - the metric compiler: an MDL metric definition plus a
 * focus become snippets at points (MDL §2, §5; devguide §1.8, §1.21),
 * inserted through eng_inst, and an instance whose value the sampler
 * reads.
 *
 * The engine knows nothing of the consultant's JSON (DESIGN §1), so this
 * header defines its own C model of an MDL metric; the consultant's
 * adapter (consultant/src_live_metric.c) translates pc_metric_def into
 * it.  Everything in the model is borrowed for the duration of a call:
 * the compiler copies what it keeps.
 *
 * Semantics:
 * - A metric has one variable (counter, wall or CPU timer), one slot per
 *   thread (eng_rt_vars.h).  Its base clause is a list of clauses; each
 *   names functions (a list of names - names absent from the program are
 *   dropped silently - or every function, or the start functions, or the
 *   focus' functions), a point (entry, exit, call sites with an optional
 *   callee), placement before/after and order append/prepend, and
 *   primitives guarded by predicates.
 * - A focus restricts it: a code constraint (one function, every function
 *   of a module or of a source file), a thread (the sampler reads that
 *   thread's slot: no code), an object (`$argN` equals a mutex address or
 *   a file descriptor).  Code constraints are nesting counters per thread
 *   (incremented at entry, decremented at exit, tested `> 0`, so
 *   recursion is right); "constrained" clauses run only while every
 *   constraint holds (AND).  A replace constraint's clauses replace the
 *   base clause.
 * - Identical requests share code and variables: enabling the same
 *   metric × focus twice returns the same instance (reference counted);
 *   constraint variables are shared by every instance with the same
 *   constraint on the same functions.  Code is removed when the last
 *   reference goes.
 */
#ifndef ENG_METRIC_H
#define ENG_METRIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hunch_err.h"
#include "eng_refusal.h"

struct eng_proc;
struct eng_inst;
struct eng_sampler;
struct eng_points_cache;

/* ---- the model ---- */
enum eng_mvar_type {
	ENG_MVAR_COUNTER,
	ENG_MVAR_WALL_TIMER,
	ENG_MVAR_CPU_TIMER,
};

enum eng_mpoint { ENG_MPT_ENTRY, ENG_MPT_EXIT, ENG_MPT_CALL };

enum eng_mop {
	ENG_MOP_ADD, ENG_MOP_SET,      /* counters */
	ENG_MOP_START, ENG_MOP_STOP,   /* timers */
	ENG_MOP_INC, ENG_MOP_DEC,      /* a constraint's nesting counter */
};

enum eng_mopnd_kind {
	ENG_MO_CONST,       /* c */
	ENG_MO_ARG,         /* $argN: at entry, or before a call */
	ENG_MO_RETURN,      /* $return: at exit, or after a call */
	ENG_MO_CONSTRAINT,  /* the nesting counter of the focus' constraint
			       named `name` (0 when the focus has none) */
	ENG_MO_KEY,         /* the focus object's key (address or fd) */
};

struct eng_mopnd {
	enum eng_mopnd_kind kind;
	int64_t c;
	int arg;
	const char *name;
};

enum eng_mcmp { ENG_MC_EQ, ENG_MC_NE, ENG_MC_LT, ENG_MC_LE, ENG_MC_GT,
		ENG_MC_GE };

struct eng_mpred {                 /* lhs cmp rhs (signed 64-bit) */
	struct eng_mopnd lhs, rhs;
	enum eng_mcmp cmp;
};

struct eng_mprim {
	enum eng_mop op;
	struct eng_mopnd value;        /* add/set: the operand */
	const struct eng_mpred *preds; /* all must hold */
	size_t npreds;
};

enum eng_mfuncs {
	ENG_MF_NAMES,        /* names[]; missing ones dropped silently */
	ENG_MF_PROCEDURES,   /* every function of the executable */
	ENG_MF_START,        /* main and the known thread start routines */
	ENG_MF_FOCUS,        /* the functions of the focus' code constraint */
};

struct eng_mclause {
	enum eng_mfuncs funcs;
	const char *const *names;
	size_t nnames;
	enum eng_mpoint point;
	const char *callee;            /* ENG_MPT_CALL: only calls to this */
	bool after;                    /* placement: after the point */
	bool prepend;                  /* order among the point's snippets */
	bool constrained;              /* guard with the focus' constraints */
	const struct eng_mprim *prims;
	size_t nprims;
};

struct eng_mdef {
	const char *name;              /* for messages and sharing */
	enum eng_mvar_type type;
	const struct eng_mclause *clauses;   /* the base clause */
	size_t nclauses;
	/* None of the clause's functions in the program, on a focus that
	 * leaves /Code whole: enabled all the same, counting 0 (the
	 * program makes none of those calls), not refused. */
	bool absent_is_zero;
};

/* A constraint that keeps a nesting counter (MDL `constraint ... is
 * counter`): its clauses use INC/DEC, usually over ENG_MF_FOCUS. */
struct eng_mconstraint {
	const char *name;
	const struct eng_mclause *clauses;
	size_t nclauses;
};

/* Kinds of objects (/SyncObject classes, files). */
enum eng_seen_class {
	ENG_SEEN_MUTEX, ENG_SEEN_CONDVAR, ENG_SEEN_RWLOCK, ENG_SEEN_BARRIER,
	ENG_SEEN_SEMAPHORE, ENG_SEEN_FILE,
};

enum eng_mcode { ENG_CODE_ALL, ENG_CODE_FUNCTION, ENG_CODE_MODULE,
		 ENG_CODE_FILE };

struct eng_mfocus {
	/* /Code: which functions ENG_MF_FOCUS names.  Modules are named by
	 * file basename ("libc.so.6"), files by source basename ("x.c"). */
	enum eng_mcode code;
	const char *module;            /* NULL: any module */
	const char *srcfile;           /* ENG_CODE_FILE */
	const char *function;          /* ENG_CODE_FUNCTION */
	/* Nesting-counter constraints that apply (ANDed). */
	const struct eng_mconstraint *cons;
	size_t ncons;
	/* /Process/<pid>/<thread>: 0 for every thread. */
	pid_t tid;
	/* /SyncObject/<class>: only the functions of that class (mutex
	 * functions for Mutex, ...) among the clauses' named functions. */
	bool has_class;
	enum eng_seen_class cls;
	/* /SyncObject, /Files: the object's key; `$argN` holds it. */
	bool has_key;
	uint64_t key;
	int key_arg;
	/* A replace constraint: these clauses and type replace the base. */
	const struct eng_mclause *replace;
	size_t nreplace;
	const char *replace_name;
};

/* ---- the compiler ---- */
struct eng_metric;
struct eng_minst;

/* One per target process.  `pc` may be NULL (the compiler keeps its own
 * points cache).  The runtime library must be ready (eng_inst). */
int eng_metric_create(struct eng_proc *p, struct eng_inst *in,
		      struct eng_sampler *smp, struct eng_points_cache *pc,
		      struct eng_metric **out, struct hunch_err *err);
/* Removes every instance's code (commits), then frees. */
void eng_metric_destroy(struct eng_metric *m);

/* Compile, insert (one commit) and return the instance; an identical
 * enabled request returns the same instance with one more reference.
 * Fails (-ENOENT) when no point at all could be instrumented, naming the
 * metric, the focus and the functions with the reasons. */
int eng_metric_enable(struct eng_metric *m, const struct eng_mdef *def,
		      const struct eng_mfocus *f, struct eng_minst **out,
		      struct hunch_err *err);
/* The enabled instance identical to (def, f) with one more reference,
 * or NULL: nothing is compiled or inserted. */
struct eng_minst *eng_metric_share(struct eng_metric *m,
				   const struct eng_mdef *def,
				   const struct eng_mfocus *f);
/* Drop one reference; the last one removes the code (commits) and frees
 * the variables no other instance uses. */
int eng_metric_disable(struct eng_metric *m, struct eng_minst *mi,
		       struct hunch_err *err);
/* A batch of enables and disables, committed in one stop of the
 * program at its end instead of one each (see eng_metric_batch.c).  In
 * a batch an enable returns its instance once compiled; whether any of
 * its points was built is known at the end, which hands each instance
 * that measures nothing to `failed` (rc, why) and then frees it: the
 * caller forgets it there.  A disable in a batch frees the instance at
 * once; its code goes at the end. */
typedef void (*eng_metric_failed_fn)(void *arg, struct eng_minst *mi, int rc,
				     const char *why);
void eng_metric_batch_begin(struct eng_metric *m);
void eng_metric_batch_end(struct eng_metric *m, eng_metric_failed_fn failed,
			  void *arg);

/* The value as of the sampler's last tick: counters as counted, timers
 * in ns; summed over threads (with exited ones) or the focus thread's. */
int eng_metric_value(const struct eng_metric *m, const struct eng_minst *mi,
		     int64_t *v);
/* Whether that value kept an older reading of a thread's timer (the
 * thread was inside the timer's update: eng_sampler_var_stale); the time
 * since shows at a later tick, so a rate over this tick would read low
 * and the next one high. */
bool eng_metric_stale(const struct eng_metric *m, const struct eng_minst *mi);
/* Read the instance's variable now, in every thread, so that the value
 * above is as of now rather than of the last tick. */
int eng_metric_refresh(struct eng_metric *m, const struct eng_minst *mi);

struct eng_minst_info {
	unsigned refs;
	size_t functions;       /* functions instrumented */
	size_t points;          /* requests active (incl. constraints') */
	size_t refused;         /* requests refused at commit */
	size_t traps;           /* points that went to the int3 fallback */
	enum eng_refusal why;   /* one refusal reason, or none */
	uint32_t var_id;        /* the sampled variable (eng_sampler ids) */
	uint64_t var_handle;
	/* Timers started by catchup on threads already inside: at the
	 * activation's beginning (known for the outermost activation of a
	 * thread's start function), where stack samples first saw it
	 * (eng_inst_catchup_set_psampler), or at enabling (the time before is
	 * missing: the value is a lower bound until those activations end). */
	unsigned caught_from_begin, caught_from_samples, caught_from_enable;
};
void eng_metric_info(const struct eng_metric *m, const struct eng_minst *mi,
		     struct eng_minst_info *out);

/* ---- predicted cost ---- */
/* Calls per second assumed for a function nobody told us about: 1000.
 * Paradyn used a fixed guess too; a wrong guess is corrected by the
 * observed cost once the instance runs. */
#define ENG_METRIC_DEFAULT_CALLS_PER_S 1000.0
/* A point that falls back to int3 costs a signal delivery in the target:
 * bench/inst measures ~104 µs while hunch is attached (ptrace sees each
 * SIGTRAP first), which is when instances run (~4 µs once detached). */
#define ENG_METRIC_TRAP_COST_NS 100000u

/* Tell the predictor how often a function runs (from a sampler, an
 * earlier instance, a profile).  module NULL: the first module holding
 * the name. */
int eng_metric_set_call_rate(struct eng_metric *m, const char *module,
			     const char *function, double calls_per_s);

/* The costs predictions use, as measured when the instrumentation
 * manager was created (eng_inst_cost.h: generated code run in hunch
 * between calls of a stand-in library function).  -EIO: the
 * measurement failed and these are the model's figures. */
struct eng_metric_cal {
	double add_ns;          /* counter add/set */
	double if_ns;           /* a predicate's test */
	double wall_pair_ns;    /* rdtsc wall timer start + stop (0 when
				   the wall timer is the software level) */
	double base_ns;         /* the base trampoline's share of a pass */
};
int eng_metric_cal_run(struct eng_metric *m, struct eng_metric_cal *out);

struct eng_metric_cost {
	size_t points;          /* snippet lists that would be inserted */
	double ns_per_s;        /* predicted instrumentation ns per second */
	double slowdown;        /* ns_per_s / 1e9 (a fraction of one CPU) */
	/* Functions whose call rate is being measured now (a counter at
	 * their entry for 20 ms of the target's CPU time,
	 * eng_metric_probe.c): the prediction used the guess for them;
	 * ask again once eng_metric_probe_poll has ended their probes. */
	size_t probing;
};
/* Compile without inserting: the cost of each snippet list times the
 * call rate of its function (constraint code included, shared code
 * already inserted excluded). */
/* Start the call-rate probes predictions queued since the last poll,
 * and end those whose window is over: read, record the rate (calls per
 * second of the target's CPU time), remove the counter; all in one stop
 * of every thread.  Call it every tick, so that a probe starts within a
 * tick of its prediction and outlives its window by at most a tick. */
void eng_metric_probe_poll(struct eng_metric *m);
/* Probes queued or running. */
size_t eng_metric_probe_running(const struct eng_metric *m);
/* ms until the next poll has work (0 for a queued probe), -1 if none. */
int eng_metric_probe_due_ms(const struct eng_metric *m);

int eng_metric_predict(struct eng_metric *m, const struct eng_mdef *def,
		       const struct eng_mfocus *f, struct eng_metric_cost *c,
		       struct hunch_err *err);

/* ---- resource discovery through instrumentation ---- */
/* While a metric instruments sync functions (pthread_mutex_*, _cond_*,
 * _rwlock_*, _barrier_*, sem_*) or I/O functions (read, write, send,
 * ...), their entries also keep each thread's last few first arguments
 * in its own slots (a small ring written by the snippet itself: no call,
 * no rtlib change); eng_metric_seen_poll drains them.  It is sampling:
 * an object used between two polls more often than the ring holds may
 * wait for a later poll to be seen. */
struct eng_seen {
	enum eng_seen_class cls;
	const char *class_name;  /* "Mutex", "CondVar", "RWLock", "Barrier",
				    "Semaphore", "File" */
	uint64_t value;          /* the object's address, or the fd */
	const char *name;        /* data symbol ("mt_lock", "buf+0x40") or
				    "0x55..." ; for files the path from
				    /proc/<pid>/fd ("pipe:[123]" for pipes),
				    sockets by peer ("tcp:a:p->b:q") */
};
/* Report each object seen for the first time since the last poll (call
 * after eng_sampler_tick).  Returns how many were reported. */
int eng_metric_seen_poll(struct eng_metric *m,
			 void (*fn)(void *arg, const struct eng_seen *s),
			 void *arg);

/* A short name of a focus for messages ("f in prog, thread 42, key
 * 0x..."). */
void eng_metric_key_focus_name(const struct eng_mfocus *f, char *buf,
			       size_t len);

#endif

/*
 * eng_metric_int.h - private to the metric compiler (eng_metric*.c).
 */
#ifndef ENG_METRIC_INT_H
#define ENG_METRIC_INT_H

#include <stdio.h>

#include "eng_inst.h"
#include "eng_metric.h"
#include "eng_points.h"
#include "eng_rt_vars.h"
#include "eng_image.h"

/* A module of the process with its image (opened once). */
struct mmod {
	char *path;
	struct eng_image *img;   /* NULL when the file could not be read */
	uint64_t base;           /* runtime = base + image-relative */
};

/* A function of the process. */
struct mfunc {
	const struct mmod *mod;
	const struct eng_func *f;
};

struct mrate {
	char *module, *function;
	double calls_per_s;
};

/* Resource discovery (eng_metric_seen.c): the entry of one sync or I/O
 * function keeps, per thread, its last MSEEN_SLOTS first arguments. */
#define MSEEN_SLOTS 4
struct mwatch {
	const struct eng_func *f;
	enum eng_seen_class cls;
	unsigned refs;
	uint32_t n_id, last_id, slot_id[MSEEN_SLOTS];
	uint64_t n_h, last_h, slot_h[MSEEN_SLOTS];
	uint32_t req;
	bool has_req;
	struct mwatch *next;
};

struct mknown {
	enum eng_seen_class cls;
	uint64_t v;
	char *name;
};

/* An entry snippet to run for threads already inside a function when
 * its code is inserted (catchup, devguide §1.12). */
struct mcatch {
	uint64_t lo, hi;         /* the function, runtime addresses */
	struct x86_snip s;       /* a timer start or a constant add */
};

/* A node whose clauses name the start functions, on a plain focus,
 * follows new threads' start routines (eng_metric_follow.c). */
struct mfollow {
	char *name;                  /* the metric's, for messages */
	enum eng_mvar_type type;
	struct eng_mclause *cl;      /* copies of its start-function clauses */
	size_t ncl;
	uint64_t *done;              /* start functions instrumented */
	size_t ndone, capdone;
};

/* Shared code: a metric's clauses for one code focus and object, or one
 * constraint's clauses for one code focus.  Owns its variable(s) and its
 * requests in eng_inst. */
struct mnode {
	char *key;
	unsigned refs;
	enum eng_var_kind kind;
	uint32_t var_id;
	uint64_t handle;
	bool has_flag;           /* object flag (see eng_metric_gen.c) */
	uint32_t flag_id;
	uint64_t flag_h;
	bool has_tail;           /* tail-call slot T (eng_metric_tail.c) */
	uint32_t tail_id;
	uint64_t tail_h;
	uint32_t *reqs;
	size_t nreqs, capreqs;
	const struct eng_func **flagged;  /* functions whose entry sets
					     the flag */
	size_t nflagged, capflagged;
	size_t functions, refused, traps;
	enum eng_refusal why;    /* one refusal (eng_inst or parser) */
	struct mcatch *catch;    /* entry snippets for catchup */
	size_t ncatch, capcatch;
	/* catchup's timer starts, by where they count from */
	unsigned from_begin, from_samples, from_enable;
	struct mfollow *follow;  /* NULL: its functions never change */
	bool fresh;              /* inserted by the current enable */
	struct mwatch **watch;   /* discovery watchers (references held) */
	size_t nwatch, capwatch;
	struct mnode **cons;     /* constraint nodes (references held) */
	const char **con_names;  /* their names, parallel to cons */
	size_t ncons;
	struct mnode *next;
};

struct eng_minst {
	char *key;
	unsigned refs;
	struct mnode *code;
	pid_t tid;
	struct eng_minst *next;
};

struct eng_metric {
	struct eng_proc *p;
	struct eng_inst *in;
	struct eng_sampler *smp;
	struct eng_points_cache *pc;
	bool own_pc;
	struct mmod *mods;
	size_t nmods;
	struct mnode *nodes;
	struct eng_minst *insts;
	struct mrate *rates;
	size_t nrates;
	bool no_discovery;
	struct mwatch *watches, *wdead;
	struct mknown *known;
	size_t nknown, capknown;
	/* Predicting a point without room: will whole-function relocation
	 * give it a jump (eng_funcreloc_check), or will it trap?  Answers
	 * kept per function until the module list changes. */
	struct eng_funcreloc_checker *frc;
	struct mreloc { const struct eng_func *f; bool ok; } *rel;
	size_t nrel, caprel;
	/* Images replaced by one with a debug file from debuginfod, kept
	 * open: watches and flags still compare their function pointers. */
	struct eng_image **old_imgs;
	size_t nold;
	/* call-rate probes queued (mi NULL) or running (eng_metric_probe.c) */
	struct mprobe *probes;
	size_t nprobes, capprobes;
	/* a batch (eng_metric_batch.c): instances enabled in it, to check
	 * and catch up after its one commit, and nodes its disables
	 * dropped, to reap after it */
	bool batch;
	struct mbatch_new *batch_new;
	size_t nbatch_new, capbatch_new;
	struct mnode *batch_dead;
};

/* What an enable's check says of a node that measures nothing. */
struct mcheck {
	char name[128];
	char fo[256];
	bool absent_ok;   /* absent_is_zero on the whole program */
};
struct mbatch_new {
	struct eng_minst *mi;
	struct mcheck c;
};

/* eng_metric.c, for the batch */
void eng_metric_node_put(struct eng_metric *m, struct mnode *n,
			 struct mnode **dead);
void eng_metric_nodes_reap(struct eng_metric *m, struct mnode *dead);
void eng_metric_catchup_fresh(struct eng_metric *m);
void eng_metric_inst_link(struct eng_metric *m, struct eng_minst *mi,
			  char *key, struct mnode *n, pid_t tid);
void eng_metric_inst_unlink(struct eng_metric *m, struct eng_minst *mi);
/* eng_metric_check.c: what an enable's check needs of its definition
 * and focus; the check (0, or -ENOENT with the reason); the requests of
 * a node the commit built */
void eng_metric_check_of(const struct eng_mdef *def,
			 const struct eng_mfocus *f, struct mcheck *c);
int eng_metric_check(struct eng_metric *m, const struct mcheck *c,
		     struct mnode *n, struct hunch_err *err);
size_t eng_metric_check_active(const struct mnode *n);
/* eng_metric_batch.c: an instance enabled in the batch, checked at its
 * end; one disabled in it before that end */
void eng_metric_batch_defer(struct eng_metric *m, const struct eng_mdef *def,
			    const struct eng_mfocus *f, struct eng_minst *mi);
void eng_metric_batch_forget(struct eng_metric *m, struct eng_minst *mi);

/* ---- eng_metric_probe.c: call rates measured before predicting ---- */
/* Functions a prediction needs a rate for, collected during its dry
 * build (a probe cannot be enabled in the middle of one). */
struct mprobe_wants {
	struct mfunc *f;
	size_t n, cap;
};
int eng_metric_probe_want(struct eng_metric *m, struct mprobe_wants *w,
		const struct mfunc *fn);
/* Queue a probe for each wanted function not probed yet, started at the
 * next eng_metric_probe_poll (frees w's list); returns how many of them
 * are queued or being probed now. */
size_t eng_metric_probe_queue(struct eng_metric *m, struct mprobe_wants *w);
void eng_metric_probe_free(struct eng_metric *m);

/* ---- eng_metric_funcs.c: which functions a clause names ---- */
int eng_metric_funcs_refresh(struct eng_metric *m, struct hunch_err *err);
/* The functions of `c` for focus `f`, deduplicated (aliases are one
 * function); *out is malloc'd (may be NULL with n 0). */
int eng_metric_funcs_of(struct eng_metric *m, const struct eng_mclause *c,
	      const struct eng_mfocus *f, struct mfunc **out, size_t *n,
	      struct hunch_err *err);
/* The function called at an absolute address (following a PLT entry by
 * name), or NULL. */
const char *eng_metric_funcs_name_at(struct eng_metric *m, uint64_t addr);
double eng_metric_funcs_rate(const struct eng_metric *m,
			     const struct mfunc *fn);

/* ---- eng_metric_gen.c: clauses into snippet lists ---- */
/* Where generated snippet lists go: inserted, or only costed. */
struct mgen_sink {
	int (*emit)(void *arg, const struct mfunc *fn,
		    const struct x86_point *xp, const struct x86_snip *s,
		    size_t n, bool prepend, struct hunch_err *err);
	void *arg;
	bool dry;                /* predicting: allocate no variables */
};
struct mgen {
	struct eng_metric *m;
	const struct eng_mdef *def;
	const struct eng_mfocus *f;
	struct mnode *node;      /* variable handles, constraint nodes */
	enum eng_mvar_type type;
	bool is_constraint;      /* INC/DEC apply to node->handle */
	bool is_replace;         /* the clauses already test the key */
	struct mgen_sink sink;
	size_t nfuncs;           /* functions with at least one point */
	const uint64_t *skip;    /* functions (runtime entry) to leave out */
	size_t nskip;
};
int eng_metric_gen_clauses(struct mgen *g, const struct eng_mclause *c,
			   size_t n, struct hunch_err *err);

/* ---- eng_metric_tail.c: timers through tail calls ---- */
#define MTAIL_MAX 32
/* The focus function f and the functions it reaches by direct tail
 * calls, transitively (f not among them). */
struct mtail {
	struct mfunc f;
	struct mfunc fn[MTAIL_MAX];
	size_t n;
};
int eng_metric_tail_closure(struct eng_metric *m, const struct mfunc *f,
		  struct mtail *t, struct hunch_err *err);
/* What an exit clause does at point xp of `at` (f or a closure
 * function): the rules in eng_metric_tail.c. */
enum mtail_role {
	MTAIL_PLAIN,    /* as without tail calls */
	MTAIL_F_EXIT,   /* list; if (SP == T) T = 0 */
	MTAIL_F_TAIL,   /* if (T == 0) T = SP; if (T != SP) list */
	MTAIL_G_EXIT,   /* if (SP == T) { list; T = 0 } */
	MTAIL_G_TO_F,   /* if (SP == T) list */
	MTAIL_G_ON,     /* nothing */
};
enum mtail_role eng_metric_tail_role(const struct eng_metric *m,
				     const struct mtail *t,
				     const struct mfunc *at,
				     const struct x86_point *xp);

/* eng_metric.c: the sink that queues requests for node n. */
struct minsert_arg {
	struct eng_metric *m;
	struct mnode *n;
};
int eng_metric_sink_insert(void *arg, const struct mfunc *fn,
		 const struct x86_point *xp, const struct x86_snip *s,
		 size_t ns, bool prepend, struct hunch_err *err);

/* ---- eng_metric_follow.c: start functions follow new threads ---- */
int eng_metric_follow_init(struct eng_metric *m, struct mnode *n,
		 const struct eng_mdef *def, const struct eng_mfocus *f);
void eng_metric_follow_free(struct mfollow *fo);
/* Instrument start routines of threads that appeared since (stops and
 * resumes a running program once); the number of nodes extended. */
int eng_metric_follow_poll(struct eng_metric *m);

/* ---- eng_metric_seen.c: resource discovery ---- */
/* Watch fn's first argument for node n when fn is a sync or I/O
 * function (queues a request; the caller commits). */
int eng_metric_seen_watch(struct eng_metric *m, struct mnode *n,
			  const struct mfunc *fn,
		const struct x86_func *xf, struct hunch_err *err);
/* Drop n's watchers (removals queued); eng_metric_seen_reap after the commit. */
void eng_metric_seen_drop(struct eng_metric *m, struct mnode *n);
void eng_metric_seen_reap(struct eng_metric *m);
void eng_metric_seen_free(struct eng_metric *m);
/* The kind of object a function's first argument is, or -1. */
int eng_metric_seen_class(const char *fname);
/* eng_metric_sock.c: "socket:[ino]" -> "tcp:a:p->b:q", "unix:/path". */
void eng_metric_sock_name(int pid, char *buf, size_t len);

/* ---- eng_metric_cal.c ---- */
double eng_metric_cal_cost(const struct eng_metric *m, const struct x86_snip *s,
		 size_t n);
/* The base trampoline's share of a pass, ns. */
double eng_metric_cal_base(const struct eng_metric *m);

/* ---- eng_metric_key.c: identity of requests ---- */
/* Canonical text of a clause list / focus part, appended to `f`. */
void eng_metric_key_clauses(FILE *f, const struct eng_mclause *c, size_t n);
void eng_metric_key_code(FILE *f, const struct eng_mfocus *fo);
void eng_metric_key_object(FILE *f, const struct eng_mfocus *fo);

#endif

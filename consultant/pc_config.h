/*
 * pc_config.h - the why axis, metric definitions and tunables, as loaded
 * from hypotheses/ JSON files (schema: hypotheses/README.md).
 *
 * One struct pc_config holds the merged result of the shipped defaults and
 * any user files: later files override earlier ones by name.  Every entity
 * remembers where it was defined (struct pc_loc) so that cross-reference
 * errors found after merging still point at a file, line, column and JSON
 * path.
 */
#ifndef PC_CONFIG_H
#define PC_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "hunch_err.h"

#define PC_CONFIG_VERSION 1
#define PC_NHIER 4     /* /Code, /Process, /SyncObject, /Files */
#define PC_MAX_INPUTS 4

extern const char *const pc_hier_names[PC_NHIER];
int pc_config_hier_index(const char *name);   /* -1 if not a hierarchy root */

/* Where something was written: file:line:col and the JSON path. */
struct pc_loc {
	const char *file;   /* owned by the config's file list */
	int line, col;
	char path[128];
};

/* ---- tunables ---- */
enum pc_tun_type { PC_TUN_FLOAT, PC_TUN_INT, PC_TUN_BOOL };

struct pc_tunable {
	char *name;
	enum pc_tun_type type;
	double value, def, min, max;
	bool developer;
	char *units;
	char *desc;
	bool used_as_threshold;   /* for the "threshold out of range" wording */
	struct pc_loc loc;
};

/* ---- metric definitions: MDL in JSON (see hypotheses/README.md) ---- */
enum pc_point_kind { PC_PT_ENTRY, PC_PT_EXIT, PC_PT_CALL };
enum pc_prim_op { PC_OP_ADD, PC_OP_SET, PC_OP_START, PC_OP_STOP,
		  PC_OP_INC, PC_OP_DEC };
enum pc_operand_kind { PC_VAL_CONST, PC_VAL_ARG, PC_VAL_RETURN,
		       PC_VAL_CONSTRAINT, PC_VAL_RESOURCE_ADDR };

struct pc_operand {
	enum pc_operand_kind kind;
	double c;        /* PC_VAL_CONST */
	int arg;         /* PC_VAL_ARG: $argN */
	char *name;      /* PC_VAL_CONSTRAINT: constraint variable name */
};

/* A predicate guarding a primitive: lhs cmp rhs. */
struct pc_pred {
	struct pc_operand lhs, rhs;
	char cmp[3];     /* "==", "!=", "<", "<=", ">", ">=" */
};

struct pc_prim {
	enum pc_prim_op op;
	char *var;                 /* NULL: the metric's own variable */
	struct pc_operand value;   /* add/set */
	struct pc_pred *preds;
	size_t npreds;
};

struct pc_instr {                  /* one instrumentation request */
	char **foreach;            /* function names (after list expansion) */
	size_t nforeach;
	char *foreach_list;        /* the list name when one was used */
	enum pc_point_kind point;
	bool after;                /* placement: before/after the point */
	bool prepend;              /* order among snippets at the point */
	bool constrained;          /* guard with the focus' constraint vars */
	char *callee;              /* PC_PT_CALL: only calls to this function */
	struct pc_prim *prims;
	size_t nprims;
};

enum pc_base_type { PC_BASE_COUNTER, PC_BASE_WALL_TIMER, PC_BASE_CPU_TIMER,
		    PC_BASE_INTERNAL };

struct pc_constraint_def {
	char *name;
	char *hierarchy;           /* "/Code", ... */
	char *match;               /* e.g. "/Code/ * / * / *" (no spaces) */
	bool replace;              /* replaces the metric's base clause */
	enum pc_base_type type;    /* counter (a nesting flag) or timer */
	struct pc_instr *instr;
	size_t ninstr;
	struct pc_loc loc;
};

/* What the kernel can measure instead of the base clause where the
 * focus does not constrain /Code ("kernel" in the JSON): the threads'
 * CPU time, or their run-queue wait (which only the kernel knows: a
 * metric of it has no base clause). */
enum pc_kernel { PC_KERNEL_NONE, PC_KERNEL_CPU, PC_KERNEL_RUNQUEUE };

struct pc_metric_def {
	char *name;
	char *title;
	char *units;
	char *unit_style;          /* "normalized", "unnormalized", "sampled" */
	char *aggregate;           /* "sum", "avg", "min", "max" */
	char *style;               /* "event_counter", "sampled_function" */
	enum pc_base_type type;
	enum pc_kernel kernel;     /* "cpu": thread CPU time from the kernel
				    * on foci that leave /Code unconstrained;
				    * "runqueue": their run-queue wait */
	char **constraints;        /* names of applicable constraints */
	size_t nconstraints;
	bool absent_is_zero;       /* a program with none of the base
				    * clause's functions (no MPI library)
				    * measures 0, not "cannot be measured" */
	struct pc_instr *instr;    /* the base clause */
	size_t ninstr;
	struct pc_loc loc;
};

struct pc_list_def {               /* a named function list */
	char *name;
	char **items;
	size_t nitems;
	struct pc_loc loc;
};

/* ---- hypotheses ---- */
enum pc_cmp { PC_CMP_GT, PC_CMP_LT };
enum pc_expand {
	PC_EXP_WHY_AND_WHERE, PC_EXP_WHERE_AND_WHY, PC_EXP_WHY_BEFORE_WHERE,
	PC_EXP_WHERE_BEFORE_WHY, PC_EXP_WHY_ONLY, PC_EXP_WHERE_ONLY,
};
extern const char *const pc_expand_names[6];

enum pc_pm_op { PC_PM_ID, PC_PM_ADD, PC_PM_SUB, PC_PM_MUL, PC_PM_DIV,
		PC_PM_MAX };

struct pc_pm_input {
	char *metric;
	bool top_focus;            /* "focus": "top" (else the node's own) */
	struct pc_loc loc;
};

struct pc_hypothesis {
	char *name;
	char *parent;              /* NULL only for the virtual root */
	char *desc;
	bool is_virtual;           /* no metric: OR of its children */
	enum pc_pm_op op;
	struct pc_pm_input in[PC_MAX_INPUTS];
	int nin;
	char *threshold;           /* tunable name */
	enum pc_cmp cmp;
	enum pc_expand expand;
	bool prune[PC_NHIER];
	char **suppress;
	size_t nsuppress;
	int parent_idx;            /* resolved after loading */
	struct pc_loc loc, loc_parent, loc_threshold;
};

struct pc_config {
	int version;
	struct pc_tunable *tun;     size_t ntun;
	struct pc_metric_def *met;  size_t nmet;
	struct pc_constraint_def *con; size_t ncon;
	struct pc_list_def *lists;  size_t nlists;
	struct pc_hypothesis *hyp;  size_t nhyp;
	char **files;               size_t nfiles;   /* names for pc_loc */
};

/* ---- diagnostics: every loader error, in order ---- */
struct pc_diag {
	char *msg;                  /* "FILE:LINE:COL: PATH: text" */
};
struct pc_diags {
	struct pc_diag *d;
	size_t n, cap;
};
void pc_jx_diags_free(struct pc_diags *ds);

/* ---- loading ---- */
struct pc_config *pc_config_new(void);
void pc_config_free(struct pc_config *c);

/* Load one file into `c` (later files override earlier ones by name) and
 * validate the merged result.  Returns 0, or -EINVAL with every error in
 * `ds` (each "FILE:LINE:COL: PATH: message") and the first in `e`. */
int pc_config_load_file(struct pc_config *c, const char *file,
			struct pc_diags *ds, struct hunch_err *e);
/* The same from a string (tests); `name` stands for the file name. */
int pc_config_load_string(struct pc_config *c, const char *name,
			  const char *text, struct pc_diags *ds,
			  struct hunch_err *e);

/* The shipped defaults, then $XDG_CONFIG_HOME/hunch/hypotheses.json (or
 * ~/.config/...) if it exists, then `user_file` if not NULL. */
int pc_config_load_all(struct pc_config *c, const char *default_file,
		       const char *user_file, struct pc_diags *ds,
		       struct hunch_err *e);
/* Path of the user file in the XDG config directory (may not exist). */
int pc_config_xdg_path(char *buf, size_t len);

/* ---- lookups ---- */
struct pc_tunable *pc_tunables_find(const struct pc_config *c, const char *n);
double pc_tunables_get(const struct pc_config *c, const char *name);
/* "NAME=VALUE" (--set): parse, range-check, set. */
int pc_tunables_set_str(struct pc_config *c, const char *assign,
		       struct hunch_err *e);
int pc_tunables_set(struct pc_config *c, const char *name, double v,
		   struct hunch_err *e);
int pc_config_hypo_find(const struct pc_config *c, const char *name);
const struct pc_metric_def *pc_metric_def_find(const struct pc_config *c,
					   const char *name);
/* The kind of wait a metric times, known from the resources it can be
 * constrained to: a wall timer measured in the program (not read from
 * the kernel) constrainable to a file times I/O, to a sync object
 * synchronization (the last such constraint decides). */
enum pc_wait_kind { PC_WAIT_NONE, PC_WAIT_IO, PC_WAIT_SYNC };
enum pc_wait_kind pc_metric_def_wait_kind(const struct pc_metric_def *m);

/* Edit distance suggestion: the candidate closest to `word`, or NULL when
 * none is close enough to be a plausible typo. */
const char *pc_jx_suggest(const char *word, const char *const *cands, size_t n);

#endif

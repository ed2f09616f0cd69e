/*
 * pc_load_int.h - shared by the loader files (pc_config.c,
 * pc_tunables.c, pc_metric_def.c): the load context and the small typed
 * accessors that turn a JSON shape mistake into a positioned message.
 */
#ifndef PC_LOAD_INT_H
#define PC_LOAD_INT_H

#include <jansson.h>

#include "pc_config.h"
#include "vec.h"
#include "xmalloc.h"
#include "pc_jpos.h"

struct pc_lctx {
	struct pc_config *c;
	const char *file;       /* as kept in c->files */
	struct pc_jpos jp;
	struct pc_diags *ds;
	int nerr;
	const char **thr;       /* tunables named as thresholds in the file */
	size_t nthr;
};
bool pc_config_lctx_is_threshold(const struct pc_lctx *l, const char *name);

/* An error at a JSON path of the file being loaded. */
void pc_jx_err(struct pc_lctx *l, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* An error at a remembered location (cross-reference checks). */
void pc_jx_err_at(struct pc_lctx *l, const struct pc_loc *loc,
		const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void pc_jx_loc_set(struct pc_lctx *l, struct pc_loc *loc, const char *path);

const char *pc_jx_type_name(const json_t *j);
/* Report fields of `obj` not in `allowed` (NULL-terminated). */
void pc_jx_fields(struct pc_lctx *l, json_t *obj, const char *path,
		  const char *const *allowed);
/* Typed members; a missing required member or a wrong type is reported
 * and NULL/false returned.  `out` is set only on success. */
bool pc_jx_str(struct pc_lctx *l, json_t *obj, const char *path,
	       const char *key, bool required, const char **out);
bool pc_jx_num(struct pc_lctx *l, json_t *obj, const char *path,
	       const char *key, bool required, double *out);
bool pc_jx_bool(struct pc_lctx *l, json_t *obj, const char *path,
		const char *key, bool *out);
/* A string member that must be one of `names` (NULL-terminated); returns
 * its index, `def` when absent, -1 on error. */
int pc_jx_enum(struct pc_lctx *l, json_t *obj, const char *path,
	       const char *key, const char *const *names, int def);
/* A member that must be an object / an array (NULL when absent). */
json_t *pc_jx_obj(struct pc_lctx *l, json_t *obj, const char *path,
		  const char *key, bool required);
json_t *pc_jx_arr(struct pc_lctx *l, json_t *obj, const char *path,
		  const char *key);
/* An array of strings, strdup'ed. */
bool pc_jx_strlist(struct pc_lctx *l, json_t *obj, const char *path,
		   const char *key, char ***out, size_t *n);

/* The unknown-name message with "did you mean" when one is close. */
void pc_jx_err_unknown(struct pc_lctx *l, const struct pc_loc *loc,
		     const char *what, const char *name, const char *expected,
		     const char *const *cands, size_t n);

/* snprintf for JSON paths: paths are bounded, and a cut one still
 * locates the error well enough, so truncation is accepted here. */
void pc_jx_path(char *out, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* strdup that aborts on failure; NULL stays NULL (optional fields). */
char *pc_jx_strdup(const char *s);
#define PC_GROW(arr, n, cap) VEC_RESERVE((arr), (cap), (n) + 1)

/* Room for one more element (config arrays are small). */
#define PC_APPEND(arr, n) \
	((arr) = xreallocarray((arr), (n) + 1, sizeof(*(arr))), &(arr)[(n)++])

/* Section parsers (one per file). */
void pc_tunables_parse(struct pc_lctx *l, json_t *obj);
void pc_tunables_apply_set(struct pc_lctx *l, json_t *obj);
void pc_tunables_free(struct pc_tunable *t);
void pc_metric_def_lists_parse(struct pc_lctx *l, json_t *obj);
void pc_metric_def_constraints_parse(struct pc_lctx *l, json_t *obj);
void pc_metric_def_parse(struct pc_lctx *l, json_t *obj);
void pc_metric_def_free(struct pc_metric_def *m);
void pc_metric_def_constraint_free(struct pc_constraint_def *d);
void pc_metric_def_list_free(struct pc_list_def *d);
/* Cross-references of metrics (lists, constraints) after merging. */
void pc_metric_def_check_refs(struct pc_lctx *l);

#endif

/*
 * pc_metric_def.c - metric definitions, constraints and function lists:
 * MDL in JSON (schema in hypotheses/README.md).
 *
 * The loader checks everything that can be checked without the program:
 * shapes, primitive/base-type agreement, where $argN and $return make
 * sense, and (after merging) that every list and constraint a metric
 * names exists.  Names of functions are checked a second time, against
 * the binary, when the engine's metric compiler instantiates a metric.
 */
#include "pc_load_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const metric_fields[] = {
	"title", "description", "units", "unit_style", "aggregate", "style",
	"type", "kernel", "constraints", "absent_is_zero", "base", NULL
};
/* "kernel" values, in enum pc_kernel order after PC_KERNEL_NONE. */
static const char *const kernels[] = { "cpu", "runqueue", NULL };
static const char *const con_fields[] = {
	"description", "hierarchy", "match", "replace", "type", "base", NULL
};
static const char *const instr_fields[] = {
	"foreach", "at", "callee", "placement", "order", "constrained", "do",
	NULL
};
static const char *const prim_fields[] = { "op", "var", "value", "if", NULL };
static const char *const base_types[] = {
	"counter", "wall_timer", "cpu_timer", "internal", NULL
};
static const char *const unit_styles[] = {
	"normalized", "unnormalized", "sampled", NULL
};
static const char *const aggregates[] = { "sum", "avg", "min", "max", NULL };
static const char *const styles[] = {
	"event_counter", "sampled_function", NULL
};
static const char *const points[] = { "entry", "exit", "call", NULL };
static const char *const placements[] = { "before", "after", NULL };
static const char *const orders[] = { "append", "prepend", NULL };
static const char *const prim_ops[] = {
	"add", "set", "start", "stop", "inc", "dec", NULL
};
static const char *const cmps[] = { "==", "!=", "<", "<=", ">", ">=", NULL };

static void instr_free(struct pc_instr *in)
{
	for (size_t i = 0; i < in->nforeach; i++)
		free(in->foreach[i]);
	free(in->foreach);
	free(in->foreach_list);
	free(in->callee);
	for (size_t i = 0; i < in->nprims; i++) {
		struct pc_prim *p = &in->prims[i];

		free(p->var);
		free(p->value.name);
		for (size_t j = 0; j < p->npreds; j++) {
			free(p->preds[j].lhs.name);
			free(p->preds[j].rhs.name);
		}
		free(p->preds);
	}
	free(in->prims);
}

static void instrs_free(struct pc_instr *in, size_t n)
{
	for (size_t i = 0; i < n; i++)
		instr_free(&in[i]);
	free(in);
}

/* Which operands a point can see: arguments before entering a function,
 * the return value after leaving one. */
struct opnd_ctx {
	enum pc_point_kind point;
	bool after;
};

static bool parse_operand(struct pc_lctx *l, json_t *v, const char *path,
			  const struct opnd_ctx *oc, struct pc_operand *o)
{
	const char *s;

	memset(o, 0, sizeof(*o));
	if (json_is_number(v)) {
		o->c = json_number_value(v);
		return true;
	}
	if (!json_is_string(v)) {
		pc_jx_err(l, path, "expected a number or one of $arg0..$arg5, "
			"$return, $constraint.NAME, $resource.key; got %s",
			pc_jx_type_name(v));
		return false;
	}
	s = json_string_value(v);
	if (strncmp(s, "$arg", 4) == 0 && s[4] >= '0' && s[4] <= '5' &&
	    s[5] == '\0') {
		o->kind = PC_VAL_ARG;
		o->arg = s[4] - '0';
		if (oc->point == PC_PT_EXIT || oc->after) {
			pc_jx_err(l, path, "%s is only known at \"entry\" or "
				"before a \"call\"", s);
			return false;
		}
		return true;
	}
	if (strcmp(s, "$return") == 0) {
		o->kind = PC_VAL_RETURN;
		if (!(oc->point == PC_PT_EXIT ||
		      (oc->point == PC_PT_CALL && oc->after))) {
			pc_jx_err(l, path,
				  "$return is only known at \"exit\" or "
				  "after a \"call\"");
			return false;
		}
		return true;
	}
	if (strncmp(s, "$constraint.", 12) == 0 && s[12]) {
		o->kind = PC_VAL_CONSTRAINT;
		o->name = pc_jx_strdup(s + 12);
		return true;
	}
	if (strcmp(s, "$resource.key") == 0) {
		o->kind = PC_VAL_RESOURCE_ADDR;
		return true;
	}
	pc_jx_err(l, path,
		  "unknown operand \"%s\"; expected a number or one of "
		  "$arg0..$arg5, $return, $constraint.NAME, $resource.key",
		  s);
	return false;
}

static bool parse_preds(struct pc_lctx *l, json_t *a, const char *path,
			const struct opnd_ctx *oc, struct pc_prim *p)
{
	json_t *v;
	size_t i;
	char sub[256];
	bool ok = true;

	if (!json_is_array(a)) {
		pc_jx_err(l, path,
			  "expected an array of [lhs, cmp, rhs], got %s",
			  pc_jx_type_name(a));
		return false;
	}
	p->preds = calloc(json_array_size(a) + 1, sizeof(*p->preds));
	json_array_foreach(a, i, v) {
		struct pc_pred *pr = &p->preds[p->npreds];
		json_t *c = json_array_get(v, 1);
		int k;

		pc_jx_path(sub, sizeof(sub), "%s[%zu]", path, i);
		if (!json_is_array(v) || json_array_size(v) != 3 ||
		    !json_is_string(c)) {
			pc_jx_err(l, sub,
				  "expected [lhs, cmp, rhs] with cmp one "
				  "of ==, !=, <, <=, >, >=");
			ok = false;
			continue;
		}
		for (k = 0; cmps[k]; k++)
			if (strcmp(cmps[k], json_string_value(c)) == 0)
				break;
		if (cmps[k] == NULL) {
			pc_jx_err(l, sub, "unknown comparison \"%s\"; expected "
				"one of ==, !=, <, <=, >, >=",
				json_string_value(c));
			ok = false;
			continue;
		}
		snprintf(pr->cmp, sizeof(pr->cmp), "%s", cmps[k]);
		ok &= parse_operand(l, json_array_get(v, 0), sub, oc, &pr->lhs);
		ok &= parse_operand(l, json_array_get(v, 2), sub, oc, &pr->rhs);
		p->npreds++;
	}
	return ok;
}

/* Which primitives fit a variable: counters count, timers time, and the
 * nesting counters of constraints go up and down. */
static bool op_fits(enum pc_prim_op op, enum pc_base_type t, bool in_con)
{
	switch (op) {
	case PC_OP_ADD:
	case PC_OP_SET:
		return t == PC_BASE_COUNTER;
	case PC_OP_START:
	case PC_OP_STOP:
		return t == PC_BASE_WALL_TIMER || t == PC_BASE_CPU_TIMER;
	default:
		return in_con && t == PC_BASE_COUNTER;
	}
}

static bool parse_prim(struct pc_lctx *l, json_t *o, const char *path,
		       const struct opnd_ctx *oc, enum pc_base_type t,
		       bool in_con, struct pc_prim *p)
{
	const char *s;
	char sub[256];
	int op;
	json_t *v;
	bool ok = true;

	if (!json_is_object(o)) {
		pc_jx_err(l, path, "expected an object {op, var, value, if}, "
			"got %s", pc_jx_type_name(o));
		return false;
	}
	pc_jx_fields(l, o, path, prim_fields);
	op = pc_jx_enum(l, o, path, "op", prim_ops, -2);
	if (op == -2)
		pc_jx_err(l, path, "missing field \"op\"");
	if (op < 0)
		return false;
	p->op = (enum pc_prim_op)op;
	if (!op_fits(p->op, t, in_con)) {
		pc_jx_path(sub, sizeof(sub), "%s.op", path);
		pc_jx_err(l, sub, "\"%s\" does not apply to a %s variable",
			prim_ops[op], base_types[t]);
		ok = false;
	}
	if (pc_jx_str(l, o, path, "var", false, &s))
		p->var = pc_jx_strdup(s);
	v = json_object_get(o, "value");
	pc_jx_path(sub, sizeof(sub), "%s.value", path);
	if (v)
		ok &= parse_operand(l, v, sub, oc, &p->value);
	else if (p->op == PC_OP_ADD || p->op == PC_OP_SET)
		p->value.c = 1;
	v = json_object_get(o, "if");
	pc_jx_path(sub, sizeof(sub), "%s.if", path);
	if (v)
		ok &= parse_preds(l, v, sub, oc, p);
	return ok;
}

static bool parse_foreach(struct pc_lctx *l, json_t *o, const char *path,
			  struct pc_instr *in)
{
	json_t *v = json_object_get(o, "foreach");
	char sub[256];

	pc_jx_path(sub, sizeof(sub), "%s.foreach", path);
	if (v == NULL) {
		pc_jx_err(l, path, "missing field \"foreach\"");
		return false;
	}
	if (json_is_string(v)) {
		in->foreach_list = pc_jx_strdup(json_string_value(v));
		return true;
	}
	if (!json_is_array(v)) {
		pc_jx_err(l, sub,
			  "expected a list name or an array of function "
			  "names, got %s",
			  pc_jx_type_name(v));
		return false;
	}
	return pc_jx_strlist(l, o, path, "foreach", &in->foreach,
			     &in->nforeach);
}

static bool parse_instr(struct pc_lctx *l, json_t *o, const char *path,
			enum pc_base_type t, bool in_con, struct pc_instr *in)
{
	struct opnd_ctx oc;
	const char *s;
	json_t *a, *v;
	char sub[256];
	size_t i;
	int k;
	bool ok = true;

	if (!json_is_object(o)) {
		pc_jx_err(l, path, "expected an object, got %s",
			pc_jx_type_name(o));
		return false;
	}
	pc_jx_fields(l, o, path, instr_fields);
	ok &= parse_foreach(l, o, path, in);
	k = pc_jx_enum(l, o, path, "at", points, -2);
	if (k == -2)
		pc_jx_err(l, path, "missing field \"at\"");
	if (k < 0)
		return false;
	in->point = (enum pc_point_kind)k;
	k = pc_jx_enum(l, o, path, "placement", placements, 0);
	in->after = k == 1;
	ok &= k >= 0;
	k = pc_jx_enum(l, o, path, "order", orders, 0);
	in->prepend = k == 1;
	ok &= k >= 0;
	pc_jx_bool(l, o, path, "constrained", &in->constrained);
	if (pc_jx_str(l, o, path, "callee", false, &s))
		in->callee = pc_jx_strdup(s);
	oc.point = in->point;
	oc.after = in->after;
	a = pc_jx_arr(l, o, path, "do");
	if (a == NULL) {
		if (json_object_get(o, "do") == NULL)
			pc_jx_err(l, path, "missing field \"do\"");
		return false;
	}
	in->prims = calloc(json_array_size(a) + 1, sizeof(*in->prims));
	json_array_foreach(a, i, v) {
		pc_jx_path(sub, sizeof(sub), "%s.do[%zu]", path, i);
		ok &= parse_prim(l, v, sub, &oc, t, in_con,
				 &in->prims[in->nprims++]);
	}
	return ok;
}

static bool parse_instrs(struct pc_lctx *l, json_t *o, const char *path,
			 enum pc_base_type t, bool in_con,
			 struct pc_instr **out, size_t *n)
{
	json_t *a = pc_jx_arr(l, o, path, "base"), *v;
	char sub[256];
	size_t i;
	bool ok = true;

	*out = NULL;
	*n = 0;
	if (a == NULL)
		return json_object_get(o, "base") == NULL;
	*out = calloc(json_array_size(a) + 1, sizeof(**out));
	json_array_foreach(a, i, v) {
		pc_jx_path(sub, sizeof(sub), "%s.base[%zu]", path, i);
		ok &= parse_instr(l, v, sub, t, in_con, &(*out)[(*n)++]);
	}
	return ok;
}

void pc_metric_def_list_free(struct pc_list_def *d)
{
	for (size_t i = 0; i < d->nitems; i++)
		free(d->items[i]);
	free(d->items);
	free(d->name);
}

void pc_metric_def_lists_parse(struct pc_lctx *l, json_t *obj)
{
	const char *name;
	json_t *v;
	char path[256];

	json_object_foreach(obj, name, v) {
		struct pc_list_def d = { .name = pc_jx_strdup(name) };
		json_t *wrap = json_pack("{sO}", "items", v);

		pc_jx_path(path, sizeof(path), "$.lists.%s", name);
		pc_jx_loc_set(l, &d.loc, path);
		/* Reuse the string-array check through a one-member object;
		 * its error paths end in ".items", so check the shape here. */
		if (!json_is_array(v)) {
			pc_jx_err(l, path,
				  "expected an array of function names, "
				  "got %s",
				  pc_jx_type_name(v));
			json_decref(wrap);
			pc_metric_def_list_free(&d);
			continue;
		}
		pc_jx_strlist(l, wrap, "$.lists", "items", &d.items, &d.nitems);
		json_decref(wrap);
		for (size_t i = 0; i < l->c->nlists; i++) {
			if (strcmp(l->c->lists[i].name, name) == 0) {
				pc_metric_def_list_free(&l->c->lists[i]);
				l->c->lists[i] = d;
				goto next;
			}
		}
		*PC_APPEND(l->c->lists, l->c->nlists) = d;
next:		;
	}
}

void pc_metric_def_constraint_free(struct pc_constraint_def *d)
{
	free(d->name);
	free(d->hierarchy);
	free(d->match);
	instrs_free(d->instr, d->ninstr);
}

static bool parse_constraint(struct pc_lctx *l, const char *name, json_t *o,
			     const char *path, struct pc_constraint_def *d)
{
	const char *s;
	char sub[256];
	int k;
	bool ok = true;

	d->name = pc_jx_strdup(name);
	pc_jx_loc_set(l, &d->loc, path);
	pc_jx_fields(l, o, path, con_fields);
	if (pc_jx_str(l, o, path, "hierarchy", true, &s)) {
		d->hierarchy = pc_jx_strdup(s);
		if (pc_config_hier_index(s) < 0) {
			struct pc_loc loc;

			pc_jx_path(sub, sizeof(sub), "%s.hierarchy", path);
			pc_jx_loc_set(l, &loc, sub);
			pc_jx_err_unknown(l, &loc, "hierarchy", s, "one of /Code, "
					"/Process, /SyncObject, /Files",
					pc_hier_names, PC_NHIER);
			ok = false;
		}
	} else {
		ok = false;
	}
	if (pc_jx_str(l, o, path, "match", true, &s)) {
		d->match = pc_jx_strdup(s);
		if (d->hierarchy && strncmp(s, d->hierarchy,
					    strlen(d->hierarchy)) != 0) {
			pc_jx_path(sub, sizeof(sub), "%s.match", path);
			pc_jx_err(l, sub, "match \"%s\" must start with the "
				"constraint's hierarchy %s", s, d->hierarchy);
			ok = false;
		}
	} else {
		ok = false;
	}
	pc_jx_bool(l, o, path, "replace", &d->replace);
	k = pc_jx_enum(l, o, path, "type", base_types, 0);
	ok &= k >= 0 && k != PC_BASE_INTERNAL;
	d->type = k < 0 ? PC_BASE_COUNTER : (enum pc_base_type)k;
	ok &= parse_instrs(l, o, path, d->type, !d->replace, &d->instr,
			   &d->ninstr);
	return ok;
}

void pc_metric_def_constraints_parse(struct pc_lctx *l, json_t *obj)
{
	const char *name;
	json_t *v;
	char path[256];

	json_object_foreach(obj, name, v) {
		struct pc_constraint_def d = { 0 };

		pc_jx_path(path, sizeof(path), "$.constraints.%s", name);
		if (!json_is_object(v)) {
			pc_jx_err(l, path, "expected an object, got %s",
				pc_jx_type_name(v));
			continue;
		}
		if (!parse_constraint(l, name, v, path, &d)) {
			pc_metric_def_constraint_free(&d);
			continue;
		}
		for (size_t i = 0; i < l->c->ncon; i++) {
			if (strcmp(l->c->con[i].name, name) == 0) {
				pc_metric_def_constraint_free(&l->c->con[i]);
				l->c->con[i] = d;
				goto next;
			}
		}
		*PC_APPEND(l->c->con, l->c->ncon) = d;
next:		;
	}
}

void pc_metric_def_free(struct pc_metric_def *m)
{
	free(m->name);
	free(m->title);
	free(m->units);
	free(m->unit_style);
	free(m->aggregate);
	free(m->style);
	for (size_t i = 0; i < m->nconstraints; i++)
		free(m->constraints[i]);
	free(m->constraints);
	instrs_free(m->instr, m->ninstr);
}

static char *enum_dup(struct pc_lctx *l, json_t *o, const char *path,
		      const char *key, const char *const *names, int def,
		      bool *ok)
{
	int k = pc_jx_enum(l, o, path, key, names, def);

	if (k < 0) {
		*ok = false;
		return NULL;
	}
	return pc_jx_strdup(names[k]);
}

/* "kernel": "cpu" stands for a CPU timer: the kernel counts each
 * thread's CPU time, nothing else.  "runqueue" is the time the threads
 * were runnable and waited for a CPU: wall time no code can time, so a
 * wall_timer with no base clause. */
static bool parse_kernel(struct pc_lctx *l, json_t *o, const char *path,
			 struct pc_metric_def *m)
{
	int k = pc_jx_enum(l, o, path, "kernel", kernels, -2);
	enum pc_base_type want;
	char sub[256];

	if (k == -2)
		return true;
	if (k < 0)
		return false;
	m->kernel = (enum pc_kernel)(k + 1);
	want = m->kernel == PC_KERNEL_CPU ? PC_BASE_CPU_TIMER :
	       PC_BASE_WALL_TIMER;
	if (m->type == want)
		return true;
	pc_jx_path(sub, sizeof(sub), "%s.kernel", path);
	pc_jx_err(l, sub, "\"kernel\": \"%s\" reads threads' %s from the "
		"kernel in place of a %s; metric \"%s\" is of type \"%s\": "
		"use \"type\": \"%s\" or remove \"kernel\"", kernels[k],
		m->kernel == PC_KERNEL_CPU ? "CPU time" : "run-queue wait",
		m->kernel == PC_KERNEL_CPU ? "CPU timer" : "wall timer",
		m->name, base_types[m->type], base_types[want]);
	return false;
}

static bool parse_metric(struct pc_lctx *l, const char *name, json_t *o,
			 const char *path, struct pc_metric_def *m)
{
	const char *s;
	int k;
	bool ok = true;

	m->name = pc_jx_strdup(name);
	pc_jx_loc_set(l, &m->loc, path);
	pc_jx_fields(l, o, path, metric_fields);
	if (pc_jx_str(l, o, path, "title", false, &s))
		m->title = pc_jx_strdup(s);
	if (pc_jx_str(l, o, path, "units", true, &s))
		m->units = pc_jx_strdup(s);
	else
		ok = false;
	m->unit_style = enum_dup(l, o, path, "unit_style", unit_styles, 0, &ok);
	m->aggregate = enum_dup(l, o, path, "aggregate", aggregates, 0, &ok);
	m->style = enum_dup(l, o, path, "style", styles, 0, &ok);
	k = pc_jx_enum(l, o, path, "type", base_types, -2);
	if (k == -2)
		pc_jx_err(l, path, "missing field \"type\"");
	if (k < 0)
		return false;
	m->type = (enum pc_base_type)k;
	ok &= parse_kernel(l, o, path, m);
	pc_jx_strlist(l, o, path, "constraints", &m->constraints,
		      &m->nconstraints);
	pc_jx_bool(l, o, path, "absent_is_zero", &m->absent_is_zero);
	ok &= parse_instrs(l, o, path, m->type, false, &m->instr, &m->ninstr);
	if (ok && m->type != PC_BASE_INTERNAL &&
	    m->kernel != PC_KERNEL_RUNQUEUE && m->ninstr == 0) {
		pc_jx_err(l, path,
			  "metric \"%s\" has no \"base\" instrumentation"
			  "; only \"type\": \"internal\" metrics (supplied by "
			  "hunch itself) and \"kernel\": \"runqueue\" ones may "
			  "omit it",
			  name);
		ok = false;
	}
	return ok;
}

void pc_metric_def_parse(struct pc_lctx *l, json_t *obj)
{
	const char *name;
	json_t *v;
	char path[256];

	json_object_foreach(obj, name, v) {
		struct pc_metric_def m = { 0 };

		pc_jx_path(path, sizeof(path), "$.metrics.%s", name);
		if (!json_is_object(v)) {
			pc_jx_err(l, path, "expected an object, got %s",
				pc_jx_type_name(v));
			continue;
		}
		if (!parse_metric(l, name, v, path, &m)) {
			pc_metric_def_free(&m);
			continue;
		}
		for (size_t i = 0; i < l->c->nmet; i++) {
			if (strcmp(l->c->met[i].name, name) == 0) {
				pc_metric_def_free(&l->c->met[i]);
				l->c->met[i] = m;
				goto next;
			}
		}
		*PC_APPEND(l->c->met, l->c->nmet) = m;
next:		;
	}
}

const struct pc_metric_def *pc_metric_def_find(const struct pc_config *c,
					   const char *name)
{
	for (size_t i = 0; i < c->nmet; i++)
		if (strcmp(c->met[i].name, name) == 0)
			return &c->met[i];
	return NULL;
}

enum pc_wait_kind pc_metric_def_wait_kind(const struct pc_metric_def *m)
{
	enum pc_wait_kind kind = PC_WAIT_NONE;

	if (m == NULL || m->type != PC_BASE_WALL_TIMER ||
	    m->kernel != PC_KERNEL_NONE)
		return PC_WAIT_NONE;
	for (size_t i = 0; i < m->nconstraints; i++) {
		if (strcmp(m->constraints[i], "file") == 0)
			kind = PC_WAIT_IO;
		else if (strcmp(m->constraints[i], "sync_object") == 0)
			kind = PC_WAIT_SYNC;
	}
	return kind;
}

static void check_instr_lists(struct pc_lctx *l, const struct pc_instr *in,
			      size_t n, const struct pc_loc *owner)
{
	const char **names = calloc(l->c->nlists + 1, sizeof(char *));

	for (size_t i = 0; i < l->c->nlists; i++)
		names[i] = l->c->lists[i].name;
	for (size_t i = 0; i < n; i++) {
		const char *ln = in[i].foreach_list;
		/* Built-in lists the metric compiler fills from the program:
		 * every function, main plus the thread start functions, and
		 * the function(s) the focus names. */
		bool found = ln == NULL || strcmp(ln, "$procedures") == 0 ||
			     strcmp(ln, "$start_functions") == 0 ||
			     strcmp(ln, "$focus") == 0;
		struct pc_loc loc;
		char sub[256];

		for (size_t j = 0; j < l->c->nlists && !found; j++)
			found = strcmp(names[j], ln) == 0;
		if (found)
			continue;
		pc_jx_path(sub, sizeof(sub), "%s.base[%zu].foreach",
			   owner->path, i);
		pc_jx_loc_set(l, &loc, sub);
		pc_jx_err_unknown(l, &loc, "function list", ln,
				  "a list defined "
				  "under $.lists, or $procedures, "
				  "$start_functions, $focus",
				  names, l->c->nlists);
	}
	free(names);
}

/* Only entities defined by the file being loaded are checked: earlier
 * files were checked when they were loaded, and a later file can only
 * add names, never remove them. */
void pc_metric_def_check_refs(struct pc_lctx *l)
{
	const char **cn = calloc(l->c->ncon + 1, sizeof(char *));

	for (size_t i = 0; i < l->c->ncon; i++) {
		cn[i] = l->c->con[i].name;
		if (l->c->con[i].loc.file == l->file)
			check_instr_lists(l, l->c->con[i].instr,
					  l->c->con[i].ninstr, &l->c->con[i].loc);
	}
	for (size_t i = 0; i < l->c->nmet; i++) {
		struct pc_metric_def *m = &l->c->met[i];

		if (m->loc.file != l->file)
			continue;
		check_instr_lists(l, m->instr, m->ninstr, &m->loc);
		for (size_t j = 0; j < m->nconstraints; j++) {
			bool found = false;
			struct pc_loc loc;
			char sub[256];

			for (size_t k = 0; k < l->c->ncon && !found; k++)
				found = strcmp(cn[k], m->constraints[j]) == 0;
			if (found)
				continue;
			pc_jx_path(sub, sizeof(sub), "%s.constraints[%zu]",
				 m->loc.path, j);
			pc_jx_loc_set(l, &loc, sub);
			pc_jx_err_unknown(l, &loc, "constraint", m->constraints[j],
					"a constraint defined under "
					"$.constraints", cn, l->c->ncon);
		}
	}
	free(cn);
}

/* jnl_format.c - the journal schema (see jnl_format.h and
 * docs/journal-format.md, which lists the same fields in prose). */
#include "jnl_format.h"
#include "pc_source.h"

#include <errno.h>
#include <string.h>

#define REQ(n, ty) { n, JNL_F_##ty, true }
#define OPT(n, ty) { n, JNL_F_##ty, false }
#define TS REQ("ts", NUMBER)
#define END_FIELDS { NULL, JNL_F_ANY, false }

static const struct jnl_field header_fields[] = {
	REQ("journal_version", INTEGER), REQ("hunch_version", STRING),
	REQ("host", STRING), REQ("kernel", OBJECT), REQ("target", OBJECT),
	REQ("program", STRING), REQ("start_wall", STRING),
	REQ("start_mono_ns", INTEGER), REQ("clock", OBJECT),
	REQ("hypotheses", ANY), REQ("tunables", ANY), OPT("mode", STRING),
	END_FIELDS
};
static const struct jnl_field tick_fields[] = {
	TS, REQ("now", NUMBER), END_FIELDS
};
static const struct jnl_field resource_fields[] = {
	TS, REQ("op", STRING), REQ("kind", STRING), OPT("module", STRING),
	OPT("srcfile", STRING), OPT("function", STRING),
	OPT("sync_class", STRING), OPT("name", STRING),
	OPT("addr", INTEGER), OPT("pid", INTEGER), OPT("tid", INTEGER),
	END_FIELDS
};
static const struct jnl_field enable_fields[] = {
	TS, REQ("req", INTEGER), REQ("metric", STRING), REQ("focus", ARRAY),
	OPT("predicted_cost", NUMBER), OPT("node", INTEGER),
	OPT("phase", INTEGER), END_FIELDS
};
static const struct jnl_field reply_fields[] = {
	TS, REQ("req", INTEGER), REQ("status", INTEGER), OPT("inst", INTEGER),
	OPT("reason", STRING), OPT("sampled", BOOL), END_FIELDS
};
static const struct jnl_field disable_fields[] = {
	TS, REQ("inst", INTEGER), OPT("reason", STRING), END_FIELDS
};
static const struct jnl_field sample_fields[] = {
	TS, REQ("t0", NUMBER), REQ("t1", NUMBER), REQ("i", ARRAY),
	REQ("v", ARRAY), END_FIELDS
};
static const struct jnl_field cost_fields[] = {
	TS, REQ("observed", NUMBER), OPT("predicted", NUMBER),
	OPT("limit", NUMBER), OPT("holds", INTEGER), OPT("held", NUMBER),
	END_FIELDS
};
static const struct jnl_field predict_fields[] = {
	TS, REQ("metric", STRING), REQ("focus", ARRAY), REQ("cost", NUMBER),
	END_FIELDS
};
static const struct jnl_field callees_fields[] = {
	TS, OPT("path", STRING), REQ("callees", ARRAY), END_FIELDS
};
static const struct jnl_field hint_fields[] = {
	TS, REQ("path", STRING), REQ("share", NUMBER), END_FIELDS
};
static const struct jnl_field period_fields[] = {
	TS, REQ("seconds", NUMBER), END_FIELDS
};
static const struct jnl_field node_fields[] = {
	TS, REQ("node", INTEGER), REQ("hyp", STRING), REQ("focus", STRING),
	REQ("parents", ARRAY), OPT("phase", INTEGER), OPT("why", BOOL),
	OPT("name", STRING), OPT("priority", ANY), END_FIELDS
};
static const struct jnl_field edge_fields[] = {
	TS, REQ("node", INTEGER), REQ("parent", INTEGER), OPT("phase", INTEGER),
	OPT("why", BOOL), OPT("shadow", BOOL), END_FIELDS
};
static const struct jnl_field node_state_fields[] = {
	TS, REQ("node", INTEGER), REQ("state", STRING), OPT("phase", INTEGER),
	OPT("from", STRING), OPT("evidence", OBJECT), END_FIELDS
};
static const struct jnl_field action_fields[] = {
	TS, REQ("action", STRING), OPT("name", STRING), OPT("value", ANY),
	OPT("old", ANY), OPT("phase", INTEGER), OPT("hyp", STRING),
	OPT("focus", STRING), OPT("paths", ARRAY), OPT("node", INTEGER),
	OPT("inst", INTEGER), OPT("files", ARRAY), OPT("added", INTEGER),
	END_FIELDS
};
static const struct jnl_field output_fields[] = {
	TS, REQ("stream", STRING), OPT("text", STRING), OPT("b64", STRING),
	OPT("eol", BOOL), OPT("pid", INTEGER), END_FIELDS
};
static const struct jnl_field target_fields[] = {
	TS, REQ("event", STRING), OPT("at", NUMBER), OPT("pid", INTEGER),
	OPT("tid", INTEGER), OPT("code", INTEGER), OPT("signal", INTEGER),
	OPT("function", STRING), END_FIELDS
};
static const struct jnl_field end_fields[] = {
	TS, REQ("reason", STRING), OPT("message", STRING),
	OPT("records", INTEGER), OPT("dropped", INTEGER), END_FIELDS
};
static const struct jnl_field stack_samples_fields[] = {
	TS, REQ("samples", OBJECT), END_FIELDS
};
static const struct jnl_field no_fields[] = { END_FIELDS };

static const struct {
	const char *name;
	const struct jnl_field *fields;
} kinds[JNL_REC_NKINDS] = {
	[JNL_REC_UNKNOWN] = { NULL, no_fields },
	[JNL_REC_HEADER] = { "header", header_fields },
	[JNL_REC_TICK] = { "tick", tick_fields },
	[JNL_REC_RESOURCE] = { "resource", resource_fields },
	[JNL_REC_ENABLE] = { "enable", enable_fields },
	[JNL_REC_REPLY] = { "reply", reply_fields },
	[JNL_REC_DISABLE] = { "disable", disable_fields },
	[JNL_REC_SAMPLE] = { "sample", sample_fields },
	[JNL_REC_COST] = { "cost", cost_fields },
	[JNL_REC_PREDICT] = { "predict", predict_fields },
	[JNL_REC_CALLEES] = { "callees", callees_fields },
	[JNL_REC_HINT] = { "hint", hint_fields },
	[JNL_REC_PERIOD] = { "period", period_fields },
	[JNL_REC_NODE] = { "node", node_fields },
	[JNL_REC_EDGE] = { "edge", edge_fields },
	[JNL_REC_NODE_STATE] = { "node_state", node_state_fields },
	[JNL_REC_ACTION] = { "action", action_fields },
	[JNL_REC_OUTPUT] = { "output", output_fields },
	[JNL_REC_TARGET] = { "target", target_fields },
	[JNL_REC_END] = { "end", end_fields },
	[JNL_REC_STACK_SAMPLES] = { "stack_samples", stack_samples_fields },
};

const char *jnl_format_kind_name(enum jnl_kind k)
{
	return (unsigned)k < JNL_REC_NKINDS ? kinds[k].name : NULL;
}

enum jnl_kind jnl_format_kind_from_name(const char *name)
{
	for (int k = 1; k < JNL_REC_NKINDS; k++)
		if (strcmp(kinds[k].name, name) == 0)
			return (enum jnl_kind)k;
	return JNL_REC_UNKNOWN;
}

const struct jnl_field *jnl_format_kind_fields(enum jnl_kind k)
{
	return (unsigned)k < JNL_REC_NKINDS ? kinds[k].fields : no_fields;
}

static const char *jnl_format_type_name(enum jnl_ftype t)
{
	static const char *const names[] = {
		[JNL_F_ANY] = "any value", [JNL_F_STRING] = "a string",
		[JNL_F_INTEGER] = "an integer", [JNL_F_NUMBER] = "a number",
		[JNL_F_BOOL] = "true or false", [JNL_F_ARRAY] = "an array",
		[JNL_F_OBJECT] = "an object",
	};
	return names[t];
}

static bool type_ok(enum jnl_ftype t, const json_t *v)
{
	switch (t) {
	case JNL_F_ANY: return true;
	case JNL_F_STRING: return json_is_string(v);
	case JNL_F_INTEGER: return json_is_integer(v);
	case JNL_F_NUMBER: return json_is_number(v);
	case JNL_F_BOOL: return json_is_boolean(v);
	case JNL_F_ARRAY: return json_is_array(v);
	case JNL_F_OBJECT: return json_is_object(v);
	}
	return false;
}

static bool one_of(const char *s, const char *const *set)
{
	for (; *set; set++)
		if (strcmp(s, *set) == 0)
			return true;
	return false;
}

static int check_enum(const json_t *rec, const char *field,
		      const char *const *set, const char *expect,
		      struct hunch_err *err)
{
	const char *s = json_string_value(json_object_get(rec, field));

	if (one_of(s, set))
		return 0;
	return hunch_err_set(err, -EINVAL,
			     "field \"%s\" is \"%s\", expected %s", field, s,
			     expect);
}

static int check_sample(const json_t *rec, struct hunch_err *err)
{
	const json_t *ids = json_object_get(rec, "i");
	const json_t *vals = json_object_get(rec, "v");
	size_t k;
	json_t *x;

	if (json_array_size(ids) != json_array_size(vals))
		return hunch_err_set(err, -EINVAL,
				  "arrays \"i\" (%zu) and \"v\" (%zu) differ in length",
				  json_array_size(ids), json_array_size(vals));
	json_array_foreach(ids, k, x)
		if (!json_is_integer(x))
			return hunch_err_set(err, -EINVAL,
					  "\"i\"[%zu] is not an integer", k);
	json_array_foreach(vals, k, x)
		if (!json_is_number(x) && !json_is_null(x))
			return hunch_err_set(err, -EINVAL,
					  "\"v\"[%zu] is not a number or null", k);
	return 0;
}

static int check_integers(const json_t *rec, const char *field,
			  struct hunch_err *err)
{
	size_t k;
	json_t *x;

	json_array_foreach(json_object_get(rec, field), k, x)
		if (!json_is_integer(x))
			return hunch_err_set(err, -EINVAL,
					  "\"%s\"[%zu] is not an integer", field, k);
	return 0;
}

static int check_strings(const json_t *rec, const char *field, size_t want,
			 struct hunch_err *err)
{
	const json_t *a = json_object_get(rec, field);
	size_t k;
	json_t *x;

	if (want && json_array_size(a) != want)
		return hunch_err_set(err, -EINVAL,
				  "\"%s\" has %zu paths, expected %zu (one per hierarchy)",
				  field, json_array_size(a), want);
	json_array_foreach(a, k, x)
		if (!json_is_string(x))
			return hunch_err_set(err, -EINVAL,
					  "\"%s\"[%zu] is not a string", field, k);
	return 0;
}

static int check_output(const json_t *rec, struct hunch_err *err)
{
	static const char *const streams[] = { "stdout", "stderr", NULL };
	bool text = json_object_get(rec, "text") != NULL;
	bool b64 = json_object_get(rec, "b64") != NULL;

	if (text == b64)
		return hunch_err_set(err, -EINVAL,
				  "exactly one of \"text\" and \"b64\" must be present");
	return check_enum(rec, "stream", streams, "\"stdout\" or \"stderr\"",
			  err);
}

/* The rules a field table cannot say. */
static int check_kind_rules(enum jnl_kind k, const json_t *rec,
			    struct hunch_err *err)
{
	static const char *const ops[] = { "add", "retire", NULL };
	static const char *const rkinds[] = { "function", "process", "thread",
					      "syncobj", "file", NULL };
	int rc;

	switch (k) {
	case JNL_REC_RESOURCE:
		rc = check_enum(rec, "op", ops, "\"add\" or \"retire\"", err);
		return rc ? rc : check_enum(rec, "kind", rkinds,
			"function, process, thread, syncobj or file", err);
	case JNL_REC_SAMPLE:
		return check_sample(rec, err);
	case JNL_REC_ENABLE:
	case JNL_REC_PREDICT:
		return check_strings(rec, "focus", PC_SRC_NHIER, err);
	case JNL_REC_CALLEES:
		return check_strings(rec, "callees", 0, err);
	case JNL_REC_NODE:
		return check_integers(rec, "parents", err);
	case JNL_REC_OUTPUT:
		return check_output(rec, err);
	default:
		return 0;
	}
}

int jnl_format_validate(enum jnl_kind k, const json_t *rec,
			struct hunch_err *err)
{
	const struct jnl_field *f;

	for (f = jnl_format_kind_fields(k); f->name; f++) {
		const json_t *v = json_object_get(rec, f->name);

		if (v == NULL) {
			if (f->required)
				return hunch_err_set(err, -EINVAL,
						  "required field \"%s\" (%s) is missing",
						  f->name, jnl_format_type_name(f->type));
			continue;
		}
		if (!type_ok(f->type, v))
			return hunch_err_set(err, -EINVAL,
					  "field \"%s\" is not %s", f->name,
					  jnl_format_type_name(f->type));
	}
	if (k != JNL_REC_HEADER && json_number_value(
			json_object_get(rec, "ts")) < 0)
		return hunch_err_set(err, -EINVAL, "field \"ts\" is negative");
	return check_kind_rules(k, rec, err);
}

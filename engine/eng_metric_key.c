/*
 * eng_metric_key.c - the identity of a request: canonical text of a
 * metric's clauses and of a focus, so that identical requests (the same
 * metric on the same focus, the same constraint on the same functions)
 * find the code already inserted and share it.
 */
#include "eng_metric_int.h"

#include <inttypes.h>

static void key_opnd(FILE *f, const struct eng_mopnd *o)
{
	switch (o->kind) {
	case ENG_MO_CONST: fprintf(f, "%" PRId64, o->c); break;
	case ENG_MO_ARG: fprintf(f, "$arg%d", o->arg); break;
	case ENG_MO_RETURN: fputs("$return", f); break;
	case ENG_MO_CONSTRAINT: fprintf(f, "$constraint.%s", o->name); break;
	case ENG_MO_KEY: fputs("$key", f); break;
	}
}

static void key_prim(FILE *f, const struct eng_mprim *p)
{
	static const char *const ops[] = { "add", "set", "start", "stop",
					   "inc", "dec" };
	static const char *const cmps[] = { "==", "!=", "<", "<=", ">", ">=" };

	fprintf(f, "%s(", ops[p->op]);
	key_opnd(f, &p->value);
	fputc(')', f);
	for (size_t i = 0; i < p->npreds; i++) {
		fputs(i ? "&&" : " if ", f);
		key_opnd(f, &p->preds[i].lhs);
		fputs(cmps[p->preds[i].cmp], f);
		key_opnd(f, &p->preds[i].rhs);
	}
	fputc(';', f);
}

void eng_metric_key_clauses(FILE *f, const struct eng_mclause *c, size_t n)
{
	static const char *const pts[] = { "entry", "exit", "call" };

	for (size_t i = 0; i < n; i++) {
		fprintf(f, "{%d:", (int)c[i].funcs);
		for (size_t k = 0; k < c[i].nnames; k++)
			fprintf(f, "%s,", c[i].names[k]);
		fprintf(f, " %s%s%s%s%s%s ", pts[c[i].point],
			c[i].callee ? "->" : "", c[i].callee ? c[i].callee : "",
			c[i].after ? " after" : "",
			c[i].prepend ? " prepend" : "",
			c[i].constrained ? " constrained" : "");
		for (size_t k = 0; k < c[i].nprims; k++)
			key_prim(f, &c[i].prims[k]);
		fputc('}', f);
	}
}

void eng_metric_key_code(FILE *f, const struct eng_mfocus *fo)
{
	fprintf(f, "[code %d %s %s %s]", (int)fo->code,
		fo->module ? fo->module : "*",
		fo->srcfile ? fo->srcfile : "*",
		fo->function ? fo->function : "*");
}

void eng_metric_key_object(FILE *f, const struct eng_mfocus *fo)
{
	if (fo->has_class)
		fprintf(f, "[class %d]", (int)fo->cls);
	if (fo->has_key)
		fprintf(f, "[key $arg%d=%#" PRIx64 "]", fo->key_arg, fo->key);
	if (fo->nreplace > 0) {
		fprintf(f, "[replace %s ", fo->replace_name ?
			fo->replace_name : "");
		eng_metric_key_clauses(f, fo->replace, fo->nreplace);
		fputc(']', f);
	}
}

void eng_metric_key_focus_name(const struct eng_mfocus *f, char *buf,
			       size_t len)
{
	int n = 0;

	switch (f->code) {
	case ENG_CODE_ALL:
		n = snprintf(buf, len, "the whole program");
		break;
	case ENG_CODE_FUNCTION:
		n = snprintf(buf, len, "function %s in %s", f->function,
			     f->module ? f->module : "any module");
		break;
	case ENG_CODE_MODULE:
		n = snprintf(buf, len, "module %s", f->module);
		break;
	case ENG_CODE_FILE:
		n = snprintf(buf, len, "source file %s in %s", f->srcfile,
			     f->module ? f->module : "any module");
		break;
	}
	if (n < 0 || (size_t)n >= len)
		return;
	if (f->tid != 0)
		n += snprintf(buf + n, len - (size_t)n, ", thread %d",
			      (int)f->tid);
	if (f->has_class && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, ", objects of class %d",
			      (int)f->cls);
	if (f->has_key && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, ", object $arg%d == %#"
			 PRIx64, f->key_arg, f->key);
}

/* jnl_source.c - a source that journals what passes through it
 * (see jnl_source.h). */
#include "jnl_source.h"

#include <stdlib.h>
#include <string.h>

/* The last prediction per (metric, focus): an enable record carries the
 * prediction its request was made with.  Few entries (one per node
 * input), looked up once per enable: a list searched from the end. */
struct prediction {
	char *key;
	double cost;
};

struct jnl_src {
	struct pc_source pub;          /* first: the consultant's handle */
	struct pc_source_ops ops;
	struct pc_source *inner;
	struct jnl_writer *w;
	int pid;
	struct prediction *pred;
	size_t npred, cappred;
	/* the consultant's callbacks of the polls being forwarded */
	pc_disc_fn disc_fn;
	pc_reply_fn reply_fn;
	pc_sample_fn sample_fn;
	pc_event_fn event_fn;
	long holds;                    /* this tick's held (observed_cost) */
	double held_s;
	pc_path_fn path_fn;
	void *disc_arg, *reply_arg, *sample_arg, *event_arg, *path_arg;
	struct pc_src_sample *smp;
	size_t nsmp, capsmp;
	char **paths;
	size_t npaths, cappaths;
	json_t *last_stack;            /* the stack samples recorded last */
};

static struct jnl_src *impl(struct pc_source *s)
{
	return (struct jnl_src *)s->impl;
}

static double ts(const struct jnl_src *j)
{
	return jnl_write_ts_now(j->w);
}

static void remember(struct jnl_src *j, const char *metric,
		     const struct pc_src_focus *f, double cost)
{
	char *k = jnl_record_focus_key(metric, f);

	if (k == NULL)
		return;
	if (j->npred == j->cappred) {
		size_t cap = j->cappred ? 2 * j->cappred : 64;
		struct prediction *p = realloc(j->pred, cap * sizeof(*p));

		if (p == NULL) {
			free(k);
			return;
		}
		j->pred = p;
		j->cappred = cap;
	}
	j->pred[j->npred++] = (struct prediction){ k, cost };
}

static double recall(const struct jnl_src *j, const char *metric,
		     const struct pc_src_focus *f)
{
	char *k = jnl_record_focus_key(metric, f);
	double cost = -1;

	for (size_t i = j->npred; k && i-- > 0;)
		if (strcmp(j->pred[i].key, k) == 0) {
			cost = j->pred[i].cost;
			break;
		}
	free(k);
	return cost;
}

/* --- polls: journal each item, then pass it on --- */

static void on_disc(void *arg, const struct pc_discovery *d)
{
	struct jnl_src *j = arg;

	jnl_write_discovery(j->w, ts(j), d);
	j->disc_fn(j->disc_arg, d);
}

static int poll_resources(struct pc_source *s, pc_disc_fn fn, void *arg)
{
	struct jnl_src *j = impl(s);

	j->disc_fn = fn;
	j->disc_arg = arg;
	return j->inner->ops->poll_resources(j->inner, on_disc, j);
}

static void on_reply(void *arg, const struct pc_src_reply *r)
{
	struct jnl_src *j = arg;

	jnl_write_reply(j->w, ts(j), r);
	j->reply_fn(j->reply_arg, r);
}

static int poll_replies(struct pc_source *s, pc_reply_fn fn, void *arg)
{
	struct jnl_src *j = impl(s);

	j->reply_fn = fn;
	j->reply_arg = arg;
	return j->inner->ops->poll_replies(j->inner, on_reply, j);
}

/* Samples are kept until the poll returns, so that a tick's samples of
 * one interval become one record. */
static void on_sample(void *arg, const struct pc_src_sample *x)
{
	struct jnl_src *j = arg;

	if (j->nsmp == j->capsmp) {
		size_t cap = j->capsmp ? 2 * j->capsmp : 256;
		struct pc_src_sample *p = realloc(j->smp, cap * sizeof(*p));

		if (p != NULL) {
			j->smp = p;
			j->capsmp = cap;
		}
	}
	if (j->nsmp < j->capsmp)
		j->smp[j->nsmp++] = *x;
	j->sample_fn(j->sample_arg, x);
}

static int poll_samples(struct pc_source *s, pc_sample_fn fn, void *arg)
{
	struct jnl_src *j = impl(s);
	int rc;

	j->sample_fn = fn;
	j->sample_arg = arg;
	j->nsmp = 0;
	rc = j->inner->ops->poll_samples(j->inner, on_sample, j);
	if (j->nsmp > 0)
		jnl_write_samples(j->w, ts(j), j->smp, j->nsmp);
	return rc;
}

static void on_event(void *arg, const struct pc_src_event *e)
{
	struct jnl_src *j = arg;
	struct jnl_target t = jnl_record_target_from_src(e, j->pid);

	jnl_write_target(j->w, ts(j), &t);
	j->event_fn(j->event_arg, e);
}

static int poll_events(struct pc_source *s, pc_event_fn fn, void *arg)
{
	struct jnl_src *j = impl(s);

	j->event_fn = fn;
	j->event_arg = arg;
	return j->inner->ops->poll_events(j->inner, on_event, j);
}

static void on_path(void *arg, const char *path)
{
	struct jnl_src *j = arg;
	char *copy = strdup(path);

	if (j->npaths == j->cappaths) {
		size_t cap = j->cappaths ? 2 * j->cappaths : 16;
		char **p = realloc(j->paths, cap * sizeof(*p));

		if (p != NULL) {
			j->paths = p;
			j->cappaths = cap;
		}
	}
	if (copy && j->npaths < j->cappaths)
		j->paths[j->npaths++] = copy;
	else
		free(copy);
	j->path_fn(j->path_arg, path);
}

static int callees(struct pc_source *s, const char *path, pc_path_fn fn,
		   void *arg)
{
	struct jnl_src *j = impl(s);
	int rc;

	j->path_fn = fn;
	j->path_arg = arg;
	j->npaths = 0;
	rc = j->inner->ops->callees(j->inner, path, on_path, j);
	jnl_write_callees(j->w, ts(j), path, (const char *const *)j->paths,
			  j->npaths);
	for (size_t i = 0; i < j->npaths; i++)
		free(j->paths[i]);
	return rc;
}

/* --- calls: forward, journal the call and its answer --- */

static double now(struct pc_source *s)
{
	struct jnl_src *j = impl(s);
	double t = j->inner->ops->now(j->inner);

	/* The consultant asks once per tick: this is its tick record. */
	jnl_write_tick(j->w, ts(j), t);
	return t;
}

static double predict_cost(struct pc_source *s, const char *metric,
			   const struct pc_src_focus *f)
{
	struct jnl_src *j = impl(s);
	double c = j->inner->ops->predict_cost(j->inner, metric, f);

	jnl_write_predict(j->w, ts(j), metric, f, c);
	remember(j, metric, f, c);
	return c;
}

static int enable(struct pc_source *s, const char *metric,
		  const struct pc_src_focus *f, uint64_t req)
{
	struct jnl_src *j = impl(s);
	int rc = j->inner->ops->enable(j->inner, metric, f, req);

	jnl_write_enable(j->w, ts(j), metric, f, req, recall(j, metric, f),
			 -1, -1);
	if (rc < 0) {   /* not even requested: no reply will come */
		struct pc_src_reply r = { req, rc, 0, "the request failed",
					   false };

		jnl_write_reply(j->w, ts(j), &r);
	}
	return rc;
}

static void disable(struct pc_source *s, pc_src_handle h)
{
	struct jnl_src *j = impl(s);

	j->inner->ops->disable(j->inner, h);
	jnl_write_disable(j->w, ts(j), h, NULL);
}

static double observed_cost(struct pc_source *s)
{
	struct jnl_src *j = impl(s);
	double c = j->inner->ops->observed_cost(j->inner);

	j->holds = 0;
	j->held_s = 0;
	if (j->inner->ops->held != NULL)
		j->inner->ops->held(j->inner, &j->holds, &j->held_s);
	jnl_write_cost(j->w, ts(j), c, -1, -1, j->holds, j->held_s);
	return c;
}

/* Not journaled: where the program is stopped changes no record. */
static void step(struct pc_source *s, bool begins)
{
	struct jnl_src *j = impl(s);

	j->inner->ops->step(j->inner, begins);
}

/* As the cost record of this tick says (observed_cost asked first). */
static void held(struct pc_source *s, long *holds, double *seconds)
{
	struct jnl_src *j = impl(s);

	*holds = j->holds;
	*seconds = j->held_s;
}

static void set_sample_period(struct pc_source *s, double seconds)
{
	struct jnl_src *j = impl(s);

	j->inner->ops->set_sample_period(j->inner, seconds);
	jnl_write_period(j->w, ts(j), seconds);
}

static double hint(struct pc_source *s, const char *path)
{
	struct jnl_src *j = impl(s);
	double v = j->inner->ops->hint(j->inner, path);

	jnl_write_hint(j->w, ts(j), path, v);
	return v;
}

/* Recorded when it differs from the last recorded: the report asks
 * for it once for the text and once for the JSON. */
static json_t *stack_samples(struct pc_source *s)
{
	struct jnl_src *j = impl(s);
	json_t *v = j->inner->ops->stack_samples(j->inner);
	json_t *rec;

	if (v == NULL || (j->last_stack && json_equal(v, j->last_stack)))
		return v;
	rec = json_pack("{s:O}", "samples", v);
	jnl_write_json(j->w, "stack_samples", ts(j), rec);
	json_decref(rec);
	json_decref(j->last_stack);
	j->last_stack = json_incref(v);
	return v;
}

static void free_wrapper(struct jnl_src *j)
{
	json_decref(j->last_stack);
	for (size_t i = 0; i < j->npred; i++)
		free(j->pred[i].key);
	free(j->pred);
	free(j->smp);
	free(j->paths);
	free(j);
}

static void close_src(struct pc_source *s)
{
	struct jnl_src *j = impl(s);

	if (j->inner->ops->close)
		j->inner->ops->close(j->inner);
	free_wrapper(j);
}

struct pc_source *jnl_source_unwrap(struct pc_source *s)
{
	struct jnl_src *j = impl(s);
	struct pc_source *inner = j->inner;

	free_wrapper(j);
	return inner;
}

/* Each op exists exactly when the inner source has it. */
#define MIRROR(op, fn) (in->op ? fn : NULL)

struct pc_source *jnl_source_wrap(struct pc_source *inner,
				  struct jnl_writer *w, int pid)
{
	struct jnl_src *j = calloc(1, sizeof(*j));
	const struct pc_source_ops *in = inner->ops;

	if (j == NULL)
		return NULL;
	j->inner = inner;
	j->w = w;
	j->pid = pid;
	j->ops = (struct pc_source_ops){
		.kind = in->kind,
		.poll_resources = MIRROR(poll_resources, poll_resources),
		.close = close_src,
		.now = MIRROR(now, now),
		.predict_cost = MIRROR(predict_cost, predict_cost),
		.enable = MIRROR(enable, enable),
		.disable = MIRROR(disable, disable),
		.poll_replies = MIRROR(poll_replies, poll_replies),
		.poll_samples = MIRROR(poll_samples, poll_samples),
		.observed_cost = MIRROR(observed_cost, observed_cost),
		.held = MIRROR(held, held),
		.step = MIRROR(step, step),
		.poll_events = MIRROR(poll_events, poll_events),
		.set_sample_period = MIRROR(set_sample_period, set_sample_period),
		.callees = MIRROR(callees, callees),
		.hint = MIRROR(hint, hint),
		.stack_samples = MIRROR(stack_samples, stack_samples),
	};
	j->pub.ops = &j->ops;
	j->pub.impl = j;
	return &j->pub;
}

/* src_replay.c - a journal played back as a source (see src_replay.h). */
#include "src_replay.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jnl_read.h"
#include "jnl_record.h"

/* One record and the tick it follows (seg: 0 for the first tick and
 * anything before it). */
struct rec {
	enum jnl_kind kind;
	json_t *json;
	size_t seg;
};

/* A recorded enable and its recorded reply.  `claimed` once the replay
 * asked for the same (metric, focus): its reply then goes out under the
 * replay's request number. */
struct renable {
	char *key;
	uint64_t req;
	size_t seg;
	bool claimed;
	bool answered;               /* its reply has been given or owed */
	uint64_t req_new;
	bool has_reply;
	size_t reply_seg;
	struct pc_src_reply reply;   /* reason borrowed from the record */
};

/* A recorded answer to predict_cost, hint or callees. */
struct answer {
	char *key;
	size_t seg;
	double v;
	const json_t *arr;           /* callees */
};

struct answers {
	struct answer *a;
	size_t n, cap;
};

struct src_replay {
	struct pc_source pub;
	json_t *header;
	struct rec *recs;
	size_t nrec, caprec;
	size_t *ticks;               /* index in recs of each tick record */
	size_t nticks, capticks;
	long cur;                    /* tick played (-1: none yet) */
	double now;
	double observed;
	struct renable *en;
	size_t nen, capen;
	struct answers pred, hint, callees;
	struct pc_src_reply *pending;   /* replies to give at the next poll */
	size_t npend, cappend;
	pc_src_handle *live;         /* handles the replay has enabled */
	size_t nlive, caplive;
	char **bad;
	size_t nbad, capbad;
	char *end_msg;
	const char *end_reason;
	int unrecorded;
};

static struct src_replay *impl(struct pc_source *s)
{
	return s->impl;
}

/* Grow `*arr` (of `*cap` items of `size`) to hold one more. */
static int grow(void *arr, size_t *cap, size_t n, size_t size)
{
	void **p = arr;
	size_t c;
	void *q;

	if (n < *cap)
		return 0;
	c = *cap ? 2 * *cap : 64;
	if ((q = realloc(*p, c * size)) == NULL)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

/* The same key as jnl_source.c: metric and paths joined by 0x1f. */
static char *focus_key(const char *metric, const struct pc_src_focus *f)
{
	size_t len = strlen(metric) + 1;
	char *k, *p;

	for (int h = 0; h < PC_SRC_NHIER; h++)
		len += strlen(f->path[h] ? f->path[h] : "") + 1;
	if ((k = malloc(len)) == NULL)
		return NULL;
	p = stpcpy(k, metric);
	for (int h = 0; h < PC_SRC_NHIER; h++) {
		*p++ = '\x1f';
		p = stpcpy(p, f->path[h] ? f->path[h] : "");
	}
	return k;
}

static char *record_key(const json_t *j)
{
	struct pc_src_focus f;
	const char *m = json_string_value(json_object_get(j, "metric"));

	if (m == NULL ||
	    jnl_focus_decode(json_object_get(j, "focus"), &f, NULL) != 0)
		return NULL;
	return focus_key(m, &f);
}

static const char *str(const json_t *j, const char *field)
{
	return json_string_value(json_object_get(j, field));
}

static double num(const json_t *j, const char *field)
{
	return json_number_value(json_object_get(j, field));
}

/* --- loading: index the answers once, so each call is a lookup --- */

static void add_answer(struct answers *as, char *key, size_t seg, double v,
		       const json_t *arr)
{
	if (key == NULL || grow(&as->a, &as->cap, as->n, sizeof(*as->a))) {
		free(key);
		return;
	}
	as->a[as->n++] = (struct answer){ key, seg, v, arr };
}

static void add_enable(struct src_replay *r, const json_t *j, size_t seg)
{
	char *key = record_key(j);

	if (key == NULL || grow(&r->en, &r->capen, r->nen, sizeof(*r->en))) {
		free(key);
		return;
	}
	r->en[r->nen++] = (struct renable){
		.key = key, .seg = seg,
		.req = (uint64_t)json_integer_value(json_object_get(j, "req")),
	};
}

/* The latest recorded enable with this request number gets the reply. */
static void add_reply(struct src_replay *r, const json_t *j, size_t seg)
{
	struct pc_src_reply rp;

	if (jnl_reply_decode(j, &rp, NULL) != 0)
		return;
	for (size_t i = r->nen; i-- > 0;)
		if (r->en[i].req == rp.req && !r->en[i].has_reply) {
			r->en[i].has_reply = true;
			r->en[i].reply_seg = seg;
			r->en[i].reply = rp;
			return;
		}
}

static void index_record(struct src_replay *r, const struct rec *x)
{
	const char *path;

	switch (x->kind) {
	case JNL_REC_ENABLE:
		add_enable(r, x->json, x->seg);
		break;
	case JNL_REC_REPLY:
		add_reply(r, x->json, x->seg);
		break;
	case JNL_REC_PREDICT:
		add_answer(&r->pred, record_key(x->json), x->seg,
			   num(x->json, "cost"), NULL);
		break;
	case JNL_REC_HINT:
		add_answer(&r->hint, strdup(str(x->json, "path")), x->seg,
			   num(x->json, "share"), NULL);
		break;
	case JNL_REC_CALLEES:
		path = str(x->json, "path");
		add_answer(&r->callees, strdup(path ? path : ""), x->seg, 0,
			   json_object_get(x->json, "callees"));
		break;
	case JNL_REC_END:
		r->end_reason = str(x->json, "reason");
		break;
	default:
		break;
	}
}

static int keep(struct src_replay *r, const struct jnl_record *jr)
{
	struct rec x = { jr->kind, json_incref((json_t *)jr->json), 0 };

	if (grow(&r->recs, &r->caprec, r->nrec, sizeof(*r->recs))) {
		json_decref(x.json);
		return -ENOMEM;
	}
	if (x.kind == JNL_REC_TICK) {
		if (grow(&r->ticks, &r->capticks, r->nticks, sizeof(*r->ticks))) {
			json_decref(x.json);
			return -ENOMEM;
		}
		r->ticks[r->nticks++] = r->nrec;
	}
	x.seg = r->nticks ? r->nticks - 1 : 0;
	r->recs[r->nrec++] = x;
	index_record(r, &r->recs[r->nrec - 1]);
	return 0;
}

static void keep_bad(struct src_replay *r, const char *msg)
{
	if (grow(&r->bad, &r->capbad, r->nbad, sizeof(*r->bad)) == 0)
		r->bad[r->nbad++] = strdup(msg);
}

static int load(struct src_replay *r, struct jnl_reader *rd)
{
	struct jnl_record jr;
	struct hunch_err e = { 0 };
	const char *msg = NULL;
	int rc;

	r->header = json_incref((json_t *)jnl_reader_header(rd));
	while ((rc = jnl_next(rd, &jr, &e)) != JNL_NEXT_END) {
		if (rc == JNL_NEXT_BAD)
			keep_bad(r, e.msg);
		else if (jr.kind != JNL_REC_HEADER && keep(r, &jr) != 0)
			return -ENOMEM;
	}
	jnl_reader_end(rd, &msg);
	r->end_msg = msg ? strdup(msg) : NULL;
	return 0;
}

/* --- the source ops --- */

static size_t seg_lo(const struct src_replay *r)
{
	return r->cur <= 0 ? 0 : r->ticks[r->cur];
}

static size_t seg_hi(const struct src_replay *r)
{
	if (r->cur < 0)
		return 0;
	return (size_t)r->cur + 1 < r->nticks ? r->ticks[r->cur + 1] : r->nrec;
}

static double now(struct pc_source *s)
{
	struct src_replay *r = impl(s);

	if ((size_t)(r->cur + 1) < r->nticks) {
		r->cur++;
		r->now = num(r->recs[r->ticks[r->cur]].json, "now");
	}
	return r->now;
}

static int poll_resources(struct pc_source *s, pc_disc_fn fn, void *arg)
{
	struct src_replay *r = impl(s);
	struct pc_discovery d;

	for (size_t i = seg_lo(r); i < seg_hi(r); i++)
		if (r->recs[i].kind == JNL_REC_RESOURCE &&
		    jnl_discovery_decode(r->recs[i].json, &d, NULL) == 0)
			fn(arg, &d);
	return 0;
}

static int poll_events(struct pc_source *s, pc_event_fn fn, void *arg)
{
	struct src_replay *r = impl(s);
	struct jnl_target t;
	struct pc_src_event e;

	for (size_t i = seg_lo(r); i < seg_hi(r); i++)
		if (r->recs[i].kind == JNL_REC_TARGET &&
		    jnl_target_decode(r->recs[i].json, &t, NULL) == 0 &&
		    jnl_target_to_src(&t, &e) == 0)
			fn(arg, &e);
	return 0;
}

static bool is_live(const struct src_replay *r, pc_src_handle h)
{
	for (size_t i = 0; i < r->nlive; i++)
		if (r->live[i] == h)
			return true;
	return false;
}

static void give_reply(struct src_replay *r, const struct pc_src_reply *rp,
		       pc_reply_fn fn, void *arg)
{
	if (rp->status == 0 && !is_live(r, rp->handle) &&
	    grow(&r->live, &r->caplive, r->nlive, sizeof(*r->live)) == 0)
		r->live[r->nlive++] = rp->handle;
	fn(arg, rp);
}

/* The recorded enable whose reply record is recs[i], if the replay has
 * asked for it. */
static struct renable *claimed_for(struct src_replay *r, size_t i)
{
	struct pc_src_reply rp;

	if (jnl_reply_decode(r->recs[i].json, &rp, NULL) != 0)
		return NULL;
	for (size_t k = r->nen; k-- > 0;)
		if (r->en[k].has_reply && r->en[k].req == rp.req &&
		    r->en[k].reply_seg == r->recs[i].seg)
			return r->en[k].claimed && !r->en[k].answered ?
			       &r->en[k] : NULL;
	return NULL;
}

/* Replies owed since the last poll first (unrecorded requests, and
 * recorded replies that came before the replay asked), then the ones
 * recorded at this tick, in journal order. */
static int poll_replies(struct pc_source *s, pc_reply_fn fn, void *arg)
{
	struct src_replay *r = impl(s);
	size_t n = r->npend;

	for (size_t i = 0; i < n; i++)
		give_reply(r, &r->pending[i], fn, arg);
	memmove(r->pending, r->pending + n, (r->npend - n) * sizeof(*r->pending));
	r->npend -= n;
	for (size_t i = seg_lo(r); i < seg_hi(r); i++) {
		struct renable *e;
		struct pc_src_reply rp;

		if (r->recs[i].kind != JNL_REC_REPLY ||
		    (e = claimed_for(r, i)) == NULL)
			continue;
		rp = e->reply;
		rp.req = e->req_new;
		e->answered = true;
		give_reply(r, &rp, fn, arg);
	}
	return 0;
}

static int poll_samples(struct pc_source *s, pc_sample_fn fn, void *arg)
{
	struct src_replay *r = impl(s);

	for (size_t i = seg_lo(r); i < seg_hi(r); i++) {
		struct jnl_sample smp;

		if (r->recs[i].kind != JNL_REC_SAMPLE ||
		    jnl_sample_decode(r->recs[i].json, &smp, NULL) != 0)
			continue;
		for (size_t k = 0; k < smp.n; k++) {
			struct pc_src_sample x = jnl_sample_at(&smp, k);

			if (is_live(r, x.handle))
				fn(arg, &x);
		}
		jnl_sample_free(&smp);
	}
	return 0;
}

/* The answer for `key` recorded at the latest tick not after the current
 * one; else the first recorded (asked earlier than when recorded). */
static const struct answer *lookup(const struct src_replay *r,
				   const struct answers *as, const char *key)
{
	const struct answer *best = NULL, *first = NULL;

	for (size_t i = 0; key && i < as->n; i++) {
		if (strcmp(as->a[i].key, key) != 0)
			continue;
		if (first == NULL)
			first = &as->a[i];
		if ((long)as->a[i].seg <= r->cur)
			best = &as->a[i];
	}
	return best ? best : first;
}

/* A prediction never recorded: 0 (the enable will say "not recorded"). */
static double predict_cost(struct pc_source *s, const char *metric,
			   const struct pc_src_focus *f)
{
	struct src_replay *r = impl(s);
	char *key = focus_key(metric, f);
	const struct answer *a = lookup(r, &r->pred, key);

	free(key);
	return a ? a->v : 0;
}

static double hint(struct pc_source *s, const char *path)
{
	struct src_replay *r = impl(s);
	const struct answer *a = lookup(r, &r->hint, path);

	return a ? a->v : -1;
}

static int callees(struct pc_source *s, const char *path, pc_path_fn fn,
		   void *arg)
{
	struct src_replay *r = impl(s);
	const struct answer *a = lookup(r, &r->callees, path ? path : "");
	size_t i;
	json_t *v;

	if (a == NULL)
		return -ENOENT;
	json_array_foreach(a->arr, i, v)
		if (json_is_string(v))
			fn(arg, json_string_value(v));
	return 0;
}

static int owe_reply(struct src_replay *r, const struct pc_src_reply *rp)
{
	if (grow(&r->pending, &r->cappend, r->npend, sizeof(*r->pending)))
		return -ENOMEM;
	r->pending[r->npend++] = *rp;
	return 0;
}

/* The first unclaimed recorded enable of the same metric and focus; its
 * reply is owed now if it was recorded already, else when it comes. */
static int enable(struct pc_source *s, const char *metric,
		  const struct pc_src_focus *f, uint64_t req)
{
	struct src_replay *r = impl(s);
	char *key = focus_key(metric, f);
	struct renable *e = NULL;
	struct pc_src_reply rp;

	for (size_t i = 0; key && e == NULL && i < r->nen; i++)
		if (!r->en[i].claimed && strcmp(r->en[i].key, key) == 0)
			e = &r->en[i];
	free(key);
	if (e == NULL) {
		r->unrecorded++;
		rp = (struct pc_src_reply){ req, -ENODATA, 0,
					    SRC_REPLAY_NOT_RECORDED };
		return owe_reply(r, &rp);
	}
	e->claimed = true;
	e->req_new = req;
	if (!e->has_reply || (long)e->reply_seg > r->cur)
		return 0;   /* the recorded reply comes later */
	e->answered = true;
	/* Replied in the tick of the request: the recorded enable failed at
	 * once (jnl_source.c writes that reply inside enable). */
	if (e->reply_seg == e->seg && e->reply.status < 0)
		return e->reply.status;
	rp = e->reply;
	rp.req = req;
	return owe_reply(r, &rp);
}

static void disable(struct pc_source *s, pc_src_handle h)
{
	struct src_replay *r = impl(s);

	for (size_t i = 0; i < r->nlive; i++)
		if (r->live[i] == h) {
			r->live[i] = r->live[--r->nlive];
			return;
		}
}

/* The cost recorded at this tick; without one, the last known. */
static double observed_cost(struct pc_source *s)
{
	struct src_replay *r = impl(s);

	for (size_t i = seg_lo(r); i < seg_hi(r); i++)
		if (r->recs[i].kind == JNL_REC_COST)
			r->observed = num(r->recs[i].json, "observed");
	return r->observed;
}

static void set_sample_period(struct pc_source *s, double seconds)
{
	(void)s;
	(void)seconds;   /* the recorded samples already have their period */
}

static void close_src(struct pc_source *s)
{
	(void)s;
}

static const struct pc_source_ops replay_ops = {
	.kind = "replay",
	.poll_resources = poll_resources,
	.close = close_src,
	.now = now,
	.predict_cost = predict_cost,
	.enable = enable,
	.disable = disable,
	.poll_replies = poll_replies,
	.poll_samples = poll_samples,
	.observed_cost = observed_cost,
	.poll_events = poll_events,
	.set_sample_period = set_sample_period,
	.callees = callees,
	.hint = hint,
};

/* --- open, query, free --- */

static int open_reader(struct src_replay **out, struct jnl_reader *rd)
{
	struct src_replay *r = calloc(1, sizeof(*r));

	if (r == NULL || load(r, rd) != 0) {
		jnl_reader_close(rd);
		src_replay_free(r);
		return -ENOMEM;
	}
	jnl_reader_close(rd);
	r->cur = -1;
	r->pub.ops = &replay_ops;
	r->pub.impl = r;
	*out = r;
	return 0;
}

int src_replay_open(struct src_replay **out, const char *path,
		    struct hunch_err *err)
{
	struct jnl_reader *rd;
	int rc;

	*out = NULL;
	if ((rc = jnl_reader_open(&rd, path, err)) != 0)
		return rc;
	return open_reader(out, rd);
}

int src_replay_open_mem(struct src_replay **out, const void *buf, size_t len,
			const char *name, struct hunch_err *err)
{
	struct jnl_reader *rd;
	int rc;

	*out = NULL;
	if ((rc = jnl_reader_open_mem(&rd, buf, len, name, err)) != 0)
		return rc;
	return open_reader(out, rd);
}

static void free_answers(struct answers *as)
{
	for (size_t i = 0; i < as->n; i++)
		free(as->a[i].key);
	free(as->a);
}

void src_replay_free(struct src_replay *r)
{
	if (r == NULL)
		return;
	for (size_t i = 0; i < r->nrec; i++)
		json_decref(r->recs[i].json);
	for (size_t i = 0; i < r->nen; i++)
		free(r->en[i].key);
	for (size_t i = 0; i < r->nbad; i++)
		free(r->bad[i]);
	free_answers(&r->pred);
	free_answers(&r->hint);
	free_answers(&r->callees);
	json_decref(r->header);
	free(r->recs);
	free(r->ticks);
	free(r->en);
	free(r->pending);
	free(r->live);
	free(r->bad);
	free(r->end_msg);
	free(r);
}

struct pc_source *src_replay_source(struct src_replay *r)
{
	return &r->pub;
}

const json_t *src_replay_header(const struct src_replay *r)
{
	return r->header;
}

bool src_replay_done(const struct src_replay *r)
{
	return (size_t)(r->cur + 1) >= r->nticks;
}

size_t src_replay_ticks(const struct src_replay *r)
{
	return r->nticks;
}

size_t src_replay_nbad(const struct src_replay *r)
{
	return r->nbad;
}

const char *src_replay_bad(const struct src_replay *r, size_t i)
{
	return i < r->nbad && r->bad[i] ? r->bad[i] : "";
}

const char *src_replay_end_message(const struct src_replay *r)
{
	return r->end_msg;
}

const char *src_replay_end_reason(const struct src_replay *r)
{
	return r->end_reason;
}

int src_replay_unrecorded(const struct src_replay *r)
{
	return r->unrecorded;
}

const json_t *src_replay_record(const struct src_replay *r, const char *kind,
				size_t i)
{
	enum jnl_kind k = jnl_kind_from_name(kind);

	for (size_t x = 0; x < r->nrec; x++)
		if (r->recs[x].kind == k && i-- == 0)
			return r->recs[x].json;
	return NULL;
}

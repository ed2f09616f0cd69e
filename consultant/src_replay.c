/* src_replay.c - a journal played back as a source (see src_replay.h;
 * the index it plays with: src_replay_idx.c). */
#include "src_replay_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "jnl_record.h"
#include "pc_search.h"
#include "pc_steer.h"

static struct src_replay *impl(struct pc_source *s)
{
	return s->impl;
}

static double num(const json_t *j, const char *field)
{
	return json_number_value(json_object_get(j, field));
}

/* --- reading one tick at a time --- */

static void drop_seg(struct src_replay *r)
{
	for (size_t i = 0; i < r->nseg; i++)
		json_decref(r->seg[i].json);
	r->nseg = 0;
}

static void give_output(struct src_replay *r, const struct jnl_record *jr)
{
	struct jnl_output o;

	if (r->out_fn == NULL ||
	    jnl_record_output_decode(jr->json, &o, NULL) != 0)
		return;
	r->out_fn(r->out_arg, jr->ts, o.stream == JNL_STDERR,
		  (const char *)o.bytes, o.len);
	free(o.bytes);
}

/* Kinds the polls answer from; the rest was indexed at open or is
 * for other readers (nodes, actions). */
static bool played(enum jnl_kind k)
{
	return k == JNL_REC_RESOURCE || k == JNL_REC_TARGET ||
	       k == JNL_REC_REPLY || k == JNL_REC_SAMPLE || k == JNL_REC_COST ||
	       k == JNL_REC_ACTION;
}

static void keep(struct src_replay *r, enum jnl_kind k, json_t *j,
		 uint64_t off)
{
	if (src_replay_idx_grow(&r->seg, &r->capseg, r->nseg,
				sizeof(*r->seg)) != 0) {
		json_decref(j);
		return;
	}
	r->seg[r->nseg++] = (struct rp_rec){ k, j, off };
}

/* The records of tick `cur`: its tick record (read ahead last time) and
 * what follows up to the next tick; the first tick also takes whatever
 * came before it.  Skipped lines were counted when indexing. */
static void load_seg(struct src_replay *r)
{
	struct jnl_record jr;
	struct hunch_err e = { 0 };
	bool have_tick = r->ahead != NULL;
	int rc;

	drop_seg(r);
	if (r->ahead != NULL)
		json_decref(r->ahead);
	r->ahead = NULL;
	while ((rc = jnl_read_next(r->rd, &jr, &e)) != JNL_NEXT_END) {
		if (rc != JNL_NEXT_RECORD)
			continue;
		if (jr.kind == JNL_REC_TICK) {
			if (have_tick) {
				r->ahead = json_incref((json_t *)jr.json);
				r->ahead_off = jr.offset;
				return;
			}
			have_tick = true;
		} else if (jr.kind == JNL_REC_OUTPUT) {
			give_output(r, &jr);
		} else if (played(jr.kind)) {
			keep(r, jr.kind, json_incref((json_t *)jr.json),
			     jr.offset);
		}
	}
}

/* --- the source ops --- */

static double now(struct pc_source *s)
{
	struct src_replay *r = impl(s);

	src_replay_idx_to(r, (size_t)(r->cur + 1));
	if ((size_t)(r->cur + 1) < r->nticks) {
		r->cur++;
		load_seg(r);
		r->now = r->tick_now[r->cur];
	}
	return r->now;
}

static int poll_resources(struct pc_source *s, pc_disc_fn fn, void *arg)
{
	struct src_replay *r = impl(s);
	struct pc_discovery d;

	for (size_t i = 0; i < r->nseg; i++)
		if (r->seg[i].kind == JNL_REC_RESOURCE &&
		    jnl_record_discovery_decode(r->seg[i].json, &d, NULL) == 0)
			fn(arg, &d);
	return 0;
}

static int poll_events(struct pc_source *s, pc_event_fn fn, void *arg)
{
	struct src_replay *r = impl(s);
	struct jnl_target t;
	struct pc_src_event e;

	for (size_t i = 0; i < r->nseg; i++)
		if (r->seg[i].kind == JNL_REC_TARGET &&
		    jnl_record_target_decode(r->seg[i].json, &t, NULL) == 0 &&
		    jnl_record_target_to_src(&t, &e) == 0)
			fn(arg, &e);
	return 0;
}

static void give_reply(struct src_replay *r, const struct pc_src_reply *rp,
		       pc_reply_fn fn, void *arg)
{
	if (rp->status == 0)
		hmap_put(&r->live, rp->handle, 1);
	fn(arg, rp);
}

/* The recorded enable whose reply record is at byte `off`, if the
 * replay has asked for it and not had its answer yet. */
static struct rp_enable *claimed_for(struct src_replay *r, uint64_t off)
{
	size_t *e = hmap_get(&r->reply_at, off);

	if (e == NULL || !r->en[*e].claimed || r->en[*e].answered)
		return NULL;
	return &r->en[*e];
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
	for (size_t i = 0; i < r->nseg; i++) {
		struct rp_enable *e;
		struct pc_src_reply rp;

		if (r->seg[i].kind != JNL_REC_REPLY ||
		    (e = claimed_for(r, r->seg[i].off)) == NULL)
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

	for (size_t i = 0; i < r->nseg; i++) {
		struct jnl_sample smp;

		if (r->seg[i].kind != JNL_REC_SAMPLE ||
		    jnl_record_sample_decode(r->seg[i].json, &smp, NULL) != 0)
			continue;
		for (size_t k = 0; k < smp.n; k++) {
			struct pc_src_sample x = jnl_record_sample_at(&smp, k);

			if (hmap_get(&r->live, x.handle) != NULL)
				fn(arg, &x);
		}
		jnl_record_sample_free(&smp);
	}
	return 0;
}

/* A prediction never recorded: 0 (the enable will say "not recorded"). */
/* src_replay_idx_lookup, with the rest of the journal indexed first when a partial
 * index has no answer (one may be recorded later). */
/* Not in the partial index, but recorded later in the journal (the scan
 * of a lazy open says which keys ever were). */
static bool later(const struct src_replay *r, int kind, const char *key)
{
	char *s;
	bool yes;

	if (r->indexed || key == NULL)
		return false;
	s = src_replay_scan_key(kind, key);
	yes = hmap_get_s(&r->ever, s) != NULL;
	free(s);
	return yes;
}

static const struct rp_answer *lookup(struct src_replay *r, int kind,
				      struct rp_answers *as, const char *key)
{
	const struct rp_answer *a = src_replay_idx_lookup(as, key, r->cur);

	if (a != NULL || !later(r, kind, key))
		return a;
	src_replay_idx_all(r);
	return src_replay_idx_lookup(as, key, r->cur);
}

static double predict_cost(struct pc_source *s, const char *metric,
			   const struct pc_src_focus *f)
{
	struct src_replay *r = impl(s);
	char *key = jnl_record_focus_key(metric, f);
	const struct rp_answer *a = lookup(r, RP_SCAN_PREDICT, &r->pred, key);

	free(key);
	return a ? a->v : 0;
}

/* A journal recorded before hints were asked by kind ("PATH?cpu",
 * "PATH?wait=METRIC") answers with the hint of any kind it recorded
 * for PATH, the question its search asked there. */
static double hint(struct pc_source *s, const char *path)
{
	struct src_replay *r = impl(s);
	const struct rp_answer *a = lookup(r, RP_SCAN_HINT, &r->hint, path);
	char bare[1200];

	if (a == NULL && pc_source_hint_kind(path, bare, sizeof(bare)))
		a = lookup(r, RP_SCAN_HINT, &r->hint, bare);
	return a ? a->v : -1;
}

/* The recording's whole-run stack samples as the live report printed
 * them (its last record), whatever tick is played. */
static json_t *stack_samples(struct pc_source *s)
{
	json_t *v = impl(s)->stack_samples;

	return v ? json_incref(v) : NULL;
}

static int callees(struct pc_source *s, const char *path, pc_path_fn fn,
		   void *arg)
{
	struct src_replay *r = impl(s);
	const struct rp_answer *a = lookup(r, RP_SCAN_CALLEES, &r->callees,
					     path ? path : "");

	if (a == NULL)
		return -ENOENT;
	for (size_t i = 0; i < a->ncallees; i++)
		if (a->callees[i] != NULL)
			fn(arg, a->callees[i]);
	return 0;
}

static int owe_reply(struct src_replay *r, const struct pc_src_reply *rp)
{
	if (src_replay_idx_grow(&r->pending, &r->cappend, r->npend,
				sizeof(*r->pending)))
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
	char *key = jnl_record_focus_key(metric, f);
	size_t *k = key ? hmap_get_s(&r->en_keys, key) : NULL;
	struct rp_enable *e = NULL;
	struct pc_src_reply rp;

	if ((k == NULL || r->enc[*k].cursor == RP_NONE) &&
	    later(r, RP_SCAN_ENABLE, key)) {
		src_replay_idx_all(r);   /* recorded later, or never? */
		k = hmap_get_s(&r->en_keys, key);
	}
	free(key);
	if (k != NULL && r->enc[*k].cursor != RP_NONE) {
		e = &r->en[r->enc[*k].cursor];
		r->enc[*k].cursor = e->next;
	}
	if (e == NULL) {
		r->unrecorded++;
		rp = (struct pc_src_reply){ req, -ENODATA, 0,
					    SRC_REPLAY_NOT_RECORDED, false };
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
	hmap_del(&impl(s)->live, h);
}

/* The cost recorded at this tick; without one, the last known. */
static double observed_cost(struct pc_source *s)
{
	struct src_replay *r = impl(s);

	for (size_t i = 0; i < r->nseg; i++)
		if (r->seg[i].kind == JNL_REC_COST) {
			r->observed = num(r->seg[i].json, "observed");
			r->holds = (long)json_integer_value(
				json_object_get(r->seg[i].json, "holds"));
			r->held_s = json_number_value(
				json_object_get(r->seg[i].json, "held"));
		}
	return r->observed;
}

/* The holds the cost record said (0 in a journal from before them). */
static void held(struct pc_source *s, long *holds, double *seconds)
{
	struct src_replay *r = impl(s);

	*holds = r->holds;
	*seconds = r->held_s;
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
	.held = held,
	.poll_events = poll_events,
	.set_sample_period = set_sample_period,
	.callees = callees,
	.hint = hint,
	.stack_samples = stack_samples,
};

/* --- the user's actions --- */

/* A recorded tunable change, remembered so that a rewind can give the
 * configuration (shared by the searches a dashboard rebuilds) back. */
static int set_tunable(struct src_replay *r, struct pc_consult *pc,
		       const char *name, double v)
{
	double old = pc_tunables_get(pc->cfg, name);

	if (pc_consult_set_tunable(pc, name, v, NULL) != 0)
		return 0;
	if (src_replay_idx_grow(&r->undo, &r->capundo, r->nundo,
				sizeof(*r->undo)) == 0)
		r->undo[r->nundo++] = (struct rp_undo){ strdup(name), old,
							pc->cfg };
	return 1;
}

void src_replay_undo_to(struct src_replay *r, size_t n)
{
	while (r->nundo > n) {
		struct rp_undo *u = &r->undo[--r->nundo];

		if (u->name != NULL)
			pc_tunables_set(u->cfg, u->name, u->old, NULL);
		free(u->name);
	}
}

static int apply_action(struct src_replay *r, struct pc_consult *pc,
			const json_t *j)
{
	const char *a = json_string_value(json_object_get(j, "action"));
	const char *name = json_string_value(json_object_get(j, "name"));
	const json_t *ph = json_object_get(j, "phase");
	int sid = json_is_integer(ph) ? (int)json_integer_value(ph) : 0;
	const json_t *v = json_object_get(j, "value");

	if (a == NULL)
		return 0;
	if (strcmp(a, "pause") == 0 || strcmp(a, "resume") == 0)
		return pc_consult_pause(pc, sid, a[0] == 'p') == 0;
	if (strcmp(a, "phase_start") == 0)
		return pc_consult_phase_start(pc, name) > 0;
	if (strcmp(a, "tunable") == 0 && name != NULL && json_is_number(v))
		return set_tunable(r, pc, name, json_number_value(v));
	return pc_steer_jnl_replay(pc, j) > 0;   /* by hand (pc_steer_jnl.c) */
}

int src_replay_actions(struct src_replay *r, struct pc_consult *pc)
{
	int n = 0;

	if (r->cur < 0 || r->acted == r->cur)
		return 0;
	r->acted = r->cur;
	for (size_t i = 0; i < r->nseg; i++)
		if (r->seg[i].kind == JNL_REC_ACTION)
			n += apply_action(r, pc, r->seg[i].json);
	return n;
}

/* --- open, rewind, query, free --- */

static int open_reader(struct src_replay **out, struct jnl_reader *rd,
		       struct jnl_reader *ird, uint64_t first,
		       const char *name, struct hunch_err *err)
{
	struct src_replay *r = calloc(1, sizeof(*r));
	int rc;

	if (r == NULL) {
		jnl_read_close(rd);
		return hunch_err_set(err, -ENOMEM, "out of memory");
	}
	r->rd = rd;
	r->cur = r->acted = -1;
	hmap_init(&r->en_keys, true);
	hmap_init(&r->reply_at, false);
	hmap_init(&r->pred.keys, true);
	hmap_init(&r->hint.keys, true);
	hmap_init(&r->callees.keys, true);
	hmap_init(&r->live, false);
	if (ird != NULL) {   /* lazy: the first slice now */
		src_replay_idx_begin(r, ird);
		rc = src_replay_idx_step(r, first);
		rc = rc < 0 ? rc : 0;
	} else {
		rc = src_replay_idx(r);
	}
	if (rc != 0) {
		src_replay_free(r);
		if (rc == -ESPIPE)
			return hunch_err_set(
				err, rc,
				"%s cannot be replayed from "
				"a pipe: replay reads it twice (an "
				"index first); save it to a file",
				name);
		return hunch_err_set(err, rc, "cannot index %s: %s", name,
				  strerror(-rc));
	}
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
	if ((rc = jnl_read_open(&rd, path, err)) != 0)
		return rc;
	return open_reader(out, rd, NULL, 0, path, err);
}

int src_replay_open_lazy(struct src_replay **out, const char *path,
			 uint64_t first, struct hunch_err *err)
{
	struct jnl_reader *rd, *ird;
	struct stat st;
	int rc;

	*out = NULL;
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))   /* a pipe... */
		return src_replay_open(out, path, err);
	if ((rc = jnl_read_open(&rd, path, err)) != 0)
		return rc;
	if (jnl_read_open(&ird, path, err) != 0) {
		jnl_read_close(rd);
		return src_replay_open(out, path, err);
	}
	if ((rc = open_reader(out, rd, ird, first, path, err)) != 0)
		return rc;
	if (((*out)->path = strdup(path)) == NULL)
		abort();
	hmap_init(&(*out)->ever, true);
	if (!(*out)->indexed && src_replay_scan(&(*out)->ever, path) != 0)
		src_replay_idx_all(*out);   /* cannot skim it: index it now */
	return 0;
}

int src_replay_open_mem(struct src_replay **out, const void *buf, size_t len,
			const char *name, struct hunch_err *err)
{
	struct jnl_reader *rd;
	int rc;

	*out = NULL;
	if ((rc = jnl_read_open_mem(&rd, buf, len, name, err)) != 0)
		return rc;
	return open_reader(out, rd, NULL, 0, name, err);
}

/* The records of the tick played and the next tick's, read ahead. */
void src_replay_forget_tick(struct src_replay *r)
{
	drop_seg(r);
	json_decref(r->ahead);
	r->ahead = NULL;
}

int src_replay_rewind(struct src_replay *r)
{
	src_replay_undo_to(r, 0);
	src_replay_forget_tick(r);
	r->cur = r->acted = -1;
	r->now = r->observed = 0;
	r->npend = 0;
	r->unrecorded = 0;
	hmap_clear(&r->live);
	for (size_t i = 0; i < r->nen; i++) {
		r->en[i].claimed = r->en[i].answered = false;
		r->en[i].req_new = 0;
	}
	for (size_t i = 0; i < r->nenc; i++)
		r->enc[i].cursor = r->enc[i].first;
	src_replay_idx_answers_rewind(&r->pred);
	src_replay_idx_answers_rewind(&r->hint);
	src_replay_idx_answers_rewind(&r->callees);
	return jnl_read_rewind(r->rd);
}

void src_replay_set_output(struct src_replay *r, src_replay_output_fn fn,
			   void *arg)
{
	r->out_fn = fn;
	r->out_arg = arg;
}

void src_replay_free(struct src_replay *r)
{
	if (r == NULL)
		return;
	drop_seg(r);
	json_decref(r->ahead);
	for (size_t i = 0; i < r->nundo; i++)
		free(r->undo[i].name);
	free(r->undo);
	src_replay_idx_free(r);
	hmap_free(&r->live);
	free(r->seg);
	free(r->pending);
	jnl_read_close(r->rd);
	free(r->path);
	hmap_free(&r->ever);
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

bool src_replay_done(struct src_replay *r)
{
	src_replay_idx_to(r, (size_t)(r->cur + 1));
	return (size_t)(r->cur + 1) >= r->nticks;
}

/* The `now` of the last complete tick record in the file's last MiB:
 * what the index will say, known before it is built.  -1: none there,
 * or a compressed journal, whose end is reached only by decompressing
 * it all (the index does that). */
static double tail_now(const char *path)
{
	enum { TAIL = 1 << 20 };
	FILE *f = fopen(path, "rb");
	char *buf = malloc(TAIL + 1), *p;
	unsigned char magic[2] = { 0, 0 };
	double v = -1;
	long size;
	size_t n;

	if (f != NULL && fread(magic, 1, 2, f) == 2 && magic[0] == 0x1f &&
	    magic[1] == 0x8b)
		goto out;
	if (f == NULL || buf == NULL || fseek(f, 0, SEEK_END) != 0 ||
	    (size = ftell(f)) < 0 ||
	    fseek(f, size > TAIL ? size - TAIL : 0, SEEK_SET) != 0)
		goto out;
	n = fread(buf, 1, TAIL, f);
	buf[n] = '\0';
	while (n > 0 && buf[n - 1] != '\n')   /* a cut last line */
		buf[--n] = '\0';
	for (p = buf + n; v < 0 && p > buf;) {
		char *line;
		json_t *j;

		*--p = '\0';
		while (p > buf && p[-1] != '\n')
			p--;
		line = p;
		if (strncmp(line, "{\"t\":\"tick\",", 12) != 0)
			continue;
		if ((j = json_loads(line, 0, NULL)) != NULL &&
		    json_is_number(json_object_get(j, "now")))
			v = json_number_value(json_object_get(j, "now"));
		json_decref(j);
	}
out:
	free(buf);
	if (f != NULL)
		fclose(f);
	return v;
}

double src_replay_length(struct src_replay *r)
{
	double v;

	if (!r->indexed && r->path != NULL && (v = tail_now(r->path)) >= 0)
		return v;
	src_replay_idx_all(r);
	return r->nticks ? r->tick_now[r->nticks - 1] : 0;
}

bool src_replay_indexed(const struct src_replay *r)
{
	return r->indexed;
}

int src_replay_index_step(struct src_replay *r, uint64_t bytes)
{
	return src_replay_idx_step(r, bytes);
}

size_t src_replay_ticks_to(struct src_replay *r, double t)
{
	while (!r->indexed &&
	       (r->nticks == 0 || r->tick_now[r->nticks - 1] <= t))
		if (src_replay_idx_step(r, 1u << 20) < 0)
			break;
	return r->nticks;
}

size_t src_replay_ticks(const struct src_replay *r)
{
	return r->nticks;
}

long src_replay_tick(const struct src_replay *r)
{
	return r->cur;
}

double src_replay_tick_now(struct src_replay *r, size_t i)
{
	src_replay_idx_to(r, i);
	return i < r->nticks ? r->tick_now[i] : 0;
}

size_t src_replay_nbad(const struct src_replay *r)
{
	return r->nbad;
}

size_t src_replay_nbad_total(const struct src_replay *r)
{
	return r->nbad_total;
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

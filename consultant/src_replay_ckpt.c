/*
 * src_replay_ckpt.c - checkpoints of a replayed search (see
 * src_replay_ckpt.h): taking them while playing, thinning them to the
 * budget, and putting the source, the resource tree and the consultant
 * back as they were at one.
 */
#include "src_replay_ckpt.h"

#include "pc_steer.h"
#include "src_replay_int.h"

#include <stdlib.h>
#include <string.h>

#include "pc_search.h"

/* What a resource can change after it was made: children are only
 * appended (new resources), and the rest is flags and numbers. */
struct rp_resmark {
	uint32_t nchildren;
	bool retired;
	uint64_t addr, tag;
};

/* Marks of every resource, shared by the checkpoints that differ from
 * it in a few resources only (after the first discoveries a tree
 * changes little: threads come and go). */
struct rp_resbase {
	int refs;
	size_t n;
	struct rp_resmark *m;        /* resources 1..n */
};

/* A data manager instance as a checkpoint keeps it, shared by the
 * checkpoints in which it is the same (an instance released or failed
 * does not change, nor does one with no sample between them). */
struct rp_mblob {
	int refs;
	struct pc_minst m;           /* its strings owned */
};

/* Where the replay source stood (its play state after a tick). */
struct rp_pos {
	long cur;
	double now, observed;
	long holds;
	double held_s;
	int unrecorded;
	size_t nundo;
	struct pc_src_reply *pending;
	size_t npend;
	uint64_t *live;
	size_t nlive;
	uint8_t *en_state;           /* per recorded enable: claimed, answered */
	uint64_t *en_req;            /* its request under the replay */
	size_t *enc_cursor;          /* per chain: the first not claimed */
	size_t nen, nenc;            /* how many there were (an index built
					lazily grows after) */
};

struct rp_ckpt {
	long tick;
	size_t user;
	struct pc_consult *pc;       /* log lines (nlog 0), instances not
					copied */
	struct rp_mblob **mi;        /* the instances */
	size_t nmi;
	size_t nlog;                 /* the first nlog lines of arch */
	size_t nres;                 /* resources 1..nres */
	struct rp_resbase *base;     /* their marks: the base's, */
	uint32_t *diff_id;           /* but for these (by id) */
	struct rp_resmark *diff;
	size_t ndiff;
	struct rp_pos pos;
	size_t bytes;
};

struct src_replay_ckpt {
	struct src_replay *r;
	const struct pc_restree *tree;   /* the tree they were taken of */
	struct rp_ckpt *k;           /* by tick */
	size_t n, cap;
	size_t bytes, budget;
	double spacing, since;       /* CPU seconds played since the last */
	char **arch;                 /* the recording's consultant log */
	size_t narch, caparch;
	size_t arch_bytes;
	struct rp_resbase *base;     /* the latest base (one reference) */
};

struct src_replay_ckpt *src_replay_ckpt_new(struct src_replay *r, size_t budget,
			      double spacing)
{
	struct src_replay_ckpt *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->r = r;
	c->budget = budget;
	c->spacing = spacing;
	return c;
}

static void pos_free(struct rp_pos *p)
{
	free(p->pending);
	free(p->live);
	free(p->en_state);
	free(p->en_req);
	free(p->enc_cursor);
}

static void base_put(struct src_replay_ckpt *c, struct rp_resbase *b)
{
	if (b == NULL || --b->refs > 0)
		return;
	c->bytes -= b->n * sizeof(*b->m);
	free(b->m);
	free(b);
}

static void blob_put(struct src_replay_ckpt *c, struct rp_mblob *b)
{
	if (b == NULL || --b->refs > 0)
		return;
	c->bytes -= sizeof(*b);
	free(b->m.metric);
	free(b->m.fail_reason);
	free(b);
}

static void ckpt_free(struct src_replay_ckpt *c, struct rp_ckpt *k)
{
	for (size_t i = 0; i < k->nmi; i++)
		blob_put(c, k->mi[i]);
	free(k->mi);
	pc_consult_free(k->pc);
	base_put(c, k->base);
	free(k->diff_id);
	free(k->diff);
	pos_free(&k->pos);
}

void src_replay_ckpt_clear(struct src_replay_ckpt *c)
{
	for (size_t i = 0; i < c->n; i++)
		ckpt_free(c, &c->k[i]);
	base_put(c, c->base);
	c->base = NULL;
	for (size_t i = 0; i < c->narch; i++)
		free(c->arch[i]);
	c->n = c->narch = 0;
	c->bytes = c->arch_bytes = 0;
	c->tree = NULL;
	c->since = 0;
}

void src_replay_ckpt_free(struct src_replay_ckpt *c)
{
	if (c == NULL)
		return;
	src_replay_ckpt_clear(c);
	free(c->k);
	free(c->arch);
	free(c);
}

/* --- taking one --- */

static void *copy_of(const void *p, size_t n, size_t *bytes)
{
	void *q;

	if (n == 0)
		return NULL;
	if ((q = malloc(n)) == NULL)
		abort();
	memcpy(q, p, n);
	*bytes += n;
	return q;
}

static void pos_save(struct rp_pos *p, const struct src_replay *r,
		     size_t *bytes)
{
	p->cur = r->cur;
	p->now = r->now;
	p->observed = r->observed;
	p->holds = r->holds;
	p->held_s = r->held_s;
	p->unrecorded = r->unrecorded;
	p->nundo = r->nundo;
	p->npend = r->npend;
	p->pending = copy_of(r->pending, r->npend * sizeof(*r->pending), bytes);
	p->live = malloc((r->live.n + 1) * sizeof(*p->live));
	if (p->live == NULL)
		abort();
	p->nlive = hmap_keys(&r->live, p->live);
	*bytes += (r->live.n + 1) * sizeof(*p->live);
	p->en_state = malloc(r->nen + 1);
	p->en_req = malloc((r->nen + 1) * sizeof(*p->en_req));
	p->enc_cursor = malloc((r->nenc + 1) * sizeof(*p->enc_cursor));
	if (!p->en_state || !p->en_req || !p->enc_cursor)
		abort();
	for (size_t i = 0; i < r->nen; i++) {
		p->en_state[i] = (uint8_t)(r->en[i].claimed |
					   r->en[i].answered << 1);
		p->en_req[i] = r->en[i].req_new;
	}
	for (size_t i = 0; i < r->nenc; i++)
		p->enc_cursor[i] = r->enc[i].cursor;
	p->nen = r->nen;
	p->nenc = r->nenc;
	*bytes += r->nen * (1 + sizeof(uint64_t)) +
		  r->nenc * sizeof(size_t);
}

static struct rp_resmark mark_of(const struct pc_restree *t, size_t id)
{
	const struct pc_res *x = pc_res_get(t, (pc_res_id)id);

	return (struct rp_resmark){ (uint32_t)x->nchildren, x->retired,
				    x->addr, x->tag };
}

static bool same_mark(const struct rp_resmark *a, const struct rp_resmark *b)
{
	return a->nchildren == b->nchildren && a->retired == b->retired &&
	       a->addr == b->addr && a->tag == b->tag;
}

/* Resources whose marks differ from the latest base's (or that it has
 * not); -1 when over n/8: then a new base is cheaper. */
static long count_diff(const struct src_replay_ckpt *c,
		       const struct pc_restree *t,
		       size_t n)
{
	const struct rp_resbase *b = c->base;
	size_t d;

	if (b == NULL || b->n > n)
		return -1;
	d = n - b->n;
	for (size_t id = 1; id <= b->n && d <= n / 8; id++) {
		struct rp_resmark m = mark_of(t, id);

		d += !same_mark(&m, &b->m[id - 1]);
	}
	return d <= n / 8 ? (long)d : -1;
}

static void new_base(struct src_replay_ckpt *c, const struct pc_restree *t,
		     size_t n)
{
	struct rp_resbase *b = calloc(1, sizeof(*b));

	if (b == NULL || (b->m = malloc((n + 1) * sizeof(*b->m))) == NULL)
		abort();
	b->refs = 1;
	b->n = n;
	for (size_t id = 1; id <= n; id++)
		b->m[id - 1] = mark_of(t, id);
	c->bytes += n * sizeof(*b->m);
	base_put(c, c->base);
	c->base = b;
}

/* The tree's marks for checkpoint k: the latest base (a new one when
 * too much changed) and the resources that differ from it. */
static void res_mark(struct src_replay_ckpt *c, struct rp_ckpt *k,
		     const struct pc_restree *t)
{
	size_t n = pc_res_tree_count(t), d = 0;
	long nd = count_diff(c, t, n);

	if (nd < 0) {
		new_base(c, t, n);
		nd = 0;
	}
	k->nres = n;
	k->base = c->base;
	k->base->refs++;
	k->ndiff = (size_t)nd;
	k->diff_id = malloc(((size_t)nd + 1) * sizeof(*k->diff_id));
	k->diff = malloc(((size_t)nd + 1) * sizeof(*k->diff));
	if (k->diff_id == NULL || k->diff == NULL)
		abort();
	k->bytes += (size_t)nd * (sizeof(*k->diff_id) + sizeof(*k->diff));
	for (size_t id = 1; id <= n && d < (size_t)nd; id++) {
		struct rp_resmark m = mark_of(t, id);

		if (id > k->base->n || !same_mark(&m, &k->base->m[id - 1])) {
			k->diff_id[d] = (uint32_t)id;
			k->diff[d++] = m;
		}
	}
}

/* The consultant's new log lines join the archive (the same lines, in
 * the same order, on every pass of the recording's search). */
static void archive_log(struct src_replay_ckpt *c, const struct pc_consult *pc)
{
	while (c->narch < pc->nlog) {
		if (src_replay_idx_grow(&c->arch, &c->caparch, c->narch,
					sizeof(*c->arch)) != 0 ||
		    (c->arch[c->narch] = strdup(pc->log[c->narch])) == NULL)
			abort();
		c->arch_bytes += strlen(c->arch[c->narch++]) + 1 +
				 sizeof(char *);
	}
}

/* Where tick `tick` goes in the sorted array (the first not before). */
static size_t slot_of(const struct src_replay_ckpt *c, long tick)
{
	size_t lo = 0, hi = c->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (c->k[mid].tick < tick)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Over budget: drop every other checkpoint (never the first) and space
 * the next ones twice as far apart. */
static void thin(struct src_replay_ckpt *c)
{
	while (c->bytes + c->arch_bytes > c->budget && c->n > 2) {
		size_t w = 1;

		for (size_t i = 1; i < c->n; i++) {
			if (i % 2 == 1) {
				c->bytes -= c->k[i].bytes;
				ckpt_free(c, &c->k[i]);
			} else {
				c->k[w++] = c->k[i];
			}
		}
		c->n = w;
		c->spacing *= 2;
	}
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* Instance m as blob b holds it already (its bytes, strings aside). */
static bool same_minst(const struct pc_minst *m, const struct rp_mblob *b)
{
	struct pc_minst t = *m;

	if (!same_str(m->metric, b->m.metric) ||
	    !same_str(m->fail_reason, b->m.fail_reason))
		return false;
	t.metric = b->m.metric;
	t.fail_reason = b->m.fail_reason;
	return memcmp(&t, &b->m, sizeof(t)) == 0;
}

static struct rp_mblob *new_blob(struct src_replay_ckpt *c,
				 const struct pc_minst *m)
{
	struct rp_mblob *b = malloc(sizeof(*b));

	if (b == NULL)
		abort();
	b->refs = 1;
	memcpy(&b->m, m, sizeof(*m));
	b->m.metric = m->metric ? strdup(m->metric) : NULL;
	b->m.fail_reason = m->fail_reason ? strdup(m->fail_reason) : NULL;
	if ((m->metric && !b->m.metric) || (m->fail_reason && !b->m.fail_reason))
		abort();
	c->bytes += sizeof(*b);
	return b;
}

/* The instances of pc for checkpoint k: those unchanged since the
 * checkpoint before it (`prev`) are its blobs, shared. */
static void keep_instances(struct src_replay_ckpt *c, struct rp_ckpt *k,
			   const struct pc_consult *pc,
			   const struct rp_ckpt *prev)
{
	k->nmi = pc->dm.n;
	k->mi = malloc((k->nmi + 1) * sizeof(*k->mi));
	if (k->mi == NULL)
		abort();
	k->bytes += k->nmi * sizeof(*k->mi);
	for (size_t i = 0; i < k->nmi; i++) {
		const struct pc_minst *m = pc->dm.mi[i];

		if (prev && i < prev->nmi && same_minst(m, prev->mi[i])) {
			k->mi[i] = prev->mi[i];
			k->mi[i]->refs++;
		} else {
			k->mi[i] = new_blob(c, m);
		}
	}
}

static void take(struct src_replay_ckpt *c, struct pc_consult *pc, size_t at,
		 size_t user)
{
	struct rp_ckpt k = { .tick = c->r->cur, .user = user };

	k.pc = src_replay_clone(pc, false, false, &k.bytes);
	keep_instances(c, &k, pc, at > 0 ? &c->k[at - 1] : NULL);
	k.nlog = pc->nlog;
	k.pc->nlog = 0;
	res_mark(c, &k, pc->res);
	pos_save(&k.pos, c->r, &k.bytes);
	if (src_replay_idx_grow(&c->k, &c->cap, c->n, sizeof(*c->k)) != 0)
		abort();
	memmove(&c->k[at + 1], &c->k[at], (c->n - at) * sizeof(*c->k));
	c->k[at] = k;
	c->n++;
	c->bytes += k.bytes;
	thin(c);
}

bool src_replay_ckpt_tick(struct src_replay_ckpt *c, struct pc_consult *pc,
			  double cpu,
		   size_t user)
{
	long tick = c->r->cur;
	size_t at;

	if (tick < 0 || c->r->acted != tick)
		return false;   /* only between ticks, actions applied */
	/* A recorded reload or a metric enabled by hand keeps state outside
	 * the consultant (the reloaded definitions, the held instances),
	 * which a clone does not carry: from then on a backward seek goes to
	 * an earlier checkpoint and plays the recorded action again. */
	if (pc_steer_holds(pc))
		return false;
	if (c->tree != NULL && c->tree != pc->res)
		src_replay_ckpt_clear(c);   /* a search on another tree */
	c->tree = pc->res;
	at = slot_of(c, tick);
	archive_log(c, pc);
	c->since += cpu;
	if (at < c->n && c->k[at].tick == tick) {
		c->since = 0;   /* passing one taken before */
		return false;
	}
	if (c->n > 0 && c->since < c->spacing)
		return false;
	take(c, pc, at, user);
	c->since = 0;
	return true;
}

/* --- going back to one --- */

const struct rp_ckpt *src_replay_ckpt_find(const struct src_replay_ckpt *c,
					   long tick)
{
	size_t at = slot_of(c, tick + 1);   /* the first after tick */

	return at == 0 ? NULL : &c->k[at - 1];
}

long src_replay_ckpt_taken_at(const struct rp_ckpt *k)
{
	return k->tick;
}

size_t src_replay_ckpt_user(const struct rp_ckpt *k)
{
	return k->user;
}


/* Enables indexed after the checkpoint was taken (a lazy index) were
 * not claimed then: a chain every enable of which was claimed then
 * (cursor past its end) goes on at the first of them. */
static void restore_cursors(struct src_replay *r, const struct rp_pos *p)
{
	if (r->nen == p->nen)
		return;
	for (size_t i = 0; i < r->nenc && i < p->nenc; i++) {
		size_t e = r->enc[i].first;

		if (r->enc[i].cursor != RP_NONE)
			continue;
		while (e != RP_NONE && r->en[e].claimed)
			e = r->en[e].next;
		r->enc[i].cursor = e;
	}
}

static void pos_restore(struct src_replay *r, const struct rp_pos *p)
{
	src_replay_undo_to(r, p->nundo);
	src_replay_forget_tick(r);
	r->cur = r->acted = p->cur;
	r->now = p->now;
	r->observed = p->observed;
	r->holds = p->holds;
	r->held_s = p->held_s;
	r->unrecorded = p->unrecorded;
	r->npend = 0;
	for (size_t i = 0; i < p->npend; i++)
		if (src_replay_idx_grow(&r->pending, &r->cappend, r->npend,
					sizeof(*r->pending)) == 0)
			r->pending[r->npend++] = p->pending[i];
	hmap_clear(&r->live);
	for (size_t i = 0; i < p->nlive; i++)
		hmap_put(&r->live, p->live[i], 1);
	for (size_t i = 0; i < r->nen; i++) {
		uint8_t st = i < p->nen ? p->en_state[i] : 0;

		r->en[i].claimed = st & 1;
		r->en[i].answered = (st >> 1) & 1;
		r->en[i].req_new = i < p->nen ? p->en_req[i] : 0;
	}
	for (size_t i = 0; i < r->nenc; i++)
		r->enc[i].cursor = i < p->nenc ? p->enc_cursor[i] :
				   r->enc[i].first;
	restore_cursors(r, p);
	/* lookups walk on from the first answer (they depend only on the
	 * tick) */
	src_replay_idx_answers_rewind(&r->pred);
	src_replay_idx_answers_rewind(&r->hint);
	src_replay_idx_answers_rewind(&r->callees);
	/* the next tick's records are read again from its own line */
	if ((size_t)(p->cur + 1) < r->nticks)
		jnl_read_seek(r->rd, r->tick_off[p->cur + 1]);
}

static void restore_instances(struct pc_consult *pc, const struct rp_ckpt *k)
{
	struct pc_datamgr *dm = &pc->dm;

	dm->n = dm->cap = k->nmi;
	dm->mi = k->nmi ? malloc(k->nmi * sizeof(*dm->mi)) : NULL;
	if (k->nmi && dm->mi == NULL)
		abort();
	for (size_t i = 0; i < k->nmi; i++) {
		const struct pc_minst *b = &k->mi[i]->m;
		struct pc_minst *m = malloc(sizeof(*m));

		if (m == NULL)
			abort();
		memcpy(m, b, sizeof(*m));
		m->metric = b->metric ? strdup(b->metric) : NULL;
		m->fail_reason = b->fail_reason ? strdup(b->fail_reason) : NULL;
		dm->mi[i] = m;
	}
}

static void set_mark(struct pc_restree *t, size_t id,
		     const struct rp_resmark *m)
{
	/* as pc_where.c does: the tree hands out const pointers */
	struct pc_res *x = (struct pc_res *)pc_res_get(t, (pc_res_id)id);

	x->nchildren = m->nchildren;
	x->retired = m->retired;
	x->addr = m->addr;
	x->tag = m->tag;
}

static void res_restore(struct pc_restree *t, const struct rp_ckpt *k)
{
	size_t nb = k->base->n < k->nres ? k->base->n : k->nres;

	pc_res_tree_truncate(t, k->nres);
	for (size_t id = 1; id <= nb; id++)
		set_mark(t, id, &k->base->m[id - 1]);
	for (size_t i = 0; i < k->ndiff; i++)
		set_mark(t, k->diff_id[i], &k->diff[i]);
}

struct pc_consult *src_replay_ckpt_restore(struct src_replay_ckpt *c,
				    const struct rp_ckpt *k)
{
	size_t bytes = 0;
	struct pc_consult *pc;

	/* the tree only goes back: a checkpoint ahead of it has resources
	 * it has not found yet */
	if (pc_res_tree_count(k->pc->res) < k->nres)
		return NULL;
	pc = src_replay_clone(k->pc, false, false, &bytes);
	restore_instances(pc, k);
	pos_restore(c->r, &k->pos);
	res_restore(pc->res, k);
	pc->nlog = pc->caplog = k->nlog;
	pc->log = pc->nlog ? malloc(pc->nlog * sizeof(*pc->log)) : NULL;
	if (pc->nlog && pc->log == NULL)
		abort();
	for (size_t i = 0; i < pc->nlog; i++)
		if ((pc->log[i] = strdup(c->arch[i])) == NULL)
			abort();
	pc->log_fn = NULL;
	pc->log_arg = NULL;
	c->since = 0;
	/* checkpoints taken from here on differ little from this one's */
	k->base->refs++;
	base_put(c, c->base);
	c->base = k->base;
	return pc;
}

size_t src_replay_ckpt_count(const struct src_replay_ckpt *c)
{
	return c->n;
}

size_t src_replay_ckpt_bytes(const struct src_replay_ckpt *c)
{
	return c->bytes + c->arch_bytes;
}

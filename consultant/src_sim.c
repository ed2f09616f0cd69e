/*
 * src_sim.c - the sim source (see src_sim.h).  Everything here is a small
 * array searched linearly: tests script a handful of pairs.
 */
#include "src_sim.h"
#include "vec.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


struct script { char *metric, *focus; double t, value, noise; };
struct cost { char *metric; double predicted, factor; };
struct fail { char *metric, *why; };
struct call { char *caller, *callee; };
struct hint { char *path; double share; };
struct inst {
	pc_src_handle h;
	uint64_t req;
	char *metric, *focus;
	int replies_in;     /* ticks until the reply; -1 once replied */
	bool failed, live;
	bool dropped;       /* an exec came before the reply */
	long nsamples;
	double live_t;      /* when it went live */
};
struct disc {
	struct pc_discovery d;
	char *s1, *s2, *s3;
};

struct src_sim {
	struct pc_source src;
	double now, period;
	int delay;
	double obs_lag;     /* s before a live instance shows in the cost */
	struct script *sc; size_t nsc, capsc;
	struct cost *co; size_t nco, capco;
	struct fail *fa; size_t nfa, capfa;
	struct call *ca; size_t nca, capca;
	struct hint *hi; size_t nhi, caphi;
	char **sampled; size_t nsampled, capsampled;   /* foci replied "sampled" */
	struct inst *in; size_t nin, capin;
	struct disc *di; size_t ndi, capdi;
	struct pc_src_sample *smp; size_t nsmp, capsmp;
	pc_src_handle next_h;
	bool ended, ended_told;
	struct pc_src_event end;
	bool exec_due;      /* an exec to tell (src_sim_exec) */
	struct pc_src_event exec;
	int enables;
};

/* A new zeroed element at the end of one of the arrays above. */
#define PUSH(arr, n, cap) \
	(VEC_RESERVE((arr), (cap), (n) + 1), \
	 memset(&(arr)[(n)], 0, sizeof(*(arr))), &(arr)[(n)++])

static char *dup(const char *s)
{
	return s ? strdup(s) : NULL;
}

static void focus_key(const struct pc_src_focus *f, char *buf, size_t len)
{
	size_t n = 0;

	for (int i = 0; i < PC_SRC_NHIER && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%c%s", i ? ',' : '<',
				      f->path[i]);
	if (n < len)
		snprintf(buf + n, len - n, ">");
}

static double value_at(const struct src_sim *sim, const char *metric,
		       const char *focus, double t, long k)
{
	const struct script *best = NULL, *any = NULL;

	for (size_t i = 0; i < sim->nsc; i++) {
		const struct script *s = &sim->sc[i];

		if (strcmp(s->metric, metric) != 0 || s->t > t + 1e-9)
			continue;
		if (strcmp(s->focus, focus) == 0 &&
		    (best == NULL || s->t >= best->t))
			best = s;
		if (strcmp(s->focus, "*") == 0 && (any == NULL || s->t >= any->t))
			any = s;
	}
	if (best == NULL)
		best = any;
	if (best == NULL)
		return strcmp(metric, "active_threads") == 0 ||
		       strcmp(metric, "active_processes") == 0 ||
		       strcmp(metric, "cpu_share") == 0 ? 1 : 0;
	/* The sign flips every 0.4 s (the default evaluation interval), so
	 * interval means differ and a test sees real variance. */
	(void)k;
	return best->value + ((long)floor(t / 0.4 + 1e-9) % 2 ? -best->noise :
			      best->noise);
}

/* The latest setting wins, so a test can change costs mid-run. */
static const struct cost *cost_of(const struct src_sim *sim, const char *m)
{
	for (size_t i = sim->nco; i-- > 0;)
		if (strcmp(sim->co[i].metric, m) == 0)
			return &sim->co[i];
	return NULL;
}

/* ---- the source operations ---- */

static struct src_sim *of(struct pc_source *s)
{
	return s->impl;
}

static int sim_poll_resources(struct pc_source *s, pc_disc_fn fn, void *arg)
{
	struct src_sim *sim = of(s);

	for (size_t i = 0; i < sim->ndi; i++) {
		fn(arg, &sim->di[i].d);
		free(sim->di[i].s1);
		free(sim->di[i].s2);
		free(sim->di[i].s3);
	}
	sim->ndi = 0;
	return 0;
}

static double sim_now(struct pc_source *s)
{
	return of(s)->now;
}

static double sim_predict(struct pc_source *s, const char *metric,
			  const struct pc_src_focus *f)
{
	const struct cost *c = cost_of(of(s), metric);

	(void)f;
	return c ? c->predicted : 0;
}

static int sim_enable(struct pc_source *s, const char *metric,
		      const struct pc_src_focus *f, uint64_t req)
{
	struct src_sim *sim = of(s);
	struct inst *in = PUSH(sim->in, sim->nin, sim->capin);
	char key[1024];

	focus_key(f, key, sizeof(key));
	in->req = req;
	in->metric = dup(metric);
	in->focus = dup(key);
	in->replies_in = sim->delay;
	for (size_t i = 0; i < sim->nfa; i++)
		in->failed |= strcmp(sim->fa[i].metric, metric) == 0;
	sim->enables++;
	return 0;
}

static void sim_disable(struct pc_source *s, pc_src_handle h)
{
	struct src_sim *sim = of(s);

	for (size_t i = 0; i < sim->nin; i++)
		if (sim->in[i].h == h)
			sim->in[i].live = false;
}

static const char *fail_reason(const struct src_sim *sim, const char *m)
{
	for (size_t i = 0; i < sim->nfa; i++)
		if (strcmp(sim->fa[i].metric, m) == 0)
			return sim->fa[i].why;
	return "refused";
}

static int sim_poll_replies(struct pc_source *s, pc_reply_fn fn, void *arg)
{
	struct src_sim *sim = of(s);

	for (size_t i = 0; i < sim->nin; i++) {
		struct inst *in = &sim->in[i];
		struct pc_src_reply r = { .req = in->req };

		if (in->replies_in != 0)
			continue;
		in->replies_in = -1;
		if (in->dropped) {
			r.status = -ECANCELED;
			r.reason = "the program replaced its image (exec) "
				   "before this was enabled";
		} else if (in->failed) {
			r.status = -EINVAL;
			r.reason = fail_reason(sim, in->metric);
		} else {
			in->h = ++sim->next_h;
			for (size_t k = 0; k < sim->nsampled; k++)
				r.sampled |= strcmp(sim->sampled[k], in->focus) == 0;
			in->live = true;
			in->live_t = sim->now;
			r.handle = in->h;
		}
		fn(arg, &r);
	}
	return 0;
}

static int sim_poll_samples(struct pc_source *s, pc_sample_fn fn, void *arg)
{
	struct src_sim *sim = of(s);

	for (size_t i = 0; i < sim->nsmp; i++)
		fn(arg, &sim->smp[i]);
	sim->nsmp = 0;
	return 0;
}

static double sim_observed(struct pc_source *s)
{
	struct src_sim *sim = of(s);
	double sum = 0;

	for (size_t i = 0; i < sim->nin; i++) {
		const struct cost *c = cost_of(sim, sim->in[i].metric);

		if (sim->in[i].live && c &&
		    sim->now - sim->in[i].live_t + 1e-9 >= sim->obs_lag)
			sum += c->predicted * c->factor;
	}
	return sum;
}

static int sim_poll_events(struct pc_source *s, pc_event_fn fn, void *arg)
{
	struct src_sim *sim = of(s);

	if (sim->exec_due) {
		sim->exec_due = false;
		fn(arg, &sim->exec);
	}
	if (sim->ended && !sim->ended_told) {
		sim->ended_told = true;
		fn(arg, &sim->end);
	}
	return 0;
}

static void sim_set_period(struct pc_source *s, double p)
{
	of(s)->period = p;
}

static int sim_callees(struct pc_source *s, const char *path, pc_path_fn fn,
		       void *arg)
{
	struct src_sim *sim = of(s);

	for (size_t i = 0; i < sim->nca; i++) {
		const char *c = sim->ca[i].caller;

		if ((path == NULL && c == NULL) ||
		    (path && c && strcmp(path, c) == 0))
			fn(arg, sim->ca[i].callee);
	}
	return 0;
}

/* One share per path, whatever kind of observation is asked for
 * ("PATH?cpu" and "PATH?wait=METRIC" as "PATH"). */
static double sim_hint(struct pc_source *s, const char *path)
{
	struct src_sim *sim = of(s);
	char bare[1200];

	if (pc_source_hint_kind(path, bare, sizeof(bare)))
		path = bare;
	for (size_t i = 0; i < sim->nhi; i++)
		if (strcmp(sim->hi[i].path, path) == 0)
			return sim->hi[i].share;
	return -1;
}

static void sim_close(struct pc_source *s)
{
	(void)s;
}

static const struct pc_source_ops sim_ops = {
	.kind = "sim",
	.poll_resources = sim_poll_resources,
	.close = sim_close,
	.now = sim_now,
	.predict_cost = sim_predict,
	.enable = sim_enable,
	.disable = sim_disable,
	.poll_replies = sim_poll_replies,
	.poll_samples = sim_poll_samples,
	.observed_cost = sim_observed,
	.poll_events = sim_poll_events,
	.set_sample_period = sim_set_period,
	.callees = sim_callees,
	.hint = sim_hint,
};

/* ---- scripting ---- */

static void drop(void *arg, const struct pc_discovery *d)
{
	(void)arg;
	(void)d;
}

struct src_sim *src_sim_new(void)
{
	struct src_sim *sim = calloc(1, sizeof(*sim));

	if (sim == NULL)
		abort();
	sim->src.ops = &sim_ops;
	sim->src.impl = sim;
	sim->period = 0.2;
	return sim;
}

void src_sim_free(struct src_sim *sim)
{
	if (sim == NULL)
		return;
	for (size_t i = 0; i < sim->nsc; i++) {
		free(sim->sc[i].metric);
		free(sim->sc[i].focus);
	}
	for (size_t i = 0; i < sim->nco; i++)
		free(sim->co[i].metric);
	for (size_t i = 0; i < sim->nfa; i++) {
		free(sim->fa[i].metric);
		free(sim->fa[i].why);
	}
	for (size_t i = 0; i < sim->nca; i++) {
		free(sim->ca[i].caller);
		free(sim->ca[i].callee);
	}
	for (size_t i = 0; i < sim->nhi; i++)
		free(sim->hi[i].path);
	free(sim->hi);
	for (size_t i = 0; i < sim->nsampled; i++)
		free(sim->sampled[i]);
	free(sim->sampled);
	for (size_t i = 0; i < sim->nin; i++) {
		free(sim->in[i].metric);
		free(sim->in[i].focus);
	}
	sim_poll_resources(&sim->src, drop, NULL);
	free(sim->sc);
	free(sim->co);
	free(sim->fa);
	free(sim->ca);
	free(sim->in);
	free(sim->di);
	free(sim->smp);
	free(sim);
}

struct pc_source *src_sim_source(struct src_sim *sim)
{
	return &sim->src;
}

static struct disc *new_disc(struct src_sim *sim, enum pc_disc_kind k)
{
	struct disc *d = PUSH(sim->di, sim->ndi, sim->capdi);

	d->d.kind = k;
	return d;
}

void src_sim_function(struct src_sim *sim, const char *module,
		      const char *file, const char *fn)
{
	struct disc *d = new_disc(sim, PC_DISC_FUNCTION);

	d->d.module = d->s1 = dup(module);
	d->d.srcfile = d->s2 = dup(file);
	d->d.function = d->s3 = dup(fn);
}

void src_sim_thread(struct src_sim *sim, int pid, int tid, const char *fn)
{
	struct disc *d = new_disc(sim, PC_DISC_PROCESS);

	d->d.pid = pid;
	d = new_disc(sim, PC_DISC_THREAD);
	d->d.pid = pid;
	d->d.tid = tid;
	d->d.function = d->s1 = dup(fn);
}

void src_sim_process_end(struct src_sim *sim, int pid, char end, int code,
			 double t)
{
	struct disc *d = new_disc(sim, PC_DISC_PROCESS);

	d->d.pid = pid;
	d->d.retired = true;
	d->d.end = end;
	d->d.end_code = code;
	d->d.end_t = t;
}

void src_sim_syncobj(struct src_sim *sim, const char *cls, const char *name,
		     unsigned long addr)
{
	struct disc *d = new_disc(sim, PC_DISC_SYNCOBJ);

	d->d.sync_class = d->s1 = dup(cls);
	d->d.name = d->s2 = dup(name);
	d->d.addr = addr;
}

void src_sim_file(struct src_sim *sim, const char *path)
{
	struct disc *d = new_disc(sim, PC_DISC_FILE);

	d->d.name = d->s1 = dup(path);
}

void src_sim_call(struct src_sim *sim, const char *caller, const char *callee)
{
	struct call *c = PUSH(sim->ca, sim->nca, sim->capca);

	c->caller = dup(caller);
	c->callee = dup(callee);
}

void src_sim_script(struct src_sim *sim, const char *metric,
		    const char *focus, double t, double value, double noise)
{
	struct script *s = PUSH(sim->sc, sim->nsc, sim->capsc);

	s->metric = dup(metric);
	s->focus = dup(focus);
	s->t = t;
	s->value = value;
	s->noise = noise;
}

void src_sim_cost(struct src_sim *sim, const char *metric, double predicted,
		  double observed_factor)
{
	struct cost *c = PUSH(sim->co, sim->nco, sim->capco);

	c->metric = dup(metric);
	c->predicted = predicted;
	c->factor = observed_factor;
}

void src_sim_hint(struct src_sim *sim, const char *path, double share)
{
	struct hint *h = PUSH(sim->hi, sim->nhi, sim->caphi);

	h->path = dup(path);
	h->share = share;
}

void src_sim_enable_delay(struct src_sim *sim, int ticks)
{
	sim->delay = ticks;
}

void src_sim_observed_lag(struct src_sim *sim, double s)
{
	sim->obs_lag = s;
}

void src_sim_fail(struct src_sim *sim, const char *metric, const char *why)
{
	struct fail *f = PUSH(sim->fa, sim->nfa, sim->capfa);

	f->metric = dup(metric);
	f->why = dup(why);
}

void src_sim_sampled(struct src_sim *sim, const char *focus)
{
	*PUSH(sim->sampled, sim->nsampled, sim->capsampled) = dup(focus);
}

void src_sim_end(struct src_sim *sim, enum pc_target_event ev, int code)
{
	sim->ended = true;
	sim->end.ev = ev;
	sim->end.code = code;
	sim->end.t = sim->now;
}

void src_sim_exec(struct src_sim *sim)
{
	for (size_t i = 0; i < sim->nin; i++) {
		struct inst *in = &sim->in[i];

		in->live = false;
		if (in->replies_in >= 0) {   /* answered at the next poll */
			in->dropped = true;
			in->replies_in = 0;
		}
	}
	sim->exec_due = true;
	sim->exec.ev = PC_TARGET_EXEC;
	sim->exec.code = 0;
	sim->exec.t = sim->now;
}

void src_sim_advance(struct src_sim *sim)
{
	double t0 = sim->now, t1 = sim->now + sim->period;

	for (size_t i = 0; i < sim->nin; i++) {
		struct inst *in = &sim->in[i];
		struct pc_src_sample *s;

		if (in->replies_in > 0)
			in->replies_in--;
		if (!in->live)
			continue;
		s = PUSH(sim->smp, sim->nsmp, sim->capsmp);
		s->handle = in->h;
		s->t0 = t0;
		s->t1 = t1;
		s->value = value_at(sim, in->metric, in->focus, t0,
				    in->nsamples++);
	}
	sim->now = t1;
}

double src_sim_period(const struct src_sim *sim)
{
	return sim->period;
}

int src_sim_enables(const struct src_sim *sim)
{
	return sim->enables;
}

int src_sim_live(const struct src_sim *sim)
{
	int n = 0;

	for (size_t i = 0; i < sim->nin; i++)
		n += sim->in[i].live;
	return n;
}

/*
 * eng_metric_probe.c - call rates measured before an expensive metric is
 * enabled: a one-point counter at the entry of each function whose rate
 * a prediction needs and nobody told the predictor, left in for a short
 * window (MPROBE_WINDOW_NS of wall time), then read and removed.
 *
 * Why: a prediction is ns per pass times calls per second, and without a
 * rate the predictor guessed 1000 calls/s.  An experiment on malloc in a
 * program calling it 10^7 times a second was predicted at 0.01% and
 * observed at 60%: it was launched, shed, launched again.  A counter
 * costs ~1.5 ns a call, so measuring the rate of that malloc costs 1.5%
 * for a tenth of a second; the prediction that follows is the real cost
 * within the accuracy of the per-pass figures (eng_inst_cost.h).
 *
 * The rate is calls per second of the target's CPU time (all threads)
 * over the window: the observed cost is a share of that CPU time too.
 * The window is the target's CPU time, not the wall clock's: while a
 * burst of predictions starts probes one after another, each stopping
 * every thread to insert its counter, the target ran 2-3 ms of CPU in
 * a 30 ms window, saw none of the 10^5-10^7 calls a second of zstd's
 * hot functions or memcmp, and their experiments were predicted at
 * 1e-7 and observed at 114%.
 * Predictions made while a needed probe runs say so (`probing`): the
 * caller should ask again once it ends.
 */
#include "eng_metric_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eng_inst_cost.h"
#include "eng_proc.h"
#include "eng_sampler.h"
#include "clock_mono.h"

/* A window is at least 30 ms of wall time and 20 ms of the target's
 * CPU time: a counter on a function called 1.7e8 times a second costs
 * 25% while it is in, 4% of a 0.2 s sample period.  A target that does
 * not use that much CPU (it waits for I/O, or other programs hold the
 * CPUs) ends its window after 100 ms if it ran 5 ms, else after 250 ms,
 * its rate from the CPU it used: waiting longer delays the search
 * (python3.11's CPUbound by 0.3 s at a load average of 16). */
#define MPROBE_WINDOW_NS 30000000ull
#define MPROBE_CPU_NS 20000000ull
#define MPROBE_SOME_WALL_NS 100000000ull
#define MPROBE_SOME_CPU_NS 5000000ull
#define MPROBE_MAX_WALL_NS 250000000ull
/* Poll period while a window waits for the target's CPU time. */
#define MPROBE_POLL_MS 10
#define MPROBE_MIN_CPU_S 0.001         /* rate denominator floor */
#define MPROBE_MAX_RUNNING 128
/* A prediction needing more rates than this (a whole module's
 * functions) keeps the guess: probing them all would cost more than
 * the guess risks. */
#define MPROBE_MAX_WANTS 64

struct mprobe {
	char *module, *function;
	struct eng_minst *mi;
	uint64_t t0_ns, cpu0_ns;
	bool failed;     /* its counter measured nothing: dropped */
};

static const struct eng_mprim probe_add1[] = { { .op = ENG_MOP_ADD,
	.value = { .kind = ENG_MO_CONST, .c = 1 } } };
static const struct eng_mclause probe_clause[] = { {
	.funcs = ENG_MF_FOCUS, .point = ENG_MPT_ENTRY,
	.prims = probe_add1, .nprims = 1 } };
static const struct eng_mdef probe_def = { .name = "hunch_call_rate_probe",
	.type = ENG_MVAR_COUNTER, .clauses = probe_clause, .nclauses = 1 };

/* The target's CPU time, all threads; 0 if it cannot be read. */
static uint64_t target_cpu_ns(const struct eng_metric *m)
{
	struct timespec ts;
	clockid_t cid;

	if (clock_getcpuclockid(eng_proc_pid(m->p), &cid) != 0 ||
	    clock_gettime(cid, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static const char *base_of(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static bool rate_known(const struct eng_metric *m, const char *module,
		       const char *function)
{
	for (size_t i = 0; i < m->nrates; i++)
		if (strcmp(m->rates[i].function, function) == 0 &&
		    (m->rates[i].module == NULL ||
		     strcmp(m->rates[i].module, module) == 0))
			return true;
	return false;
}

static struct mprobe *running(struct eng_metric *m, const char *module,
			      const char *function)
{
	for (size_t i = 0; i < m->nprobes; i++)
		if (strcmp(m->probes[i].function, function) == 0 &&
		    strcmp(m->probes[i].module, module) == 0)
			return &m->probes[i];
	return NULL;
}

int eng_metric_probe_want(struct eng_metric *m, struct mprobe_wants *w,
		const struct mfunc *fn)
{
	const char *mod = base_of(fn->mod->path);

	if (rate_known(m, mod, fn->f->name))
		return 0;
	for (size_t i = 0; i < w->n; i++)
		if (w->f[i].f == fn->f)
			return 0;
	if (w->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 16;
		struct mfunc *f = realloc(w->f, cap * sizeof *f);

		if (f == NULL)
			return -ENOMEM;
		w->f = f;
		w->cap = cap;
	}
	w->f[w->n++] = *fn;
	return 0;
}

/* Queue a probe of the function: it starts at the next poll, with every
 * other one queued since, in one stop of every thread. */
static int queue(struct eng_metric *m, const char *module,
		 const char *function)
{
	struct mprobe p = { 0 };
	struct mprobe *arr;

	if (m->nprobes == m->capprobes) {
		size_t cap = m->capprobes ? 2 * m->capprobes : 16;

		if ((arr = realloc(m->probes, cap * sizeof *arr)) == NULL)
			return -ENOMEM;
		m->probes = arr;
		m->capprobes = cap;
	}
	p.module = strdup(module);
	p.function = strdup(function);
	if (p.module == NULL || p.function == NULL) {
		free(p.module);
		free(p.function);
		return -ENOMEM;
	}
	m->probes[m->nprobes++] = p;
	return 1;
}

/* Insert a queued probe's counter (every thread stopped); false when it
 * cannot be counted. */
static bool start(struct eng_metric *m, struct mprobe *p)
{
	struct eng_mfocus f = { .code = ENG_CODE_FUNCTION,
				.module = p->module, .function = p->function };

	if (eng_metric_enable(m, &probe_def, &f, &p->mi, NULL) == 0)
		return true;
	/* Cannot be counted: leave the guess (and the observed cost to
	 * correct it), and do not try again. */
	eng_metric_set_call_rate(m, p->module, p->function,
				 ENG_METRIC_DEFAULT_CALLS_PER_S);
	p->mi = NULL;
	free(p->module);
	free(p->function);
	return false;
}

size_t eng_metric_probe_queue(struct eng_metric *m, struct mprobe_wants *w)
{
	size_t n = 0;

	if (w->n > MPROBE_MAX_WANTS) {
		free(w->f);
		w->f = NULL;
		w->n = w->cap = 0;
		return 0;
	}
	for (size_t i = 0; i < w->n; i++) {
		const char *mod = base_of(w->f[i].mod->path);
		const char *fn = w->f[i].f->name;

		if (running(m, mod, fn) != NULL)
			n++;
		else if (m->nprobes < MPROBE_MAX_RUNNING &&
			 queue(m, mod, fn) > 0)
			n++;
	}
	free(w->f);
	w->f = NULL;
	w->n = w->cap = 0;
	return n;
}

/* The CPU time the probe's own counter took out of the window's s
 * seconds: a rate per second of CPU with it in is the rate without it
 * times (1 - its share).  On a tight lock/unlock loop the counter took
 * a quarter of the CPU, and predictions from the rate were a quarter
 * too low.  At most half the window: the per-pass figure is a model. */
static double probe_s(struct eng_metric *m, int64_t calls, double s)
{
	const struct eng_inst_cost *c = eng_inst_costs(m->in);
	double t = (double)calls * (c->base_ns + c->add_ns) / 1e9;

	return t < s / 2 ? t : s / 2;
}

static void finish(struct eng_metric *m, struct mprobe *p, uint64_t cpu)
{
	struct eng_minst_info info;
	double s = p->cpu0_ns && cpu > p->cpu0_ns ?
		   (double)(cpu - p->cpu0_ns) / 1e9 : 0;
	int64_t calls = 0;

	eng_metric_info(m, p->mi, &info);
	eng_sampler_var_refresh(m->smp, info.var_id);
	eng_metric_value(m, p->mi, &calls);
	s -= probe_s(m, calls, s);
	if (s < MPROBE_MIN_CPU_S)
		s = MPROBE_MIN_CPU_S;
	/* Not called in the window is not "free": the safe side is the
	 * rate as if the next call came at the window's end (one call in
	 * 20 ms of CPU: 50 a second), not one a second. */
	eng_metric_set_call_rate(m, p->module, p->function,
				 (double)(calls > 0 ? calls : 1) / s);
	eng_metric_disable(m, p->mi, NULL);
	free(p->module);
	free(p->function);
}

/* Is the probe's window over at `now`, the target having used `cpu`
 * (0: unknown, the wall clock decides)? */
static bool window_over(const struct mprobe *p, uint64_t now, uint64_t cpu)
{
	if (now - p->t0_ns < MPROBE_WINDOW_NS)
		return false;
	if (now - p->t0_ns >= MPROBE_MAX_WALL_NS || cpu == 0 ||
	    p->cpu0_ns == 0)
		return true;
	if (now - p->t0_ns >= MPROBE_SOME_WALL_NS &&
	    cpu >= p->cpu0_ns + MPROBE_SOME_CPU_NS)
		return true;
	return cpu >= p->cpu0_ns + MPROBE_CPU_NS;
}

/* A poll's work: a queued probe to start, or a window over. */
static bool poll_due(const struct eng_metric *m, uint64_t now, uint64_t cpu)
{
	for (size_t i = 0; i < m->nprobes; i++)
		if (m->probes[i].mi == NULL ||
		    window_over(&m->probes[i], now, cpu))
			return true;
	return false;
}

/* A counter the batch's commit could not build: the guess stays. */
static void probe_failed(void *arg, struct eng_minst *mi, int rc,
			 const char *why)
{
	struct eng_metric *m = arg;

	(void)rc;
	(void)why;
	for (size_t i = 0; i < m->nprobes; i++) {
		struct mprobe *p = &m->probes[i];

		if (p->mi != mi)
			continue;
		eng_metric_set_call_rate(m, p->module, p->function,
					 ENG_METRIC_DEFAULT_CALLS_PER_S);
		free(p->module);
		free(p->function);
		p->mi = NULL;
		p->failed = true;
	}
}

/* The probes a poll ends and starts are one batch: every thread is
 * stopped once, and the counters inserted and removed in one commit,
 * not once per function (a burst of 138 refinements of python3.11's
 * eval loop, each predicted with its own probe, stopped the program 160
 * times in 0.7 s, and the search stood still; one stop with a commit
 * per probe still held it 8-12 ms a poll). */
void eng_metric_probe_poll(struct eng_metric *m)
{
	uint64_t now = clock_mono_ns(), cpu = m->nprobes ? target_cpu_ns(m) : 0;
	size_t k = 0;

	/* inside another's batch its failures would not come here: the
	 * next poll does it */
	if (m->batch || !poll_due(m, now, cpu))
		return;
	eng_metric_batch_begin(m);
	for (size_t i = 0; i < m->nprobes; i++) {
		struct mprobe *p = &m->probes[i];

		if (p->mi == NULL) {
			if (start(m, p))
				m->probes[k++] = *p;
		} else if (window_over(p, now, cpu)) {
			finish(m, p, cpu);
		} else {
			m->probes[k++] = *p;
		}
	}
	m->nprobes = k;
	eng_metric_batch_end(m, probe_failed, m);
	/* drop the probes the commit could not build; a new probe's
	 * window starts when the target runs again */
	now = clock_mono_ns();
	cpu = target_cpu_ns(m);
	k = 0;
	for (size_t i = 0; i < m->nprobes; i++) {
		struct mprobe *p = &m->probes[i];

		if (p->failed)
			continue;
		if (p->t0_ns == 0) {
			p->t0_ns = now;
			p->cpu0_ns = cpu;
		}
		m->probes[k++] = *p;
	}
	m->nprobes = k;
}

int eng_metric_probe_due_ms(const struct eng_metric *m)
{
	uint64_t now = clock_mono_ns(), end = 0;

	for (size_t i = 0; i < m->nprobes; i++) {
		uint64_t t0 = m->probes[i].t0_ns, e;

		if (t0 == 0)
			return 0;   /* queued: it starts at the next poll */

		/* Past the shortest window, it waits for the target's CPU
		 * time, which only a poll reads: poll again soon. */
		if (now < t0 + MPROBE_WINDOW_NS)
			e = t0 + MPROBE_WINDOW_NS;
		else if (now < t0 + MPROBE_MAX_WALL_NS)
			e = now + MPROBE_POLL_MS * 1000000ull;
		else
			e = now;
		if (end == 0 || e < end)
			end = e;
	}
	if (end == 0)
		return -1;
	return end <= now ? 0 : (int)((end - now) / 1000000u) + 1;
}

size_t eng_metric_probe_running(const struct eng_metric *m)
{
	return m->nprobes;
}

void eng_metric_probe_free(struct eng_metric *m)
{
	/* their instances go with the others' (eng_metric_destroy) */
	for (size_t i = 0; i < m->nprobes; i++) {
		free(m->probes[i].module);
		free(m->probes[i].function);
	}
	free(m->probes);
	m->probes = NULL;
	m->nprobes = m->capprobes = 0;
}

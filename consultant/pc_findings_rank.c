/*
 * pc_findings_rank.c - the ranking of findings (see pc_findings.h): by
 * impact in seconds per second, after every other one a finding that
 * may be the time of another's cause (symptom_of): CPU where a wait or
 * I/O cause is open, and a wait for another process of the job that
 * computes.
 */
#include "pc_findings_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The hypotheses of f's nodes and their why-ancestors (not virtual):
 * in[hyp] set. */
static void hyps_of(const struct pc_consult *pc, const struct pc_finding *f,
		    bool *in)
{
	for (size_t i = 0; i < f->nnodes; i++)
		for (int a = f->nodes[i]->hyp; a >= 0;
		     a = pc->cfg->hyp[a].parent_idx)
			in[a] = !pc->cfg->hyp[a].is_virtual;
}

/* CPU in a function where another finding's hypothesis is true or still
 * being tested (not concluded false there): maybe that cause's time.
 * at[]: the nodes of specific hypotheses in a's function. */
static bool maybe_symptom(struct pc_findings_ctx *c, const struct pc_finding *b,
			  const bool *bh, const struct pc_node **at, size_t nat)
{
	bool open = false;

	if (pc_findings_is_generic(c->pc, b->hyp))
		return false;
	for (size_t i = 0; i < nat; i++) {
		const struct pc_node *n = at[i];
		bool wide = true;

		if (!bh[n->hyp])
			continue;
		for (int h = 1; h < PC_NHIER; h++)
			wide &= pc_findings_is_root(c, n->focus.r[h]);
		if (wide && n->truth == PC_FALSE)
			return false;
		open |= n->truth == PC_TRUE ||
			(n->truth == PC_UNKNOWN && !n->failed);
	}
	return open;
}

/* Functions whose CPU is another finding's time: a lock's wait path
 * (the entry points, and the C library's internals beneath them) is the
 * time of a finding about a sync object; an I/O call (its system time)
 * that of a finding about a file. */
static const struct {
	const char *lists[2];
	int hier;              /* the hierarchy the other finding names */
} wait_paths[] = {
	{ { "sync_wait_funcs", "lock_wait_internals" }, 2 /* /SyncObject */ },
	{ { "io_funcs", NULL }, 3 /* /Files */ },
};

/* Is `fn` in one of the configuration's lists `names`? */
static bool in_lists(const struct pc_config *cfg, const char *const *names,
		     const char *fn)
{
	for (size_t l = 0; l < cfg->nlists; l++)
		for (size_t k = 0; k < 2 && names[k] != NULL; k++) {
			if (strcmp(cfg->lists[l].name, names[k]) != 0)
				continue;
			for (size_t i = 0; i < cfg->lists[l].nitems; i++)
				if (strcmp(cfg->lists[l].items[i], fn) == 0)
					return true;
		}
	return false;
}

/* CPU (used, or waited for in the run queue) inside a lock's wait path
 * (`__lll_lock_wait`: the futex calls and wake-ups of contending
 * threads) is that lock's time, and inside an I/O call (`write`'s system
 * time) that file's: the id of the finding about a sync object (a file)
 * with the largest impact, else -1.  Under load the demo's lock workers
 * "wanted 1.23 CPUs in __lll_lock_wait", and its writer "0.83 CPUs in
 * write", ranked above the hot loop. */
static int wait_symptom(struct pc_findings_ctx *c, const struct pc_finding *a,
			const struct pc_findings *fs)
{
	const char *fn = pc_findings_res(c, a->where[0])->name;
	double best = -1;
	int id = -1;

	for (size_t p = 0; p < sizeof(wait_paths) / sizeof(wait_paths[0]);
	     p++) {
		if (!in_lists(c->pc->cfg, wait_paths[p].lists, fn))
			continue;
		for (size_t j = 0; j < fs->n; j++) {
			const struct pc_finding *b = &fs->f[j];
			double im = isnan(b->impact) ? 0 : b->impact;

			if (b == a || pc_findings_is_generic(c->pc, b->hyp) ||
			    pc_findings_is_root(c,
						b->where[wait_paths[p].hier]) ||
			    im <= best)
				continue;
			best = im;
			id = b->id;
		}
	}
	return id;
}

/* The metrics of waits another process of a job may be the cause of:
 * a read of a pipe or a socket waits for its writer, an MPI receive or
 * barrier for the ranks still computing. */
static const char *const job_wait_metrics[] = { "io_wait", "msg_wait" };

/* Is one of the hypotheses in[] (a finding's and its why-ancestors')
 * measured by a job_wait_metrics metric? */
static bool is_job_wait(const struct pc_config *cfg, const bool *in)
{
	for (size_t h = 0; h < cfg->nhyp; h++)
		for (size_t k = 0; in[h] && cfg->hyp[h].nin > 0 &&
		     k < sizeof(job_wait_metrics) / sizeof(job_wait_metrics[0]);
		     k++)
			if (strcmp(cfg->hyp[h].in[0].metric,
				   job_wait_metrics[k]) == 0)
				return true;
	return false;
}

/* No file named, or a pipe or a socket: what another process writes. */
static bool from_process(const struct pc_findings_ctx *c, pc_res_id file)
{
	const char *name = pc_findings_res(c, file)->name;

	return pc_findings_is_root(c, file) ||
	       strncmp(name, "pipe:", 5) == 0 ||
	       strncmp(name, "socket:", 7) == 0;
}

/* A wait in a job of several processes, on a pipe, a socket or a
 * message, while another process of the job computes (a CPU finding
 * there, or on the whole job, itself no symptom): the waiting process
 * waits for it.  A
 * multiprocessing pool's parent blocks reading its workers' results,
 * 1 s/s, more than any worker's 0.5 CPUs under load, and its wait led
 * the report of a program that only computes.  The CPU finding of most
 * impact in another process is the one named. */
static void job_wait_symptom(struct pc_findings_ctx *c, struct pc_finding *a,
			     const bool *ah, const struct pc_findings *fs)
{
	pc_res_id job = pc_res_tree_hierarchy(c->pc->res, "Process");
	pc_res_id p = pc_findings_process_of(c, a->where[1]);
	double best = -1;

	if (a->symptom_of >= 0 || pc_findings_is_generic(c->pc, a->hyp) ||
	    pc_findings_res(c, job)->nchildren < 2 ||
	    !is_job_wait(c->pc->cfg, ah) || !from_process(c, a->where[3]))
		return;
	for (size_t j = 0; j < fs->n; j++) {
		const struct pc_finding *b = &fs->f[j];
		pc_res_id q = pc_findings_process_of(c, b->where[1]);
		double im = isnan(b->impact) ? 0 : b->impact;

		if (b->symptom_of >= 0 || !pc_findings_is_generic(c->pc, b->hyp) ||
		    (q != PC_RES_NONE && q == p) || im <= best)
			continue;
		best = im;
		a->symptom_of = b->id;
		a->symptom_why = PC_SYMPTOM_OTHER_PROCESS;
	}
}

/* symptom_of, as the id of the finding f may be the time of. */
static void symptoms(struct pc_findings_ctx *c, struct pc_findings *fs)
{
	size_t nh = c->pc->cfg->nhyp;
	bool *hy = calloc(fs->n * nh + 1, sizeof(*hy));
	const struct pc_node **at = malloc((c->s->nn + 1) * sizeof(*at));

	if (hy == NULL || at == NULL)
		abort();
	for (size_t i = 0; i < fs->n; i++)
		hyps_of(c->pc, &fs->f[i], hy + i * nh);
	for (size_t i = 0; i < fs->n; i++) {
		struct pc_finding *a = &fs->f[i];
		double best = -1;
		size_t nat = 0;

		if (!pc_findings_is_generic(c->pc, a->hyp) ||
		    pc_findings_res(c, a->where[0])->kind != PC_RES_FUNCTION)
			continue;
		for (size_t k = 0; k < c->s->nn; k++)
			if (c->s->nodes[k]->focus.r[0] == a->where[0] &&
			    !pc_findings_is_generic(c->pc, c->s->nodes[k]->hyp))
				at[nat++] = c->s->nodes[k];
		for (size_t j = 0; nat > 0 && j < fs->n; j++) {
			double im = isnan(fs->f[j].impact) ? 0 :
				    fs->f[j].impact;

			if (j != i && im > best &&
			    maybe_symptom(c, &fs->f[j], hy + j * nh, at, nat)) {
				best = im;
				a->symptom_of = fs->f[j].id;
				a->symptom_why = PC_SYMPTOM_IN_FUNCTION;
			}
		}
		if (a->symptom_of < 0) {
			a->symptom_of = wait_symptom(c, a, fs);
			a->symptom_why = a->symptom_of >= 0 ?
					 PC_SYMPTOM_WAIT_PATH : PC_SYMPTOM_NONE;
		}
	}
	for (size_t i = 0; i < fs->n; i++)
		job_wait_symptom(c, &fs->f[i], hy + i * nh, fs);
	free(at);
	free(hy);
}

static int rank_cmp(const struct pc_finding *x, const struct pc_finding *y)
{
	bool sx = x->symptom_of >= 0, sy = y->symptom_of >= 0;

	if (sx != sy)
		return sx ? 1 : -1;
	if (isnan(x->impact) != isnan(y->impact))
		return isnan(x->impact) ? 1 : -1;
	if (!isnan(x->impact) && x->impact != y->impact)
		return x->impact > y->impact ? -1 : 1;
	if (x->since_s != y->since_s)
		return x->since_s < y->since_s ? -1 : 1;
	return x->id - y->id;
}

void pc_findings_rank(struct pc_findings_ctx *c, struct pc_findings *fs)
{
	int *by_id = malloc((fs->n + 1) * sizeof(*by_id));

	if (by_id == NULL)
		abort();
	/* symptom_of holds a finding's id until the sort, then its rank */
	symptoms(c, fs);
	for (size_t i = 1; i < fs->n; i++) {
		struct pc_finding x = fs->f[i];
		size_t j = i;

		while (j > 0 && rank_cmp(&fs->f[j - 1], &x) > 0) {
			fs->f[j] = fs->f[j - 1];
			j--;
		}
		fs->f[j] = x;
	}
	for (size_t i = 0; i < fs->n; i++)
		by_id[i] = fs->f[i].id;
	for (size_t i = 0; i < fs->n; i++) {
		int want = fs->f[i].symptom_of;

		fs->f[i].symptom_of = -1;
		for (size_t j = 0; want >= 0 && j < fs->n; j++)
			if (by_id[j] == want)
				fs->f[i].symptom_of = (int)j;
		if (fs->f[i].symptom_of < 0)
			fs->f[i].symptom_why = PC_SYMPTOM_NONE;
	}
	free(by_id);
}


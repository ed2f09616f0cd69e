/*
 * inst_exact.c - every function of a multi-threaded target instrumented
 * with entry and exit counters while it runs: each count equals the
 * known call count exactly (progs/inst_calls.c), per thread and in
 * total; after removal every code byte equals the file's.
 *
 *   inst_exact PROGRAM...   (each variant: -O0/-O2/-O3/-Os, PIE/non-PIE)
 */
#include "inst_util.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* calls: call sites executed per worker (i+1 = 1..8); -1: not checked */
struct expect { const char *name; long per[8]; long main_n; long calls[8]; };

static void expected(struct expect *e, size_t *n)
{
	static struct expect ex[9];

	memset(ex, 0, sizeof ex);
	ex[0].name = "ic_worker"; ex[1].name = "ic_mid";
	ex[2].name = "ic_leaf"; ex[3].name = "ic_branchy";
	ex[4].name = "ic_rec"; ex[5].name = "ic_report";
	for (int i = 0; i < 8; i++) {
		ex[0].per[i] = 1;
		ex[1].per[i] = (i + 1) * 1000;
		ex[2].per[i] = 2500 * (i + 1);
		ex[7].per[i] = (i + 1) * 1000;
		ex[0].calls[i] = (i + 1) * 4000 + 100 + 2;  /* + 2 barriers */
		ex[1].calls[i] = 2 * (i + 1) * 1000;
		ex[4].calls[i] = 1000;         /* 10 self-calls per ic_rec(10) */
		ex[3].per[i] = (i + 1) * 1000;
		ex[4].per[i] = 1100;
	}
	ex[5].main_n = 8;
	ex[6].name = "ic_args";
	ex[6].main_n = 8;
	ex[7].name = "ic_jcc";   /* exits: a jcc out, and a ret */
	ex[8].name = "pad_tiny";  /* 3 bytes: points borrow the padding */
	for (int i = 0; i < 8; i++)
		ex[8].per[i] = (i + 1) * 1000;
	memcpy(e, ex, sizeof ex);
	*n = 9;
}

static int cmpl(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return x < y ? -1 : x > y;
}

/* The values of a variable in every live thread, sorted, zeros dropped. */
static size_t thread_values(struct tgt *t, uint32_t var, long *v, size_t max)
{
	size_t n = 0;

	for (uint32_t idx = 0; idx < 1024 && n < max; idx++) {
		int64_t x;

		if (eng_sampler_var_thread(t->smp, var, idx, &x) == 0 && x != 0)
			v[n++] = (long)x;
	}
	qsort(v, n, sizeof *v, cmpl);
	return n;
}

static long sum(const long *v, int n)
{
	long s = 0;

	for (int i = 0; i < n; i++)
		s += v[i];
	return s;
}

/* Call sites executed (counters before each call), per thread. */
static void check_calls(struct tgt *t, const char *prog, struct fn_ctr *c,
			const struct expect *e)
{
	long want[8], got[16];
	size_t ng, nw = 0;
	bool same;

	for (int i = 0; i < 8; i++)
		if (e->calls[i])
			want[nw++] = e->calls[i];
	if (nw == 0)
		return;
	if (!tap_ok(c->ncall > 0, "%s %s: call sites instrumented", prog,
		    e->name))
		return;
	ng = thread_values(t, c->call_var, got, 16);
	qsort(want, nw, sizeof *want, cmpl);
	same = ng == nw;
	for (size_t i = 0; same && i < nw; i++)
		same = got[i] == want[i];
	tap_ok(same, "%s %s: calls made, per thread, exact", prog, e->name);
	if (!same)
		for (size_t i = 0; i < ng; i++)
			tap_diag("  thread value %ld", got[i]);
}

/* After every worker exited: totals (live + retired) of entry and exit. */
static void check_total(struct tgt *t, const char *prog, struct fn_ctr *c,
			const struct expect *e)
{
	long want = sum(e->per, 8) + e->main_n;
	struct eng_var_agg a;

	if (c->nentry == 0 || c->nexit == 0)
		return;
	eng_sampler_var_agg(t->smp, c->entry_var, &a);
	tap_eq(a.sum, want, "%s %s: entry total exact", prog, e->name);
	eng_sampler_var_agg(t->smp, c->exit_var, &a);
	tap_eq(a.sum, want, "%s %s: exit total exact", prog, e->name);
}

static void check_fn(struct tgt *t, const char *prog, struct fn_ctr *c,
		     const struct expect *e)
{
	long want[9], got[16];
	size_t nw = 0, ng;
	const char *ptn[2] = { "entry", "exit" };
	uint32_t vars[2] = { c->entry_var, c->exit_var };
	size_t npts[2] = { c->nentry, c->nexit };

	for (int i = 0; i < 8; i++)
		if (e->per[i])
			want[nw++] = e->per[i];
	if (e->main_n)
		want[nw++] = e->main_n;
	qsort(want, nw, sizeof *want, cmpl);
	for (int k = 0; k < 2; k++) {
		/* workers are still inside ic_worker (barrier) */
		if (k == 1 && strcmp(e->name, "ic_worker") == 0)
			nw = 0;
		if (!tap_ok(npts[k] > 0, "%s %s: %s instrumented%s%s", prog,
			    e->name, ptn[k], c->why ? " / refused: " : "",
			    c->why ? c->why : ""))
			continue;
		ng = thread_values(t, vars[k], got, 16);
		bool same = ng == nw;

		for (size_t i = 0; same && i < nw; i++)
			same = got[i] == want[i];
		tap_ok(same, "%s %s: %s count per thread exact", prog,
		       e->name, ptn[k]);
		if (!same)
			for (size_t i = 0; i < ng; i++)
				tap_diag("  thread value %ld", got[i]);
	}
}

static void run(const char *prog)
{
	char *argv[] = { (char *)prog, NULL };
	const char *name = strrchr(prog, '/') ? strrchr(prog, '/') + 1 : prog;
	struct tgt t;
	struct fn_ctr *c = NULL;
	struct expect ex[9];
	size_t nc = 0, ne;
	struct hunch_err err = { 0 };
	int npts;

	if (!tap_ok(tgt_launch(&t, prog, argv) == 0, "%s: launched", name))
		return;
	t.count_calls = true;
	npts = instrument_counters(&t, NULL, &c, &nc);
	tap_ok(npts > 0, "%s: %d points instrumented in %zu functions", name,
	       npts, nc);
	for (size_t i = 0; i < nc; i++) {
		if (c[i].why)
			tap_diag("%s: %s: refused: %s", name, c[i].f->name,
				 c[i].why);
		if (c[i].trap_why)
			tap_diag("%s: %s: a point uses the trap fallback: %s",
				 name, c[i].f->name, c[i].trap_why);
	}
	for (size_t i = 0; i < nc; i++)
		if (strcmp(c[i].f->name, "pad_tiny") == 0)
			tap_ok(c[i].why == NULL && c[i].trap_why == NULL,
			       "%s: pad_tiny (3 bytes) patched in place, "
			       "borrowing the padding after it", name);
	eng_ptrace_resume_all(t.p, NULL);
	if (!tap_ok(tgt_wait_line(&t, "done", 60000) == 0, "%s: work done",
		    name))
		goto out;
	/* every worker counted at its call to the release barrier */
	tgt_wait_asleep(&t, 30000);
	expected(ex, &ne);
	for (size_t k = 0; k < ne; k++)
		for (size_t i = 0; i < nc; i++)
			if (strcmp(c[i].f->name, ex[k].name) == 0) {
				check_fn(&t, name, &c[i], &ex[k]);
				check_calls(&t, name, &c[i], &ex[k]);
			}
	tgt_send(&t, "go\n");
	if (!tap_ok(tgt_wait_line(&t, "joined", 30000) == 0, "%s: joined",
		    name))
		goto out;
	tgt_pump(&t, 50);
	for (size_t k = 0; k < ne; k++)
		for (size_t i = 0; i < nc; i++)
			if (strcmp(c[i].f->name, ex[k].name) == 0)
				check_total(&t, name, &c[i], &ex[k]);
	tap_ok(eng_inst_commit_remove_all(t.in, &err) == 0,
	       "%s: removed all (%s)", name, err.msg);
	tap_eq(tgt_code_mismatches(&t), 0, "%s: every code byte equals the file's",
	       name);
	tgt_send(&t, "bye\n");
	tap_ok(tgt_wait_exit(&t, 30000) == 0 && t.status == 0,
	       "%s: exited 0", name);
	tap_ok(strstr(t.out, "end\n") != NULL && strstr(t.out, "worker 7: ")
	       != NULL, "%s: output complete", name);
out:
	fns_free(c, nc);
	tgt_fini(&t);
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		run(argv[i]);
	return tap_done();
}

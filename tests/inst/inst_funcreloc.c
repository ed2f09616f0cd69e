/*
 * inst_funcreloc.c - whole-function relocation (engine/eng_funcreloc.h)
 * in running programs, with the real parser (eng_points_of):
 *
 *   - progs/inst_calls.c (8 threads, known counts; its ic_rec has a ret
 *     that is a branch target, and at -O0 several functions end in
 *     `call; leave; ret`): entry and exit counters on every ic_*
 *     function are exact per thread and in total, with NO trap hit (the
 *     rtlib's trap counter stays 0) and the functions that needed it
 *     relocated; after removal every code byte equals the file's; the
 *     output is that of the uninstrumented program;
 *   - progs/inst_fr.cpp (-O0): C++ exceptions, backtrace(),
 *     pthread_exit and pthread_cancel through relocated frames, exact
 *     counts, output identical, no trap hit, unwind info registered;
 *   - instrumenting again after removal reuses the copy;
 *   - a function relocated under a thread's frame: catchup leaves that
 *     frame alone (it returns into the original, never to the copy's
 *     exit), so entries and exits stay balanced.
 *
 *   inst_funcreloc CALLS... -- FR...
 *   inst_funcreloc --storm STORM ROUNDS   insert/remove on a running
 *                                         8-thread target, relocating
 *   inst_funcreloc --kill STORM MS        hunch SIGKILLed in such a storm
 *   inst_funcreloc --shares FILE...   (report: jmp / relocated / trap)
 *   inst_funcreloc --switch FR_SWITCH   progs/fr_switch.c: relocated
 *                    with its jump table, exact count at every return
 *   inst_funcreloc --cold COLDPART-STRIPPED   tests/parse/coldpart.c with
 *                    no symbol for cp_work.cold: entries == exits exact
 */
#include "inst_util.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "eng_funcreloc.h"
#include "eng_points.h"
#include "hunch_abi.h"

struct fx {
	const struct eng_func *f;
	uint32_t ev, xv;          /* entry and exit counters */
	uint64_t eh, xh;
	uint32_t req[16];
	size_t nreq, nentry, nexit;
};

/* Every function named prefix*, with an entry and an exit counter. */
static struct fx *prepare(struct tgt *t, struct eng_points_cache *pc,
			  const char *prefix, size_t *n)
{
	size_t nf = eng_image_nfuncs(t->img);
	struct fx *fx = calloc(nf + 1, sizeof *fx);

	*n = 0;
	for (size_t i = 0; i < nf; i++) {
		const struct eng_func *f = eng_image_func(t->img, i);
		struct fx *c = &fx[*n];

		if (strncmp(f->name, prefix, strlen(prefix)) != 0 ||
		    eng_points_of(pc, t->img, f, NULL) == NULL)
			continue;
		c->f = f;
		eng_sampler_var_alloc(t->smp, ENG_VAR_COUNTER, &c->ev, &c->eh, NULL);
		eng_sampler_var_alloc(t->smp, ENG_VAR_COUNTER, &c->xv, &c->xh, NULL);
		(*n)++;
	}
	return fx;
}

/* Queue the counters at every entry and exit, commit; *failed: the
 * requests refused. */
static void insert(struct tgt *t, struct eng_points_cache *pc,
		   struct fx *fx, size_t n, int *failed)
{
	struct hunch_err err = { 0 };

	for (size_t i = 0; i < n; i++) {
		const struct x86_func *xf = eng_points_of(pc, t->img, fx[i].f,
							  NULL);
		struct fx *c = &fx[i];

		c->nreq = c->nentry = c->nexit = 0;
		for (size_t k = 0; xf && k < xf->npoints && c->nreq < 16; k++) {
			const struct x86_point *xp = &xf->points[k];
			struct x86_snip s = { .kind = X86_SN_ADD, .delta = 1 };
			struct eng_inst_point pt;

			if (xp->kind == X86_PT_CALL)
				continue;
			s.handle = xp->kind == X86_PT_ENTRY ? c->eh : c->xh;
			eng_inst_point_from(xp, t->base, &pt);
			if (eng_inst_add(t->in, &pt, &s, 1, false,
					 &c->req[c->nreq], &err) < 0) {
				tap_diag("%s: %s", c->f->name, err.msg);
				continue;
			}
			c->nreq++;
			*(xp->kind == X86_PT_ENTRY ? &c->nentry : &c->nexit) += 1;
		}
	}
	*failed = eng_inst_commit(t->in, &err);
	if (*failed < 0)
		tap_diag("commit: %s", err.msg);
	for (size_t i = 0; *failed > 0 && i < n; i++)
		for (size_t k = 0; k < fx[i].nreq; k++) {
			enum eng_refusal why;

			if (eng_inst_state(t->in, fx[i].req[k], &why) ==
			    ENG_REQ_FAILED && getenv("FR_VERBOSE"))
				tap_diag("%s: refused: %s", fx[i].f->name,
					 eng_refusal_str(why));
		}
}

static struct fx *instrument(struct tgt *t, struct eng_points_cache *pc,
			     const char *prefix, size_t *n, int *failed)
{
	struct fx *fx = prepare(t, pc, prefix, n);

	insert(t, pc, fx, *n, failed);
	return fx;
}

static void remove_all(struct tgt *t, struct fx *fx, size_t n)
{
	struct hunch_err err = { 0 };

	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < fx[i].nreq; k++)
			eng_inst_remove(t->in, fx[i].req[k]);
	if (eng_inst_commit(t->in, &err) < 0)
		tap_diag("commit: %s", err.msg);
}

static struct fx *by_name(struct fx *fx, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(fx[i].f->name, name) == 0)
			return &fx[i];
	return NULL;
}

static int cmpl(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return x < y ? -1 : x > y;
}

/* The values of a counter in every live thread, sorted, zeros dropped. */
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

static uint64_t traps(struct tgt *t)
{
	return eng_shm_header(t->shm)->rt_traps;
}

static bool relocated(struct tgt *t, const struct eng_func *f)
{
	uint64_t lo, hi;

	return eng_funcreloc_copy_range(t->in, t->base + f->addr,
					t->base + f->addr + f->size, &lo,
					&hi) == 1;
}

/* What the program prints without hunch (stdin: two lines). */
static char *ground_truth(const char *prog)
{
	static char out[1 << 16];
	char cmd[4096];
	FILE *p;
	size_t n;

	snprintf(cmd, sizeof cmd, "printf 'go\\ngo\\n' | %s", prog);
	if ((p = popen(cmd, "r")) == NULL)
		return NULL;
	n = fread(out, 1, sizeof out - 1, p);
	out[n] = 0;
	pclose(p);
	return out;
}

/* progs/inst_calls.c: per worker i, calls of each function (0 = none);
 * main's own calls in main_n. */
struct expect { const char *name; long per1; long main_n; };
static const struct expect calls_expect[] = {
	{ "ic_worker", -1, 0 },        /* per worker: 1 */
	{ "ic_mid", 1000, 0 },         /* (i+1) * per1 */
	{ "ic_leaf", 2500, 0 },
	{ "ic_branchy", 1000, 0 },
	{ "ic_jcc", 1000, 0 },
	{ "ic_rec", -1100, 0 },        /* 1100 in every worker */
	{ "ic_report", 0, 8 },
	{ "ic_args", 0, 8 },
};

static size_t want_values(const struct expect *e, bool exits, long *w)
{
	size_t n = 0;

	for (int i = 0; i < 8; i++) {
		if (e->per1 == -1)
			w[n++] = exits ? 0 : 1;   /* workers wait inside */
		else if (e->per1 < 0)
			w[n++] = -e->per1;
		else if (e->per1 > 0)
			w[n++] = e->per1 * (i + 1);
	}
	if (e->main_n)
		w[n++] = e->main_n;
	qsort(w, n, sizeof *w, cmpl);
	while (n > 0 && w[0] == 0) {      /* zeros are not reported */
		memmove(w, w + 1, (n - 1) * sizeof *w);
		n--;
	}
	return n;
}

static void check_threads(struct tgt *t, const char *name, struct fx *c,
			  const struct expect *e)
{
	const char *kind[2] = { "entry", "exit" };
	uint32_t var[2] = { c->ev, c->xv };
	size_t npt[2] = { c->nentry, c->nexit };

	for (int k = 0; k < 2; k++) {
		long want[16], got[16];
		size_t nw = want_values(e, k == 1, want);
		size_t ng = thread_values(t, var[k], got, 16);
		bool same = ng == nw && npt[k] > 0;

		for (size_t i = 0; same && i < nw; i++)
			same = got[i] == want[i];
		tap_ok(same, "%s %s: %s count per thread exact (%zu points)",
		       name, e->name, kind[k], npt[k]);
		for (size_t i = 0; !same && i < ng; i++)
			tap_diag("  thread value %ld", got[i]);
	}
}

static void check_totals(struct tgt *t, const char *name, struct fx *c,
			 const struct expect *e)
{
	long w[16], want = 0;
	size_t nw = want_values(e, false, w);
	struct eng_var_agg a;

	for (size_t i = 0; i < nw; i++)
		want += w[i];
	eng_sampler_var_agg(t->smp, c->ev, &a);
	tap_eq(a.sum, want, "%s %s: entry total exact", name, e->name);
	eng_sampler_var_agg(t->smp, c->xv, &a);
	tap_eq(a.sum, want, "%s %s: exit total exact", name, e->name);
}

/* Which functions the parser refuses (they must be relocated now). */
static size_t list_needing(struct eng_points_cache *pc, struct tgt *t,
			   const char *name, struct fx *fx, size_t n)
{
	size_t need = 0;

	for (size_t i = 0; i < n; i++) {
		const struct x86_func *xf = eng_points_of(pc, t->img, fx[i].f,
							  NULL);

		if (xf == NULL || xf->ok)
			continue;
		need++;
		tap_ok(relocated(t, fx[i].f), "%s %s: needs room (%s), "
		       "relocated", name, fx[i].f->name,
		       x86_refusal_str(xf->why));
	}
	return need;
}

/* Remove everything while the workers wait inside ic_worker, check the
 * bytes, instrument again (a copy with the workers' frames is reused,
 * the others were freed and are built again), let
 * the workers leave ic_worker and exit, and check what the second set
 * of counters saw: 8 exits of ic_worker, nothing else; then remove. */
static void again(struct tgt *t, struct eng_points_cache *pc,
		  const char *name, struct fx *fx, size_t n)
{
	struct eng_funcreloc_stats st0, st1;
	struct fx *fx2, *w;
	size_t n2 = 0;
	int failed;
	long other = 0;

	remove_all(t, fx, n);
	tap_eq(tgt_code_mismatches(t), 0, "%s: after removal every code byte "
	       "equals the file's", name);
	eng_funcreloc_stats(t->in, &st0);
	eng_ptrace_stop_all(t->p, NULL);
	fx2 = instrument(t, pc, "ic_", &n2, &failed);
	eng_funcreloc_stats(t->in, &st1);
	/* the copies the waiting workers have frames in were kept (ic_worker
	 * when it is relocated), the others freed and built again */
	tap_ok(failed == 0 && st1.live == st1.relocated &&
	       st1.built - st0.built == st1.relocated - st0.waiting,
	       "%s: instrumented again: %zu copies kept and reused, %zu "
	       "built again", name, st0.waiting, st1.built - st0.built);
	eng_ptrace_resume_all(t->p, NULL);
	tgt_send(t, "go\n");
	if (!tap_ok(tgt_wait_line(t, "joined", 30000) == 0, "%s: joined",
		    name)) {
		free(fx2);
		return;
	}
	tgt_pump(t, 50);
	w = by_name(fx2, n2, "ic_worker");
	for (size_t i = 0; i < n2; i++) {
		struct eng_var_agg a, b;

		eng_sampler_var_agg(t->smp, fx2[i].ev, &a);
		eng_sampler_var_agg(t->smp, fx2[i].xv, &b);
		if (&fx2[i] == w)
			tap_ok(a.sum == 0 && b.sum == 8, "%s: ic_worker's 8 "
			       "exits counted by the new counters", name);
		else
			other += a.sum + b.sum;
	}
	tap_eq(other, 0, "%s: no other function ran", name);
	remove_all(t, fx2, n2);
	tap_eq(tgt_code_mismatches(t), 0, "%s: after the second removal every "
	       "code byte equals the file's", name);
	eng_funcreloc_stats(t->in, &st1);
	tap_eq(st1.live, 0, "%s: no original entry leads to a copy", name);
	free(fx2);
}

/* Detach (every byte was restored already), let the program finish on
 * its own, and compare everything it printed with the ground truth. */
static void finish_detached(struct tgt *t, const char *name,
			    const char *truth)
{
	pid_t pid = eng_proc_pid(t->p);
	ssize_t k;
	int st = -1;

	tap_ok(eng_detach(t->p, NULL) == 0, "%s: detached", name);
	tgt_send(t, "go\n");
	fcntl(t->from, F_SETFL, 0);
	while (t->outlen < sizeof t->out - 1 &&
	       (k = read(t->from, t->out + t->outlen,
			 sizeof t->out - 1 - t->outlen)) > 0)
		t->outlen += (size_t)k;
	t->out[t->outlen] = 0;
	tap_ok(waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	       WEXITSTATUS(st) == 0, "%s: exited 0 after detach", name);
	tap_ok(truth != NULL && strcmp(t->out, truth) == 0,
	       "%s: output identical to the uninstrumented run", name);
	t->ended = true;
}

static void run_calls(const char *prog)
{
	const char *name = strrchr(prog, '/') ? strrchr(prog, '/') + 1 : prog;
	char *argv[] = { (char *)prog, NULL };
	char *truth = ground_truth(prog);
	struct eng_points_cache *pc = NULL;
	struct hunch_err err = { 0 };
	struct fx *fx = NULL;
	size_t n = 0;
	struct tgt t;
	int failed;

	if (!tap_ok(tgt_launch(&t, prog, argv) == 0 &&
		    eng_points_cache_new(&pc, &err) == 0 &&
		    eng_funcreloc_image(t.in, pc, t.img, t.base, &err) == 0,
		    "%s: launched, relocation on %s", name, err.msg))
		return;
	fx = instrument(&t, pc, "ic_", &n, &failed);
	tap_ok(n == 8 && failed == 0, "%s: %zu functions instrumented, %d "
	       "requests refused", name, n, failed);
	tap_ok(list_needing(pc, &t, name, fx, n) > 0, "%s: some function "
	       "needed relocation", name);
	eng_ptrace_resume_all(t.p, NULL);
	if (!tap_ok(tgt_wait_line(&t, "done", 60000) == 0, "%s: work done",
		    name))
		goto out;
	tgt_pump(&t, 50);
	for (size_t k = 0; k < 8; k++)
		if (by_name(fx, n, calls_expect[k].name) != NULL)
			check_threads(&t, name, by_name(fx, n,
					calls_expect[k].name), &calls_expect[k]);
	tap_eq(traps(&t), 0, "%s: no trap hit", name);
	again(&t, pc, name, fx, n);
	tgt_pump(&t, 50);
	for (size_t k = 1; k < 8; k++)
		if (by_name(fx, n, calls_expect[k].name) != NULL)
			check_totals(&t, name, by_name(fx, n,
					calls_expect[k].name), &calls_expect[k]);
	finish_detached(&t, name, truth);
out:
	free(fx);
	tgt_fini(&t);
	eng_points_cache_free(pc);
}

/* progs/inst_fr.cpp: counts and unwinding through relocated frames. */
static void run_fr(const char *prog)
{
	static const struct { const char *fn; long entries, exits; } want[] = {
		{ "fr_count", 1000, 1000 }, { "fr_count_leaf", 1000, 1000 },
		{ "fr_pass1", 10, 0 }, { "fr_pass2", 10, 0 },
		{ "fr_throw", 11, 0 }, { "fr_bt_pass", 1, 1 },
		{ "fr_bt_leaf", 1, 1 }, { "fr_exit_pass", 1, 0 },
		{ "fr_exit_leaf", 1, 0 }, { "fr_exiter", 1, 0 },
		{ "fr_block_pass", 1, 0 }, { "fr_block_read", 1, 0 },
		{ "fr_spin", 0, 0 }, { "fr_spin_loop", 0, 0 },
		{ "fr_asm_pass", 2, 1 },
	};
	const char *name = strrchr(prog, '/') ? strrchr(prog, '/') + 1 : prog;
	char *argv[] = { (char *)prog, NULL };
	char *truth = ground_truth(prog);
	struct eng_points_cache *pc = NULL;
	struct eng_funcreloc_stats st;
	struct hunch_err err = { 0 };
	struct fx *fx = NULL;
	size_t n = 0;
	struct tgt t;
	int failed;

	if (!tap_ok(tgt_launch(&t, prog, argv) == 0 &&
		    eng_points_cache_new(&pc, &err) == 0 &&
		    eng_funcreloc_image(t.in, pc, t.img, t.base, &err) == 0,
		    "%s: launched, relocation on %s", name, err.msg))
		return;
	fx = instrument(&t, pc, "fr_", &n, &failed);
	tap_ok(n == 15 && failed == 0, "%s: %zu functions instrumented, %d "
	       "requests refused", name, n, failed);
	list_needing(pc, &t, name, fx, n);
	eng_funcreloc_stats(t.in, &st);
	tap_ok(st.live >= 5 && st.frames == st.live, "%s: %zu functions "
	       "relocated, %zu unwind tables registered", name, st.live,
	       st.frames);
	tap_ok(relocated(&t, by_name(fx, n, "fr_pass1")->f) &&
	       relocated(&t, by_name(fx, n, "fr_asm_pass")->f) &&
	       relocated(&t, by_name(fx, n, "fr_exit_pass")->f) &&
	       relocated(&t, by_name(fx, n, "fr_block_pass")->f) &&
	       relocated(&t, by_name(fx, n, "fr_bt_pass")->f),
	       "%s: the frames exceptions, pthread_exit, cancel and "
	       "backtrace() pass through are relocated", name);
	eng_ptrace_resume_all(t.p, NULL);
	tap_ok(tgt_wait_exit(&t, 30000) == 0 && t.status == 0,
	       "%s: exited 0 (%d)", name, t.status);
	tap_ok(truth != NULL && strcmp(t.out, truth) == 0,
	       "%s: output identical to the uninstrumented run", name);
	if (truth != NULL && strcmp(t.out, truth) != 0)
		tap_diag("got:\n%swant:\n%s", t.out, truth);
	for (size_t k = 0; k < sizeof want / sizeof *want; k++) {
		struct fx *c = by_name(fx, n, want[k].fn);
		struct eng_var_agg a, b;

		if (!tap_ok(c != NULL, "%s %s: instrumented", name, want[k].fn))
			continue;
		eng_sampler_var_agg(t.smp, c->ev, &a);
		eng_sampler_var_agg(t.smp, c->xv, &b);
		tap_ok(a.sum == want[k].entries && b.sum == want[k].exits,
		       "%s %s: %ld entries, %ld exits (want %ld, %ld)", name,
		       want[k].fn, (long)a.sum, (long)b.sum, want[k].entries,
		       want[k].exits);
	}
	tap_eq(traps(&t), 0, "%s: no trap hit", name);
	free(fx);
	tgt_fini(&t);
	eng_points_cache_free(pc);
}

/* progs/fr_switch.c: fr_switch has a PIC jump table and a `ret` too
 * close to a case to take a jmp, so it is relocated with a table of its
 * own.  A counter at the entry and one at each of its 10 returns (one per
 * case, the default last): 10000 entries, exactly 1000 at each return,
 * no trap, the output of the uninstrumented program. */
static void run_switch(const char *prog)
{
	char *argv[] = { (char *)prog, NULL };
	char *truth = ground_truth(prog);
	struct eng_points_cache *pc = NULL;
	struct hunch_err err = { 0 };
	const struct eng_func *f;
	const struct x86_func *xf;
	uint32_t var[16], req[16];
	uint64_t h[16];
	size_t n = 0, nexit = 0, good = 0;
	struct tgt t;

	if (!tap_ok(tgt_launch(&t, prog, argv) == 0 &&
		    eng_points_cache_new(&pc, &err) == 0 &&
		    eng_funcreloc_image(t.in, pc, t.img, t.base, &err) == 0,
		    "switch: launched, relocation on %s", err.msg))
		return;
	f = eng_sym_lazy_func_by_name(t.img, "fr_switch");
	xf = f ? eng_points_of(pc, t.img, f, NULL) : NULL;
	tap_ok(xf != NULL && !xf->ok && xf->njtables == 1,
	       "switch: fr_switch has a jump table and a point too small");
	for (size_t k = 0; xf && k < xf->npoints && n < 16; k++) {
		const struct x86_point *xp = &xf->points[k];
		struct x86_snip s = { .kind = X86_SN_ADD, .delta = 1 };
		struct eng_inst_point pt;

		if (xp->kind == X86_PT_CALL)
			continue;
		eng_sampler_var_alloc(t.smp, ENG_VAR_COUNTER, &var[n], &h[n],
				      NULL);
		s.handle = h[n];
		eng_inst_point_from(xp, t.base, &pt);
		if (eng_inst_add(t.in, &pt, &s, 1, false, &req[n], &err) < 0)
			tap_diag("fr_switch: %s", err.msg);
		n++;
	}
	tap_ok(n == 11 && eng_inst_commit(t.in, &err) == 0,
	       "switch: 11 points (entry, 10 returns) committed %s", err.msg);
	tap_ok(f != NULL && relocated(&t, f), "switch: fr_switch relocated");
	eng_ptrace_resume_all(t.p, NULL);
	tap_ok(tgt_wait_exit(&t, 30000) == 0 && t.status == 0,
	       "switch: exited 0 (%d)", t.status);
	if (!tap_ok(truth != NULL && strcmp(t.out, truth) == 0,
		    "switch: output identical to the uninstrumented run"))
		tap_diag("got:\n%s", t.out);
	for (size_t k = 0; k < n; k++) {
		struct eng_var_agg a;

		eng_sampler_var_agg(t.smp, var[k], &a);
		if (k == 0)
			tap_eq(a.sum, 10000, "switch: fr_switch entries");
		else {
			nexit++;
			good += a.sum == 1000;
			if (a.sum != 1000)
				tap_diag("return %zu: %ld", k, (long)a.sum);
		}
	}
	tap_ok(nexit == 10 && good == 10, "switch: exactly 1000 at each of "
	       "the %zu returns (%zu right)", nexit, good);
	tap_eq(traps(&t), 0, "switch: no trap hit");
	tgt_fini(&t);
	eng_points_cache_free(pc);
}

/* tests/parse/coldpart.c, stripped: cp_work's cold part has no symbol
 * (engine/eng_coldpart.c finds it); the 10 trips through it are no
 * exits, so entries and exits are exactly the 1000 calls. */
static void run_cold(const char *prog)
{
	char *argv[] = { (char *)prog, NULL };
	struct eng_points_cache *pc = NULL;
	struct hunch_err err = { 0 };
	struct eng_var_agg a = { 0 }, b = { 0 };
	struct fx *fx = NULL, *c;
	size_t n = 0;
	struct tgt t;
	int failed;

	if (!tap_ok(tgt_launch(&t, prog, argv) == 0 &&
		    eng_points_cache_new(&pc, &err) == 0 &&
		    eng_funcreloc_image(t.in, pc, t.img, t.base, &err) == 0,
		    "coldpart: launched, relocation on %s", err.msg))
		return;
	fx = instrument(&t, pc, "cp_", &n, &failed);
	c = by_name(fx, n, "cp_work");
	tap_ok(n == 1 && c != NULL && failed == 0 && c->nentry == 1 &&
	       c->nexit == 1, "coldpart: cp_work instrumented at %zu entry, "
	       "%zu exit (want 1, 1), %d requests refused", c ? c->nentry : 0,
	       c ? c->nexit : 0, failed);
	eng_ptrace_resume_all(t.p, NULL);
	tap_ok(tgt_wait_exit(&t, 30000) == 0 && t.status == 0,
	       "coldpart: exited 0 (%d)", t.status);
	if (!tap_ok(strcmp(t.out, "sum 2085577\n") == 0,
		    "coldpart: output as without hunch"))
		tap_diag("got: %s", t.out);
	if (c != NULL) {
		eng_sampler_var_agg(t.smp, c->ev, &a);
		eng_sampler_var_agg(t.smp, c->xv, &b);
	}
	tap_ok(a.sum == 1000 && b.sum == 1000, "coldpart: cp_work %ld "
	       "entries, %ld exits (want 1000, 1000)", (long)a.sum,
	       (long)b.sum);
	tap_eq(traps(&t), 0, "coldpart: no trap hit");
	free(fx);
	tgt_fini(&t);
	eng_points_cache_free(pc);
}

/* The storm target (progs/gen_storm.py, 8 threads) at -O0, where 40% of
 * the functions need relocation: `rounds` times insert counters at
 * every entry and exit and remove them while it runs. */
static const char storm_expected[] =
	"thread 0: ok\nthread 1: ok\nthread 2: ok\nthread 3: ok\n"
	"thread 4: ok\nthread 5: ok\nthread 6: ok\nthread 7: ok\nend\n";

static int storm_rounds(struct tgt *t, struct eng_points_cache *pc,
			struct fx *fx, size_t n, int rounds, size_t *moved)
{
	int refused = 0, failed;

	for (int r = 0; r < rounds; r++) {
		insert(t, pc, fx, n, &failed);
		refused += failed > 0 ? failed : 0;
		if (failed < 0)
			return -1;
		if (r == 0) {   /* how many functions run in copies */
			struct eng_funcreloc_stats st;

			eng_funcreloc_stats(t->in, &st);
			*moved = st.relocated;
		}
		tgt_pump(t, 20);
		remove_all(t, fx, n);
		tgt_pump(t, 5);
	}
	return refused;
}

static void run_storm(const char *prog, int rounds)
{
	const char *name = strrchr(prog, '/') ? strrchr(prog, '/') + 1 : prog;
	char *argv[] = { (char *)prog, NULL };
	struct eng_points_cache *pc = NULL;
	struct eng_funcreloc_stats st;
	struct hunch_err err = { 0 };
	struct fx *fx;
	size_t n;
	struct tgt t;
	size_t moved = 0;
	int refused;

	if (!tap_ok(tgt_launch(&t, prog, argv) == 0 &&
		    eng_points_cache_new(&pc, &err) == 0 &&
		    eng_funcreloc_image(t.in, pc, t.img, t.base, &err) == 0,
		    "%s: launched, relocation on %s", name, err.msg))
		return;
	fx = prepare(&t, pc, "sf_", &n);
	eng_ptrace_resume_all(t.p, NULL);
	refused = storm_rounds(&t, pc, fx, n, rounds, &moved);
	/* Copies a thread was still in (or a stale stack word pointed
	 * into) at the last removal wait for a later check: commits with
	 * nothing queued run it.  Under load that takes a few. */
	eng_funcreloc_stats(t.in, &st);
	for (int k = 0; k < 40 && st.waiting > 8; k++) {
		tgt_pump(&t, 50);
		eng_inst_commit(t.in, NULL);
		eng_funcreloc_stats(t.in, &st);
	}
	/* every round relocates the same functions again: each copy is
	 * freed after its removal once no thread is in it, and built again;
	 * a copy still waiting at the next round is reused instead (under
	 * load, in CI, every one of them in every round: 400 built for 400
	 * relocated functions).  So at least one copy per relocated
	 * function, none lost, nearly all freed at the end (freeing and
	 * building again round after round: inst_funcreloc_memory). */
	tap_ok(refused >= 0 && moved > 0 && st.built >= moved &&
	       st.freed + st.relocated == st.built &&
	       st.waiting <= 8, "%s: %d rounds on %zu "
	       "functions, %zu relocated, %zu copies built, %zu freed, %zu "
	       "waiting, %zu refused relocation (traps), %d requests refused",
	       name, rounds, n, moved, st.built, st.freed, st.waiting,
	       st.refused, refused);
	tap_eq(tgt_code_mismatches(&t), 0, "%s: every code byte equals the "
	       "file's", name);
	tgt_send(&t, "stop\n");
	tap_ok(tgt_wait_exit(&t, 60000) == 0 && t.status == 0,
	       "%s: exited 0", name);
	tap_ok(strcmp(t.out, storm_expected) == 0, "%s: output identical",
	       name);
	free(fx);
	tgt_fini(&t);
	eng_points_cache_free(pc);
}

/* hunch (a child) relocates and storms until SIGKILLed; the target
 * finishes alone with its copies and entries as they were. */
static void kill_child(const char *prog, int in_fd, int out_fd, int pidw)
{
	char *argv[] = { (char *)prog, NULL };
	struct eng_points_cache *pc = NULL;
	struct fx *fx;
	size_t n, moved;
	struct tgt t;
	pid_t pid;

	if (tgt_launch_fds(&t, prog, argv, in_fd, out_fd) < 0 ||
	    eng_points_cache_new(&pc, NULL) < 0 ||
	    eng_funcreloc_image(t.in, pc, t.img, t.base, NULL) < 0)
		_exit(2);
	pid = eng_proc_pid(t.p);
	fx = prepare(&t, pc, "sf_", &n);
	eng_ptrace_resume_all(t.p, NULL);
	if (write(pidw, &pid, sizeof pid) != sizeof pid)
		_exit(2);
	storm_rounds(&t, pc, fx, n, 1000000, &moved);
	_exit(0);
}

static void run_kill(const char *prog, int ms)
{
	int in[2], out[2], pw[2], st;
	pid_t hunch, target = 0;
	char buf[4096];
	size_t len = 0;
	ssize_t k;

	prctl(PR_SET_CHILD_SUBREAPER, 1);
	signal(SIGPIPE, SIG_IGN);       /* a dead target fails the checks */
	if (pipe(in) < 0 || pipe(out) < 0 || pipe(pw) < 0)
		return;
	if ((hunch = fork()) == 0)
		kill_child(prog, in[0], out[1], pw[1]);
	close(in[0]);
	close(out[1]);
	close(pw[1]);
	if (!tap_ok(read(pw[0], &target, sizeof target) == sizeof target,
		    "kill: hunch launched the storm target"))
		return;
	usleep((useconds_t)ms * 1000);
	kill(hunch, SIGKILL);
	waitpid(hunch, &st, 0);
	tap_ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
	       "kill: hunch SIGKILLed %d ms into a relocating storm", ms);
	usleep(300000);    /* the target runs on with whatever was patched */
	tap_ok(write(in[1], "stop\n", 5) == 5, "kill: told the target to stop");
	while (len < sizeof buf - 1 &&
	       (k = read(out[0], buf + len, sizeof buf - 1 - len)) > 0)
		len += (size_t)k;
	buf[len] = 0;
	tap_ok(waitpid(target, &st, 0) == target && WIFEXITED(st) &&
	       WEXITSTATUS(st) == 0, "kill: target exited 0 by itself "
	       "(status %#x)", st);
	tap_ok(strcmp(buf, storm_expected) == 0, "kill: output identical");
	if (strcmp(buf, storm_expected) != 0)
		tap_diag("output: %s", buf);
}

/* Catchup of a function relocated while a thread's frame is in its
 * original body (progs/inst_fr.cpp "spin": main waits in fr_spin_loop,
 * called from fr_spin): that frame will return into the original and
 * never run the copy's exit, so catchup must leave it alone; the next
 * call goes through the copy and counts one entry and one exit. */
static void run_spin(const char *prog)
{
	const char *name = strrchr(prog, '/') ? strrchr(prog, '/') + 1 : prog;
	char *argv[] = { (char *)prog, "spin", NULL };
	struct eng_points_cache *pc = NULL;
	struct hunch_err err = { 0 };
	struct eng_var_agg a, b;
	struct x86_snip s = { .kind = X86_SN_ADD, .delta = 1 };
	struct fx *fx = NULL, *c;
	size_t n = 0;
	struct tgt t;
	int failed, caught;

	if (!tap_ok(tgt_launch(&t, prog, argv) == 0 &&
		    eng_points_cache_new(&pc, &err) == 0 &&
		    eng_funcreloc_module(t.in, prog,
					 eng_solib_module(t.p, 0)->bias,
					 &err) == 0,
		    "%s spin: launched, relocation on (module API) %s", name,
		    err.msg))
		return;
	eng_ptrace_resume_all(t.p, NULL);
	if (!tap_ok(tgt_wait_line(&t, "spinning", 10000) == 0,
		    "%s spin: main is inside fr_spin", name))
		goto out;
	eng_ptrace_stop_all(t.p, NULL);
	fx = instrument(&t, pc, "fr_spin", &n, &failed);
	c = by_name(fx, n, "fr_spin");
	if (!tap_ok(c != NULL && failed == 0 && relocated(&t, c->f),
		    "%s spin: fr_spin relocated under main's frame", name))
		goto out;
	s.handle = c->eh;
	caught = eng_inst_catchup(t.in, t.base + c->f->addr,
				  t.base + c->f->addr + c->f->size, &s, 1, &err);
	tap_eq(caught, 0, "%s spin: catchup leaves the frame in the original "
	       "body alone", name);
	eng_ptrace_resume_all(t.p, NULL);
	tgt_send(&t, "stop\n");
	tap_ok(tgt_wait_exit(&t, 10000) == 0 && t.status == 0 &&
	       strcmp(t.out, "spinning\nspinning\nspun\n") == 0,
	       "%s spin: output as without hunch", name);
	eng_sampler_var_agg(t.smp, c->ev, &a);
	eng_sampler_var_agg(t.smp, c->xv, &b);
	tap_ok(a.sum == 1 && b.sum == 1, "%s spin: fr_spin %ld entries, %ld "
	       "exits: balanced (the second call only)", name, (long)a.sum,
	       (long)b.sum);
out:
	free(fx);
	tgt_fini(&t);
	eng_points_cache_free(pc);
}

/* Shares of a file's functions: every point a jmp in place, relocated,
 * or left to traps/refusal (with the reasons relocation gives). */
static void shares(const char *path)
{
	struct eng_funcreloc_checker *ck = NULL;
	struct eng_points_cache *pc = NULL;
	struct eng_image *img = NULL;
	struct { enum eng_refusal why; size_t n; } why[32];
	size_t nwhy = 0, nf, cnt[3] = { 0 };
	struct hunch_err err = { 0 };

	if (!tap_ok(eng_image_open(path, &img, &err) == 0 &&
		    eng_points_cache_new(&pc, &err) == 0 &&
		    eng_funcreloc_check_new(&ck) == 0, "%s: opened %s",
		    path, err.msg))
		return;
	nf = eng_image_nfuncs(img);
	for (size_t i = 0; i < nf; i++) {
		enum eng_refusal w;
		enum eng_funcreloc_verdict v =
			eng_funcreloc_check(ck, pc, img, eng_image_func(img, i),
					    &w);
		size_t k = 0;

		cnt[v]++;
		if (getenv("FR_LIST") != NULL)   /* one verdict a line */
			printf("%s %s\n", v == ENG_FUNCRELOC_IN_PLACE ? "jmp" :
			       v == ENG_FUNCRELOC_RELOCATED ? "relocated" :
			       "trap", eng_image_func(img, i)->name);
		if (v != ENG_FUNCRELOC_REFUSED || w == ENG_REFUSAL_NONE)
			continue;
		while (k < nwhy && why[k].why != w)
			k++;
		if (k == nwhy && nwhy < 32) {
			why[nwhy].why = w;
			why[nwhy++].n = 0;
		}
		if (k < nwhy)
			why[k].n++;
	}
	tap_ok(nf > 0, "%s: %zu functions: %zu jmp (%.1f%%), %zu relocated "
	       "(%.1f%%), together %.1f%%; %zu left to traps or refused "
	       "(%.1f%%)", path, nf, cnt[0], 100.0 * cnt[0] / nf, cnt[1],
	       100.0 * cnt[1] / nf, 100.0 * (cnt[0] + cnt[1]) / nf, cnt[2],
	       100.0 * cnt[2] / nf);
	for (size_t k = 0; k < nwhy; k++)
		tap_diag("  %6zu  %s", why[k].n, eng_refusal_str(why[k].why));
	eng_funcreloc_check_free(ck);
	eng_points_cache_free(pc);
	eng_image_close(img);
}

int main(int argc, char **argv)
{
	bool fr = false;

	if (argc > 1 && strcmp(argv[1], "--shares") == 0) {
		for (int i = 2; i < argc; i++)
			shares(argv[i]);
		return tap_done();
	}
	if (argc == 4 && strcmp(argv[1], "--storm") == 0) {
		run_storm(argv[2], atoi(argv[3]));
		return tap_done();
	}
	if (argc == 3 && strcmp(argv[1], "--switch") == 0) {
		run_switch(argv[2]);
		return tap_done();
	}
	if (argc == 3 && strcmp(argv[1], "--cold") == 0) {
		run_cold(argv[2]);
		return tap_done();
	}
	if (argc == 4 && strcmp(argv[1], "--kill") == 0) {
		run_kill(argv[2], atoi(argv[3]));
		return tap_done();
	}
	/* The small functions of inst_calls would now fit in place by
	 * borrowing the padding after them: keep them relocated here. */
	setenv("HUNCH_NO_TAILPAD", "1", 1);
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			fr = true;
		else if (fr) {
			run_fr(argv[i]);
			run_spin(argv[i]);
		}
		else
			run_calls(argv[i]);
	}
	return tap_done();
}

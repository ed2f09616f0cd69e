/*
 * inst_funcreloc_free.c - relocated copies are freed once no thread can
 * be executing them (engine/eng_funcreloc_free.c):
 *
 *   inst_funcreloc_free --blocked FR_BLOCK
 *       progs/fr_block.c: main waits in read(2) called from the copy of
 *       fb_get when its instrumentation is removed: the copy stays
 *       (commit after commit) until that read returns through it, then
 *       the next commit frees it (its unwind info deregistered, its
 *       memory back); instrumented again, a new copy counts exactly;
 *       detached with main inside a copy, the program ends correctly.
 *   inst_funcreloc_free --memory FRSTORM ROUNDS
 *       progs/gen_frstorm.py (1000 functions that all need relocation,
 *       4 threads): ROUNDS times every function instrumented (1000
 *       copies built) and removed while it runs; prints the trampoline
 *       memory in use at the peak and after the last round, which must
 *       be back where it was before the first.
 *   inst_funcreloc_free --postcall FR_POSTCALL...
 *       progs/fr_postcall.c (-O0, and -O2 where pc_caller needs no
 *       relocation but gets it for its after-call points): exact counts
 *       after each call site (a callee that longjmps past it: not run),
 *       %rax read there, entries and exits; bytes restored; output
 *       identical.
 */
#include "inst_util.h"
#include "tap.h"

#include <ctype.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "eng_funcreloc.h"
#include "eng_metric.h"
#include "eng_points.h"

struct fx {
	const struct eng_func *f;
	uint32_t ev, xv;          /* entry and exit counters */
	uint64_t eh, xh;
	uint32_t req[16];
	size_t nreq;
};

static void fx_vars(struct tgt *t, struct fx *c, const struct eng_func *f)
{
	memset(c, 0, sizeof *c);
	c->f = f;
	eng_sampler_var_alloc(t->smp, ENG_VAR_COUNTER, &c->ev, &c->eh, NULL);
	eng_sampler_var_alloc(t->smp, ENG_VAR_COUNTER, &c->xv, &c->xh, NULL);
}

/* Queue a counter at every entry and exit of each function, commit;
 * returns the requests refused (or <0). */
static int insert(struct tgt *t, struct eng_points_cache *pc, struct fx *fx,
		  size_t n)
{
	struct hunch_err err = { 0 };
	int failed;

	for (size_t i = 0; i < n; i++) {
		const struct x86_func *xf = eng_points_of(pc, t->img, fx[i].f,
							  NULL);

		fx[i].nreq = 0;
		for (size_t k = 0; xf && k < xf->npoints && fx[i].nreq < 16; k++) {
			const struct x86_point *xp = &xf->points[k];
			struct x86_snip s = { .kind = X86_SN_ADD, .delta = 1 };
			struct eng_inst_point pt;

			if (xp->kind == X86_PT_CALL)
				continue;
			s.handle = xp->kind == X86_PT_ENTRY ? fx[i].eh : fx[i].xh;
			eng_inst_point_from(xp, t->base, &pt);
			if (eng_inst_add(t->in, &pt, &s, 1, false,
					 &fx[i].req[fx[i].nreq], &err) < 0) {
				tap_diag("%s: %s", fx[i].f->name, err.msg);
				continue;
			}
			fx[i].nreq++;
		}
	}
	failed = eng_inst_commit(t->in, &err);
	if (failed < 0)
		tap_diag("commit: %s", err.msg);
	return failed;
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

/* A commit with nothing queued: the periodic check of waiting copies. */
static void check_again(struct tgt *t)
{
	struct hunch_err err = { 0 };

	if (eng_inst_commit(t->in, &err) < 0)
		tap_diag("commit: %s", err.msg);
}

static long total(struct tgt *t, uint32_t var)
{
	struct eng_var_agg a;

	eng_sampler_var_refresh(t->smp, var);
	eng_sampler_var_agg(t->smp, var, &a);
	return (long)a.sum;
}

static size_t code_bytes(struct tgt *t)
{
	struct eng_inst_stats st;

	eng_inst_stats(t->in, &st);
	return st.code_bytes;
}

static bool relocated(struct tgt *t, const struct eng_func *f)
{
	uint64_t lo, hi;

	return eng_funcreloc_copy_range(t->in, t->base + f->addr,
					t->base + f->addr + f->size, &lo,
					&hi) == 1;
}

/* Send a line, wait for the program's answer and for main to block in
 * its next read. */
static bool line(struct tgt *t, const char *send, const char *want)
{
	return tgt_send(t, send) == 0 && tgt_wait_line(t, want, 30000) == 0 &&
	       tgt_wait_asleep(t, 30000) == 0;
}

static void blocked_second_copy(struct tgt *t, struct eng_points_cache *pc,
				struct fx *c)
{
	struct eng_funcreloc_stats st;
	int failed;

	/* main is in read() under the original fb_get now */
	failed = insert(t, pc, c, 1);
	eng_funcreloc_stats(t->in, &st);
	tap_ok(failed == 0 && st.built == 2 && relocated(t, c->f),
	       "blocked: instrumented again: a new copy built (%zu in all)",
	       st.built);
	eng_ptrace_resume_all(t->p, NULL);
	tap_ok(line(t, "world\n", "got 5: world") &&
	       line(t, "again\n", "got 5: again"), "blocked: two more lines");
	/* world returned through the original, again through the copy */
	tap_eq(total(t, c->ev), 2, "blocked: new copy: 2 entries");
	tap_eq(total(t, c->xv), 1, "blocked: new copy: 1 exit");
	remove_all(t, c, 1);
	eng_funcreloc_stats(t->in, &st);
	tap_ok(st.waiting == 1 && st.freed == 1, "blocked: removed with main "
	       "in the new copy: it waits (%zu waiting)", st.waiting);
	tap_eq(tgt_code_mismatches(t), 0, "blocked: every code byte equals the "
	       "file's before detach");
}

static void run_blocked(const char *prog)
{
	char *argv[] = { (char *)prog, NULL };
	static const char want[] = "ready\ngot 5: hello\ngot 5: world\n"
				   "got 5: again\nend\n";
	struct eng_points_cache *pc = NULL;
	struct eng_funcreloc_stats st;
	struct hunch_err err = { 0 };
	struct fx c, c2;
	struct tgt t;
	size_t used_waiting, used_freed;
	pid_t pid;
	int failed, status = -1;
	ssize_t k;

	if (!tap_ok(tgt_launch(&t, prog, argv) == 0 &&
		    eng_points_cache_new(&pc, &err) == 0 &&
		    eng_funcreloc_image(t.in, pc, t.img, t.base, &err) == 0,
		    "blocked: launched, relocation on %s", err.msg))
		return;
	fx_vars(&t, &c, eng_sym_lazy_func_by_name(t.img, "fb_get"));
	failed = insert(&t, pc, &c, 1);
	tap_ok(failed == 0 && relocated(&t, c.f), "blocked: fb_get relocated "
	       "and instrumented (%d refused)", failed);
	eng_ptrace_resume_all(t.p, NULL);
	tap_ok(tgt_wait_line(&t, "ready", 30000) == 0 &&
	       tgt_wait_asleep(&t, 30000) == 0, "blocked: main waits in read() "
	       "called from the copy");
	remove_all(&t, &c, 1);
	check_again(&t);
	check_again(&t);
	eng_funcreloc_stats(t.in, &st);
	tap_ok(st.waiting == 1 && st.freed == 0 && st.live == 0 &&
	       st.frames == 1 && st.busy == 3, "blocked: removed; the copy "
	       "stays through 3 checks (%zu busy), its unwind info too "
	       "(%zu)", st.busy, st.frames);
	tap_eq(tgt_code_mismatches(&t), 0, "blocked: every code byte equals the "
	       "file's");
	used_waiting = code_bytes(&t);
	tap_ok(line(&t, "hello\n", "got 5: hello"), "blocked: the read "
	       "returned through the copy, fb_get's result right");
	check_again(&t);
	eng_funcreloc_stats(t.in, &st);
	used_freed = code_bytes(&t);
	tap_ok(st.waiting == 0 && st.freed == 1 && st.frames == 0 &&
	       used_freed < used_waiting, "blocked: then the copy is freed, "
	       "unwind info deregistered; code memory %zu -> %zu bytes",
	       used_waiting, used_freed);
	tap_eq(total(&t, c.ev), 1, "blocked: 1 entry (before the removal)");
	tap_eq(total(&t, c.xv), 0, "blocked: 0 exits (removed before it "
	       "returned)");
	fx_vars(&t, &c2, c.f);
	eng_ptrace_stop_all(t.p, NULL);
	blocked_second_copy(&t, pc, &c2);
	pid = eng_proc_pid(t.p);
	tap_ok(eng_detach(t.p, NULL) == 0, "blocked: detached");
	tgt_send(&t, "end\n");
	fcntl(t.from, F_SETFL, 0);
	while (t.outlen < sizeof t.out - 1 &&
	       (k = read(t.from, t.out + t.outlen,
			 sizeof t.out - 1 - t.outlen)) > 0)
		t.outlen += (size_t)k;
	t.out[t.outlen] = 0;
	tap_ok(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	       WEXITSTATUS(status) == 0, "blocked: exited 0 after detach "
	       "(returned through the kept copy)");
	tap_ok(strcmp(t.out, want) == 0, "blocked: output exact");
	t.ended = true;
	tgt_fini(&t);
	eng_points_cache_free(pc);
}

static const char frstorm_expected[] =
	"thread 0: ok\nthread 1: ok\nthread 2: ok\nthread 3: ok\nend\n";

/* rf_0 .. rf_999 */
static struct fx *prepare_rf(struct tgt *t, size_t *n)
{
	size_t nf = eng_image_nfuncs(t->img);
	struct fx *fx = calloc(nf + 1, sizeof *fx);

	*n = 0;
	for (size_t i = 0; i < nf; i++) {
		const struct eng_func *f = eng_image_func(t->img, i);

		if (strncmp(f->name, "rf_", 3) == 0 && isdigit(f->name[3]))
			fx_vars(t, &fx[(*n)++], f);
	}
	return fx;
}

static void run_memory(const char *prog, int rounds)
{
	char *argv[] = { (char *)prog, NULL };
	struct eng_points_cache *pc = NULL;
	struct eng_funcreloc_stats st;
	struct hunch_err err = { 0 };
	size_t n, before, peak = 0, after, first_after = 0;
	int refused = 0, linked = 0, failed;
	struct fx *fx;
	struct tgt t;

	if (!tap_ok(tgt_launch(&t, prog, argv) == 0 &&
		    eng_points_cache_new(&pc, &err) == 0 &&
		    eng_funcreloc_image(t.in, pc, t.img, t.base, &err) == 0,
		    "memory: launched, relocation on %s", err.msg))
		return;
	fx = prepare_rf(&t, &n);
	before = code_bytes(&t);
	eng_ptrace_resume_all(t.p, NULL);
	for (int r = 0; r < rounds; r++) {
		failed = insert(&t, pc, fx, n);
		refused += failed > 0 ? failed : 0;
		eng_funcreloc_stats(t.in, &st);
		linked += st.live == 1000;
		if (code_bytes(&t) > peak)
			peak = code_bytes(&t);
		tgt_pump(&t, 10);
		remove_all(&t, fx, n);
		tgt_pump(&t, 5);
		if (r == 0)
			first_after = code_bytes(&t);
	}
	/* later stops: a thread stopped in a copy or a removed mini at the
	 * last removal (under load it may wait for a CPU across commits)
	 * has left it */
	for (int k = 0; k < 50; k++) {
		check_again(&t);
		eng_funcreloc_stats(t.in, &st);
		if (st.waiting <= 3)
			break;
		tgt_pump(&t, 20);
	}
	after = code_bytes(&t);
	tap_ok(n == 1000 && refused == 0 && linked == rounds,
	       "memory: %d rounds of 1000 relocated functions instrumented "
	       "and removed (%d with all 1000 linked): %zu copies built, %zu "
	       "freed, %d requests refused", rounds, linked, st.built,
	       st.freed, refused);
	/* a copy whose address a stale stack word still holds (a slot a
	 * frame never writes) is kept, as a live frame would be: reused if
	 * the function is instrumented again */
	tap_ok(st.freed + st.waiting == st.built && st.waiting <= 10 &&
	       st.frames == st.waiting, "memory: every copy freed but %zu, "
	       "their unwind tables deregistered", st.waiting);
	tap_ok((after - before) * 100 <= peak, "memory: trampoline memory in "
	       "use: %zu bytes before, %zu at the peak, %zu after round 1, "
	       "%zu after round %d (%zu copies kept)", before, peak,
	       first_after, after, rounds, st.waiting);
	tap_eq(tgt_code_mismatches(&t), 0, "memory: every code byte equals the "
	       "file's");
	tgt_send(&t, "stop\n");
	tap_ok(tgt_wait_exit(&t, 60000) == 0 && t.status == 0,
	       "memory: exited 0");
	tap_ok(strcmp(t.out, frstorm_expected) == 0, "memory: output "
	       "identical");
	free(fx);
	tgt_fini(&t);
	eng_points_cache_free(pc);
}

/* progs/fr_postcall.c: counters after pc_caller's two calls (and the
 * value pc_leaf returned, read from %rax there), at its entry and exit,
 * requested after-call first (which relocates pc_caller at -O2, where
 * its points have room). */
struct pc_vars {
	uint32_t var[5];         /* after leaf, after jump, $return, entry,
				    exit */
	uint64_t h[5];
	uint32_t req[8];
	size_t nreq;
};

static int pc_add(struct tgt *t, struct pc_vars *v,
		  const struct eng_inst_point *pt, int k, bool ret)
{
	struct x86_expr rax = { .kind = X86_EX_RET };
	struct x86_snip s = { .kind = X86_SN_ADD, .handle = v->h[k],
			      .delta = 1, .value = ret ? &rax : NULL };
	struct hunch_err err = { 0 };

	if (eng_inst_add(t->in, pt, &s, 1, false, &v->req[v->nreq], &err) < 0)
		return tap_diag("add: %s", err.msg), -1;
	v->nreq++;
	return 0;
}

static int pc_request(struct tgt *t, struct eng_points_cache *pc,
		      const struct eng_func *f, struct pc_vars *v)
{
	const struct x86_func *xf = eng_points_of(pc, t->img, f, NULL);
	struct hunch_err err = { 0 };
	int ncall = 0, rc = 0;

	for (int k = 0; k < 5; k++)
		eng_sampler_var_alloc(t->smp, ENG_VAR_COUNTER, &v->var[k],
				      &v->h[k], NULL);
	for (size_t k = 0; xf && k < xf->npoints && rc == 0; k++) {
		const struct x86_point *xp = &xf->points[k];
		struct eng_inst_point cp, ap;
		enum eng_refusal why;

		if (xp->kind != X86_PT_CALL)
			continue;
		eng_inst_point_from(xp, t->base, &cp);
		if (eng_funcreloc_post_call(t->in, &cp, &ap, &why, &err) != 1)
			return tap_diag("after call %d: %s", ncall,
					why ? eng_refusal_str(why) : err.msg),
			       -1;
		rc = pc_add(t, v, &ap, ncall, false);
		if (rc == 0 && ncall == 0)
			rc = pc_add(t, v, &ap, 2, true);
		ncall++;
	}
	for (size_t k = 0; xf && k < xf->npoints && rc == 0; k++) {
		struct eng_inst_point pt;

		if (xf->points[k].kind == X86_PT_CALL)
			continue;
		eng_inst_point_from(&xf->points[k], t->base, &pt);
		rc = pc_add(t, v, &pt,
			    xf->points[k].kind == X86_PT_ENTRY ? 3 : 4, false);
	}
	if (rc < 0 || ncall != 2)
		return -1;
	return eng_inst_commit(t->in, &err);
}

/* A function instrumented in place (its points have room, its entry
 * request queued first) gets no after-call point: relocating it now
 * would patch its entry twice. */
static void pc_refused(struct tgt *t, struct eng_points_cache *pc,
		       const char *name)
{
	const struct eng_func *f = eng_sym_lazy_func_by_name(t->img, "main");
	const struct x86_func *xf = eng_points_of(pc, t->img, f, NULL);
	struct x86_snip s = { .kind = X86_SN_ADD, .delta = 1 };
	struct eng_inst_point pt, cp, ap;
	struct hunch_err err = { 0 };
	enum eng_refusal why = ENG_REFUSAL_NONE;
	uint32_t id = 0, h;
	uint64_t handle;
	int rc = -1;

	if (xf == NULL || !xf->ok)
		return;         /* main itself needs relocation (-O0) */
	eng_sampler_var_alloc(t->smp, ENG_VAR_COUNTER, &h, &handle, NULL);
	s.handle = handle;
	eng_inst_point_from(&xf->points[0], t->base, &pt);
	for (size_t k = 0; k < xf->npoints; k++)
		if (xf->points[k].kind == X86_PT_CALL) {
			eng_inst_point_from(&xf->points[k], t->base, &cp);
			if (eng_inst_add(t->in, &pt, &s, 1, false, &id, &err) == 0)
				rc = eng_funcreloc_post_call(t->in, &cp, &ap,
							      &why, &err);
			break;
		}
	tap_ok(rc == 0 && why == ENG_REFUSAL_POST_IN_PLACE,
	       "%s: main's entry queued in place: its after-call point is "
	       "refused (%s)", name, why ? eng_refusal_str(why) : err.msg);
	eng_inst_remove(t->in, id);
}

/* The same through the metric compiler: MDL clauses with placement
 * "after" at pc_caller's call sites to one callee (a counter of
 * returns, and a sum of $return), on a fresh launch. */
static void pc_metric(const char *prog, const char *name)
{
	static const char *const fns[] = { "pc_caller" };
	static const struct eng_mprim one = { .op = ENG_MOP_ADD,
		.value = { .kind = ENG_MO_CONST, .c = 1 } };
	static const struct eng_mprim ret = { .op = ENG_MOP_ADD,
		.value = { .kind = ENG_MO_RETURN } };
	const struct eng_mclause cj = { .funcs = ENG_MF_NAMES, .names = fns,
		.nnames = 1, .point = ENG_MPT_CALL, .callee = "pc_jump",
		.after = true, .prims = &one, .nprims = 1 };
	const struct eng_mclause cl = { .funcs = ENG_MF_NAMES, .names = fns,
		.nnames = 1, .point = ENG_MPT_CALL, .callee = "pc_leaf",
		.after = true, .prims = &ret, .nprims = 1 };
	const struct eng_mdef dj = { "pc_jump_returns", ENG_MVAR_COUNTER,
				     &cj, 1, false };
	const struct eng_mdef dl = { "pc_leaf_return_sum", ENG_MVAR_COUNTER,
				     &cl, 1, false };
	const struct eng_mfocus all = { .code = ENG_CODE_ALL };
	char *argv[] = { (char *)prog, NULL };
	struct eng_minst *mj = NULL, *ml = NULL;
	struct eng_metric *m = NULL;
	struct hunch_err err = { 0 };
	int64_t vj = -1, vl = -1;
	struct tgt t;

	if (!tap_ok(tgt_launch(&t, prog, argv) == 0 &&
		    eng_metric_create(t.p, t.in, t.smp, NULL, &m, &err) == 0 &&
		    eng_metric_enable(m, &dj, &all, &mj, &err) == 0 &&
		    eng_metric_enable(m, &dl, &all, &ml, &err) == 0,
		    "%s: metrics with \"after\" call-site clauses enabled %s",
		    name, err.msg)) {
		tgt_fini(&t);
		return;
	}
	eng_ptrace_resume_all(t.p, NULL);
	tgt_send(&t, "go\n");
	tap_ok(tgt_wait_line(&t, "done", 30000) == 0, "%s: metric run", name);
	/* values as of the sampler's last tick: the calls are over */
	for (int k = 0; k < 300 && (vj != 750 || vl != 1499500); k++) {
		tgt_pump(&t, 50);
		eng_metric_value(m, mj, &vj);
		eng_metric_value(m, ml, &vl);
	}
	tap_eq(vj, 750, "%s: metric: returns after the call to pc_jump", name);
	tap_eq(vl, 1499500, "%s: metric: $return after the call to pc_leaf",
	       name);
	eng_metric_disable(m, mj, NULL);
	eng_metric_disable(m, ml, NULL);
	tap_eq(tgt_code_mismatches(&t), 0, "%s: metric: disabled, every code "
	       "byte equals the file's", name);
	eng_metric_destroy(m);
	tgt_send(&t, "x\n");
	tap_ok(tgt_wait_exit(&t, 30000) == 0 && t.status == 0, "%s: metric: "
	       "exited 0", name);
	tgt_fini(&t);
}

static void run_postcall(const char *prog)
{
	const char *name = strrchr(prog, '/') ? strrchr(prog, '/') + 1 : prog;
	char *argv[] = { (char *)prog, NULL };
	static const long want[5] = { 1000, 750, 1499500, 1000, 750 };
	static const char *what[5] = { "returns from pc_leaf",
		"returns from pc_jump (250 longjmps past it)",
		"sum of pc_leaf's return values read after the call",
		"entries", "exits" };
	struct eng_points_cache *pc = NULL;
	struct hunch_err err = { 0 };
	struct pc_vars v = { 0 };
	struct fx fx = { 0 };
	struct tgt t;

	if (!tap_ok(tgt_launch(&t, prog, argv) == 0 &&
		    eng_points_cache_new(&pc, &err) == 0 &&
		    eng_funcreloc_image(t.in, pc, t.img, t.base, &err) == 0,
		    "%s: launched, relocation on %s", name, err.msg))
		return;
	pc_refused(&t, pc, name);
	fx.f = eng_sym_lazy_func_by_name(t.img, "pc_caller");
	tap_ok(fx.f != NULL && pc_request(&t, pc, fx.f, &v) == 0 &&
	       relocated(&t, fx.f), "%s: after-call points of pc_caller's "
	       "2 calls, entry and exit: relocated, none refused", name);
	eng_ptrace_resume_all(t.p, NULL);
	tgt_send(&t, "go\n");
	tap_ok(tgt_wait_line(&t, "done", 30000) == 0, "%s: ran", name);
	for (int k = 0; k < 5; k++)
		tap_eq(total(&t, v.var[k]), want[k], "%s: %s", name, what[k]);
	tap_eq(eng_shm_header(t.shm)->rt_traps, 0, "%s: no trap hit", name);
	for (size_t k = 0; k < v.nreq; k++)
		eng_inst_remove(t.in, v.req[k]);
	tap_ok(eng_inst_commit(t.in, &err) >= 0 && tgt_code_mismatches(&t) == 0,
	       "%s: removed, every code byte equals the file's", name);
	tgt_send(&t, "x\n");
	tap_ok(tgt_wait_exit(&t, 30000) == 0 && t.status == 0 &&
	       strcmp(t.out, "ready\nsum 2255622000 jumps 250\ndone\nend\n")
	       == 0, "%s: exited 0, output identical", name);
	tgt_fini(&t);
	eng_points_cache_free(pc);
	pc_metric(prog, name);
}

/* progs/fr_block.c at -O0, through the metric compiler: fb_get ends in
 * `call fb_len; leave; ret`, so the point after that call and fb_get's
 * exit share bytes in the copy.  With the exit instrumented by another
 * metric, the after-call metric is refused with the reason; one metric
 * holding both clauses gets both in one patch and counts 2 per call. */
static void run_overlap(const char *prog)
{
	static const char *const fns[] = { "fb_get" };
	static const struct eng_mprim one = { .op = ENG_MOP_ADD,
		.value = { .kind = ENG_MO_CONST, .c = 1 } };
	const struct eng_mclause cx = { .funcs = ENG_MF_NAMES, .names = fns,
		.nnames = 1, .point = ENG_MPT_EXIT, .prims = &one, .nprims = 1 };
	const struct eng_mclause ca = { .funcs = ENG_MF_NAMES, .names = fns,
		.nnames = 1, .point = ENG_MPT_CALL, .callee = "fb_len",
		.after = true, .prims = &one, .nprims = 1 };
	const struct eng_mclause both[2] = { ca, cx };
	const struct eng_mdef dx = { "fb_exits", ENG_MVAR_COUNTER, &cx, 1,
				     false };
	const struct eng_mdef da = { "fb_len_returns", ENG_MVAR_COUNTER, &ca,
				     1, false };
	const struct eng_mdef db = { "fb_both", ENG_MVAR_COUNTER, both, 2,
				     false };
	const struct eng_mfocus all = { .code = ENG_CODE_ALL };
	char *argv[] = { (char *)prog, NULL };
	struct eng_minst *mx = NULL, *ma = NULL, *mb = NULL;
	struct eng_metric *m = NULL;
	struct hunch_err err = { 0 };
	int64_t v = -1;
	struct tgt t;
	int rc;

	if (!tap_ok(tgt_launch(&t, prog, argv) == 0 &&
		    eng_metric_create(t.p, t.in, t.smp, NULL, &m, &err) == 0 &&
		    eng_metric_enable(m, &dx, &all, &mx, &err) == 0,
		    "overlap: fb_get's exits counted %s", err.msg)) {
		tgt_fini(&t);
		return;
	}
	rc = eng_metric_enable(m, &da, &all, &ma, &err);
	tap_ok(rc < 0 && strstr(err.msg, "overlaps an instrumented point") !=
	       NULL, "overlap: the after-call metric is refused: %s", err.msg);
	err.msg[0] = 0;
	tap_ok(eng_metric_disable(m, mx, &err) == 0 &&
	       eng_metric_enable(m, &db, &all, &mb, &err) == 0,
	       "overlap: one metric with both clauses enabled %s", err.msg);
	eng_ptrace_resume_all(t.p, NULL);
	tap_ok(tgt_wait_line(&t, "ready", 30000) == 0 &&
	       line(&t, "hello\n", "got 5: hello") &&
	       line(&t, "world\n", "got 5: world"), "overlap: two lines");
	for (int k = 0; k < 300 && v != 4; k++) {
		tgt_pump(&t, 50);
		eng_metric_value(m, mb, &v);
	}
	tap_eq(v, 4, "overlap: 2 returns from fb_len + 2 exits of fb_get");
	eng_metric_disable(m, mb, NULL);
	tap_eq(tgt_code_mismatches(&t), 0, "overlap: every code byte equals the "
	       "file's");
	eng_metric_destroy(m);
	tgt_send(&t, "end\n");
	tap_ok(tgt_wait_exit(&t, 30000) == 0 && t.status == 0 &&
	       strcmp(t.out, "ready\ngot 5: hello\ngot 5: world\nend\n") == 0,
	       "overlap: exited 0, output identical");
	tgt_fini(&t);
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--blocked") == 0) {
		run_blocked(argv[2]);
		run_overlap(argv[2]);
	}
	else if (argc == 4 && strcmp(argv[1], "--memory") == 0)
		run_memory(argv[2], atoi(argv[3]));
	else if (argc >= 3 && strcmp(argv[1], "--postcall") == 0)
		for (int i = 2; i < argc; i++)
			run_postcall(argv[i]);
	else
		tap_ok(0, "usage: inst_funcreloc_free --blocked FR_BLOCK | "
		       "--memory FRSTORM ROUNDS | --postcall FR_POSTCALL...");
	return tap_done();
}

/*
 * corpus_inst.c - the instrumented robustness corpus: a real
 * program runs its workload once directly and once under hunch's engine
 * (launched stopped at main with the runtime library), with an entry
 * counter and an exit counter at every point of every function of the
 * executable and of its own shared libraries (every loaded module except
 * libc, ld.so, libm, libpthread, libdl, librt and hunch's runtime
 * library), plus the libc functions hunch's default metrics use (sync,
 * I/O, allocation).
 *
 * Checks: the instrumented run ends with the same status, writes
 * byte-identical stdout, does not crash; every module has at least one
 * function counted > 0; and entry count == exit count for every LEAF
 * function (no call instruction, so it cannot leave abnormally through
 * longjmp, exit or an exception) whose entry and all exits were
 * instrumented.
 *
 * It reports, per module, the functions instrumented entirely with jmp
 * patches, those with at least one trap point, and those refused (at
 * least one point refused, or no point at all), and the time to parse
 * and to commit.  Refused functions with reasons go to
 * OUTDIR/<name>.refused; trap functions to OUTDIR/<name>.trap.
 *
 *   corpus_inst OUTDIR NAME STDIN [--used=LIB]... [--balanced=FUNC]...
 *               [--stripped] PROGRAM ARG...
 *
 * "Counted > 0" is asserted for the executable (when the symbol table
 * knows any of its functions), for libc, and for each --used=LIB (file
 * name, e.g. libsqlite3.so.0); other libraries the program links may not
 * be called by the workload at all (readline with stdin not a terminal)
 * and are only reported.
 *
 * --stripped asserts that the executable is stripped and that its
 * functions found from the unwind table alone (no symbol: named
 * "<module>+0x<offset>", engine/eng_sym_fde.c) are counted like any
 * other: at least one counted > 0, and entries == exits for every one
 * of them that is a fully instrumented leaf (their number is printed).
 *
 * --balanced=FUNC asserts entries == exits (and > 0) for a function of
 * the executable that is not a leaf but returns only by its `ret`s
 * (python3.11's _PyEval_EvalFrameDefault, whose nameless cold part
 * once made 278 jumps count as exits: engine/eng_coldpart.c).
 */
#include "eng_funcreloc.h"
#include "eng_points.h"
#include "inst_util.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *const libc_fns[] = {
	"pthread_mutex_lock", "pthread_mutex_trylock", "pthread_mutex_unlock",
	"pthread_mutex_timedlock", "pthread_cond_wait",
	"pthread_cond_timedwait", "pthread_cond_signal",
	"pthread_cond_broadcast", "pthread_rwlock_rdlock",
	"pthread_rwlock_wrlock", "pthread_rwlock_tryrdlock",
	"pthread_rwlock_trywrlock", "pthread_rwlock_unlock",
	"pthread_barrier_wait", "sem_wait", "sem_trywait", "sem_timedwait",
	"sem_post", "read", "write", "pread64", "pwrite64", "readv",
	"writev", "fsync", "fdatasync", "send", "recv", "sendto",
	"recvfrom", "malloc", "free", "realloc", "calloc", NULL
};

static const char *const skip_libs[] = {
	"libc.so", "ld-linux", "libm.so", "libpthread.so", "libdl.so",
	"librt.so", "libhunchrt", "linux-vdso", NULL
};

struct fn {
	const struct eng_func *f;
	const struct x86_func *xf;
	uint32_t entry_var, exit_var;
	uint64_t entry_h, exit_h;
	size_t npts, nentry, nexit, nexit_pts, ncall, ntrap, nrefused;
	const char *why;
	uint32_t *req;
	uint8_t *kind;
};

struct mod {
	char name[256];
	struct eng_image *img;
	uint64_t base;
	bool libc;
	struct fn *fns;
	size_t n;
	size_t njmp, ntrap, nref, ncounted, nreloc;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Wait for the end, handling ptrace reports (every trap point costs
 * one) and ticking the sampler every 50 ms rather than after every
 * poll as tgt_wait_exit does (a tick reads thousands of variables). */
static int wait_end(struct tgt *t, double seconds)
{
	double end = now_s() + seconds, tick = 0;
	struct eng_event ev[64];

	while (!t->ended && now_s() < end) {
		int n = eng_ptrace_poll_events(t->p, ev, 64, 5);

		tgt_take_events(t, ev, n);
		if (n < 0)
			usleep(2000);
		if (now_s() >= tick) {
			eng_sampler_tick(t->smp, NULL);
			tick = now_s() + 0.05;
		}
	}
	tgt_pump(t, 10);
	return t->ended ? 0 : -1;
}

static bool skipped(const char *base)
{
	for (size_t i = 0; skip_libs[i]; i++)
		if (strncmp(base, skip_libs[i], strlen(skip_libs[i])) == 0)
			return true;
	return false;
}

/* Run directly: stdin from `in`, stdout to `out`; the wait status. */
static int run_direct(char **argv, const char *in, const char *out)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		int i = open(in, O_RDONLY), o = open(out, O_WRONLY | O_CREAT |
						     O_TRUNC, 0644);
		dup2(i, 0);
		dup2(o, 1);
		execv(argv[0], argv);
		_exit(127);
	}
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st);
}

static int same_file(const char *a, const char *b, size_t *len)
{
	FILE *fa = fopen(a, "re"), *fb = fopen(b, "re");
	int ca, cb, same = fa && fb;

	*len = 0;
	while (same) {
		ca = getc(fa);
		cb = getc(fb);
		if (ca != cb)
			same = 0;
		if (ca == EOF || cb == EOF)
			break;
		(*len)++;
	}
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	return same;
}

static void prepare(struct tgt *t, struct eng_points_cache *pc,
		    struct mod *m, const char *const *names)
{
	size_t nf = eng_image_nfuncs(m->img);

	m->fns = calloc(nf + 1, sizeof *m->fns);
	for (size_t i = 0; i < nf; i++) {
		const struct eng_func *f = eng_image_func(m->img, i);
		struct fn *c;
		struct hunch_err err = { 0 };

		if (names) {
			size_t k;

			for (k = 0; names[k]; k++)
				if (strcmp(names[k], f->name) == 0)
					break;
			if (names[k] == NULL)
				continue;
			/* one symbol per address (aliases) */
			for (k = 0; k < m->n; k++)
				if (m->fns[k].f->addr == f->addr)
					break;
			if (k < m->n)
				continue;
		}
		c = &m->fns[m->n++];
		c->f = f;
		c->xf = eng_points_of(pc, m->img, f, &err);
		eng_sampler_var_alloc(t->smp, ENG_VAR_COUNTER, &c->entry_var,
				      &c->entry_h, NULL);
		eng_sampler_var_alloc(t->smp, ENG_VAR_COUNTER, &c->exit_var,
				      &c->exit_h, NULL);
		if (c->xf == NULL)
			c->why = err.msg[0] ? strdup(err.msg) : "parse error";
	}
}

static size_t queue(struct tgt *t, struct mod *m)
{
	size_t n = 0;

	for (size_t i = 0; i < m->n; i++) {
		struct fn *c = &m->fns[i];
		const struct x86_func *xf = c->xf;

		if (xf == NULL)
			continue;
		c->req = calloc(xf->npoints + 1, sizeof *c->req);
		c->kind = calloc(xf->npoints + 1, 1);
		for (size_t k = 0; k < xf->npoints; k++) {
			const struct x86_point *xp = &xf->points[k];
			struct x86_snip s = { .kind = X86_SN_ADD, .delta = 1 };
			struct eng_inst_point pt;
			struct hunch_err err = { 0 };

			if (xp->kind == X86_PT_CALL) {
				c->ncall++;
				continue;
			}
			if (xp->kind == X86_PT_EXIT)
				c->nexit_pts++;
			s.handle = xp->kind == X86_PT_ENTRY ? c->entry_h
							    : c->exit_h;
			eng_inst_point_from(xp, m->base, &pt);
			if (eng_inst_add(t->in, &pt, &s, 1, false,
					 &c->req[c->npts], &err) < 0) {
				c->nrefused++;
				c->why = strdup(err.msg);
				continue;
			}
			if (!xp->ok)
				c->ntrap++;
			c->kind[c->npts++] = (uint8_t)xp->kind;
			n++;
		}
		if (xf->npoints == 0 && c->why == NULL)
			c->why = xf->why ? x86_refusal_str(xf->why) : "no points";
	}
	return n;
}

static bool relocated(struct tgt *t, struct mod *m, const struct eng_func *f)
{
	uint64_t lo, hi;

	return eng_funcreloc_copy_range(t->in, m->base + f->addr,
					m->base + f->addr + f->size, &lo,
					&hi) == 1;
}

static void settle(struct tgt *t, struct mod *m, FILE *ref, FILE *trap)
{
	for (size_t i = 0; i < m->n; i++) {
		struct fn *c = &m->fns[i];
		size_t hasentry = 0;

		if (relocated(t, m, c->f))
			c->ntrap = 0;   /* its points are jmps in the copy */

		for (size_t k = 0; k < c->npts; k++) {
			enum eng_refusal why = ENG_REFUSAL_NONE;

			if (eng_inst_state(t->in, c->req[k], &why) ==
			    ENG_REQ_FAILED) {
				c->nrefused++;
				if (c->why == NULL)
					c->why = why ? eng_refusal_str(why)
						     : "refused";
			} else if (c->kind[k] == X86_PT_ENTRY) {
				c->nentry++;
				hasentry = 1;
			} else {
				c->nexit++;
			}
		}
		if (!hasentry && c->why == NULL)
			c->why = "no entry point";
		if (c->why != NULL || c->nrefused) {
			m->nref++;
			fprintf(ref, "%s\t%s\t%#llx\t%s\n", m->name, c->f->name,
				(unsigned long long)c->f->addr, c->why);
		} else if (c->ntrap) {
			const char *tw = NULL;

			for (size_t k = 0; k < c->xf->npoints; k++)
				if (!c->xf->points[k].ok &&
				    c->xf->points[k].kind != X86_PT_CALL)
					tw = x86_refusal_str(
						c->xf->points[k].why);
			m->ntrap++;
			fprintf(trap, "%s\t%s\t%#llx\t%zu trap points\t%s\n",
				m->name, c->f->name,
				(unsigned long long)c->f->addr, c->ntrap,
				tw ? tw : "");
		} else if (relocated(t, m, c->f)) {
			m->nreloc++;
		} else {
			m->njmp++;
		}
	}
}

int main(int argc, char **argv)
{
	const char *outdir, *name, *in;
	char **pargv, path[4096], dout[4096], hout[4096];
	struct eng_points_cache *pc;
	struct hunch_err err = { 0 };
	struct mod mods[32];
	size_t nmods = 0, npts = 0, total_refused = 0, total_fns = 0;
	size_t len, mism = 0, leaves = 0, nused = 0, nbal = 0, nbal_seen = 0;
	size_t fde_leaves = 0, fde_mism = 0, fde_counted = 0;
	bool stripped = false;
	const char *used[8], *bal[4];
	double tdirect;
	int dst, in_fd, out_fd, failed, same;
	double t0, tparse, tcommit, trun;
	struct tgt t;
	FILE *ref, *trap;

	if (argc < 5) {
		tap_ok(0, "usage: corpus_inst OUTDIR NAME STDIN PROGRAM ARG...");
		return tap_done();
	}
	outdir = argv[1];
	name = argv[2];
	in = argv[3];
	pargv = argv + 4;
	for (; pargv[0] != NULL && strncmp(pargv[0], "--", 2) == 0; pargv++) {
		if (strncmp(pargv[0], "--used=", 7) == 0 && nused < 8)
			used[nused++] = pargv[0] + 7;
		else if (strncmp(pargv[0], "--balanced=", 11) == 0 && nbal < 4)
			bal[nbal++] = pargv[0] + 11;
		else if (strcmp(pargv[0], "--stripped") == 0)
			stripped = true;
	}
	snprintf(dout, sizeof dout, "%s/%s.direct.out", outdir, name);
	snprintf(hout, sizeof hout, "%s/%s.inst.out", outdir, name);
	t0 = now_s();
	dst = run_direct(pargv, in, dout);
	tdirect = now_s() - t0;
	tap_diag("%s: direct run status %d, %.2f s", name, dst, tdirect);

	in_fd = open(in, O_RDONLY | O_CLOEXEC);
	out_fd = open(hout, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (!tap_ok(in_fd >= 0 && out_fd >= 0 &&
		    tgt_launch_fds(&t, pargv[0], pargv, in_fd, out_fd) == 0,
		    "%s: launched under hunch, stopped at main", name))
		return tap_done();
	if (eng_points_cache_new(&pc, &err) < 0)
		return tap_ok(0, "points cache: %s", err.msg), tap_done();

	/* The executable, its own libraries, then libc's metric functions. */
	t0 = now_s();
	for (size_t i = 0; i < eng_solib_nmodules(t.p) && nmods < 31; i++) {
		const struct eng_module *em = eng_solib_module(t.p, i);
		const char *b = strrchr(em->path, '/');
		struct mod *m = &mods[nmods];
		bool libc;

		b = b ? b + 1 : em->path;
		libc = strncmp(b, "libc.so", 7) == 0;
		if (em->path[0] != '/' || (skipped(b) && !libc))
			continue;
		memset(m, 0, sizeof *m);
		snprintf(m->name, sizeof m->name, "%s", b);
		if (i == 0) {
			m->img = t.img;
		} else if (eng_image_open(em->path, &m->img, &err) < 0) {
			tap_diag("%s: cannot open %s: %s", name, em->path,
				 err.msg);
			continue;
		}
		m->base = em->bias + eng_image_link_base(m->img);
		m->libc = libc;
		/* whole-function relocation first, traps after (unless
		 * HUNCH_NO_FUNCRELOC=1, to compare) */
		if (getenv("HUNCH_NO_FUNCRELOC") == NULL &&
		    eng_funcreloc_image(t.in, pc, m->img, m->base, &err) < 0)
			tap_diag("%s: %s: no relocation: %s", name, m->name,
				 err.msg);
		prepare(&t, pc, m, libc ? libc_fns : NULL);
		nmods++;
	}
	tparse = now_s() - t0;
	t0 = now_s();
	for (size_t i = 0; i < nmods; i++)
		npts += queue(&t, &mods[i]);
	failed = eng_inst_commit(t.in, &err);
	tcommit = now_s() - t0;
	tap_ok(failed >= 0, "%s: %zu points queued and committed (%s)", name,
	       npts, failed < 0 ? err.msg : "ok");
	tap_diag("%s: parse %.2f s, queue+commit %.2f s", name, tparse,
		 tcommit);

	snprintf(path, sizeof path, "%s/%s.refused", outdir, name);
	ref = fopen(path, "we");
	snprintf(path, sizeof path, "%s/%s.trap", outdir, name);
	trap = fopen(path, "we");
	for (size_t i = 0; i < nmods; i++) {
		struct mod *m = &mods[i];

		settle(&t, m, ref ? ref : stderr, trap ? trap : stderr);
		total_refused += m->nref;
		total_fns += m->n;
		tap_diag("%s: %s: %zu functions: %zu jmp, %zu relocated, %zu "
			 "trap, %zu refused (%.2f%% instrumented, %.2f%% "
			 "without traps)", name, m->name, m->n, m->njmp,
			 m->nreloc, m->ntrap, m->nref,
			 m->n ? 100.0 * (double)(m->njmp + m->nreloc +
						 m->ntrap) / (double)m->n : 0.0,
			 m->n ? 100.0 * (double)(m->njmp + m->nreloc) /
				(double)m->n : 0.0);
	}
	if (ref)
		fclose(ref);
	if (trap)
		fclose(trap);

	t0 = now_s();
	eng_ptrace_resume_all(t.p, NULL);
	tap_ok(wait_end(&t, 280) == 0, "%s: ended", name);
	trun = now_s() - t0;
	tap_diag("%s: instrumented run %.2f s (direct %.2f s)", name, trun,
		 tdirect);
	tap_ok(t.status >= 0, "%s: no crash (status %d)", name, t.status);
	tap_eq(t.status, dst, "%s: same exit status as the direct run", name);
	same = same_file(dout, hout, &len);
	tap_ok(same, "%s: stdout byte-identical (%zu bytes compared)", name,
	       len);

	for (size_t i = 0; i < nmods; i++) {
		struct mod *m = &mods[i];
		uint64_t total = 0;
		bool must;

		for (size_t k = 0; k < m->n; k++) {
			struct fn *c = &m->fns[k];
			struct eng_var_agg a, b;

			if (c->npts == 0)
				continue;
			eng_sampler_var_agg(t.smp, c->entry_var, &a);
			eng_sampler_var_agg(t.smp, c->exit_var, &b);
			if (a.sum > 0)
				m->ncounted++;
			if (i == 0 && c->f->from_fde && a.sum > 0)
				fde_counted++;
			if (c->ntrap && a.sum + b.sum > 100000)
				tap_diag("%s: %s: %s: %lld entries, %lld exits"
					 " through %zu trap points", name,
					 m->name, c->f->name, (long long)a.sum,
					 (long long)b.sum, c->ntrap);
			total += (uint64_t)a.sum;
			for (size_t u = 0; i == 0 && u < nbal; u++)
				if (strcmp(bal[u], c->f->name) == 0 &&
				    ++nbal_seen)
					tap_ok(a.sum > 0 && a.sum == b.sum &&
					       c->nexit == c->nexit_pts,
					       "%s: %s: %lld entries == %lld "
					       "exits (%zu of %zu exit points)",
					       name, bal[u], (long long)a.sum,
					       (long long)b.sum, c->nexit,
					       c->nexit_pts);
			if (c->ncall == 0 && c->nentry == 1 && c->nexit > 0 &&
			    c->nexit == c->nexit_pts && c->nrefused == 0) {
				leaves++;
				fde_leaves += i == 0 && c->f->from_fde;
				if (a.sum != b.sum) {
					mism++;
					fde_mism += i == 0 && c->f->from_fde;
					tap_diag("%s: %s: %s: %lld entries, "
						 "%lld exits", name, m->name,
						 c->f->name, (long long)a.sum,
						 (long long)b.sum);
				}
			}
		}
		if (m->njmp + m->nreloc + m->ntrap == 0) {
			/* Neither a symbol nor an FDE names any function. */
			tap_diag("%s: %s: no function known to the symbol "
				 "or unwind tables: nothing to count", name,
				 m->name);
			continue;
		}
		must = i == 0 || m->libc;
		for (size_t u = 0; u < nused; u++)
			if (strcmp(used[u], m->name) == 0)
				must = true;
		if (!must) {
			/* Linked but maybe not called by this workload
			 * (readline when stdin is not a terminal, libz
			 * when nothing is compressed): reported only. */
			tap_diag("%s: %s: %zu functions counted > 0 (%llu "
				 "entries)%s", name, m->name, m->ncounted,
				 (unsigned long long)total, m->ncounted ? "" :
				 ": not called by this workload");
			continue;
		}
		tap_ok(m->ncounted > 0, "%s: %s: %zu functions counted > 0 "
		       "(%llu entries)", name, m->name, m->ncounted,
		       (unsigned long long)total);
	}
	if (nbal_seen != nbal)
		tap_ok(0, "%s: %zu of the %zu --balanced functions found in "
		       "the executable", name, nbal_seen, nbal);
	tap_ok(mism == 0, "%s: entries == exits for all %zu fully "
	       "instrumented leaf functions (%zu differ)", name, leaves, mism);
	if (stripped) {
		tap_ok(nmods > 0 && eng_image_stripped(mods[0].img) &&
		       fde_counted > 0, "%s: %s is stripped, and %zu of its "
		       "functions found from the unwind table alone were "
		       "counted > 0", name, mods[0].name, fde_counted);
		tap_ok(fde_leaves > 0 && fde_mism == 0, "%s: entries == exits "
		       "for all %zu of them that are fully instrumented leaf "
		       "functions (%zu differ)", name, fde_leaves, fde_mism);
	}
	tap_diag("%s: %zu functions in %zu modules, %zu refused", name,
		 total_fns, nmods, total_refused);
	tgt_fini(&t);
	return tap_done();
}

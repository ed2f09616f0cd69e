/*
 * bench_inst.c - cost of hunch's instrumentation on a micro target
 * (micro.c: mb_f called N times), against uftrace and bpftrace, and the
 * time to insert and remove instrumentation on 1,000 functions of a
 * running 8-thread process (the storm target).  Every row is measured
 * in the same run; ratios are against the uninstrumented run.
 *
 *   bench_inst MICRO STORM [N]
 */
#include "inst_util.h"
#include "eng_funcreloc.h"
#include "eng_points.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

enum mode { M_NONE, M_COUNTER, M_WALL, M_CPU, M_TRAP, M_TRAP_DETACHED,
	    M_PAIR, M_PAIR_RELOC, M_PAIR_TRAP, M_NONE_G };

static const char *const mode_name[] = {
	"uninstrumented (under hunch)", "hunch entry counter",
	"hunch entry+exit wall timer", "hunch entry+exit CPU timer",
	"hunch trap fallback (attached)", "hunch trap fallback (detached)",
	"entry+exit counters, jmp patch (mb_f)",
	"entry+exit counters, relocated (mb_g)",
	"entry+exit counters, traps (mb_g, attached)",
	"uninstrumented mb_g (under hunch)",
};

/* mb_g's entry and exit counters, through whole-function relocation
 * (real parser; the exit's ret is a branch target) or, with `trap`,
 * through the trap fallback. */
static int instrument_g(struct tgt *t, bool trap)
{
	const struct eng_func *f = eng_sym_lazy_func_by_name(t->img, "mb_g");
	struct eng_points_cache *pc = NULL;
	const struct x86_func *xf;
	uint32_t var, id;
	uint64_t h;
	int n = 0;

	if (f == NULL || eng_points_cache_new(&pc, NULL) < 0 ||
	    (xf = eng_points_of(pc, t->img, f, NULL)) == NULL)
		return -1;
	if (!trap && eng_funcreloc_image(t->in, pc, t->img, t->base, NULL) < 0)
		return -1;
	eng_sampler_var_alloc(t->smp, ENG_VAR_COUNTER, &var, &h, NULL);
	for (size_t k = 0; k < xf->npoints; k++) {
		struct x86_snip s = { .kind = X86_SN_ADD, .handle = h,
				      .delta = 1 };
		struct eng_inst_point pt;

		if (xf->points[k].kind == X86_PT_CALL)
			continue;
		eng_inst_point_from(&xf->points[k], t->base, &pt);
		pt.trap = pt.trap || trap;
		n += eng_inst_add(t->in, &pt, &s, 1, false, &id, NULL) == 0;
	}
	n = eng_inst_commit(t->in, NULL) == 0 ? n : -1;
	/* the cache must outlive the instrumentation manager (tgt_fini) */
	return n;
}

/* Instrument mb_f for `mode`; returns requests added. */
static int instrument(struct tgt *t, enum mode m)
{
	const struct eng_func *f = eng_sym_lazy_func_by_name(t->img, "mb_f");
	struct x86_func xf;
	uint32_t var, id;
	uint64_t h;
	int n = 0;

	if (m == M_PAIR_RELOC || m == M_PAIR_TRAP)
		return instrument_g(t, m == M_PAIR_TRAP);
	if (f == NULL || m == M_NONE || m == M_NONE_G)
		return 0;
	su_parse(t->img, f, &xf);
	eng_sampler_var_alloc(t->smp, m == M_CPU ? ENG_VAR_CPU_TIMER :
			      m == M_WALL ? ENG_VAR_WALL_TIMER : ENG_VAR_COUNTER,
			      &var, &h, NULL);
	for (size_t k = 0; k < xf.npoints; k++) {
		bool entry = xf.points[k].kind == X86_PT_ENTRY;
		struct x86_snip s = { .kind = X86_SN_ADD, .handle = h,
				      .delta = 1 };
		struct eng_inst_point pt;

		if (xf.points[k].kind == X86_PT_CALL)
			continue;

		if (m == M_WALL)
			s.kind = entry ? X86_SN_WALL_START : X86_SN_WALL_STOP;
		else if (m == M_CPU)
			s.kind = entry ? X86_SN_CPU_START : X86_SN_CPU_STOP;
		else if (!entry && m != M_PAIR)
			continue;          /* counters: entry only */
		eng_inst_point_from(&xf.points[k], t->base, &pt);
		if (m == M_TRAP || m == M_TRAP_DETACHED)
			pt.trap = true;
		n += eng_inst_add(t->in, &pt, &s, 1, false, &id, NULL) == 0;
	}
	su_free(&xf);
	return eng_inst_commit(t->in, NULL) == 0 ? n : -1;
}

/* The thread's CPU ns per call (robust on a loaded machine), or with
 * `wall` the wall-clock ns (for rows whose cost is in another process:
 * ptrace stops while hunch is attached). */
static bool use_wall;

static double parse_ns(const char *out)
{
	const char *p = strstr(out, "ns/call ");
	const char *c = strstr(out, " cpu ");

	if (p == NULL)
		return -1;
	return use_wall || c == NULL ? atof(p + 8) : atof(c + 5);
}

static double run_micro(const char *micro, enum mode m, long n)
{
	bool g = m == M_PAIR_RELOC || m == M_PAIR_TRAP || m == M_NONE_G;
	char arg[32], *argv[] = { (char *)micro, arg, g ? "g" : NULL, NULL };
	struct tgt t;
	double ns = -1;

	snprintf(arg, sizeof arg, "%ld", n);
	if (tgt_launch(&t, micro, argv) < 0)
		return -1;
	if (instrument(&t, m) < 0 && m != M_NONE) {
		tgt_fini(&t);
		return -1;
	}
	if (m == M_TRAP_DETACHED) {
		pid_t pid = eng_proc_pid(t.p);
		char buf[256];
		size_t len = 0;
		ssize_t k;
		int st;

		eng_detach(t.p, NULL);
		fcntl(t.from, F_SETFL, 0);
		while ((k = read(t.from, buf + len, sizeof buf - 1 - len)) > 0)
			len += (size_t)k;
		buf[len] = 0;
		waitpid(pid, &st, 0);
		ns = parse_ns(buf);
	} else {
		eng_ptrace_resume_all(t.p, NULL);
		if (tgt_wait_exit(&t, 600000) == 0)
			ns = parse_ns(t.out);
	}
	tgt_fini(&t);
	return ns;
}

/* The target's own line from a command line, or -1. */
static double run_cmd(const char *cmd)
{
	char buf[4096];
	size_t len = 0, k;
	FILE *f = popen(cmd, "r");

	if (f == NULL)
		return -1;
	while ((k = fread(buf + len, 1, sizeof buf - 1 - len, f)) > 0)
		len += k;
	buf[len] = 0;
	pclose(f);
	return parse_ns(buf);
}

static void row(const char *what, long n, double ns, double base)
{
	if (ns < 0) {
		printf("| %-36s | %11ld | %9s | %9s | %7s |\n", what, n, "n/a",
		       "", "");
		return;
	}
	printf("| %-36s | %11ld | %9.2f | %9.2f | %6.1fx |\n", what, n, ns,
	       ns - base, base > 0 ? ns / base : 0);
	fflush(stdout);
}

#define ROUNDS 9

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void insert_remove(const char *storm)
{
	double ins[ROUNDS], rem[ROUNDS];
	char *argv[] = { (char *)storm, NULL };
	struct eng_inst_stats st;
	struct fn_ctr *c;
	size_t n;
	struct tgt t;
	int pts;

	if (tgt_launch(&t, storm, argv) < 0)
		return;
	c = fns_prepare(&t, "sf_", &n);
	eng_ptrace_resume_all(t.p, NULL);
	tgt_pump(&t, 200);
	printf("\n| 1,000 functions of a running 8-thread process | points "
	       "| ms |\n|---|---:|---:|\n");
	for (int round = 0; round < ROUNDS; round++) {
		pts = fns_instrument(&t, c, n, IM_COUNTERS);
		eng_inst_stats(t.in, &st);
		ins[round] = (double)st.last_commit_ns / 1e6;
		tgt_pump(&t, 100);
		fns_remove(&t, c, n);
		eng_inst_stats(t.in, &st);
		rem[round] = (double)st.last_commit_ns / 1e6;
		tgt_pump(&t, 100);
	}
	qsort(ins + 1, ROUNDS - 1, sizeof *ins, cmpd);
	qsort(rem, ROUNDS, sizeof *rem, cmpd);
	printf("| insert entry+exit counters, first time (generate "
	       "everything, map trampoline memory) | %d | %.1f |\n", pts,
	       ins[0]);
	printf("| insert again (base trampolines kept): median of %d | %d | "
	       "%.1f |\n", ROUNDS - 1, pts, ins[ROUNDS / 2]);
	printf("| remove them: median of %d (min %.1f, max %.1f) | %d | %.1f |\n",
	       ROUNDS, rem[0], rem[ROUNDS - 1], pts, rem[ROUNDS / 2]);
	tgt_send(&t, "stop\n");
	tgt_wait_exit(&t, 60000);
	fns_free(c, n);
	tgt_fini(&t);
}

int main(int argc, char **argv)
{
	long n = argc > 3 ? atol(argv[3]) : 100000000L;
	long nt = 1000000, nu = 1000000, nb = 100000;
	char cmd[8192];
	double base, ns;

	if (argc < 3) {
		fprintf(stderr, "usage: bench_inst MICRO STORM [N]\n");
		return 2;
	}
	argv[1] = realpath(argv[1], NULL);   /* the commands cd elsewhere */
	if (argv[1] == NULL)
		return 2;
	printf("ns per call in the target thread's CPU time (wall time for "
	       "the attached trap row)\n\n"
	       "| what | calls | ns/call | added ns | ratio |\n"
	       "|---|---:|---:|---:|---:|\n");
	base = run_micro(argv[1], M_NONE, n);
	row(mode_name[M_NONE], n, base, base);
	for (enum mode m = M_COUNTER; m <= M_CPU; m++)
		row(mode_name[m], n, run_micro(argv[1], m, n), base);
	use_wall = true;     /* the cost is in hunch's ptrace stops */
	row(mode_name[M_TRAP], nt / 100, run_micro(argv[1], M_TRAP, nt / 100),
	    base);
	use_wall = false;
	row(mode_name[M_TRAP_DETACHED], nt,
	    run_micro(argv[1], M_TRAP_DETACHED, nt), base);
	snprintf(cmd, sizeof cmd, "command -v uftrace >/dev/null && cd /tmp && "
		 "uftrace record -P mb_f -d /tmp/hunch-bench-uftrace %s %ld "
		 "2>/dev/null; rm -rf /tmp/hunch-bench-uftrace", argv[1], nu);
	ns = run_cmd(cmd);
	if (ns < 0)
		printf("| uftrace record -P: not available (apt-get install "
		       "uftrace) | | | | |\n");
	else
		row("uftrace record -P mb_f", nu, ns, base);
	snprintf(cmd, sizeof cmd, "command -v bpftrace >/dev/null && "
		 "bpftrace -e 'uprobe:%s:mb_f { @e = count(); } "
		 "uretprobe:%s:mb_f { @r = count(); }' -c '%s %ld' "
		 "2>/dev/null", argv[1], argv[1], argv[1], nb);
	ns = run_cmd(cmd);
	if (ns < 0)
		printf("| bpftrace uprobe+uretprobe: not available (needs root "
		       "and apt-get install bpftrace) | | | | |\n");
	else
		row("bpftrace uprobe+uretprobe count", nb, ns, base);
	printf("\n| entry+exit counters: patched, relocated, trapped | calls "
	       "| ns/call | added ns | ratio |\n|---|---:|---:|---:|---:|\n");
	row(mode_name[M_PAIR], n, run_micro(argv[1], M_PAIR, n), base);
	base = run_micro(argv[1], M_NONE_G, n);
	row(mode_name[M_NONE_G], n, base, base);
	row(mode_name[M_PAIR_RELOC], n, run_micro(argv[1], M_PAIR_RELOC, n),
	    base);
	use_wall = true;
	row(mode_name[M_PAIR_TRAP], nt / 100,
	    run_micro(argv[1], M_PAIR_TRAP, nt / 100), base);
	use_wall = false;
	insert_remove(argv[2]);
	return 0;
}

/*
 * inst_catchup_samples.c - catchup of inner functions dated by stack
 * samples, the second half of inst_catchup
 * (progs/inst_inner.c; engine/README.md, Catchup).  The engine's stack
 * sampler runs from launch at RATE samples per second of thread CPU.
 *
 * spin: cu_inner (called by cu_helper, called by main) has been spinning
 * for 1 s when a wall and a CPU timer are enabled on it.  Catchup finds
 * the activation in the samples (from_samples) and starts both timers
 * where the first sample saw it, at most one sample period (of CPU time)
 * after it began.  Bounds from the target's own clocks (it prints when
 * cu_inner began, wall and thread CPU):
 *   wall: now_before - begin - 50 ms <= first sample <= now_after - begin
 *   CPU:  cpu_before - cpu_begin - 2 periods - 1% <= first <= cpu_after -
 *         cpu_begin + 1%
 * (1 ms more on the upper bounds: the target reads its clocks a moment
 * after cu_inner's first instruction, where a sample may already land;
 * 1% of the span on the CPU bounds: the samples' CPU clock (perf's count)
 * runs 2-15% faster than schedstat's in this VM, by the steal time, and
 * catchup maps one to the other between the readings of both taken at
 * each drain, engine/README.md, Catchup).
 *
 * reenter: cu_caller calls cu_short 1,000,000 times, a few us each, all
 * from the same call site with the same stack pointer, so every call is
 * the "same" activation (CFA and return address) to the samples: catchup
 * starts the timer at the oldest sample of the run, long before the
 * current call began.  What that counts too much is exactly the time the
 * thread spent outside cu_short since then (the timer counts time in
 * cu_short; the calls before the current one were time in cu_short
 * too).  The target sums that outside time itself (rdtsc at the edges of
 * cu_short, logged per TSC slot), so the test bounds the overstatement:
 *   overstatement = V0 - (time in cu_short since the run began)
 *                <= V0 - ((now - since) - outside(since, now))
 * with V0 the timer read at catchup.  Its part while the thread was on a
 * CPU (gaps under 50 us) is what the samples could have seen, and must be
 * a few ms at most (<= 5 ms; expected: the share of time outside, ~0.1%
 * as the target measures it with its rdtsc reads, times the ~1 s run,
 * under 3 ms even on an idle machine); the off-CPU part (the thread
 * preempted between two calls, which no CPU-time sample can see) is
 * shown.
 */
#include "inst_util.h"
#include "tap.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eng_clock.h"
#include "eng_perfsample.h"
#include "inst_catchup.h"

/* The first sample of an activation comes up to one period of the
 * thread's CPU after it began, which under load (a thread getting 5% of
 * a CPU) is 20 times as long in wall time: a fast rate keeps that under
 * the 50 ms the wall bound allows, and 4096 samples kept (4 s of CPU)
 * still reach back past the second before enabling. */
#define RATE 999.0                     /* samples per CPU second */
#define KEEP 4096
#define PERIOD_NS (1e9 / RATE)
#define SLOTS 65536
#define SLOT_SHIFT 20

struct cu_log {                        /* as in progs/inst_inner.c */
	uint64_t tsc0, out, long_out, long_ticks, calls;
	uint64_t slot_out[SLOTS];
	uint64_t slot_long[SLOTS];
};

static uint64_t mono_ns(void)
{
	return clock_mono_ns();
}

static uint64_t thread_cpu(pid_t pid)
{
	char path[64];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", (int)pid,
		 (int)pid);
	f = fopen(path, "r");
	if (f != NULL) {
		if (fscanf(f, "%llu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

/* TSC ticks per ns, measured here against CLOCK_MONOTONIC. */
static double tsc_per_ns(void)
{
	uint64_t t0 = eng_rdtsc(), n0 = mono_ns(), n1;

	do
		n1 = mono_ns();
	while (n1 - n0 < 20000000);
	return (double)(eng_rdtsc() - t0) / (double)(n1 - n0);
}

/* Pump events and drain the samples often: a ring holds ~30 samples. */
static void pump(struct tgt *t, struct eng_perfsample *ps, int ms)
{
	uint64_t end = mono_ns() + (uint64_t)ms * 1000000u;

	do {
		tgt_pump(t, 10);
		eng_perfsample_drain(ps, NULL, NULL);
	} while (mono_ns() < end);
}

static const char *find_line(const struct tgt *t, const char *prefix)
{
	const char *p = t->out;
	size_t n = strlen(prefix);

	for (; p != NULL && *p != '\0'; p = strchr(p, '\n'), p = p ? p + 1 : p)
		if (strncmp(p, prefix, n) == 0 && strchr(p, '\n') != NULL)
			return p;
	return NULL;
}

static int wait_line(struct tgt *t, struct eng_perfsample *ps,
		     const char *prefix, int ms)
{
	uint64_t end = mono_ns() + (uint64_t)ms * 1000000u;

	while (find_line(t, prefix) == NULL) {
		if (t->ended || mono_ns() > end)
			return -1;
		pump(t, ps, 10);
	}
	return 0;
}

/* Launch `mode` with the stack sampler running from main on. */
static int start(struct tgt *t, struct eng_perfsample **ps, const char *prog,
		 char *mode)
{
	char *av[] = { (char *)prog, mode, NULL };
	struct hunch_err err = { 0 };

	if (tgt_launch(t, prog, av) != 0)
		return -1;
	if (eng_perfsample_open(eng_proc_pid(t->p), RATE, ps, &err) < 0 ||
	    eng_perfsample_set_keep(*ps, KEEP) < 0 ||
	    eng_perfsample_sync_threads(*ps) != 1) {
		tap_diag("sampler: %s", err.msg);
		return -1;
	}
	eng_inst_catchup_set_psampler(t->in, *ps);
	return 0;
}

static void spin_case(const char *prog)
{
	struct x86_snip st[2];
	const struct eng_func *f;
	struct eng_catchup_info ci;
	struct hunch_err err = { 0 };
	struct eng_perfsample *ps = NULL;
	struct eng_var_agg aw, ac;
	unsigned long long b_ns = 0, b_cpu = 0;
	uint64_t hw, hc, t_en, a, b, ca, cb;
	uint32_t vw, vc;
	struct x86_func xf;
	struct tgt t;
	pid_t pid;
	double w, c, slack;
	bool ok;

	tap_diag("spin: a function inside for 1 s, as an inner frame");
	if (!tap_ok(start(&t, &ps, prog, "spin") == 0, "launched with the "
		    "stack sampler at %.0f Hz", RATE))
		return;
	pid = eng_proc_pid(t.p);
	f = eng_sym_lazy_func_by_name(t.img, "cu_inner");
	su_parse(t.img, f, &xf);
	eng_sampler_var_alloc(t.smp, ENG_VAR_WALL_TIMER, &vw, &hw, NULL);
	eng_sampler_var_alloc(t.smp, ENG_VAR_CPU_TIMER, &vc, &hc, NULL);
	eng_ptrace_resume_all(t.p, NULL);
	ok = wait_line(&t, ps, "spinning\n", 20000) == 0 &&
	     sscanf(find_line(&t, "begin "), "begin %llu %llu", &b_ns,
		    &b_cpu) == 2;
	tap_ok(ok, "cu_inner began at %llu ns (CPU %llu ns)", b_ns, b_cpu);
	pump(&t, ps, 1000);
	eng_ptrace_stop_all(t.p, NULL);
	t_en = mono_ns();
	tap_ok(add_timer(&t, &xf, hw, false) > 1 &&
	       add_timer(&t, &xf, hc, true) > 1, "wall and CPU timers at "
	       "entry and exits of cu_inner");
	tap_eq(eng_inst_commit(t.in, &err), 0, "inserted (%s)", err.msg);
	st[0] = (struct x86_snip){ .kind = X86_SN_WALL_START, .handle = hw };
	st[1] = (struct x86_snip){ .kind = X86_SN_CPU_START, .handle = hc };
	tap_eq(eng_inst_catchup_info(t.in, t.base + f->addr,
				     t.base + f->addr + f->size, st, 2, &ci,
				     &err), 1, "catchup on the thread inside "
	       "(%s)", err.msg);
	tap_ok(ci.activations == 1 && ci.from_samples == 2 &&
	       ci.from_begin == 0 && ci.from_enable == 0, "both timers start "
	       "where the samples first saw it (from_samples %u, from_begin "
	       "%u, from_enable %u)", ci.from_samples, ci.from_begin,
	       ci.from_enable);
	tap_ok(ci.samples_ns >= b_ns && t_en - b_ns >= 1000000000u,
	       "  enabled %.3f s after it began; first sample %.3f ms after "
	       "it began, a run of %u samples", (double)(t_en - b_ns) / 1e9,
	       (double)(ci.samples_ns - b_ns) / 1e6, ci.samples);
	eng_ptrace_resume_all(t.p, NULL);
	pump(&t, ps, 1000);
	a = mono_ns();
	ca = thread_cpu(pid);
	eng_sampler_tick(t.smp, NULL);
	b = mono_ns();
	cb = thread_cpu(pid);
	eng_sampler_var_agg(t.smp, vw, &aw);
	eng_sampler_var_agg(t.smp, vc, &ac);
	w = (double)aw.sum / 1e9;
	c = (double)ac.sum / 1e9;
	tap_ok(w >= (double)(t_en - b_ns) / 1e9 - 0.05 +
		    (double)(a - t_en) / 1e9 &&
	       w <= (double)(b - b_ns) / 1e9 + 0.001, "wall: the first sample "
	       "holds the second before enabling too: %.4f s (%.4f..%.4f)", w,
	       (double)(a - b_ns) / 1e9 - 0.05, (double)(b - b_ns) / 1e9);
	slack = 0.01 * (double)(cb - b_cpu) / 1e9;
	tap_ok(c >= (double)(ca - b_cpu) / 1e9 - 2 * PERIOD_NS / 1e9 - slack &&
	       c <= (double)(cb - b_cpu) / 1e9 + 0.001 + slack, "CPU: the "
	       "first sample holds its CPU time since it began: %.4f s "
	       "(%.4f..%.4f)", c, (double)(ca - b_cpu) / 1e9 -
	       2 * PERIOD_NS / 1e9 - slack,
	       (double)(cb - b_cpu) / 1e9 + 0.001 + slack);
	tap_ok(wait_line(&t, ps, "done 2\n", 30000) == 0, "cu_inner returned");
	eng_inst_commit_remove_all(t.in, NULL);
	tap_eq(tgt_code_mismatches(&t), 0, "every code byte equals the file's");
	tgt_send(&t, "x\n");
	tap_ok(tgt_wait_exit(&t, 10000) == 0 && t.status == 0, "exited 0");
	su_free(&xf);
	tap_diag("sampler: %llu samples, %llu lost",
		 (unsigned long long)eng_perfsample_stats(ps)->samples,
		 (unsigned long long)eng_perfsample_stats(ps)->lost);
	eng_inst_catchup_set_psampler(t.in, NULL);
	eng_perfsample_close(ps);
	tgt_fini(&t);
}

/* Stop the target inside cu_short (it is outside between two calls a
 * fraction of a percent of the time: then try again), insert the timer
 * and catch up.  Returns with the target stopped, or false. */
static bool catch_inside(struct tgt *t, struct eng_perfsample *ps,
			 const struct eng_func *f, const struct x86_func *xf,
			 uint64_t h, struct eng_catchup_info *ci)
{
	struct x86_snip s = { .kind = X86_SN_WALL_START, .handle = h };
	struct hunch_err err = { 0 };

	for (int tries = 0; tries < 10; tries++) {
		eng_ptrace_stop_all(t->p, NULL);
		if (add_timer(t, xf, h, false) < 2 ||
		    eng_inst_commit(t->in, &err) != 0)
			return false;
		if (eng_inst_catchup_info(t->in, t->base + f->addr,
					  t->base + f->addr + f->size, &s, 1,
					  ci, &err) == 1)
			return true;
		tap_diag("stopped outside cu_short (%s): again", err.msg);
		eng_inst_commit_remove_all(t->in, NULL);
		eng_ptrace_resume_all(t->p, NULL);
		pump(t, ps, 20);
	}
	return false;
}

/* Timer v's value with the CLOCK_MONOTONIC moments around its read
 * (a <= read <= b) and the TSC at a, read again until nothing delayed
 * this thread in between (the target is stopped: its timer runs on,
 * the rest stands still). */
static double read_tight(struct tgt *t, uint32_t v, uint64_t *a, uint64_t *b,
			 uint64_t *tsc)
{
	struct eng_var_agg agg = { 0 };

	for (int i = 0; i < 100; i++) {
		*a = mono_ns();
		*tsc = eng_rdtsc();
		eng_sampler_tick(t->smp, NULL);
		eng_sampler_var_agg(t->smp, v, &agg);
		*b = mono_ns();
		if (*b - *a < 1000000)
			break;
	}
	return (double)agg.sum;
}

/* Outside time (ticks) from the slot holding tick `at` to now: an upper
 * bound of the outside time since `at` (the slot's first call began at
 * or before it). */
static void outside_since(const struct cu_log *lg, uint64_t at,
			  uint64_t *out, uint64_t *lng)
{
	uint64_t slot = at > lg->tsc0 ? (at - lg->tsc0) >> SLOT_SHIFT : 0;
	uint64_t next;

	if (slot >= SLOTS)
		slot = SLOTS - 1;
	while (slot > 0 && lg->slot_out[slot] == 0)
		slot--;
	*out = lg->out - (lg->slot_out[slot] ? lg->slot_out[slot] - 1 : 0);
	/* the off-CPU part is counted from the next slot's first call (after
	 * `at`): a lower bound, so what is left is an upper bound */
	for (next = slot + 1; next < SLOTS && lg->slot_long[next] == 0; next++)
		;
	*lng = next < SLOTS ? lg->long_out - (lg->slot_long[next] - 1) : 0;
}

static void reenter_case(const char *prog)
{
	static struct cu_log lg;
	const struct eng_func *f;
	struct eng_catchup_info ci;
	struct eng_perfsample *ps = NULL;
	unsigned long long addr = 0;
	uint64_t h, a, b, tsc, out, lng;
	double tpn, v0, win, over, f_out;
	struct x86_func xf;
	struct tgt t;
	uint32_t v;

	tap_diag("reenter: 1,000,000 calls of a few us from one call site");
	tpn = tsc_per_ns();
	if (!tap_ok(start(&t, &ps, prog, "reenter") == 0, "launched with the "
		    "stack sampler at %.0f Hz", RATE))
		return;
	f = eng_sym_lazy_func_by_name(t.img, "cu_short");
	su_parse(t.img, f, &xf);
	eng_sampler_var_alloc(t.smp, ENG_VAR_WALL_TIMER, &v, &h, NULL);
	eng_ptrace_resume_all(t.p, NULL);
	tap_ok(wait_line(&t, ps, "calling\n", 20000) == 0 &&
	       sscanf(find_line(&t, "log "), "log %llx", &addr) == 1,
	       "cu_caller began");
	pump(&t, ps, 1000);
	if (!tap_ok(catch_inside(&t, ps, f, &xf, h, &ci), "caught up with "
		    "the thread inside cu_short"))
		goto out;
	v0 = read_tight(&t, v, &a, &b, &tsc);
	tap_ok(ci.from_samples == 1 && ci.samples >= 2, "  from the samples "
	       "(from_samples %u, from_enable %u), a run of %u samples",
	       ci.from_samples, ci.from_enable, ci.samples);
	tap_eq(eng_mem_read(t.p, addr, &lg, sizeof(lg), NULL), 0,
	       "read the target's own account of its time outside cu_short");
	win = (double)(a - ci.samples_ns);
	tap_ok(v0 >= win - 1e6 && v0 <= (double)(b - ci.samples_ns) + 1e6,
	       "  the timer started at the run's oldest sample: %.3f ms, "
	       "%.3f ms before", v0 / 1e6, win / 1e6);
	/* `since` in TSC ticks, from the later end: its slot is no later */
	outside_since(&lg, tsc - (uint64_t)((double)(b - ci.samples_ns) * tpn),
		      &out, &lng);
	/* time in cu_short since `since` >= win - out: what the timer holds
	 * beyond that is counted too much */
	over = v0 - (win - (double)out / tpn);
	f_out = (double)lg.out / (double)(tsc - lg.tsc0);
	tap_ok(over - (double)lng / tpn <= 5e6, "overstatement on CPU at most "
	       "a few ms: %.3f ms (outside cu_short %.3f%% of the time, %.0f "
	       "calls, over a %.3f s run; off-CPU outside: %.3f ms more)",
	       (over - (double)lng / tpn) / 1e6, 100 * f_out,
	       (double)lg.calls, win / 1e9, (double)lng / tpn / 1e6);
	tap_diag("the samples alone bound it too: %u in a row inside, so the "
		 "outside share is below %.4f%% with 99.9%% confidence",
		 ci.samples, 100 * 6.9 / ci.samples);
	eng_inst_commit_remove_all(t.in, NULL);
	tap_eq(tgt_code_mismatches(&t), 0, "every code byte equals the file's");
	eng_ptrace_resume_all(t.p, NULL);
	pump(&t, ps, 100);
	tap_ok(!t.ended, "the target runs on");
out:
	su_free(&xf);
	tap_diag("sampler: %llu samples, %llu lost",
		 (unsigned long long)eng_perfsample_stats(ps)->samples,
		 (unsigned long long)eng_perfsample_stats(ps)->lost);
	eng_inst_catchup_set_psampler(t.in, NULL);
	eng_perfsample_close(ps);
	tgt_fini(&t);
}

void catchup_samples(const char *inner, int *n, int *failed)
{
	tap_n = *n;  /* go on numbering where inst_catchup.c is */
	spin_case(inner);
	reenter_case(inner);
	*n = tap_n;
	*failed = tap_failed;
}

/*
 * bench_journal.c - size and cost of the journal of a synthetic search.
 *
 * A 10-minute search (3,000 ticks at 5 Hz) of a program with 10,000
 * functions: the header with a hypotheses document, 10,000 function
 * discoveries, ~100 experiments (node, 5 hints, two metric instances
 * each: predict, enable, reply; state changes, disable), a tick record,
 * samples of every active instance and observed cost at every tick,
 * thread start/exit every 2 s, 25 output lines a second, a user action,
 * the end.  Ticks run back to back (no sleeping).
 *
 * Prints the journal's size (goal: well under 100 MB) and the write cost
 * per tick: records built, serialised and handed to the kernel, against
 * a baseline measured in the same run - write(2) of the same bytes per
 * tick - and against the 200 ms tick.  Scenarios: "typical" (experiments
 * end when they conclude), "worst" (all 200 instances sampled for the
 * whole 10 minutes), each without and with fdatasync at every tick.
 * Then reads the journal back (replay's reading speed) and, when gzip and
 * zstd are installed, shows what compression would save.
 *
 *   ./build/bench/journal/bench_journal [--quick] [--keep] [--dir DIR]
 *
 * --quick: the typical scenario only; --keep: keep its journal to look
 * at (DIR/bench-journal-0.jsonl, or -2 for the worst case).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "jnl_read.h"
#include "jnl_write.h"

#define TICKS 3000
#define HZ 5
#define N_FUNCS 10000
#define N_EXP 100
#define INST_PER_EXP 2
#define FOCUS_FMT "</Code/libcomponents.so/component_%03d.cc/ns::component_%d::Handler::process_item_%d,/Process/4242,/SyncObject,/Files>"

struct scenario {
	const char *name;
	bool worst, sync;
};

struct result {
	uint64_t bytes, records;
	double tick_ns_mean, tick_ns_p50, tick_ns_p99, tick_ns_max;
	double cpu_ns_mean;      /* CPU time of the writing thread */
	double base_ns_mean;
	double total_s;
	double discover_ms;      /* the 10,000 discoveries + their tick */
};

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static uint64_t cpu_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static uint64_t rng = 88172645463325252ull;

static double frand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

/* A why axis of Paradyn's shape, a few KB like the shipped one. */
static json_t *hypotheses(void)
{
	static const char *const names[] = { "CPUbound", "ExcessiveSyncWaitingTime",
		"ExcessiveIOBlockingTime", "TooManySmallIOOps", "ExcessiveLockContention",
		"HighCacheMissRate", "TooManyAllocations", "ExcessivePageFaults",
		"ThreadImbalance", "SlowSyscalls", "FrequentContextSwitches",
		"TooManySmallWrites" };
	json_t *list = json_array();

	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		json_array_append_new(list, json_pack(
			"{s:s,s:s,s:s,s:s,s:f,s:[s,s],s:s}", "name", names[k],
			"parent", k ? "TopLevelHypothesis" : "", "metric",
			"cpu_time_fraction", "compare", ">", "threshold", 0.2,
			"constraints", "/Code", "/Process", "doc",
			"The program spends more than the threshold of its time here; "
			"refine by code and by thread to find where."));
	return json_pack("{s:i,s:o}", "version", 1, "hypotheses", list);
}

static void discover(struct jnl_writer *w)
{
	char fn[128], src[64];
	struct pc_discovery d = { .kind = PC_DISC_PROCESS, .pid = 4242 };

	jnl_write_discovery(w, 0.0, &d);
	for (int k = 0; k < N_FUNCS; k++) {
		snprintf(fn, sizeof(fn), "ns::component_%d::Handler::process_item_%d",
			 k / 50, k);
		snprintf(src, sizeof(src), "component_%03d.cc", k / 50);
		d = (struct pc_discovery){ .kind = PC_DISC_FUNCTION,
			.module = k < 2000 ? "prog" : "libcomponents.so",
			.srcfile = src, .function = fn,
			.addr = 0x7f3a00000000ull + 64u * (unsigned)k };
		jnl_write_discovery(w, 0.001 * (k / 1000), &d);
	}
}

struct exp_state {
	double start, end;   /* end: when it concludes (worst: never) */
	bool on;
};

static void start_experiment(struct jnl_writer *w, double ts, int e)
{
	char focus[256], code[160], hint[200];
	struct pc_src_focus sf = { { code, "/Process/4242", "/SyncObject", "/Files" } };
	json_t *f;

	snprintf(code, sizeof(code),
		 "/Code/libcomponents.so/component_%03d.cc/ns::component_%d::Handler::process_item_%d",
		 e, e, e * 97);
	snprintf(focus, sizeof(focus), FOCUS_FMT, e, e, e * 97);
	f = json_pack("{s:i,s:s,s:s,s:[i],s:i,s:b}", "node", e + 1, "hyp",
		      "CPUbound", "focus", focus, "parents", e / 4, "phase", 0,
		      "why", 0);
	jnl_write_json(w, "node", ts, f);
	json_decref(f);
	for (int k = 0; k < 5; k++) {   /* the refinements' cheap evidence */
		snprintf(hint, sizeof(hint), "%s_%d", code, k);
		jnl_write_hint(w, ts, hint, frand());
	}
	for (int i = 0; i < INST_PER_EXP; i++) {
		const char *metric = i ? "cpu_time" : "wall_time";
		double cost = 0.001 + frand() * 0.01;
		uint64_t req = (uint64_t)(e * INST_PER_EXP + i);
		struct pc_src_reply r = { req, 0, req, NULL, false };

		jnl_write_predict(w, ts, metric, &sf, cost);
		jnl_write_enable(w, ts, metric, &sf, req, cost, e + 1, 0);
		jnl_write_reply(w, ts, &r);
	}
	f = json_pack("{s:i,s:s,s:s}", "node", e + 1, "state", "active", "from",
		      "pending");
	jnl_write_json(w, "node_state", ts, f);
	json_decref(f);
}

static void end_experiment(struct jnl_writer *w, double ts, int e)
{
	bool truth = e % 5 == 0;
	json_t *f = json_pack("{s:i,s:s,s:s,s:{s:f,s:f,s:f,s:i}}", "node", e + 1,
			      "state", truth ? "true" : "false", "from", "active",
			      "evidence", "value", frand(), "threshold", 0.2,
			      "observed_s", ts, "samples", 100);

	jnl_write_json(w, "node_state", ts, f);
	json_decref(f);
	for (int i = 0; i < INST_PER_EXP && !truth; i++)
		jnl_write_disable(w, ts, (pc_src_handle)(e * INST_PER_EXP + i),
				  "concluded");
}

/* Experiments: one every 3 s over the first 300 s; typical ones run
 * 20-120 s, true ones stay enabled (Paradyn keeps true nodes' data). */
static void plan(struct exp_state *ex, bool worst)
{
	for (int e = 0; e < N_EXP; e++) {
		ex[e].start = worst ? 0.2 : 3.0 * e;
		ex[e].end = worst || e % 5 == 0 ? 1e9 : ex[e].start + 20 + frand() * 100;
		ex[e].on = false;
	}
}

static void tick_events(struct jnl_writer *w, double ts, int t,
			struct exp_state *ex)
{
	struct pc_src_sample smp[N_EXP * INST_PER_EXP];
	size_t n = 0;
	char line[128];

	jnl_write_tick(w, ts, ts + 0.013);

	for (int e = 0; e < N_EXP; e++) {
		if (!ex[e].on && ts >= ex[e].start && ts < ex[e].end) {
			start_experiment(w, ts, e);
			ex[e].on = true;
		} else if (ex[e].on && ts >= ex[e].end) {
			end_experiment(w, ts, e);
			ex[e].on = false;
			ex[e].end = 1e18;
		}
		for (int i = 0; ex[e].on && i < INST_PER_EXP; i++)
			smp[n++] = (struct pc_src_sample){
				.handle = (pc_src_handle)(e * INST_PER_EXP + i),
				.t0 = ts + 0.013 - 1.0 / HZ, .t1 = ts + 0.013,
				/* a rate from measured time: 17 digits */
				.value = frand() };
	}
	jnl_write_samples(w, ts, smp, n);
	jnl_write_cost(w, ts, frand() * 0.05, 0.03, 0.1, 0, 0);
	for (int k = 0; k < 25 / HZ; k++) {
		int len = snprintf(line, sizeof(line),
				   "[worker %d] processed batch %d: 4096 items in %.3f ms",
				   k, t, frand() * 10);
		jnl_write_output(w, ts, k % 4 ? JNL_STDOUT : JNL_STDERR, line,
				 (size_t)len, true);
	}
	if (t % (2 * HZ) == 0) {
		struct jnl_target st = { .event = JNL_TEV_THREAD_START,
			.pid = 4242, .tid = 5000 + t, .function = "worker_main" };
		struct jnl_target ex2 = { .event = JNL_TEV_THREAD_EXIT,
			.pid = 4242, .tid = 5000 + t - 2 * HZ };
		struct pc_discovery d = { .kind = PC_DISC_THREAD, .pid = 4242,
					  .tid = 5000 + t, .function = "worker_main" };

		jnl_write_target(w, ts, &st);
		jnl_write_discovery(w, ts, &d);
		if (t > 0) {
			jnl_write_target(w, ts, &ex2);
			d.retired = true;
			d.tid = ex2.tid;
			jnl_write_discovery(w, ts, &d);
		}
	}
	if (t == 1500) {
		json_t *a = json_pack("{s:s,s:s,s:f,s:f}", "action", "tunable", "name",
				      "costLimit", "value", 0.2, "old", 0.1);
		jnl_write_json(w, "action", ts, a);
		json_decref(a);
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The baseline: write(2) of the same bytes, tick by tick. */
static double baseline(const char *path, const uint64_t *cut, bool sync)
{
	size_t len;
	FILE *f = fopen(path, "rb");
	char *buf;
	char out[600];
	int fd;
	uint64_t t0, total = 0;

	fseek(f, 0, SEEK_END);
	len = (size_t)ftell(f);
	rewind(f);
	buf = malloc(len);
	if (fread(buf, 1, len, f) != len)
		len = 0;
	fclose(f);
	snprintf(out, sizeof(out), "%s.base", path);
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	for (int t = 0; t < TICKS; t++) {
		t0 = now_ns();
		if (write(fd, buf + cut[t], cut[t + 1] - cut[t]) < 0)
			perror("write");
		if (sync)
			fdatasync(fd);
		total += now_ns() - t0;
	}
	close(fd);
	unlink(out);
	free(buf);
	return (double)total / TICKS;
}

static void run(const struct scenario *sc, const char *path, struct result *r)
{
	json_t *hyp = hypotheses();
	json_t *tun = json_pack("{s:f,s:i,s:i,s:f,s:f}", "costLimit", 0.1,
				"MaxActiveExperiments", 1000, "MaxPendingSearches", 30,
				"minObservationTime", 1.0, "sampleInterval", 0.2);
	static const char *const argv[] = { "./server", "--threads", "8", NULL };
	struct jnl_header h = { .program = "server", .argv = argv, .mode = "batch",
		.start_mono_ns = now_ns(), .tsc_hz = 2445000000.0,
		.tsc_invariant = true, .hypotheses = hyp, .tunables = tun };
	struct jnl_writer_opts o = { .sync = sc->sync };
	static double cost[TICKS];
	static uint64_t cut[TICKS + 1];
	struct exp_state ex[N_EXP];
	struct jnl_writer *w;
	struct jnl_stats st;
	uint64_t t0 = now_ns();
	double sum = 0, cpu = 0;

	clock_gettime(CLOCK_REALTIME, &h.start_wall);
	plan(ex, sc->worst);
	jnl_write_open(&w, path, &h, &o, NULL);
	uint64_t d0 = now_ns();
	discover(w);
	jnl_write_flush(w);
	r->discover_ms = (double)(now_ns() - d0) / 1e6;
	for (int t = 0; t < TICKS; t++) {
		uint64_t a = now_ns(), c = cpu_ns();

		jnl_write_get_stats(w, &st);
		cut[t] = st.bytes;
		tick_events(w, (t + 1) / (double)HZ, t, ex);
		jnl_write_flush(w);
		cost[t] = (double)(now_ns() - a);
		cpu += (double)(cpu_ns() - c);
		sum += cost[t];
	}
	jnl_write_get_stats(w, &st);
	cut[TICKS] = st.bytes;
	jnl_write_end(w, TICKS / (double)HZ, "time_limit", NULL);
	jnl_write_close(w, NULL);
	r->total_s = (double)(now_ns() - t0) / 1e9;
	r->records = st.records + 1;
	r->bytes = st.bytes;
	qsort(cost, TICKS, sizeof(double), cmp_double);
	r->tick_ns_mean = sum / TICKS;
	r->cpu_ns_mean = cpu / TICKS;
	r->tick_ns_p50 = cost[TICKS / 2];
	r->tick_ns_p99 = cost[TICKS * 99 / 100];
	r->tick_ns_max = cost[TICKS - 1];
	r->base_ns_mean = baseline(path, cut, sc->sync);
	json_decref(hyp);
	json_decref(tun);
}

static void read_back(const char *path)
{
	struct jnl_reader *r;
	struct jnl_record rec;
	struct hunch_err err;
	struct jnl_read_stats st;
	uint64_t t0 = now_ns();
	struct stat sb;
	double s;

	if (jnl_read_open(&r, path, &err) != 0) {
		printf("read back: %s\n", err.msg);
		return;
	}
	while (jnl_read_next(r, &rec, &err) != JNL_NEXT_END)
		;
	jnl_read_get_stats(r, &st);
	jnl_read_close(r);
	s = (double)(now_ns() - t0) / 1e9;
	stat(path, &sb);
	printf("\nread back (replay's reader): %llu records, %llu bad, in %.2f s: %.0f records/s, %.1f MB/s\n",
	       (unsigned long long)st.records, (unsigned long long)st.bad_lines, s,
	       (double)st.records / s, (double)sb.st_size / 1e6 / s);
}

static void compressed(const char *path, const char *tool, uint64_t bytes)
{
	char cmd[700];
	FILE *p;
	unsigned long long n = 0;
	uint64_t t0 = now_ns();

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null && %s -c '%s' | wc -c",
		 tool, tool, path);
	p = popen(cmd, "r");
	if (p == NULL || fscanf(p, "%llu", &n) != 1 || n == 0) {
		if (p)
			pclose(p);
		printf("| %s | (not installed) | |\n", tool);
		return;
	}
	pclose(p);
	printf("| %s -c (default level) | %.2f MB (%.1f%%, %.1fx smaller) | %.2f s |\n",
	       tool, n / 1e6, 100.0 * n / bytes, (double)bytes / n,
	       (double)(now_ns() - t0) / 1e9);
}

int main(int argc, char **argv)
{
	const char *dir = ".";
	struct scenario sc[] = {
		{ "typical", false, false }, { "typical + fdatasync", false, true },
		{ "worst (200 instances x 600 s)", true, false },
		{ "worst + fdatasync", true, true },
	};
	int nsc = 4;
	char path[512], keep[512] = "";
	struct result r;
	double disc[4] = { 0 };
	bool keep_file = false;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
			dir = argv[++i];
		else if (strcmp(argv[i], "--quick") == 0)
			nsc = 1;
		else if (strcmp(argv[i], "--keep") == 0)
			keep_file = true;
	}
	printf("synthetic 10-minute search: %d functions, %d experiments x %d instances, %d ticks at %d Hz\n\n",
	       N_FUNCS, N_EXP, INST_PER_EXP, TICKS, HZ);
	printf("| scenario | size | records | per tick: wall mean | p50 | p99 | max | CPU mean | baseline write(2) | ratio (wall means) | CPU share of a 200 ms tick |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (int k = 0; k < nsc; k++) {
		snprintf(path, sizeof(path), "%s/bench-journal-%d.jsonl", dir, k);
		run(&sc[k], path, &r);
		printf("| %s | %.2f MB | %llu | %.1f us | %.1f us | %.1f us | %.1f us | %.1f us | %.1f us | %.1fx | %.3f%% |\n",
		       sc[k].name, r.bytes / 1e6, (unsigned long long)r.records,
		       r.tick_ns_mean / 1e3, r.tick_ns_p50 / 1e3, r.tick_ns_p99 / 1e3,
		       r.tick_ns_max / 1e3, r.cpu_ns_mean / 1e3, r.base_ns_mean / 1e3,
		       r.tick_ns_mean / r.base_ns_mean,
		       100.0 * r.cpu_ns_mean / (1e9 / HZ));
		fflush(stdout);
		disc[k] = r.discover_ms;
		if (k == 0 || k == 2) {
			if (keep[0])
				unlink(keep);
			snprintf(keep, sizeof(keep), "%s", path);
		} else {
			unlink(path);
		}
	}
	printf("\nat the start, %d function discoveries and their tick:", N_FUNCS);
	for (int k = 0; k < nsc; k++)
		printf(" %.1f ms (%s)%s", disc[k], sc[k].name, k + 1 < nsc ? "," : "\n");
	read_back(keep);
	printf("\ncompression of the largest journal (%s):\n\n| tool | size | time |\n|---|---|---|\n",
	       keep);
	struct stat sb;
	stat(keep, &sb);
	compressed(keep, "gzip", (uint64_t)sb.st_size);
	compressed(keep, "zstd", (uint64_t)sb.st_size);
	if (!keep_file)
		unlink(keep);
	return 0;
}

/*
 * bench_replay.c - memory and time of replaying a large journal.
 *
 * The replay source streams (consultant/src_replay.c): it indexes the
 * journal once and then reads one tick's records at a time.  This
 * measures, each in a child process of its own so that peak RSS
 * (wait4's ru_maxrss) is the phase's alone:
 *
 *   index      src_replay_open: the one pass that builds the index
 *   replay     open + the consultant over every tick (hunch replay --batch
 *              without printing; in the dashboard, `e` right after open)
 *   seek back  after that, rewind and play to the end again: a
 *              backward seek without checkpoints (from the start)
 *   seek       play to the end keeping checkpoints as the dashboard
 *              does (src_replay_ckpt.h), then 20 backward seeks spread
 *              over the journal, last first, each from the latest
 *              checkpoint before it: wall and CPU time, the checkpoints'
 *              count and bytes, and the phase's peak RSS
 *   baseline   every record parsed and kept in memory (jansson objects),
 *              as the replay source did before it streamed
 *
 * The journal is bench_journal's synthetic 10-minute search (run it with
 * --keep); --repeat K writes K copies of it back to back first (times,
 * requests and handles shifted so it stays one valid search) to see how
 * memory grows with the journal's length.  The consultant uses the
 * shipped hypotheses (--hypotheses, default hypotheses/default.json):
 * the synthetic journal's own document is not a loadable one, so most
 * of its experiments answer "not recorded"; reading, indexing and the
 * source's lookups are the same.
 *
 *   ./build/bench/journal/bench_journal --quick --keep --dir /tmp
 *   ./build/bench/journal/bench_replay /tmp/bench-journal-0.jsonl [--repeat 7]
 *
 * or, as `meson test --benchmark` runs it, making the journal first:
 *   bench_replay --make BENCH_JOURNAL --dir DIR [--repeat 7]
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "jnl_read.h"
#include "pc_search.h"
#include "src_replay.h"
#include "src_replay_ckpt.h"

static const char *hyp_path = "hypotheses/default.json";
static double spacing = RP_CKPT_SPACING;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* --- K copies of a journal, one after the other --------------------- */

static void shift(json_t *j, const char *field, double by)
{
	json_t *v = json_object_get(j, field);

	if (json_is_number(v))
		json_object_set_new(j, field,
				    json_real(json_number_value(v) + by));
}

static void shift_int(json_t *j, const char *field, json_int_t by)
{
	json_t *v = json_object_get(j, field);

	if (json_is_integer(v))
		json_object_set_new(j, field,
				    json_integer(json_integer_value(v) + by));
}

/* Copy c of a record: later in time by c x the journal's length, with
 * requests and handles of its own. */
static void shift_record(json_t *j, int c, double len)
{
	const char *t = json_string_value(json_object_get(j, "t"));
	json_int_t ids = (json_int_t)c * 1000000;
	size_t i;
	json_t *v;

	shift(j, "ts", c * len);
	shift(j, "now", c * len);
	shift(j, "t0", c * len);
	shift(j, "t1", c * len);
	shift(j, "at", c * len);
	shift_int(j, "req", ids);
	shift_int(j, "inst", ids);
	if (strcmp(t, "sample") == 0)
		json_array_foreach(json_object_get(j, "i"), i, v)
			json_array_set_new(json_object_get(j, "i"), i,
					   json_integer(json_integer_value(v) + ids));
}

static int repeat(const char *in, const char *out, int k)
{
	struct jnl_reader *rd;
	struct jnl_record jr;
	struct hunch_err e = { 0 };
	struct jnl_read_stats st;
	FILE *f = fopen(out, "w");
	double len;
	int rc;

	if (f == NULL || jnl_read_open(&rd, in, &e) != 0)
		return -1;
	while (jnl_read_next(rd, &jr, &e) != JNL_NEXT_END)
		;
	jnl_read_get_stats(rd, &st);
	len = st.last_ts + 1;
	json_dumpf(jnl_read_header(rd), f, JSON_COMPACT);
	fputc('\n', f);
	for (int c = 0; c < k; c++) {
		jnl_read_rewind(rd);
		while ((rc = jnl_read_next(rd, &jr, &e)) != JNL_NEXT_END) {
			json_t *j;

			if (rc != JNL_NEXT_RECORD ||
			    (jr.kind == JNL_REC_END && c + 1 < k))
				continue;
			j = json_deep_copy(jr.json);
			shift_record(j, c, len);
			json_dumpf(j, f,
				   JSON_COMPACT | JSON_REAL_PRECISION(17));
			fputc('\n', f);
			json_decref(j);
		}
	}
	jnl_read_close(rd);
	return fclose(f);
}

/* --- the phases ------------------------------------------------------ */

struct played {
	struct pc_config *cfg;
	struct pc_restree *res;
	struct pc_consult *pc;
};

static void play_all(struct src_replay *rp, struct played *p)
{
	p->res = pc_res_tree_new();
	p->pc = pc_consult_new(p->cfg, src_replay_source(rp), p->res);
	pc_consult_start(p->pc);
	src_replay_actions(rp, p->pc);
	while (!src_replay_done(rp) && !pc_consult_ended(p->pc)) {
		pc_consult_tick(p->pc);
		src_replay_actions(rp, p->pc);
	}
}

static void played_free(struct played *p)
{
	pc_consult_free(p->pc);
	pc_res_tree_free(p->res);
}

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One tick as the dashboard plays it: then maybe a checkpoint. */
static void tick_ck(struct src_replay *rp, struct played *p,
		    struct src_replay_ckpt *ck)
{
	double c0 = cpu_s();

	pc_consult_tick(p->pc);
	src_replay_actions(rp, p->pc);
	src_replay_ckpt_tick(ck, p->pc, cpu_s() - c0, 0);
}

#define NSEEKS 20

/* The dashboard's backward seeks: play to the end keeping checkpoints,
 * then go back to NSEEKS times spread over the journal, last first
 * (each in the middle of a twentieth: between checkpoints). */
static int seeks(struct src_replay *rp, struct played *p, FILE *out)
{
	struct src_replay_ckpt *ck = src_replay_ckpt_new(rp, RP_CKPT_BUDGET,
							 spacing);
	size_t n = src_replay_ticks(rp);
	double t0 = now_s(), c0 = cpu_s(), tplay, cplay, worst = 0, sum = 0;
	double cworst = 0, csum = 0;

	p->res = pc_res_tree_new();
	p->pc = pc_consult_new(p->cfg, src_replay_source(rp), p->res);
	pc_consult_start(p->pc);
	src_replay_actions(rp, p->pc);
	src_replay_ckpt_tick(ck, p->pc, 0, 0);
	while (!src_replay_done(rp) && !pc_consult_ended(p->pc))
		tick_ck(rp, p, ck);
	tplay = now_s() - t0;
	cplay = cpu_s() - c0;
	for (int i = NSEEKS - 1; i >= 0; i--) {
		long target = (long)((2 * i + 1) * n / (2 * NSEEKS));
		double s0 = now_s(), c0 = cpu_s(), d, cd;
		const struct rp_ckpt *k = src_replay_ckpt_find(ck, target);
		struct pc_consult *pc;

		if (k == NULL)
			return 1;
		pc = src_replay_ckpt_restore(ck, k);
		pc_consult_free(p->pc);
		p->pc = pc;
		while (src_replay_tick(rp) < target && !src_replay_done(rp))
			tick_ck(rp, p, ck);
		d = now_s() - s0;
		cd = cpu_s() - c0;
		sum += d;
		csum += cd;
		worst = d > worst ? d : worst;
		cworst = cd > cworst ? cd : cworst;
	}
	fprintf(out, "%f %f %f %zu %zu %f %f %f\n", tplay, worst,
		sum / NSEEKS, src_replay_ckpt_count(ck), src_replay_ckpt_bytes(ck), cworst,
		csum / NSEEKS, cplay);
	src_replay_ckpt_free(ck);
	played_free(p);
	return 0;
}

/* In the child: the phase's times, printed to `out` (seconds). */
/* The dashboard's opening (src_replay_open_lazy): the first slice of
 * the index and the skim, then the first tick on the screen; then
 * playing every tick (the rest indexed as it goes): wall and CPU. */
static int lazy(const char *path, FILE *out)
{
	struct hunch_err e = { 0 };
	struct src_replay *rp;
	struct played p = { 0 };
	double t0 = now_s(), c0 = cpu_s(), t1, c1, t2, c2;

	if (src_replay_open_lazy(&rp, path, SRC_REPLAY_FIRST_SLICE, &e) != 0) {
		fprintf(stderr, "%s\n", e.msg);
		return 1;
	}
	p.cfg = pc_config_new();
	if (pc_config_load_file(p.cfg, hyp_path, NULL, &e) != 0) {
		fprintf(stderr, "%s\n", e.msg);
		return 1;
	}
	p.res = pc_res_tree_new();
	p.pc = pc_consult_new(p.cfg, src_replay_source(rp), p.res);
	pc_consult_start(p.pc);
	src_replay_actions(rp, p.pc);
	t1 = now_s();
	c1 = cpu_s();
	while (!src_replay_done(rp) && !pc_consult_ended(p.pc)) {
		pc_consult_tick(p.pc);
		src_replay_actions(rp, p.pc);
	}
	t2 = now_s();
	c2 = cpu_s();
	fprintf(out, "%f %f %f %f\n", t1 - t0, c1 - c0, t2 - t1, c2 - c1);
	return 0;
}

static int phase(const char *path, const char *what, FILE *out)
{
	struct hunch_err e = { 0 };
	struct src_replay *rp;
	struct played p = { 0 };
	double t0 = now_s(), t1, t2, c1;

	if (strcmp(what, "baseline") == 0) {
		struct jnl_reader *rd;
		struct jnl_record jr;
		json_t *all = json_array();

		if (jnl_read_open(&rd, path, &e) != 0)
			return 1;
		while (jnl_read_next(rd, &jr, &e) != JNL_NEXT_END)
			if (jr.json)
				json_array_append(all, (json_t *)jr.json);
		fprintf(out, "%f %zu\n", now_s() - t0, json_array_size(all));
		return 0;
	}
	if (strcmp(what, "lazy") == 0)
		return lazy(path, out);
	if (src_replay_open(&rp, path, &e) != 0) {
		fprintf(stderr, "%s\n", e.msg);
		return 1;
	}
	t1 = now_s();
	if (strcmp(what, "index") == 0) {
		fprintf(out, "%f %zu\n", t1 - t0, src_replay_ticks(rp));
		return 0;
	}
	p.cfg = pc_config_new();
	if (pc_config_load_file(p.cfg, hyp_path, NULL, &e) != 0) {
		fprintf(stderr, "%s\n", e.msg);
		return 1;
	}
	if (strcmp(what, "seek") == 0)
		return seeks(rp, &p, out);
	t1 = now_s();
	c1 = cpu_s();
	play_all(rp, &p);
	t2 = now_s();
	c1 = cpu_s() - c1;
	played_free(&p);
	src_replay_rewind(rp);
	play_all(rp, &p);
	fprintf(out, "%f %f %f %d %f\n", t1 - t0, t2 - t1, now_s() - t2,
		src_replay_unrecorded(rp), c1);
	return 0;
}

/* Run a phase in a child: its output line and peak RSS (KB). */
static int measure(const char *path, const char *what, char *line,
		   size_t len, long *rss_kb)
{
	int fd[2], st;
	struct rusage ru;
	pid_t pid;
	ssize_t n;

	if (pipe(fd) != 0 || (pid = fork()) < 0)
		return -1;
	if (pid == 0) {
		FILE *out = fdopen(fd[1], "w");

		close(fd[0]);
		_exit(phase(path, what, out) || fclose(out));
	}
	close(fd[1]);
	n = read(fd[0], line, len - 1);
	line[n > 0 ? n : 0] = '\0';
	close(fd[0]);
	if (wait4(pid, &st, 0, &ru) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0)
		return -1;
	*rss_kb = ru.ru_maxrss;
	return 0;
}

static int report(const char *path)
{
	char a[256], b[256], c[256], d[256], l[256];
	long ra, rb, rc, rd, rl;
	double lo, lc, lp, lpc;
	double tck, worst, mean, cworst, cmean, cck, cplay;
	size_t nck, ckbytes;
	double ti, tplay, tseek, tb, ti2;
	size_t nticks, nrec;
	int unrec;
	struct stat sb;

	if (stat(path, &sb) != 0 || measure(path, "index", a, sizeof(a), &ra) ||
	    measure(path, "replay", b, sizeof(b), &rb) ||
	    measure(path, "baseline", c, sizeof(c), &rc) ||
	    measure(path, "seek", d, sizeof(d), &rd) ||
	    measure(path, "lazy", l, sizeof(l), &rl))
		return -1;
	sscanf(l, "%lf %lf %lf %lf", &lo, &lc, &lp, &lpc);
	sscanf(d, "%lf %lf %lf %zu %zu %lf %lf %lf", &tck, &worst, &mean, &nck,
	       &ckbytes, &cworst, &cmean, &cck);
	sscanf(a, "%lf %zu", &ti, &nticks);
	sscanf(b, "%lf %lf %lf %d %lf", &ti2, &tplay, &tseek, &unrec, &cplay);
	sscanf(c, "%lf %zu", &tb, &nrec);
	printf("| %.1f MB, %zu records, %zu ticks | %.2f s, %.1f MB | %.2f s | %.2f s | %.2f s, %.1f MB | %.1fx less | %.2fx |\n",
	       sb.st_size / 1e6, nrec, nticks, ti, ra / 1024.0, tplay, tseek,
	       tb, rc / 1024.0, (double)rc / (double)rb, tb / ti);
	printf("  (replay peak RSS %.1f MB; %d enables answered \"not recorded\")\n",
	       rb / 1024.0, unrec);
	printf("  checkpoints: play all keeping them %.2f s, CPU %.2f s "
	       "(without: %.2f s, CPU %.2f s), "
	       "%zu checkpoints, %.1f MB; %d backward seeks: worst %.0f ms, "
	       "mean %.0f ms (CPU: worst %.0f ms, mean %.0f ms) (rewind + play from the start: %.0f ms to the "
	       "end); peak RSS %.1f MB (without checkpoints %.1f MB)\n",
	       tck, cck, tplay, cplay, nck, ckbytes / 1e6, NSEEKS, worst * 1e3,
	       mean * 1e3, cworst * 1e3, cmean * 1e3, tseek * 1e3, rd / 1024.0, rb / 1024.0);
	printf("  lazy open (the dashboard): first tick after %.0f ms (CPU "
	       "%.0f ms), against %.0f ms to index at open; then playing "
	       "every tick, the rest indexed as it goes: %.2f s (CPU %.2f s); "
	       "peak RSS %.1f MB\n", lo * 1e3, lc * 1e3, ti * 1e3, lp, lpc,
	       rl / 1024.0);
	return 0;
}

int main(int argc, char **argv)
{
	const char *journal = NULL, *make = NULL, *dir = "/tmp";
	char big[4400], made[4096];
	int k = 0, rc;
	bool keep = false;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc)
			k = atoi(argv[++i]);
		else if (strcmp(argv[i], "--keep") == 0)
			keep = true;
		else if (strcmp(argv[i], "--spacing-ms") == 0 && i + 1 < argc)
			spacing = atof(argv[++i]) / 1000;
		else if (strcmp(argv[i], "--hypotheses") == 0 && i + 1 < argc)
			hyp_path = argv[++i];
		else if (strcmp(argv[i], "--make") == 0 && i + 1 < argc)
			make = argv[++i];
		else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
			dir = argv[++i];
		else
			journal = argv[i];
	}
	if (make != NULL) {
		snprintf(big, sizeof(big),
			 "'%s' --quick --keep --dir '%s' >/dev/null",
			 make, dir);
		snprintf(made, sizeof(made), "%s/bench-journal-0.jsonl", dir);
		if (system(big) != 0)
			return 1;
		journal = made;
	}
	if (journal == NULL) {
		fprintf(stderr,
			"usage: bench_replay JOURNAL|--make BENCH_JOURNAL [--dir DIR] [--repeat K [--keep]] [--hypotheses FILE] [--spacing-ms MS]\n");
		return 2;
	}
	printf("| journal | index: time, peak RSS | seek to the end (play all) | seek back to the end (rewind + play all) | baseline: whole journal in memory | peak RSS vs baseline | baseline time / index time |\n|---|---|---|---|---|---|---|\n");
	if (report(journal) != 0)
		return 1;
	if (k > 1) {
		snprintf(big, sizeof(big), "%s.x%d", journal, k);
		if (repeat(journal, big, k) != 0) {
			fprintf(stderr, "cannot write %s: %s\n", big,
				strerror(errno));
			return 1;
		}
		rc = report(big);
		if (!keep)
			unlink(big);
		else
			fprintf(stderr, "kept %s\n", big);
		if (rc != 0)
			return 1;
	}
	if (make != NULL)
		unlink(made);
	return 0;
}

/*
 * test_replay_lazy.c - a journal opened lazily (src_replay_open_lazy:
 * the dashboard's first screen comes before the index is whole) replays
 * to exactly the search of one indexed at open: played straight through
 * with the index one record ahead of it; with --set tunables that make
 * the search ask for experiments the recording ran later or never ("not
 * recorded" must still be known at once); cut short; indexed between
 * ticks a slice at a time as the dashboard does; and through checkpoints
 * taken while the index was still growing.  The same journal compressed
 * with gzip replays, lazily and through seeks back to checkpoints, to
 * the search of the plain file.
 */
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "replay_world.h"
#include "src_replay_ckpt.h"

static char path[] = "/tmp/hunch-replay-lazy-XXXXXX";
static char cut[] = "/tmp/hunch-replay-lazy-cut-XXXXXX";
static char gz[] = "/tmp/hunch-replay-lazy-gz-XXXXXX";

static void sc_sync(struct src_sim *sim)
{
	src_sim_script(sim, "sync_wait", "*", 0, 0.6, 0.05);
	src_sim_script(sim, "cpu_inclusive", "*", 0, 0.3, 0.02);
	src_sim_script(sim, "cpu_inclusive", TOP, 0, 0.9, 0.02);
	src_sim_script(sim, "cpu_inclusive", AT(F_MAIN), 0, 0.9, 0.02);
}

static const struct scenario scenario = { "sync and cpu", sc_sync, 8.0 };

/* Like rw_replay, on a source opened lazily with `first` bytes indexed;
 * `slices`: index that many bytes more after every tick (0: none). */
static struct replayed *lazy_replay(const char *file, const char **sets,
				    uint64_t first, uint64_t slices)
{
	struct replayed *r = rw_replay(file, sets);   /* for its config */
	struct hunch_err e = { 0 };

	pc_consult_free(r->pc);
	src_replay_free(r->rp);
	pc_res_tree_free(r->res);
	r->res = pc_res_tree_new();
	r->pc = NULL;
	if (src_replay_open_lazy(&r->rp, file, first, &e) != 0) {
		tap_diag("%s", e.msg);
		return r;
	}
	r->pc = pc_consult_new(r->cfg, src_replay_source(r->rp), r->res);
	pc_consult_start(r->pc);
	src_replay_actions(r->rp, r->pc);
	while (!src_replay_done(r->rp) && !pc_consult_ended(r->pc)) {
		pc_consult_tick(r->pc);
		src_replay_actions(r->rp, r->pc);
		if (slices)
			src_replay_index_step(r->rp, slices);
	}
	return r;
}

static const char *str(const char *s)
{
	return s ? s : "(null)";
}

/* Lazy and whole: the same nodes, traces, log, report, ticks, skipped
 * lines, end and "not recorded" count. */
static void same_as(const char *what, const char *file, const char *lfile,
		    const char **sets, uint64_t first, uint64_t slices)
{
	struct pc_report_meta m = { .target = "demo", .pid = 100,
				    .mode = "replay" };
	struct replayed *whole = rw_replay(file, sets);
	struct replayed *lazy = lazy_replay(lfile, sets, first, slices);
	char *a = rw_text(whole->pc, &m), *b = rw_text(lazy->pc, &m);

	tap_eq(rw_diff(whole->pc, lazy->pc), 0,
	       "%s: the same nodes, traces and log", what);
	tap_ok(strcmp(a, b) == 0, "%s: the same report (%zu bytes)", what,
	       strlen(a));
	tap_ok(src_replay_indexed(lazy->rp),
	       "%s: played to the end, the index is whole", what);
	tap_eq(src_replay_ticks(lazy->rp), src_replay_ticks(whole->rp),
	       "%s: the same ticks (%zu)", what, src_replay_ticks(whole->rp));
	tap_eq(src_replay_unrecorded(lazy->rp),
	       src_replay_unrecorded(whole->rp),
	       "%s: the same enables not recorded (%d)", what,
	       src_replay_unrecorded(whole->rp));
	tap_ok(strcmp(str(src_replay_end_message(lazy->rp)),
		      str(src_replay_end_message(whole->rp))) == 0,
	       "%s: the same end message", what);
	free(a);
	free(b);
	rw_replayed_free(whole);
	rw_replayed_free(lazy);
}

static void same(const char *what, const char *file, const char **sets,
		 uint64_t first, uint64_t slices)
{
	same_as(what, file, file, sets, first, slices);
}

static void opens_partly(void)
{
	struct src_replay *rp;
	struct hunch_err e = { 0 };
	struct stat st;
	size_t n;

	stat(path, &st);
	tap_ok(src_replay_open_lazy(&rp, path, 1, &e) == 0, "lazy open: 0");
	tap_ok(!src_replay_indexed(rp), "lazy open: the index is not whole");
	n = src_replay_ticks(rp);
	tap_ok(n >= 1 && n < 10, "lazy open: a few ticks known (%zu)", n);
	tap_ok(src_replay_length(rp) > 7.9 && !src_replay_indexed(rp),
	       "lazy open: the length (%.1f s) from the file's end, before "
	       "the index", src_replay_length(rp));
	while (src_replay_index_step(rp, 4096) == 0)
		;
	tap_ok(src_replay_indexed(rp), "slices of 4 KB: the index is whole");
	src_replay_free(rp);
	tap_ok(src_replay_open_lazy(&rp, path, (uint64_t)st.st_size, &e) == 0 &&
	       src_replay_indexed(rp),
	       "a first slice as long as the file: whole at open");
	src_replay_free(rp);
}

/* Checkpoints taken while the index grows, then a seek back to each:
 * the search played on from there is the one played straight. */
static void through_checkpoints(const char *what, const char *file)
{
	struct pc_report_meta m = { .target = "demo", .pid = 100,
				    .mode = "replay" };
	struct replayed *whole = rw_replay(path, NULL);
	struct replayed *lazy = lazy_replay(file, NULL, 1, 0);
	struct pc_restree *res = pc_res_tree_new();
	struct src_replay_ckpt *ck;
	struct pc_consult *pc;
	struct hunch_err e = { 0 };
	char *a = rw_text(whole->pc, &m), *b;
	int bad = 0;

	/* a fresh lazy source: checkpoints at every tick */
	pc_consult_free(lazy->pc);
	src_replay_free(lazy->rp);
	src_replay_open_lazy(&lazy->rp, file, 1, &e);
	ck = src_replay_ckpt_new(lazy->rp, RP_CKPT_BUDGET, 0);
	pc = pc_consult_new(lazy->cfg, src_replay_source(lazy->rp), res);
	pc_consult_start(pc);
	src_replay_actions(lazy->rp, pc);
	src_replay_ckpt_tick(ck, pc, 1, 0);
	while (!src_replay_done(lazy->rp) && !pc_consult_ended(pc)) {
		pc_consult_tick(pc);
		src_replay_actions(lazy->rp, pc);
		src_replay_ckpt_tick(ck, pc, 1, 0);
	}
	for (long t = 5; t < 40; t += 7) {
		const struct rp_ckpt *k = src_replay_ckpt_find(ck, t);
		struct pc_consult *back = k ? src_replay_ckpt_restore(ck,
								      k) : NULL;

		if (back == NULL) {
			bad++;
			continue;
		}
		pc_consult_free(pc);
		pc = back;
		while (!src_replay_done(lazy->rp) && !pc_consult_ended(pc)) {
			pc_consult_tick(pc);
			src_replay_actions(lazy->rp, pc);
		}
		b = rw_text(pc, &m);
		bad += rw_diff(whole->pc, pc) != 0 || strcmp(a, b) != 0;
		free(b);
	}
	tap_ok(src_replay_ckpt_count(ck) > 30, "%s checkpoints: %zu taken",
	       what,
	       src_replay_ckpt_count(ck));
	tap_eq(bad, 0, "%s: back to ticks 5, 12, 19, 26, 33 and played on: "
	       "the search of the plain journal played straight", what);
	free(a);
	src_replay_ckpt_free(ck);
	pc_consult_free(pc);
	lazy->pc = NULL;
	pc_res_tree_free(res);
	rw_replayed_free(whole);
	rw_replayed_free(lazy);
}

/* The journal cut in the middle of a line past its half. */
static void make_cut(void)
{
	struct stat st;
	FILE *in = fopen(path, "rb"), *out;
	int fd = mkstemp(cut);
	char *buf;

	stat(path, &st);
	buf = malloc((size_t)st.st_size);
	out = fdopen(fd, "wb");
	if (fread(buf, 1, (size_t)st.st_size, in) != (size_t)st.st_size)
		tap_diag("short read of %s", path);
	fwrite(buf, 1, (size_t)st.st_size * 2 / 3, out);
	fclose(out);
	fclose(in);
	free(buf);
}

/* The journal compressed as `gzip` would. */
static void make_gz(void)
{
	FILE *in = fopen(path, "rb");
	gzFile out;
	char buf[65536];
	size_t n;

	close(mkstemp(gz));
	out = gzopen(gz, "wb9");
	while (in != NULL && out != NULL &&
	       (n = fread(buf, 1, sizeof buf, in)) > 0)
		gzwrite(out, buf, (unsigned)n);
	if (out != NULL)
		gzclose(out);
	if (in != NULL)
		fclose(in);
}

int main(void)
{
	static const char *cpu05[] = { "PC_CPUThreshold=0.5", NULL };
	static const char *cpu003[] = { "PC_CPUThreshold=0.03", NULL };
	int fd = mkstemp(path);
	struct world *w;

	close(fd);
	w = rw_record(&scenario, path, NULL);
	world_free(w);
	make_cut();
	make_gz();
	opens_partly();
	same("index one record ahead", path, NULL, 1, 0);
	same("slices between ticks", path, NULL, 1, 2048);
	same("--set PC_CPUThreshold=0.5", path, cpu05, 1, 0);
	same("--set PC_CPUThreshold=0.03", path, cpu003, 1, 0);
	same("cut at 2/3", cut, NULL, 1, 0);
	same_as("gzip-compressed, against the plain journal", path, gz, NULL,
		1, 0);
	same_as("gzip-compressed, --set PC_CPUThreshold=0.5", path, gz, cpu05,
		1, 0);
	through_checkpoints("plain", path);
	through_checkpoints("gzip-compressed", gz);
	unlink(path);
	unlink(cut);
	unlink(gz);
	return tap_done();
}

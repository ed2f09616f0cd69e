/*
 * test_replay_trunc.c - a real journal (a sim search through
 * jnl_source_wrap) cut at 100 random byte offsets, as a SIGKILL or a
 * power cut leaves it: the replay never crashes (each cut runs in a
 * child process, so a crash is a failed check, not a dead test), plays
 * the ticks before the cut, and says where the journal stops.
 */
#include <sys/wait.h>

#include "replay_world.h"

#define CUTS 100

static void sc(struct src_sim *sim)
{
	src_sim_script(sim, "cpu_inclusive", "*", 0, 0.9, 0.05);
	src_sim_script(sim, "cpu_inclusive", AT(F_WRITER), 0, 0.05, 0);
	src_sim_hint(sim, F_COMPUTE, 0.8);
	src_sim_enable_delay(sim, 1);
}

static const struct scenario scenario = { "propagation", sc, 6.0 };

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *b;
	long n;

	if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0)
		return NULL;
	rewind(f);
	b = malloc((size_t)n + 1);
	if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		b = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return b;
}

/* Exit status of the child: 0 the cut was played and its point told,
 * 1 the header was cut and the open said so, 3 something was wrong. */
static int play_cut(const char *buf, size_t cut, size_t full_ticks)
{
	struct replayed r = { 0 };
	struct hunch_err e = { 0 };
	const char *msg;

	if (src_replay_open_mem(&r.rp, buf, cut, "cut.jsonl", &e) != 0)
		return e.msg[0] != '\0' ? 1 : 3;
	r.cfg = world_new(NULL, NULL)->cfg;   /* the child exits: no frees */
	r.res = pc_res_tree_new();
	r.pc = pc_consult_new(r.cfg, src_replay_source(r.rp), r.res);
	if (src_replay_ticks(r.rp) > 0) {
		pc_consult_start(r.pc);
		src_replay_actions(r.rp, r.pc);
		while (!src_replay_done(r.rp) && !pc_consult_ended(r.pc)) {
			pc_consult_tick(r.pc);
			src_replay_actions(r.rp, r.pc);
		}
	}
	msg = src_replay_end_message(r.rp);
	if (msg == NULL || src_replay_ticks(r.rp) > full_ticks)
		return 3;
	/* The message names the place: a line (and byte for a cut line). */
	return strstr(msg, "line") != NULL ? 0 : 3;
}

int main(void)
{
	char dir[] = "/tmp/hunch-replay-XXXXXX", path[300];
	struct replayed *full;
	size_t len = 0, ticks;
	int played = 0, header = 0, bad = 0;
	unsigned seed = 20261121;
	char *buf;

	if (mkdtemp(dir) == NULL)
		return 2;
	snprintf(path, sizeof(path), "%s/full.jsonl", dir);
	world_free(rw_record(&scenario, path, NULL));
	buf = slurp(path, &len);
	full = rw_replay(path, NULL);
	ticks = src_replay_ticks(full->rp);
	tap_ok(buf && len > 10000 && ticks > 20,
	       "a real journal: %zu bytes, %zu ticks", len, ticks);
	for (int i = 0; buf && i < CUTS; i++) {
		size_t cut = (size_t)rand_r(&seed) % len;
		pid_t pid = fork();
		int st = 0;

		if (pid == 0)
			_exit(play_cut(buf, cut, ticks));
		waitpid(pid, &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st) > 1) {
			tap_diag("cut at byte %zu: %s %d", cut,
				 WIFEXITED(st) ? "status" : "signal",
				 WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
			bad++;
		}
		played += WIFEXITED(st) && WEXITSTATUS(st) == 0;
		header += WIFEXITED(st) && WEXITSTATUS(st) == 1;
	}
	tap_eq(bad, 0, "%d cuts: no crash, each replay says where the journal stops",
	       CUTS);
	/* The header holds the whole hypotheses document: a third of a
	 * short journal, so a third of the cuts fall inside it. */
	tap_ok(played > 0 && played + header == CUTS,
	       "%d cuts replayed up to the cut, %d cut inside the header (refused with a message)",
	       played, header);
	rw_replayed_free(full);
	free(buf);
	unlink(path);
	rmdir(dir);
	return tap_done();
}

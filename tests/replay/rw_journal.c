/*
 * rw_journal.c - writes the journal the dashboard's replay test plays
 * (tests/tui/test-replay.sh): a sim search of the "sync and cpu"
 * program (as test_replay_cli.c), with the target's output - one stdout
 * line each second and a stderr line at 3 s - recorded as `output`
 * records.  Deterministic: the same search, conclusions and output at
 * the same source times on every run.
 *
 *     rw_journal PATH
 */
#include "replay_world.h"

static void sc_sync(struct src_sim *sim)
{
	src_sim_script(sim, "sync_wait", "*", 0, 0.6, 0.05);
	src_sim_script(sim, "cpu_inclusive", "*", 0, 0.3, 0.02);
	src_sim_script(sim, "cpu_inclusive", TOP, 0, 0.9, 0.02);
	src_sim_script(sim, "cpu_inclusive", AT(F_MAIN), 0, 0.9, 0.02);
}

static const struct scenario scenario = { "sync and cpu", sc_sync, 8.0 };

static void output(struct world *w, struct jnl_writer *jw, int second)
{
	char line[64];
	int n = snprintf(line, sizeof(line), "demo: second %d", second);

	(void)w;
	jnl_write_output(jw, jnl_write_ts_now(jw), JNL_STDOUT, line, (size_t)n,
			 true);
	if (second == 3)
		jnl_write_output(jw, jnl_write_ts_now(jw), JNL_STDERR,
				 "demo: warning at 3 s", 20, true);
}

int main(int argc, char **argv)
{
	struct world *w;

	if (argc != 2) {
		fprintf(stderr, "usage: rw_journal PATH\n");
		return 1;
	}
	w = rw_record_with(&scenario, argv[1], NULL, output);
	world_free(w);
	return 0;
}

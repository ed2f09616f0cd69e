/*
 * ui_replay_idx.c - the replay dashboard on a journal opened lazily
 * (src_replay_open_lazy, docs/replay.md "Opening"): the first screen
 * comes before the index is whole, and the loop builds the rest between
 * keys; when it is whole, the log says what the opening could not.
 */
#include "ui_replay_int.h"

#include "src_replay.h"

/* The index is whole (a journal opened lazily): what the opening
 * could not say yet, in the log (not archived: a backward seek's
 * rebuild logs it with the rest, a restore forgets it). */
static void index_done(struct ui *u)
{
	struct src_replay *rp = u->replay->o->rp;
	size_t n = src_replay_ticks(rp);

	u->replay->t_last = n ? src_replay_tick_now(rp, n - 1) : 0;
	ui_log_add(u, UI_LOG_HUNCH, "indexed %s: %zu ticks, %.1f s",
		   u->replay->o->journal, n, u->replay->t_last);
	for (size_t i = 0; i < src_replay_nbad(rp); i++)
		ui_log_add(u, UI_LOG_HUNCH, "skipped: %s", src_replay_bad(rp, i));
	if (src_replay_nbad_total(rp) > src_replay_nbad(rp))
		ui_log_add(u, UI_LOG_HUNCH, "skipped: %zu more lines",
			   src_replay_nbad_total(rp) - src_replay_nbad(rp));
	if (src_replay_end_message(rp))
		ui_log_add(u, UI_LOG_HUNCH, "%s", src_replay_end_message(rp));
	u->dirty |= UI_D_STATUS | UI_D_PANE(UI_PANE_LOG);
}

/* Between keys, the index goes on a slice at a time (1 MiB: well under
 * 0.1 s), so that the first screen came at once and keys are answered
 * while a long journal is still being read. */
void ui_replay_idx_more(struct ui *u, bool *was)
{
	struct src_replay *rp = u->replay->o->rp;

	if (!*was && src_replay_indexed(rp)) {   /* by a seek, a lookup */
		*was = true;
		index_done(u);
	} else if (!*was && src_replay_index_step(rp, 1u << 20) != 0) {
		*was = true;
		index_done(u);
	}
}

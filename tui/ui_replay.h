/*
 * ui_replay.h - `hunch replay JOURNAL` on a terminal: the dashboard over
 * a recorded search, with time controls (docs/replay.md).
 *
 * The same consultant runs on the replay source (consultant/src_replay.h)
 * as in `hunch replay --batch`; a replay clock decides how much recorded
 * time to feed per real tick (the speed), stops at pause, and a seek
 * backwards plays the journal again from its start, which the
 * consultant's determinism makes exact.  Every pane reads the consultant
 * and the resource tree at the replay time.
 */
#ifndef UI_REPLAY_H
#define UI_REPLAY_H

#include <stdbool.h>
#include <stddef.h>

struct ui;
struct pc_config;
struct src_replay;

struct ui_replay_opts {
	const char *journal;      /* for messages */
	const char *label;        /* the target's name, for the status line */
	int pid;                  /* the recorded pid */
	struct src_replay *rp;    /* opened, borrowed */
	struct pc_config *cfg;    /* the recorded (or --set) tunables, borrowed */
};

/* Run the dashboard until `q`; returns hunch's exit status, or
 * UI_FALLBACK (ui_session.h) when the terminal cannot be used. */
int ui_replay_run(const struct ui_replay_opts *o);

/* The replay's keys (s > t + - $ in every pane; p c e where the pane
 * shown does not use them): true when the key was one.  ui_keys_press() asks
 * here first in a replay.  Their line on the hint line (`?`, at the
 * start), within 80 columns. */
#define UI_REPLAY_KEYS \
	"replay: s play/pause  > next conclusion  t go to time  +/- speed  $ end"
#define UI_REPLAY_KEYS_SHORT \
	"s play/pause  > next conclusion  t time  +/- speed  $ end"
bool ui_replay_key(struct ui *u, int key);
/* The status line's state word and clock in a replay: "paused
 * 2x" and "0:03.6/0:10.2". */
void ui_replay_state_text(const struct ui *u, char *buf, size_t len);
void ui_replay_clock_text(const struct ui *u, char *buf, size_t len);
/* Every recorded tick played: the search's state as the journal's end
 * record gives it ("time limit", "completed", "stopped", "interrupted",
 * "detached", "ended", "error"; "cut short" without one), for the
 * Search pane's header and the status line; NULL before the end. */
const char *ui_replay_end_word(const struct ui *u);

#endif

/*
 * ui_replay_int.h - the replay dashboard's insides, shared by
 * ui_replay.c (the clock, seeks, keys, the loop) and ui_replay_seek.c
 * (what backward seeks need: the log's archive, checkpoints, and telling
 * a search the user steered from the recording's own).
 */
#ifndef UI_REPLAY_INT_H
#define UI_REPLAY_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ui.h"
#include "ui_replay.h"

#define LOG_LINES 20000

/* A log line of the recording's search, kept to give the log back as it
 * was at a checkpoint (the recording logs the same lines, in the same
 * order, on every pass). */
struct rlog_line {
	enum ui_log_kind kind;
	char *text;
};

struct ui_replay {
	const struct ui_replay_opts *o;
	struct src_replay_ckpt *ck;         /* checkpoints for backward seeks */
	/* The search shown is the recording's own: nobody steered it since
	 * the last rebuild or restore, so checkpoints can be taken of it. */
	bool pristine;
	size_t nlines;               /* log lines since the rebuild */
	uint64_t moves;              /* ticks played, rebuilds, restores */
	/* While a key is handled the search counts as steered (a line it
	 * logs is not archived as the recording's) unless the key is the
	 * replay's own (ui_replay_key) or changed nothing. */
	bool in_key, key_was;
	struct rlog_line *arch;      /* the recording's log lines */
	size_t narch, caparch;
	double t_last;               /* the last recorded tick's time */
	double clock;                /* the replay time shown */
	int speed;                   /* index in speeds[] */
	bool playing;
	double real_last; /* ui_screen_now() when the clock last moved */
	bool summed_up;              /* the end's bottlenecks are in the log */
	bool typing;                 /* `g`: a time is being typed */
	char typed[24];
	size_t ntyped;
};

/* ui_replay_idx.c: while the journal's index is not whole (`*was`
 * false), index 1 MiB more; once it is, log what it says and set
 * `*was`. */
void ui_replay_idx_more(struct ui *u, bool *was);

/* ui_replay_seek.c */
/* Log a line of the replay (counted; archived while the search is the
 * recording's own), and the consultant's and the target's lines. */
void ui_replay_seek_log(struct ui *u, enum ui_log_kind k, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void ui_replay_seek_arch_free(struct ui_replay *x);
void ui_replay_seek_on_log(void *arg, double t, const char *line);
void ui_replay_seek_on_output(void *arg, double ts, int stream,
			      const char *bytes, size_t len);
double ui_replay_seek_cpu_now(void);
void ui_replay_seek_checkpoint(struct ui *u, double cpu);
/* A key, and whether it steered the search shown. */
void ui_replay_seek_on_key(struct ui *u, int ch);
double ui_replay_seek_spacing(void);

#endif

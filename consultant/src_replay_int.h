/*
 * src_replay_int.h - the replay source's insides, shared by
 * src_replay.c (playing) and src_replay_idx.c (indexing).
 *
 * Nothing of the journal is held whole.  Opening reads it once, in
 * order, and keeps an index: the byte offset and `now` of every tick,
 * every recorded enable with its reply, and the recorded answers to
 * predict_cost, hint and callees, each looked up by key in a hash table.
 * Playing reads the journal again, one tick's records at a time, as the
 * consultant's now() moves on; going back means reading from the start
 * again (src_replay_rewind).
 */
#ifndef SRC_REPLAY_INT_H
#define SRC_REPLAY_INT_H

#include "jnl_read.h"
#include "src_replay.h"
#include "hmap.h"

#define RP_NONE ((size_t)-1)
/* Messages kept for skipped lines: a damaged file can have millions. */
#define RP_MAX_BAD 1000

/* A recorded enable and its recorded reply.  Enables of one (metric,
 * focus) are chained in journal order; the replay claims them first to
 * last, and the claimed one's reply goes out under the replay's request
 * number. */
struct rp_enable {
	uint64_t req;
	size_t seg;                  /* the tick it was recorded in */
	size_t next;                 /* same key, later; RP_NONE */
	bool has_reply;
	size_t reply_seg;
	struct pc_src_reply reply;   /* reason owned */
	/* play state */
	bool claimed, answered;
	uint64_t req_new;
};

/* Every recorded enable (or answer) of one key: first, last, and the
 * first not yet claimed (enables). */
struct rp_chain {
	size_t first, last, cursor;
};

/* A recorded answer to predict_cost, hint or callees. */
struct rp_answer {
	size_t seg;
	double v;
	char **callees;
	size_t ncallees;
	size_t next;                 /* same key, later; RP_NONE */
};

struct rp_answers {
	struct rp_answer *a;
	size_t n, cap;
	struct rp_chain *c;
	size_t nc, capc;
	struct hmap keys;          /* key -> chain */
};

/* One record of the tick being played. */
struct rp_rec {
	enum jnl_kind kind;
	json_t *json;
	uint64_t off;                /* its byte offset in the journal */
};

/* A tunable a replayed action changed, and its value before. */
struct pc_config;
struct rp_undo {
	char *name;
	double old;
	struct pc_config *cfg;
};

struct src_replay {
	struct pc_source pub;
	struct jnl_reader *rd;
	json_t *header;
	/* the index */
	double *tick_now;
	uint64_t *tick_off;
	size_t nticks, capticks;
	struct rp_enable *en;
	size_t nen, capen;
	struct rp_chain *enc;
	size_t nenc, capenc;
	struct hmap en_keys;       /* metric + focus -> chain in enc */
	struct hmap reply_at;      /* byte offset of a reply -> enable */
	struct rp_answers pred, hint, callees;
	char **bad;                  /* the first RP_MAX_BAD skipped lines */
	size_t nbad, capbad, nbad_total;
	char *end_msg, *end_reason;
	json_t *stack_samples;   /* the last `stack_samples` record's */
	/* building the index: at open in one go (src_replay_open), or a
	 * slice at a time (src_replay_open_lazy: the dashboard shows the
	 * first tick at once); `ird` reads ahead of the player */
	struct jnl_reader *ird;
	struct hmap by_req;        /* request number -> enable, while */
	bool indexed;                /* the whole journal is in the index */
	char *path;                  /* lazy: the file, for its last tick */
	struct hmap ever;          /* lazy: keys ever answered (src_replay_scan) */
	/* playing */
	struct rp_rec *seg;          /* the records of tick `cur` */
	size_t nseg, capseg;
	json_t *ahead;               /* the next tick's record, read ahead */
	uint64_t ahead_off;
	long cur;                    /* tick played (-1: none yet) */
	long acted;                  /* tick whose actions were applied */
	double now, observed;
	long holds;                 /* the program's holds so far, and their */
	double held_s;              /* seconds (cost records) */
	struct pc_src_reply *pending;   /* replies to give at the next poll */
	size_t npend, cappend;
	struct hmap live;          /* handles enabled and not disabled */
	int unrecorded;
	struct rp_undo *undo;        /* undone at a rewind, last first */
	size_t nundo, capundo;
	src_replay_output_fn out_fn;
	void *out_arg;
};

/* Grow `*arr` (of `*cap` items of `size`) to hold item `n`. */
int src_replay_idx_grow(void *arr, size_t *cap, size_t n, size_t size);

/* src_replay.c, for the checkpoints (src_replay_ckpt.c): set back the
 * tunables replayed actions changed, down to the first `n`; forget the
 * records of the tick played and the one read ahead. */
void src_replay_undo_to(struct src_replay *r, size_t n);
void src_replay_forget_tick(struct src_replay *r);

/* src_replay_idx.c: read the whole journal once into the index
 * (src_replay_idx), or start to (src_replay_idx_begin, on a reader of its own) and
 * go on `bytes` of the journal at a time (src_replay_idx_step: 1 when the
 * index is whole).  A partial index holds every record up to where it
 * stopped, so whatever a lookup finds in it is what the whole index
 * would give, but for "never recorded" (src_replay.c then indexes the
 * rest first). */
int src_replay_idx(struct src_replay *r);
int src_replay_idx_begin(struct src_replay *r, struct jnl_reader *ird);
int src_replay_idx_step(struct src_replay *r, uint64_t bytes);
/* Index on until tick k+1 is known (tick k's records are all indexed)
 * or the journal ends; the whole journal. */
void src_replay_idx_to(struct src_replay *r, size_t k);
/* The key of an enable or predict record (metric + focus); NULL. */
char *src_replay_idx_record_key(const json_t *j);

/* src_replay_scan.c: every key of an enable, predict, hint or callees
 * record in the file, skimmed without parsing the other records, into
 * `ever` (string keys from src_replay_scan_key).  0, or -1 (cannot read). */
enum { RP_SCAN_ENABLE, RP_SCAN_PREDICT, RP_SCAN_HINT, RP_SCAN_CALLEES };
int src_replay_scan(struct hmap *ever, const char *path);
char *src_replay_scan_key(int kind, const char *key);
void src_replay_idx_all(struct src_replay *r);
void src_replay_idx_free(struct src_replay *r);
/* The answer for `key` recorded at the latest tick not after `cur`, else
 * the first recorded; NULL if never.  `cur` must not go back except
 * after src_replay_idx_answers_rewind. */
const struct rp_answer *src_replay_idx_lookup(struct rp_answers *as,
					      const char *key, long cur);
void src_replay_idx_answers_rewind(struct rp_answers *as);

#endif

/*
 * ui_replay_seek.c - what the replay dashboard's backward seeks need
 * (see ui_replay.c): the log's archive (a checkpoint gives the log back
 * as it was from it), checkpoints taken after the recording's own ticks,
 * and the keys that steer the search (then it is no longer the
 * recording's, and no checkpoint is taken of it).
 */
#include "ui_replay_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pc_search.h"
#include "src_replay_ckpt.h"

void ui_replay_seek_arch_free(struct ui_replay *x)
{
	for (size_t i = 0; i < x->narch; i++)
		free(x->arch[i].text);
	x->narch = 0;
}

/* Every line the replay logs goes through here: counted, and while the
 * search is the recording's, archived the first time it is seen. */
void ui_replay_seek_log(struct ui *u, enum ui_log_kind k, const char *fmt, ...)
{
	struct ui_replay *x = u->replay;
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (x->pristine && x->nlines == x->narch) {
		struct rlog_line *a;

		if (x->narch == x->caparch) {
			size_t cap = x->caparch ? x->caparch * 2 : 1024;

			if ((a = realloc(x->arch, cap * sizeof(*a))) == NULL)
				abort();
			x->arch = a;
			x->caparch = cap;
		}
		x->arch[x->narch].kind = k;
		if ((x->arch[x->narch++].text = strdup(buf)) == NULL)
			abort();
	}
	x->nlines++;
	ui_log_add(u, k, "%s", buf);
}

void ui_replay_seek_on_log(void *arg, double t, const char *line)
{
	(void)t;
	ui_replay_seek_log(arg, UI_LOG_HUNCH, "%s", line);
}

void ui_replay_seek_on_output(void *arg, double ts, int stream,
			      const char *bytes, size_t len)
{
	(void)ts;
	ui_replay_seek_log(arg, stream ? UI_LOG_STDERR : UI_LOG_STDOUT, "%.*s",
			   (int)(len > 1000 ? 1000 : len), bytes);
}

/* CPU seconds this thread has run: what playing costs, whatever the
 * load on the machine (checkpoints are spaced by it). */
double ui_replay_seek_cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* After a tick of the recording's own search: maybe a checkpoint. */
void ui_replay_seek_checkpoint(struct ui *u, double cpu)
{
	struct ui_replay *x = u->replay;

	if (x->pristine)
		src_replay_ckpt_tick(x->ck, u->pc, cpu, x->nlines);
}

/* What the user can change in a search by hand (experiments and
 * metrics enabled, tunables edited, hypotheses reloaded), summed up:
 * a key that changes it, without changing the search shown, steered. */
struct steer_sig {
	const struct pc_consult *pc;
	uint64_t moves;              /* the replay moved: not the user */
	uint64_t search, cfg;
};

static uint64_t mix(uint64_t h, uint64_t v)
{
	return (h ^ v) * 1099511628211ull;
}

static struct steer_sig steer_sig(const struct ui *u)
{
	const struct pc_consult *pc = u->pc;
	struct steer_sig g = { pc, u->replay->moves, 1469598103934665603ull,
			       1469598103934665603ull };

	if (pc == NULL)
		return g;
	g.search = mix(mix(mix(g.search, pc->seq), pc->dm.n), pc->dm.next_req);
	g.search = mix(mix(g.search, pc->nlog), (uint64_t)pc->npending);
	for (size_t i = 0; i < pc->dm.n; i++)
		g.search = mix(g.search, (uint64_t)pc->dm.mi[i]->refs);
	g.cfg = mix(g.cfg, pc->cfg->nhyp);
	for (size_t i = 0; i < pc->cfg->ntun; i++) {
		uint64_t bits;

		memcpy(&bits, &pc->cfg->tun[i].value, sizeof(bits));
		g.cfg = mix(g.cfg, bits);
	}
	return g;
}

/* After a key: was the search steered?  Its checkpoints stay good for
 * going back (they are of the recording's search), unless the
 * configuration changed: then none is, and the next backward seek
 * plays again from the start. */
static void check_steered(struct ui *u, const struct steer_sig *before)
{
	struct ui_replay *x = u->replay;
	struct steer_sig after = steer_sig(u);

	if (after.pc != before->pc || after.moves != before->moves)
		return;   /* time moved (c, e, g, p): the replay's doing */
	if (after.cfg != before->cfg) {
		src_replay_ckpt_clear(x->ck);
		ui_replay_seek_arch_free(x);
	}
	if (after.search == before->search && after.cfg == before->cfg)
		x->pristine = x->key_was;   /* nothing changed */
}

void ui_replay_seek_on_key(struct ui *u, int ch)
{
	struct ui_replay *x = u->replay;
	struct steer_sig before = steer_sig(u);

	x->key_was = x->pristine;
	x->pristine = false;
	x->in_key = true;
	ui_keys_press(u, ch);
	x->in_key = false;
	if (!u->quit)
		check_steered(u, &before);
}

/* HUNCH_REPLAY_CKPT_MS: CPU milliseconds of play between checkpoints
 * (RP_CKPT_SPACING unless set; the tests set 0: one at every tick). */
double ui_replay_seek_spacing(void)
{
	const char *s = getenv("HUNCH_REPLAY_CKPT_MS");
	char *end;
	double v;

	if (s == NULL || *s == '\0')
		return RP_CKPT_SPACING;
	v = strtod(s, &end);
	return *end != '\0' || !(v >= 0) ? RP_CKPT_SPACING : v / 1000;
}


/*
 * ui_consult.c - the consultant inside the live dashboard.
 *
 * The search runs as batch mode runs it (tui/cli_batch.c): metrics on
 * the live source, the journal wrapped around it, the consultant over
 * the wrapper, started once the program has run UI_SETTLE_S (enabled while
 * it is stopped at main, start-function timers miss main's activation).
 * From then on the consultant owns resource polling: the where axis is
 * the consultant's own tree (u->tree), and the log learns of threads and
 * libraries by comparing that tree with what it saw last time.  Before
 * the search starts (and when there is none: --no-rtlib) the dashboard
 * polls through the same source, so the journal records every resource
 * either way.
 */
#include "ui_consult.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_quote.h"
#include "jnl_path.h"
#include "jnl_source.h"
#include "pc_report.h"
#include "pc_search.h"
#include "pc_steer.h"
#include "pc_where.h"
#include "ui_findings.h"
#include "ui_panes.h"
#include "ui_search.h"
#include "clock_mono.h"

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* The search's throttle turns on and off many times a second while the
 * cost sits at its limit; the status line shows it live, so the log
 * keeps one such line per THROTTLE_QUIET_S (and says how many it left
 * out) instead of scrolling everything else away. */
#define THROTTLE_QUIET_S 10.0

static bool throttle_line(const char *line)
{
	const char *msg = strstr(line, ") ");

	msg = msg ? msg + 2 : line;
	return strncmp(msg, "Search slowed:", 14) == 0 ||
	       strcmp(msg, "Search resumed.") == 0;
}

static void on_log(void *arg, double t, const char *line)
{
	struct ui_consult *c = arg;
	double now = ui_screen_now();

	(void)t;
	if (throttle_line(line)) {
		if (c->throttle_said > 0 &&
		    now - c->throttle_said < THROTTLE_QUIET_S) {
			c->throttle_quiet++;
			return;
		}
		c->throttle_said = now;
		if (c->throttle_quiet > 0) {
			ui_log_add(c->u, UI_LOG_HUNCH, "%s (and %d such lines "
				   "in the last %.0f s)", line,
				   c->throttle_quiet, THROTTLE_QUIET_S);
			c->throttle_quiet = 0;
			return;
		}
	}
	ui_log_add(c->u, UI_LOG_HUNCH, "%s", line);
}

/* The journal, unless --no-journal; one that cannot be opened is a
 * message in the log: the search is worth running without it. */
static void open_journal(struct ui *u, struct ui_consult *c)
{
	struct jnl_choice ch = { .path = c->o->journal,
				 .disabled = c->o->no_journal };
	struct jnl_header h = {
		.program = base_name(u->label), .argv = c->o->argv,
		.pid = (int)u->pid, .mode = "dashboard",
	};
	struct jnl_writer_opts wo = { 0 };
	struct hunch_err err = { 0 };
	json_t *hyp, *files, *tun;

	pc_steer_jnl_header_config(c->cfg, &hyp, &files, &tun);
	h.hypotheses = hyp;
	h.hypotheses_files = files;
	h.tunables = tun;
	h.config = c->o->config;
	clock_gettime(CLOCK_REALTIME, &h.start_wall);
	h.start_mono_ns = clock_mono_ns();
	if (jnl_path_open_for_search(&c->jw, &ch, &h, &wo, getenv, &err) < 0) {
		ui_log_add(u, UI_LOG_HUNCH, "no journal: %s", err.msg);
		c->jw = NULL;
	}
	json_decref(hyp);
	json_decref(files);
	json_decref(tun);
	if (c->jw == NULL)
		return;
	c->csrc = jnl_source_wrap(u->src, c->jw, (int)u->pid);
	if (c->csrc == NULL)
		c->csrc = u->src;
	snprintf(c->jpath, sizeof(c->jpath), "%s", jnl_write_path(c->jw));
	ui_log_add(u, UI_LOG_HUNCH, "journal %s", c->jpath);
}

void ui_consult_journal_action(struct ui *u, const char *action,
			       const char *name, int phase)
{
	struct ui_consult *c = u->consult;
	json_t *o;

	if (c == NULL || c->jw == NULL)
		return;
	o = json_pack("{s:s}", "action", action);
	if (o == NULL)
		return;
	if (name != NULL)
		json_object_set_new(o, "name", json_string(name));
	if (phase >= 0)
		json_object_set_new(o, "phase", json_integer(phase));
	jnl_write_json(c->jw, "action", jnl_write_ts_now(c->jw), o);
	json_decref(o);
}

void ui_consult_journal_output(struct ui *u, int stream, const char *bytes,
		       size_t len, bool eol)
{
	struct ui_consult *c = u->consult;

	if (c == NULL || c->jw == NULL)
		return;
	jnl_write_output(c->jw, jnl_write_ts_now(c->jw),
			 stream ? JNL_STDERR : JNL_STDOUT, bytes, len, eol);
}

void ui_consult_open(struct ui *u, struct ui_consult *c)
{
	struct hunch_err err = { 0 };

	c->u = u;
	u->consult = c;   /* for the journal's actions and output */
	c->csrc = u->src;
	c->search_at = 1e300;  /* ui_session.c: once the program runs */
	if (c->cfg == NULL)
		return;
	if (!src_live_rtlib_ready(u->src) ||
	    src_live_metrics_start(u->src, c->cfg, &err) < 0) {
		ui_log_add(u, UI_LOG_HUNCH, "no search: cannot measure %s: %s",
			   u->label, err.msg[0] ? err.msg : "no runtime "
			   "library in the program");
		c->failed = true;
		return;
	}
	open_journal(u, c);
	u->pc = pc_consult_new(c->cfg, c->csrc, u->tree);
	pc_consult_set_log(u->pc, on_log, c);
	if (c->jw != NULL)   /* tunables, experiments, metrics, reloads */
		pc_steer_jnl_write(u->pc, c->jw);
}

/* --- what the log says about the tree --------------------------------- */

static void watch_add(struct ui_consult *c, pc_res_id id, bool retired)
{
	if (c->nseen == c->capseen) {
		size_t cap = c->capseen ? 2 * c->capseen : 64;
		struct ui_seen *s = realloc(c->seen, cap * sizeof(*s));

		if (s == NULL)
			return;
		c->seen = s;
		c->capseen = cap;
	}
	c->seen[c->nseen++] = (struct ui_seen){ id, retired };
}

static void say(struct ui *u, const struct pc_res *r, bool retired,
		bool fresh)
{
	if (u->starting)
		return;
	if (r->kind == PC_RES_THREAD) {
		ui_log_add(u, UI_LOG_HUNCH, "thread %s %s", r->name,
			   retired ? "exited" : "appeared");
	} else if (retired) {
		ui_log_add(u, UI_LOG_HUNCH, "library %s unloaded", r->name);
	} else if (fresh) {
		ui_log_add(u, UI_LOG_HUNCH, "library %s loaded (%zu "
			   "functions)", r->name, pc_res_count_kind(u->tree,
			   r->id, PC_RES_FUNCTION));
	}
}

/* New threads and libraries, and those retired (or back) since the
 * last pass.  Returns whether the tree changed. */
static bool tell_changes(struct ui *u, struct ui_consult *c)
{
	size_t n = pc_res_tree_count(u->tree);
	bool changed = n != c->nres;

	for (pc_res_id id = (pc_res_id)c->nres; id < n; id++) {
		const struct pc_res *r = pc_res_get(u->tree, id);

		if (r == NULL || (r->kind != PC_RES_THREAD &&
				  r->kind != PC_RES_MODULE))
			continue;
		say(u, r, false, true);
		if (r->retired)
			say(u, r, true, false);
		watch_add(c, id, r->retired);
	}
	for (size_t i = 0; i < c->nseen; i++) {
		const struct pc_res *r = pc_res_get(u->tree, c->seen[i].id);

		if (r->retired == c->seen[i].retired)
			continue;
		c->seen[i].retired = r->retired;
		say(u, r, r->retired, false);
		changed = true;
	}
	c->nres = n;
	return changed;
}

static void sync_tree(struct ui *u, struct ui_consult *c)
{
	/* The search polls for itself once it runs. */
	if (u->pc == NULL || !u->pc->started)
		c->csrc->ops->poll_resources(c->csrc, pc_where_apply_cb,
					     u->tree);
	if (tell_changes(u, c))
		ui_where_changed(u);
}

/* --- the search ---------------------------------------------------------- */

struct ui_search_status ui_consult_status(const struct ui *u,
					  const struct pc_search *s)
{
	const struct pc_consult *pc = u->pc;
	double period = pc_consult_sample_period(pc);

	return (struct ui_search_status){
		.have = true, .sample_hz = period > 0 ? 1 / period : 0,
		.cost = pc->observed,
		.cost_limit = pc_tunables_get(pc->cfg, "costLimit"),
		.active = pc->nactive, .pending = pc->npending,
		.state = ui_search_state_word(u, s),
	};
}

static void fill_status(struct ui *u)
{
	const struct pc_search *s = ui_search_shown(u);
	struct ui_search_status old = u->search;

	u->search = ui_consult_status(u, s);
	if (memcmp(&old, &u->search, sizeof(old)) != 0)
		u->dirty |= UI_D_STATUS;
}

static void start_search(struct ui *u, struct ui_consult *c)
{
	if (u->pc->started || c->failed || ui_screen_now() < c->search_at)
		return;
	if (pc_consult_start(u->pc) < 0) {
		ui_log_add(u, UI_LOG_HUNCH, "the search could not start");
		c->failed = true;
	}
}

/* A journal that cannot be written (full disk, ...) drops records from
 * then on and never stops the search: the log says so, once. */
static void tick_journal(struct ui *u, struct ui_consult *c)
{
	const struct hunch_err *e;

	jnl_write_flush(c->jw);
	e = jnl_write_error(c->jw);
	if (e != NULL && !c->journal_failed) {
		ui_log_add(u, UI_LOG_HUNCH, "%s; the search goes on without "
			   "the journal", e->msg);
		c->journal_failed = true;
	}
}

void ui_consult_pump(struct ui *u, struct ui_consult *c)
{
	sync_tree(u, c);
	if (u->pc == NULL)
		return;
	start_search(u, c);
	if (u->pc->started) {
		pc_consult_tick(u->pc);
		if (tell_changes(u, c))
			ui_where_changed(u);
		if (ui_search_changed(u))
			u->dirty |= UI_D_PANE(UI_PANE_SEARCH);
		ui_hist_tick(u);
	}
	if (c->jw != NULL)
		tick_journal(u, c);
	fill_status(u);
}

int ui_consult_due_ms(const struct ui *u, const struct ui_consult *c)
{
	int due;

	if (u->pc == NULL || c->failed)
		return -1;
	if (!u->pc->started) {
		due = (int)((c->search_at - ui_screen_now()) * 1000) + 1;
		return due < 0 ? 0 : due;
	}
	return src_live_due_ms(u->src);
}

void ui_consult_stop(struct ui *u, struct ui_consult *c)
{
	(void)c;
	if (u->pc != NULL)
		src_live_metrics_stop(u->src);
}

/* The target as the journal's header names it (the replay's report
 * names it so too): the command line, or the program's name. */
static char *command_of(const struct ui *u, const struct ui_consult *c)
{
	size_t n = 0;

	if (c->o->argv == NULL)
		return cli_quote_argv(u->label, NULL, 0);
	while (c->o->argv[n] != NULL)
		n++;
	return cli_quote_argv(NULL, c->o->argv, n);   /* as batch mode */
}

/* --report FILE: the JSON report batch mode writes, of the search as the
 * dashboard leaves it (`hunch replay --report` of its journal writes the
 * same, apart from the fields naming the replay). */
static void write_report(struct ui *u, struct ui_consult *c)
{
	char *cmd = command_of(u, c);
	struct pc_report_meta m = {
		.target = cmd ? cmd : u->label, .pid = (int)u->pid,
		.mode = c->o->argv ? "run" : "attach",
		.config = c->o->config,
	};
	FILE *f = fopen(c->o->report, "w");

	if (f == NULL || pc_report_write_json(u->pc, &m, f) < 0)
		fprintf(stderr, "hunch: cannot write the report %s: %s\n",
			c->o->report, strerror(errno));
	if (f != NULL && fclose(f) != 0)
		fprintf(stderr, "hunch: cannot write the report %s: %s\n",
			c->o->report, strerror(errno));
	free(cmd);
}

void ui_consult_print_findings(struct ui *u, struct ui_consult *c, FILE *f)
{
	char *cmd;
	struct pc_report_meta m = { .pid = (int)u->pid };

	if (u->pc == NULL || !u->pc->started || c->o == NULL)
		return;
	cmd = command_of(u, c);
	m.target = cmd ? cmd : u->label;
	m.mode = c->o->argv ? "run" : "attach";
	m.config = c->o->config;
	if (!u->st.ended)
		m.stop = u->detached ? "detached" : "interrupted";
	ui_findings_print(u, &m, f);
	free(cmd);
}

void ui_consult_close(struct ui *u, struct ui_consult *c, const char *why)
{
	if (c->o != NULL && c->o->report != NULL && u->pc != NULL &&
	    u->pc->started)
		write_report(u, c);
	if (c->jw != NULL) {
		if (u->pc != NULL)
			pc_steer_jnl_write(u->pc, NULL);
		jnl_write_end(c->jw, jnl_write_ts_now(c->jw), why, NULL);
		jnl_source_unwrap(c->csrc);
		jnl_write_close(c->jw, NULL);
		fprintf(stderr, "hunch: journal %s%s\n", c->jpath,
			c->journal_failed ? " (incomplete: it could not be "
			"written to the end)" : "");
	}
	if (u->src != NULL)
		u->src->ops->close(u->src);
	u->src = NULL;
	pc_consult_free(u->pc);
	pc_steer_forget(u->pc);
	u->pc = NULL;
	pc_config_free(c->cfg);
	c->cfg = NULL;
	free(c->seen);
	u->consult = NULL;
}

/*
 * cli_replay.c - hunch replay: a recorded search played back with no
 * program and no ptrace (docs/replay.md).
 *
 * The consultant runs again on the replay source with the hypotheses and
 * tunables the journal's header recorded, so it reaches the recorded
 * conclusions at the recorded times and prints the report batch mode
 * printed.  With --set it also runs with the new tunables and prints
 * which conclusions changed.  What the journal could not show (skipped
 * lines, a truncated end, experiments never recorded) goes to stderr, so
 * that stdout stays the recorded report.
 *
 * On a terminal without --batch (and without --report or exports, which
 * are files of the end state) the dashboard opens on the recorded search
 * with time controls instead (ui_replay.c).  A journal may be
 * gzip-compressed.  Without a journal, or given a directory, it lists
 * the journals there to pick from (cli_journals.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "pc_diff.h"
#include "pc_export.h"
#include "pc_report.h"
#include "pc_search.h"
#include "pc_steer.h"
#include "src_replay.h"
#include "ui_replay.h"
#include "ui_session.h"

struct replay_opts {
	bool batch, help;
	const char *report, *dot, *shg, *where, *csv;
	const char **sets;
	size_t nsets;
	const char *journal;
};

/* One replayed search and what it owns. */
struct play {
	struct pc_config *cfg;
	struct pc_restree *res;
	struct src_replay *rp;
	struct pc_consult *pc;
};

static const struct option replay_opts[] = {
	{ "batch", no_argument, NULL, 0 },
	{ "report", required_argument, NULL, 0 },
	{ "set", required_argument, NULL, 0 },
	{ "export-dot", required_argument, NULL, 0 },
	{ "export-shg-json", required_argument, NULL, 0 },
	{ "export-where-json", required_argument, NULL, 0 },
	{ "export-csv", required_argument, NULL, 0 },
	{ "help", no_argument, NULL, 0 },
	{ NULL, 0, NULL, 0 },
};

static int usage(const char *why)
{
	fprintf(stderr, "hunch replay: %s\n", why);
	fputs("usage: hunch replay [--batch] [--report FILE] [--set NAME=VALUE]...\n"
	      "           [--export-dot FILE] [--export-shg-json FILE]\n"
	      "           [--export-where-json FILE] [--export-csv DIR]\n"
	      "           JOURNAL (.jsonl or .jsonl.gz) | DIRECTORY (lists its journals)\n",
	      stderr);
	return HUNCH_EXIT_USAGE;
}

/* The option's value: the next argument. */
static const char *value(int argc, char **argv, int *i)
{
	return *i + 1 < argc ? argv[++*i] : NULL;
}

static int parse(int argc, char **argv, struct replay_opts *o)
{
	o->sets = calloc((size_t)argc, sizeof(*o->sets));
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], **slot = NULL;

		if (strcmp(a, "--batch") == 0) {
			o->batch = true;
			continue;
		}
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			o->help = true;
			return 0;
		}
		if (strcmp(a, "--report") == 0) slot = &o->report;
		else if (strcmp(a, "--export-dot") == 0) slot = &o->dot;
		else if (strcmp(a, "--export-shg-json") == 0) slot = &o->shg;
		else if (strcmp(a, "--export-where-json") == 0) slot = &o->where;
		else if (strcmp(a, "--export-csv") == 0) slot = &o->csv;
		else if (strcmp(a, "--set") == 0) slot = &o->sets[o->nsets++];
		else if (a[0] == '-' && a[1] != '\0')
			return cli_opts_unknown("hunch replay", a, replay_opts);
		else if (o->journal != NULL)
			return usage("one journal at a time");
		else
			o->journal = a;
		if (slot && (*slot = value(argc, argv, &i)) == NULL)
			return usage("an option lacks its value");
	}
	return 0;
}

/* The journal's hypotheses document, else the shipped one; then the
 * recorded tunables; then --set. */
static int config(const json_t *hdr, const char **sets, size_t nsets,
		  struct pc_config **out)
{
	const json_t *hyp = json_object_get(hdr, "hypotheses");
	const json_t *files = json_object_get(hdr, "hypotheses_files");
	struct pc_config *c = pc_config_new();
	struct hunch_err e = { 0 };
	const char *name, *def;
	json_t *v;
	int rc;

	if (json_is_array(files)) {
		rc = pc_steer_jnl_load_files(c, files, &e);
	} else if (json_is_object(hyp)) {
		char *text = json_dumps(hyp, 0);

		rc = pc_config_load_string(c, "the journal's hypotheses", text,
					   NULL, &e);
		free(text);
	} else {
		def = cli_check_hypotheses_path();
		rc = def ? pc_config_load_file(c, def, NULL, &e) : -ENOENT;
	}
	json_object_foreach((json_t *)json_object_get(hdr, "tunables"), name, v)
		if (rc == 0 && json_is_number(v) &&
		    pc_tunables_set(c, name, json_number_value(v), &e) != 0)
			fprintf(stderr, "hunch replay: recorded tunable: %s\n", e.msg);
	for (size_t i = 0; rc == 0 && i < nsets; i++)
		rc = pc_tunables_set_str(c, sets[i], &e);
	if (rc != 0) {
		fprintf(stderr, "hunch replay: %s\n", e.msg);
		pc_config_free(c);
		return HUNCH_EXIT_USAGE;
	}
	*out = c;
	return 0;
}

static void play_free(struct play *p)
{
	if (p->pc)
		pc_consult_free(p->pc);
	src_replay_free(p->rp);
	if (p->res)
		pc_res_tree_free(p->res);
	if (p->cfg)
		pc_config_free(p->cfg);
	memset(p, 0, sizeof(*p));
}

/* Open the journal and configure the search as it was recorded. */
static int open_play(const char *journal, const char **sets, size_t nsets,
		     bool lazy, struct play *p)
{
	struct hunch_err e = { 0 };
	int rc;

	memset(p, 0, sizeof(*p));
	if ((lazy ? src_replay_open_lazy(&p->rp, journal,
					 SRC_REPLAY_FIRST_SLICE, &e) :
		    src_replay_open(&p->rp, journal, &e)) != 0) {
		/* A mistyped name: say where the saved journals are listed. */
		fprintf(stderr, "hunch replay: %s%s\n", e.msg, e.code ==
			-ENOENT ? " ('hunch replay' with no argument lists "
			"the saved journals)" : "");
		return HUNCH_EXIT_TARGET;
	}
	if ((rc = config(src_replay_header(p->rp), sets, nsets, &p->cfg)) != 0)
		play_free(p);
	return rc;
}

/* Open the journal and play every recorded tick. */
static int play(const char *journal, const char **sets, size_t nsets,
		struct play *p)
{
	int rc;

	if ((rc = open_play(journal, sets, nsets, false, p)) != 0)
		return rc;
	p->res = pc_res_tree_new();
	p->pc = pc_consult_new(p->cfg, src_replay_source(p->rp), p->res);
	if (src_replay_ticks(p->rp) == 0)
		return 0;   /* nothing was recorded after the header */
	pc_consult_start(p->pc);
	src_replay_actions(p->rp, p->pc);
	while (!src_replay_done(p->rp) && !pc_consult_ended(p->pc)) {
		pc_consult_tick(p->pc);
		src_replay_actions(p->rp, p->pc);   /* pause, phase... */
	}
	return 0;
}

/* The target as the live report named it: the command line, or the
 * program of an attached pid. */
static char *target_of(const json_t *hdr, int *pid)
{
	const json_t *t = json_object_get(hdr, "target");
	const json_t *argv = json_object_get(t, "argv"), *a;
	char *buf = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&buf, &len);

	*pid = (int)json_integer_value(json_object_get(t, "pid"));
	if (json_array_size(argv) > 0)
		json_array_foreach(argv, i, a) {
			fputs(i ? " " : "", f);   /* quoted as batch mode did */
			cli_quote_word(json_string_value(a) ?: "", f);
		}
	else
		fputs(json_string_value(json_object_get(hdr, "program")), f);
	fclose(f);
	return buf;
}

/* What the journal could not show. */
static void notes(const struct play *p)
{
	if (!src_replay_indexed(p->rp)) {   /* a dashboard left early */
		fprintf(stderr, "hunch replay: left before the journal was "
			"read to its end: its skipped lines and end are not "
			"known\n");
		return;
	}
	for (size_t i = 0; i < src_replay_nbad(p->rp); i++)
		fprintf(stderr, "hunch replay: skipped: %s\n",
			src_replay_bad(p->rp, i));
	if (src_replay_nbad_total(p->rp) > src_replay_nbad(p->rp))
		fprintf(stderr, "hunch replay: skipped: %zu more lines\n",
			src_replay_nbad_total(p->rp) - src_replay_nbad(p->rp));
	if (src_replay_end_message(p->rp))
		fprintf(stderr, "hunch replay: %s\n",
			src_replay_end_message(p->rp));
	if (src_replay_unrecorded(p->rp) > 0)
		fprintf(stderr, "hunch replay: %d experiments the search asked "
			"for were not recorded; they are shown as failed "
			"(not recorded), never invented\n",
			src_replay_unrecorded(p->rp));
}

/* The fields that name the replay itself (docs/replay.md). */
static json_t *replay_json(const struct replay_opts *o, const struct play *p,
			   json_t *changes)
{
	json_t *skipped = json_array(), *sets = json_array();
	const char *end = src_replay_end_message(p->rp);

	for (size_t i = 0; i < src_replay_nbad(p->rp); i++)
		json_array_append_new(skipped,
				      json_string(src_replay_bad(p->rp, i)));
	for (size_t i = 0; i < o->nsets; i++)
		json_array_append_new(sets, json_string(o->sets[i]));
	return json_pack("{s:s,s:I,s:o,s:o,s:i,s:o,s:o}", "journal",
			 o->journal, "ticks",
			 (json_int_t)src_replay_ticks(p->rp), "skipped", skipped,
			 "end", end ? json_string(end) : json_null(),
			 "not_recorded", src_replay_unrecorded(p->rp),
			 "set", sets, "changes",
			 changes ? changes : json_null());
}

static int write_report(const struct replay_opts *o, const struct play *p,
			const struct pc_report_meta *m, json_t *changes)
{
	json_t *j = pc_report_json(p->pc, m);
	FILE *f = fopen(o->report, "w");
	int rc = 0;

	json_object_set_new(j, "replay", replay_json(o, p, changes));
	if (f == NULL || json_dumpf(j, f, JSON_INDENT(2) | JSON_REAL_PRECISION(6)) != 0 ||
	    fputc('\n', f) == EOF)
		rc = -1;
	if (f && fclose(f) != 0)
		rc = -1;
	if (rc)
		fprintf(stderr, "hunch replay: cannot write %s: %s\n",
			o->report, strerror(errno));
	json_decref(j);
	return rc;
}

static int write_json(const char *path, json_t *j)
{
	int rc = json_dump_file(j, path, JSON_INDENT(2)) == 0 ? 0 : -1;

	if (rc)
		fprintf(stderr, "hunch replay: cannot write %s\n", path);
	json_decref(j);
	return rc;
}

static int write_dot(const char *path, const struct pc_consult *pc)
{
	FILE *f = fopen(path, "w");

	if (f == NULL) {
		fprintf(stderr, "hunch replay: cannot write %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	pc_export_dot(pc, f);
	return fclose(f) == 0 ? 0 : -1;
}

static int exports(const struct replay_opts *o, const struct play *p)
{
	struct hunch_err e = { 0 };
	int bad = 0;

	if (o->dot)
		bad |= write_dot(o->dot, p->pc);
	if (o->shg)
		bad |= write_json(o->shg, pc_export_shg_json(p->pc));
	if (o->where)
		bad |= write_json(o->where, pc_export_where_json(p->res));
	if (o->csv && pc_export_csv(p->pc, o->csv, &e) < 0) {
		fprintf(stderr, "hunch replay: %s\n", e.msg);
		bad = -1;
	}
	return bad;
}

/* --set: the recorded search again with the recorded tunables, and the
 * conclusions that differ from it. */
static json_t *compare(const struct replay_opts *o, const struct play *now)
{
	struct play was;
	struct pc_change *c;
	size_t n;
	json_t *j;

	if (play(o->journal, NULL, 0, &was) != 0)
		return NULL;
	n = pc_diff_conclusions(was.pc, now->pc, &c);
	pc_diff_print(c, n, stdout);
	j = pc_diff_json(c, n);
	pc_diff_changes_free(c, n);
	play_free(&was);
	return j;
}

/* The recorded hypotheses summary (the live report's), with the
 * what-if values of --set added to what differs. */
static json_t *replay_config(const json_t *hdr, const struct replay_opts *o)
{
	const json_t *rec = json_object_get(hdr, "config");
	json_t *c, *d;

	if (!json_is_object(rec))
		return NULL;
	c = json_deep_copy(rec);
	d = json_object_get(c, "differs");
	for (size_t i = 0; json_is_array(d) && i < o->nsets; i++) {
		char line[300];

		snprintf(line, sizeof line, "tunable %s (replay --set)",
			 o->sets[i]);
		json_array_append_new(d, json_string(line));
	}
	return c;
}

static int run(const struct replay_opts *o)
{
	struct play p;
	struct pc_report_meta m = { .mode = "replay" };
	char *target;
	json_t *changes = NULL, *cfg;
	int rc, bad = 0;

	if ((rc = play(o->journal, o->sets, o->nsets, &p)) != 0)
		return rc;
	target = target_of(src_replay_header(p.rp), &m.pid);
	m.target = target;
	m.config = cfg = replay_config(src_replay_header(p.rp), o);
	/* The live search's stop, from the journal's end reason
	 * (cli_batch.c): what was still running was stopped, in both. */
	if (src_replay_end_reason(p.rp) &&
	    strcmp(src_replay_end_reason(p.rp), "time_limit") == 0)
		m.stop = "time limit";
	else if (src_replay_end_reason(p.rp) &&
		 strcmp(src_replay_end_reason(p.rp), "signal") == 0)
		m.stop = "interrupted";
	pc_report_text(p.pc, &m, stdout);
	if (o->nsets > 0)
		changes = compare(o, &p);
	fflush(stdout);
	notes(&p);
	if (o->report)
		bad |= write_report(o, &p, &m, changes);
	else
		json_decref(changes);
	bad |= exports(o, &p);
	/* The recorded search's verdict, as batch mode gave it: exit 3
	 * when a top-level hypothesis could not be tested. */
	if (!bad && pc_report_incomplete(p.pc, &m) > 0)
		rc = HUNCH_EXIT_INCOMPLETE;
	free(target);
	json_decref(cfg);
	play_free(&p);
	return bad ? HUNCH_EXIT_TARGET : rc;
}

/* The dashboard on the recorded search (ui_replay.c); UI_FALLBACK when
 * the terminal cannot be used. */
static int dashboard(const struct replay_opts *o)
{
	struct play p;
	struct ui_replay_opts u = { .journal = o->journal };
	char *target;
	int rc;

	if ((rc = open_play(o->journal, o->sets, o->nsets, true, &p)) != 0)
		return rc;
	target = target_of(src_replay_header(p.rp), &u.pid);
	u.label = json_string_value(json_object_get(src_replay_header(p.rp),
						    "program"));
	if (u.label == NULL)
		u.label = target;
	u.rp = p.rp;
	u.cfg = p.cfg;
	rc = ui_replay_run(&u);
	if (rc != UI_FALLBACK)
		notes(&p);
	free(target);
	play_free(&p);
	return rc;
}

/* Files of the end state (--report, exports) need the whole replay, so
 * they keep the printed report. */
static bool wants_dashboard(const struct replay_opts *o)
{
	return ui_session_wanted(o->batch) && o->report == NULL &&
	       o->dot == NULL && o->shg == NULL && o->where == NULL &&
	       o->csv == NULL;
}

int cli_replay(int argc, char **argv)
{
	struct replay_opts o = { 0 };
	struct stat st;
	int rc = parse(argc, argv, &o);

	if (rc == 0 && o.help) {
		rc = cli_help("replay", stdout);
		goto out;
	}
	/* no journal, or a directory: list the journals to pick from */
	if (rc == 0 && (o.journal == NULL ||
			(stat(o.journal, &st) == 0 && S_ISDIR(st.st_mode)))) {
		rc = cli_journals_list(o.journal);
		goto out;
	}
	if (rc == 0 && wants_dashboard(&o)) {
		if ((rc = dashboard(&o)) != UI_FALLBACK)
			goto out;
		fprintf(stderr, "hunch replay: cannot use terminal '%s'; "
			"printing the report\n", getenv("TERM"));
		rc = 0;
	}
	if (rc == 0)
		rc = run(&o);
out:
	free(o.sets);
	return rc;
}

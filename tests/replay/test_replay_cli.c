/*
 * test_replay_cli.c - `hunch replay` through the real command ($HUNCH).
 *
 * A sim search is journaled here and its reports written as batch mode
 * writes them; `hunch replay --batch --report` must print the same text
 * byte for byte, and the same JSON apart from the documented replay
 * fields (target.mode and the "replay" object).  The exports are checked
 * against the recorded search: every SHG node and edge in the dot file
 * (and `dot` parses it when installed), valid JSON, one CSV per metric
 * instance with a row per histogram bucket.  Then --set and bad journals,
 * the journal compressed with gzip (whole, and cut short), and the
 * listing of a directory of journals, newest first.
 */
#include <sys/stat.h>

#include "pc_export.h"
#include "replay_world.h"

static char dir[] = "/tmp/hunch-replay-cli-XXXXXX";
static char journal[300];

static void sc_sync(struct src_sim *sim)
{
	src_sim_script(sim, "sync_wait", "*", 0, 0.6, 0.05);
	src_sim_script(sim, "cpu_inclusive", "*", 0, 0.3, 0.02);
	src_sim_script(sim, "cpu_inclusive", TOP, 0, 0.9, 0.02);
	src_sim_script(sim, "cpu_inclusive", AT(F_MAIN), 0, 0.9, 0.02);
}

static const struct scenario scenario = { "sync and cpu", sc_sync, 8.0 };

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *b = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&b, &len);
	int c;

	while (f && (c = fgetc(f)) != EOF)
		fputc(c, m);
	fclose(m);
	if (f)
		fclose(f);
	return b;
}

static const char *in_dir(const char *name)
{
	static char paths[8][300];
	static int k;
	char *p = paths[k++ % 8];

	snprintf(p, 300, "%s/%s", dir, name);
	return p;
}

/* Run hunch with `args` (shell words); stdout and stderr into files. */
static int hunch(const char *args)
{
	char cmd[2048];
	int st;

	snprintf(cmd, sizeof(cmd), "\"%s\" replay %s >%s/out.txt 2>%s/err.txt",
		 getenv("HUNCH"), args, dir, dir);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void live_reports(struct world *live)
{
	struct pc_report_meta m = { .target = "demo", .pid = 100,
				    .mode = "run" };
	FILE *t = fopen(in_dir("live.txt"), "w");
	FILE *j = fopen(in_dir("live.json"), "w");

	pc_report_text(live->pc, &m, t);
	pc_report_write_json(live->pc, &m, j);
	fclose(t);
	fclose(j);
}

/* The replay's JSON with its own fields put back as live wrote them. */
static char *unreplayed(const char *path, bool *had_fields)
{
	json_t *j = json_load_file(path, 0, NULL);
	json_t *t = json_object_get(j, "target");
	char *s;

	*had_fields = json_is_object(json_object_get(j, "replay")) &&
		      strcmp(json_string_value(json_object_get(t, "mode")),
			     "replay") == 0;
	json_object_del(j, "replay");
	json_object_set_new(t, "mode", json_string("run"));
	s = json_dumps(j, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
	json_decref(j);
	return s;
}

static void test_batch(struct world *live)
{
	char args[1024], *a, *b, *ja, *jb;
	bool fields = false;
	int rc;

	live_reports(live);
	snprintf(args, sizeof(args), "--batch --report %s %s",
		 in_dir("replay.json"), journal);
	rc = hunch(args);
	tap_eq(rc, 0, "hunch replay --batch exits 0");
	a = slurp(in_dir("live.txt"));
	b = slurp(in_dir("out.txt"));
	tap_ok(a && b && strlen(a) > 100 && strcmp(a, b) == 0,
	       "the replayed text report is the live one, byte for byte (%zu bytes)",
	       a ? strlen(a) : 0);
	ja = slurp(in_dir("live.json"));
	jb = unreplayed(in_dir("replay.json"), &fields);
	tap_ok(fields, "the replay's JSON names itself: target.mode \"replay\" and a \"replay\" object");
	tap_ok(ja && jb && strncmp(ja, jb, strlen(jb)) == 0 &&
	       strlen(ja) == strlen(jb) + 1,
	       "apart from those, the JSON report is the live one byte for byte (%zu bytes)",
	       ja ? strlen(ja) : 0);
	free(a);
	free(b);
	free(ja);
	free(jb);
}

/* Every node "s0nI [" and edge "s0nP -> s0nC" of the live search. */
static int dot_missing(struct world *live, const char *dot)
{
	const struct pc_search *s = pc_consult_search(live->pc, 0);
	char want[64];
	int miss = 0;

	for (size_t i = 0; i < s->nn; i++) {
		const struct pc_node *n = s->nodes[i];

		snprintf(want, sizeof(want), "s0n%d [", n->id);
		miss += strstr(dot, want) == NULL;
		for (size_t k = 0; k < n->nkids; k++) {
			snprintf(want, sizeof(want), "s0n%d -> s0n%d ", n->id,
				 n->kids[k].child);
			miss += strstr(dot, want) == NULL;
		}
	}
	return miss;
}

static int csv_rows(const char *path)
{
	char *b = slurp(path);
	int n = 0;

	for (char *p = b; p && *p; p++)
		n += *p == '\n';
	free(b);
	return n - 1;   /* the header line */
}

/* Resources in a list of where-axis trees (each with its children). */
static int count_res(const json_t *list)
{
	const json_t *r;
	size_t i;
	int n = 0;

	json_array_foreach(list, i, r)
		n += json_is_string(json_object_get(r, "path")) ?
		     1 + count_res(json_object_get(r, "children")) : 0;
	return n;
}

static void test_exports(struct world *live)
{
	char args[1024], *dot;
	json_t *shg, *where;
	int bad_rows = 0;

	snprintf(args, sizeof(args),
		 "--batch --export-dot %s --export-shg-json %s "
		 "--export-where-json %s --export-csv %s %s",
		 in_dir("shg.dot"), in_dir("shg.json"), in_dir("where.json"),
		 in_dir("csv"), journal);
	tap_eq(hunch(args), 0, "hunch replay with every export exits 0");
	dot = slurp(in_dir("shg.dot"));
	tap_ok(dot && strncmp(dot, "digraph shg {", 13) == 0 &&
	       dot_missing(live, dot) == 0,
	       "dot: every node and edge of the search is there");
	if (system("command -v dot >/dev/null 2>&1") == 0) {
		snprintf(args, sizeof(args), "dot -Tsvg %s >/dev/null",
			 in_dir("shg.dot"));
		tap_ok(system(args) == 0, "dot parses the export");
	} else {
		tap_ok(1, "dot parses the export # SKIP Graphviz dot is not installed: structure checked by text");
	}
	free(dot);
	shg = json_load_file(in_dir("shg.json"), 0, NULL);
	tap_ok(shg && json_array_size(json_object_get(json_array_get(
			json_object_get(shg, "searches"), 0), "nodes")) ==
	       pc_consult_search(live->pc, 0)->nn,
	       "SHG JSON is valid and holds every node");
	where = json_load_file(in_dir("where.json"), 0, NULL);
	tap_ok(where && (size_t)json_integer_value(json_object_get(where,
			"resources")) == pc_res_tree_count(live->res) &&
	       json_array_size(json_object_get(where, "hierarchies")) == 4 &&
	       count_res(json_object_get(where, "hierarchies")) + 1 ==
	       (int)pc_res_tree_count(live->res),
	       "where-axis JSON is valid: 4 hierarchies, every one of the %zu resources in its tree",
	       pc_res_tree_count(live->res));
	json_decref(shg);
	json_decref(where);
	for (size_t i = 0; i < live->pc->dm.n; i++) {
		const struct pc_minst *m = live->pc->dm.mi[i];
		char name[256], path[600];

		snprintf(path, sizeof(path), "%s/%s", in_dir("csv"),
			 pc_export_csv_name(live->pc, m, name, sizeof(name)));
		bad_rows += csv_rows(path) != pc_hist_used(&m->global,
							   live->pc->now);
	}
	tap_ok(live->pc->dm.n > 5 && bad_rows == 0,
	       "one CSV per metric instance (%zu), a row per histogram bucket",
	       live->pc->dm.n);
}

static void test_set(void)
{
	char args[1024], *out;

	snprintf(args, sizeof(args), "--batch --set PC_CPUThreshold=0.95 %s",
		 journal);
	tap_eq(hunch(args), 0, "--set: exits 0");
	out = slurp(in_dir("out.txt"));
	tap_ok(out && strstr(out, "Changed conclusions") &&
	       strstr(out, "CPUbound</Code,/Process,/SyncObject,/Files>: true since"),
	       "--set PC_CPUThreshold=0.95: the CPU conclusion is listed as changed");
	free(out);
	snprintf(args, sizeof(args), "--batch --set PC_NoSuchThing=1 %s",
		 journal);
	tap_eq(hunch(args), 1, "--set with an unknown tunable: usage error");
}

/* `name` holding `text`: hunch replay's exit status and message. */
static void bad(const char *name, const char *text, int want_rc,
		const char *want_msg)
{
	FILE *f = fopen(in_dir(name), "w");
	char *err;
	int rc;

	fputs(text, f);
	fclose(f);
	rc = hunch(in_dir(name));
	err = slurp(in_dir("err.txt"));
	tap_ok(rc == want_rc && err && strstr(err, want_msg),
	       "%s: exit %d, says \"%s\"", name, want_rc, want_msg);
	if (rc != want_rc || !err || !strstr(err, want_msg))
		tap_diag("rc %d: %s", rc, err ? err : "");
	free(err);
}

/* The real journal with line 60 replaced by garbage. */
static char *corrupt_middle(void)
{
	char *j = slurp(journal), *p = j;

	for (int line = 1; p && line < 60; line++)
		p = strchr(p, '\n') + 1;
	for (; p && *p != '\n'; p++)
		*p = *p == '"' ? '#' : *p;
	return j;
}

/* Cut the journal in the middle of its last line (the corrupt line 60
 * stays whole before it: a cut at a fixed fraction of the file fell in
 * line 60 itself when the live run's journal was short, and that line
 * was reported skipped, not cut). */
static void cut_last_line(char *j)
{
	size_t n = strlen(j);
	char *last;

	if (n > 0 && j[n - 1] == '\n')
		j[--n] = '\0';
	last = strrchr(j, '\n');
	last = last ? last + 1 : j;
	last[strlen(last) / 2] = '\0';
}

static void test_bad(void)
{
	char *mid = corrupt_middle();

	bad("empty.jsonl", "", 2, "is empty");
	bad("notes.txt", "shopping list\n", 2, "not a hunch journal");
	bad("newer.jsonl", "{\"t\":\"header\",\"journal_version\":99}\n", 2,
	    "newer than this hunch reads");
	bad("middle.jsonl", mid, 0, "skipped: ");
	bad("middle.jsonl", mid, 0, "line 60");
	cut_last_line(mid);
	bad("cut.jsonl", strchr(mid, '\n') ? mid : "", 0, "is incomplete");
	free(mid);
}

/* `line` (1-based) of the last command's stdout starts with `want`. */
static void out_line(int line, const char *want, const char *what)
{
	char *out = slurp(in_dir("out.txt")), *p = out;

	for (int i = 1; p != NULL && i < line; i++)
		p = (p = strchr(p, '\n')) ? p + 1 : NULL;
	tap_ok(p != NULL && strncmp(p, want, strlen(want)) == 0,
	       "%s: line %d is \"%.*s\"%s", what, line,
	       (int)strcspn(want, "\n"), want,
	       strchr(want, '\n') ? "" : "...");
	if (p == NULL || strncmp(p, want, strlen(want)) != 0) {
		tap_diag("stdout:");  /* each line a TAP comment */
		for (char *q = out; q != NULL && *q != '\0';) {
			int len = (int)strcspn(q, "\n");

			tap_diag("  %.*s", len, q);
			q += len + (q[len] == '\n');
		}
	}
	free(out);
}

static int sh(const char *fmt, const char *a, const char *b)
{
	char cmd[1024];

	snprintf(cmd, sizeof cmd, fmt, a, b);
	return system(cmd);
}

static void test_gzip(void)
{
	char gz[300], cut[300], *a, *b, *err;
	int rc;

	snprintf(gz, sizeof gz, "%s/search.jsonl.gz", dir);
	snprintf(cut, sizeof cut, "%s/cut.jsonl.gz", dir);
	sh("gzip -9 -c %s >%s", journal, gz);
	rc = hunch(gz);
	a = slurp(in_dir("live.txt"));
	b = slurp(in_dir("out.txt"));
	tap_ok(rc == 0 && a && b && strcmp(a, b) == 0, "gzip-compressed "
	       "journal: exit 0 (%d), the live report byte for byte", rc);
	free(b);
	/* the compressed stream cut at 2/3: killed while gzip wrote */
	sh("f=%s; head -c $(( $(stat -c %%s $f) * 2 / 3 )) $f >%s", gz, cut);
	rc = hunch(cut);
	err = slurp(in_dir("err.txt"));
	tap_ok(rc == 0 && err && strstr(err, "is incomplete: the journal was "
					   "cut there"),
	       "gzip-compressed journal cut short: exit 0 (%d), \"is "
	       "incomplete: the journal was cut there\"", rc);
	free(err);
	free(a);
}

/* The number of lines on the last command's stdout. */
static int out_lines(void)
{
	char *out = slurp(in_dir("out.txt"));
	int n = 0;

	for (char *p = out; p && *p; p++)
		n += *p == '\n';
	free(out);
	return n;
}

/* A copy of the journal in the listing's directory `l`, its header's
 * start time `start` (gzip-compressed when `name` ends in .gz), its
 * file time `mtime` (UTC); its size into *size. */
static void listed(const char *l, const char *name, const char *start,
		   const char *mtime, off_t *size)
{
	char cmd[1200];
	struct stat st;
	bool gz = strstr(name, ".gz") != NULL;

	snprintf(cmd, sizeof cmd, "sed '1s/\"start_wall\":\"[^\"]*\"/"
		 "\"start_wall\":\"%s\"/' %s %s >%s/%s && touch -d '%s UTC' "
		 "%s/%s", start, journal, gz ? "| gzip -9" : "", l, name,
		 mtime, l, name);
	if (system(cmd) != 0)
		tap_diag("could not run: %s", cmd);
	snprintf(cmd, sizeof cmd, "%s/%s", l, name);
	*size = stat(cmd, &st) == 0 ? st.st_size : -1;
}

/* The listing's line for a journal whose header reads (the sim
 * journal: program demo, batch mode). */
static void want_line(char *buf, size_t len, const char *name, off_t size,
		      const char *when)
{
	snprintf(buf, len, "  %-40s %8.1f KiB  %s  %-9s  %s\n", name,
		 (double)size / 1024, when, "batch", "demo");
}

/* The listing is newest first by the time it shows: each search's start
 * time from its header, whatever the files' times say (here they say
 * the opposite); a file whose header cannot be read, or holds no time,
 * is placed and shown by its file time, and says so. */
static void test_listing(void)
{
	char l[300], want[600];
	off_t sa, sb, sc, sd;
	int rc;

	snprintf(l, sizeof l, "%s/list", dir);
	sh("mkdir %s%s", l, "");
	listed(l, "a.jsonl", "2026-03-01T09:00:00.000000Z", "2026-01-01 10:00",
	       &sa);
	listed(l, "b.jsonl.gz", "2026-02-01T09:00:00.500000Z",
	       "2026-01-02 10:00", &sb);
	listed(l, "c.jsonl", "2026-02-01T09:00:00.250000Z", "2026-01-03 10:00",
	       &sc);
	listed(l, "d.jsonl", "yesterday", "2026-01-15 10:00", &sd);
	sh("echo shopping >%s/notes.txt && echo list >%s/bad.jsonl", l, l);
	sh("touch -d '2026-02-01 12:00 UTC' %s/bad.jsonl %s/notes.txt", l, l);
	rc = hunch(l);
	tap_eq(rc, 0, "hunch replay DIR: exit 0");
	snprintf(want, sizeof want, "hunch replay: 5 journals in %s, newest "
		 "first by start time (UTC):\n", l);
	out_line(1, want, "hunch replay DIR: the title");
	want_line(want, sizeof want, "a.jsonl", sa, "2026-03-01T09:00:00");
	out_line(2, want, "the latest start first, its file the oldest");
	snprintf(want, sizeof want, "  %-40s %8.1f KiB  2026-02-01T12:00:00  "
		 "(the file's time: cannot read its header: %s/bad.jsonl is "
		 "not a hunch journal: line 1 is not JSON (a journal starts "
		 "with {\"t\":\"header\",...}))\n", "bad.jsonl", 5 / 1024.0, l);
	out_line(3, want, "a file no journal: by its file time, saying so");
	want_line(want, sizeof want, "b.jsonl.gz", sb, "2026-02-01T09:00:00");
	out_line(4, want, "compressed, started 0.25 s after c");
	want_line(want, sizeof want, "c.jsonl", sc, "2026-02-01T09:00:00");
	out_line(5, want, "c after b in the same second");
	snprintf(want, sizeof want, "  %-40s %8.1f KiB  2026-01-15T10:00:00  "
		 "(the file's time: its header's start_wall \"yesterday\" "
		 "is not a UTC time like 2026-01-02T10:00:00.000000Z)\n",
		 "d.jsonl",
		 (double)sd / 1024);
	out_line(6, want, "a header with no time: by its file time, saying so");
	snprintf(want, sizeof want, "replay one: hunch replay %s/a.jsonl\n",
		 l);
	out_line(7, want, "hunch replay DIR: the newest readable to replay");
	tap_eq(out_lines(), 7, "hunch replay DIR: 7 lines, notes.txt left out");
	rc = sh("XDG_STATE_HOME=%s \"$HUNCH\" replay >%s/out.txt", l, dir);
	snprintf(want, sizeof want, "hunch replay: no journals yet: "
		 "searches write them in %s/hunch/journals\n", l);
	tap_eq(rc, 0, "hunch replay alone: exit 0");
	out_line(1, want, "hunch replay alone: the default directory");
}

int main(void)
{
	struct world *live;

	if (mkdtemp(dir) == NULL || getenv("HUNCH") == NULL) {
		tap_diag("no temporary directory or $HUNCH");
		return 2;
	}
	snprintf(journal, sizeof(journal), "%s/search.jsonl", dir);
	live = rw_record(&scenario, journal, NULL);
	test_batch(live);
	test_exports(live);
	test_set();
	test_bad();
	test_gzip();
	test_listing();
	world_free(live);
	snprintf(journal, sizeof(journal), "rm -rf %s", dir);
	if (system(journal) != 0)
		tap_diag("could not remove %s", dir);
	return tap_done();
}

/*
 * test_journal_path.c - where journals go: the XDG default and its
 * fallback, file names from awkward program names, 0700 directories and
 * 0600 files, two searches in one second, --journal FILE, --no-journal.
 */
#include <errno.h>
#include <sys/stat.h>

#include "jnl_path.h"
#include "jtest.h"
#include "tap.h"

/* A fake environment: tests pass it where hunch passes getenv. */
static const char *env_state, *env_home;

static char *fake_env(const char *name)
{
	if (strcmp(name, "XDG_STATE_HOME") == 0)
		return (char *)env_state;
	if (strcmp(name, "HOME") == 0)
		return (char *)env_home;
	return NULL;
}

static void test_dir(void)
{
	char buf[512];
	struct hunch_err err = { 0 };

	env_state = "/st";
	env_home = "/home/u";
	tap_ok(jnl_path_default_dir(buf, sizeof(buf), fake_env, NULL) == 0 &&
	       strcmp(buf, "/st/hunch/journals") == 0,
	       "$XDG_STATE_HOME/hunch/journals");
	env_state = "relative/state";
	tap_ok(jnl_path_default_dir(buf, sizeof(buf), fake_env, NULL) == 0 &&
	       strcmp(buf, "/home/u/.local/state/hunch/journals") == 0,
	       "a relative $XDG_STATE_HOME is ignored (XDG says so): ~/.local/state");
	env_state = NULL;
	tap_ok(jnl_path_default_dir(buf, sizeof(buf), fake_env, NULL) == 0 &&
	       strcmp(buf, "/home/u/.local/state/hunch/journals") == 0,
	       "no $XDG_STATE_HOME: ~/.local/state/hunch/journals");
	env_home = NULL;
	tap_ok(jnl_path_default_dir(buf, sizeof(buf), fake_env, &err) ==
	       -ENOENT && strcmp(err.msg, "no place for the journal: neither $XDG_STATE_HOME nor $HOME is an absolute path; "
		      "set one, name the file with --journal FILE, or pass --no-journal") == 0,
	       "neither: a message that says what to do");
}

static void test_names(void)
{
	static const struct { const char *prog, *want; } cases[] = {
		{ "/usr/bin/gzip", "/d/gzip-20261122T080000Z.jsonl" },
		{ "./my prog;rm -rf", "/d/my_prog_rm_-rf-20261122T080000Z.jsonl" },
		{ "..", "/d/_.-20261122T080000Z.jsonl" },
		{ "", "/d/target-20261122T080000Z.jsonl" },
		{ NULL, "/d/target-20261122T080000Z.jsonl" },
		{ "dir/", "/d/target-20261122T080000Z.jsonl" },
		{ "python3.11", "/d/python3.11-20261122T080000Z.jsonl" },
	};
	char buf[512];

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		jnl_path_default_name(buf, sizeof(buf), "/d", cases[k].prog, 1795334400);
		tap_ok(strcmp(buf, cases[k].want) == 0, "program \"%s\" -> %s",
		       cases[k].prog ? cases[k].prog : "(null)", buf);
	}
}

static mode_t mode_of(const char *p)
{
	struct stat sb;

	return stat(p, &sb) == 0 ? sb.st_mode & 07777 : 0;
}

static void test_open_for_search(void)
{
	json_t *hyp, *tun;
	struct jnl_header h = jt_header(&hyp, &tun);
	struct jnl_writer *w1, *w2, *w3;
	struct jnl_choice def = { 0 }, off = { .disabled = true }, named;
	char state[300], dir[400], want[500], file[300];

	jt_path(state, sizeof(state), "state");
	env_state = state;
	snprintf(dir, sizeof(dir), "%s/hunch/journals", state);
	tap_ok(jnl_path_open_for_search(&w1, &def, &h, NULL, fake_env, NULL) ==
			       0 &&
		       w1 != NULL,
	       "default journal opened");
	snprintf(want, sizeof(want), "%s/prog-20261122T080000Z.jsonl", dir);
	tap_ok(w1 && strcmp(jnl_write_path(w1), want) == 0,
	       "named after the program and the start time");
	tap_ok(mode_of(dir) == 0700 && mode_of(want) == 0600,
	       "directory 0700, file 0600 (command lines and output are private)");
	jnl_path_open_for_search(&w2, &def, &h, NULL, fake_env, NULL);
	snprintf(want, sizeof(want), "%s/prog-20261122T080000Z-2.jsonl", dir);
	tap_ok(w2 && strcmp(jnl_write_path(w2), want) == 0,
	       "a second search in the same second gets -2, never overwrites");
	tap_ok(jnl_path_open_for_search(&w3, &off, &h, NULL, fake_env, NULL) ==
			       0 &&
		       w3 == NULL,
	       "--no-journal: no writer");
	jt_path(file, sizeof(file), "mine.jsonl");
	named = (struct jnl_choice){ .path = file };
	tap_ok(jnl_path_open_for_search(&w3, &named, &h, NULL, fake_env, NULL) == 0 &&
	       w3 && strcmp(jnl_write_path(w3), file) == 0,
	       "--journal FILE: that file");
	jnl_write_close(w1, NULL);
	jnl_write_close(w2, NULL);
	jnl_write_close(w3, NULL);
	json_decref(hyp);
	json_decref(tun);
}

static void test_cannot_create(void)
{
	json_t *hyp, *tun;
	struct jnl_header h = jt_header(&hyp, &tun);
	struct jnl_writer *w;
	struct jnl_choice named = { .path = "/proc/hunch-no/j.jsonl" };
	struct hunch_err err = { 0 };

	tap_ok(jnl_path_open_for_search(&w, &named, &h, NULL, fake_env, &err) == -ENOENT &&
	       w == NULL &&
	       strcmp(err.msg, "cannot create journal /proc/hunch-no/j.jsonl: No such file or directory; "
		      "choose another file with --journal FILE, or --no-journal") == 0,
	       "an impossible --journal FILE: \"%s\"", err.msg);
	json_decref(hyp);
	json_decref(tun);
}

int main(void)
{
	test_dir();
	test_names();
	test_open_for_search();
	test_cannot_create();
	jt_rm_tmpdir();
	return tap_done();
}

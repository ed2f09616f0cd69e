/*
 * jnl_path.h - where journals go, and the CLI's --journal / --no-journal.
 *
 * Every search writes a journal unless told not to.  By default it is
 * $XDG_STATE_HOME/hunch/journals/<program>-<UTC start>.jsonl (XDG's
 * state directory is for "history, logs, recently used files": a
 * journal is exactly that; it falls back to ~/.local/state).  The
 * directory is created 0700 and files 0600: journals hold command lines
 * and program output.
 */
#ifndef JNL_PATH_H
#define JNL_PATH_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "hunch_err.h"
#include "jnl_write.h"

/* What the command line asked for. */
struct jnl_choice {
	const char *path;   /* --journal FILE, or NULL for the default */
	bool disabled;      /* --no-journal */
};

/* The default directory, from `env` (pass getenv; tests pass their own):
 * $XDG_STATE_HOME/hunch/journals, else $HOME/.local/state/hunch/journals. */
int jnl_path_default_dir(char *buf, size_t len, char *(*env)(const char *),
		    struct hunch_err *err);

/* "<dir>/<program>-YYYYmmddTHHMMSSZ.jsonl"; the program name is reduced
 * to its basename and characters that are awkward in file names
 * (anything but letters, digits, '.', '-', '_') become '_'. */
int jnl_path_default_name(char *buf, size_t len, const char *dir,
		     const char *program, time_t start);


/* Open the journal of a search as the CLI asked: *out stays NULL for
 * --no-journal.  The default name is created with O_EXCL, adding -2,
 * -3, ... when two searches of one program start in the same second. */
int jnl_path_open_for_search(struct jnl_writer **out,
			     const struct jnl_choice *c,
			     const struct jnl_header *h,
			     const struct jnl_writer_opts *opts,
			     char *(*env)(const char *), struct hunch_err *err);

#endif

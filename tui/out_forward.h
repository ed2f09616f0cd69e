/*
 * out_forward.h - a launched program's stdout and stderr, journaled in
 * batch mode without hunch standing between the program and its output.
 *
 * The program writes into two pipes read by a forwarder process (forked
 * before the launch, never ptraced, not hunch's child).  The forwarder
 * writes every byte at once to the original stdout/stderr, then sends a
 * tagged copy to hunch for the journal.  If hunch dies (even SIGKILL)
 * the forwarder keeps forwarding and drops the copies, so the program
 * neither loses a byte nor gets a SIGPIPE.
 *
 * When hunch's stdout and stderr are one file (2>&1), the program gets
 * one pipe for both (prog_fd[0] == prog_fd[1]), so the order in which
 * it wrote its two streams is kept, on the file and in the journal
 * (whose records are then all stdout).
 */
#ifndef OUT_FORWARD_H
#define OUT_FORWARD_H

#include <stdbool.h>
#include <stddef.h>

struct jnl_writer;

struct out_fwd {
	int copy_fd;           /* hunch's end of the copies; -1 at EOF */
	int prog_fd[2];        /* the program's stdout/stderr; -1 once
				  launched (out_forward_launched) */
	bool merged;           /* one pipe for both: hunch's are one file */
	unsigned char *in;     /* copies read, not yet parsed */
	size_t nin, capin;
	unsigned char *line[2];  /* each stream's line so far */
	size_t nline[2], capline[2];
};

/* Start the forwarder; on success the program's stdout/stderr fds are
 * f->prog_fd[0] and [1].  -1 with errno if it could not start (then
 * the program just inherits hunch's stdout/stderr as before). */
int out_forward_start(struct out_fwd *f);

/* The program has its copies of the pipes: hunch closes its own. */
void out_forward_launched(struct out_fwd *f);

/* Journal the copies pending now, without blocking (jw NULL: drop). */
void out_forward_pump(struct out_fwd *f, struct jnl_writer *jw);

/* The program has ended: journal its copies until the forwarder has
 * passed everything on (EOF), or nothing came for `idle_ms` (a child of
 * the program still holds the pipes).  Then the report may follow. */
void out_forward_drain(struct out_fwd *f, struct jnl_writer *jw, int idle_ms);

/* Stop reading copies (the forwarder runs on) and free. */
void out_forward_close(struct out_fwd *f);

#endif

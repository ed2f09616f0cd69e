/*
 * ui_editor.c - handing the terminal to $VISUAL or $EDITOR for a file and
 * taking it back, as Ctrl-Z does (ui_screen.c): endwin() first, so the
 * editor gets the terminal in its normal modes, then the program mode and
 * a full repaint.
 *
 * The editor runs in the foreground while hunch waits for it; the
 * program under hunch keeps running (whatever it reports through ptrace
 * waits until the editor exits, as during Ctrl-Z).  hunch blocks the
 * signals its signalfd reads; the editor must not inherit that mask, or
 * Ctrl-C and window resizes would never reach it.
 */
#include "ui.h"
#include "ui_panes.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* sh -c so that EDITOR may carry arguments ("code --wait", "vi -n"). */
static const char *const editor_cmd =
	"exec ${VISUAL:-${EDITOR:-vi}} \"$1\"";

static void child(const char *path)
{
	sigset_t none;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	execl("/bin/sh", "sh", "-c", editor_cmd, "sh", path, (char *)NULL);
	_exit(127);
}

int ui_editor_run(struct ui *u, const char *path, char *err, size_t len)
{
	pid_t pid;
	int st = 0, r;

	fflush(u->tty_out);
	endwin();
	pid = fork();
	if (pid == 0)
		child(path);
	if (pid < 0) {
		snprintf(err, len, "cannot start the editor: %s",
			 strerror(errno));
		r = -1;
	} else {
		while ((r = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
			;
		if (r < 0)
			snprintf(err, len, "lost the editor: %s",
				 strerror(errno));
		else if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
			snprintf(err, len, "could not run the editor "
				 "(${VISUAL:-${EDITOR:-vi}}): exit status 127");
		r = r < 0 ? -1 : (WIFEXITED(st) ? WEXITSTATUS(st) :
				  128 + WTERMSIG(st));
	}
	reset_prog_mode();
	ui_screen_resize(u);
	u->force_full = true;
	u->dirty = UI_D_ALL;
	return r;
}

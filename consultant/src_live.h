/*
 * src_live.h - the live source: the engine behind the pc_source seam.
 *
 * This is the one consultant file that includes engine headers.  It turns
 * what the engine sees (modules, functions, threads, process events) into
 * discoveries and target events, and owns the engine objects, so that the
 * command line and the dashboard never call the engine directly.
 */
#ifndef SRC_LIVE_H
#define SRC_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "hunch_err.h"
#include "pc_config.h"
#include "pc_source.h"

struct src_live_launch {
	char *const *argv;      /* argv[0] is the program */
	char *const *envp;      /* NULL: hunch's environment */
	const char *cwd;        /* NULL: hunch's */
	const char *rtlib;      /* NULL: no runtime library */
	int stdout_fd, stderr_fd, stdin_fd;  /* -1: inherit */
};

/* What happened to the target, as of the last pump. */
struct src_live_status {
	bool ended;       /* exited or killed */
	bool killed;      /* by signal `signo` */
	bool core;
	int exit_code;
	int signo;
	int nthreads;     /* live threads */
	bool stopped;     /* job-control stopped (SIGSTOP, or SIGTSTP and
			   * friends left to their default action) */
};

/* The where axis of a program file, without running it. */
int src_live_open_file(const char *path, struct pc_source **out,
		       struct hunch_err *err);
/* Launch and stop at main; the program is stopped on return. */
int src_live_launch(const struct src_live_launch *o, struct pc_source **out,
		    struct hunch_err *err);
/* Attach (all threads stopped on return). */
int src_live_attach(pid_t pid, const char *rtlib, struct pc_source **out,
		    struct hunch_err *err);

int src_live_resume(struct pc_source *s, struct hunch_err *err);
/* Process whatever the engine has to report (waiting up to timeout_ms). */
int src_live_pump(struct pc_source *s, int timeout_ms,
		  struct src_live_status *st);
/* Detach cleanly (restores every byte hunch changed). */
int src_live_detach(struct pc_source *s, struct hunch_err *err);
int src_live_kill(struct pc_source *s);

/* Turn on the metric operations (predict, enable, samples, cost) after
 * launch or attach with the runtime library: creates the sampler, the
 * instrumentation manager and the metric compiler.  `cfg` is borrowed
 * (the metric definitions) and must outlive the source.  Samples are
 * taken by src_live_pump when a sample period has passed, so pump at
 * least that often (src_live_due_ms). */
int src_live_metrics_start(struct pc_source *s, const struct pc_config *cfg,
			   struct hunch_err *err);
/* Remove every instance's code and stop measuring (the program runs on
 * as it was; enables are refused from now on). */
void src_live_metrics_stop(struct pc_source *s);
/* Enabled instrumented instances (tests). */
size_t src_live_ninstances(const struct pc_source *s);
/* Milliseconds until the next sample is due (-1: not measuring). */
int src_live_due_ms(const struct pc_source *s);

pid_t src_live_pid(const struct pc_source *s);
/* Debug files fetched from debuginfod in the background (DEBUGINFOD_URLS
 * set, no local debug file; src_live_debug.c): each pump and each
 * poll_resources gives the modules whose file arrived their names, as
 * function resources.  A command-line tool may wait for every fetch (up
 * to timeout_ms; -ETIMEDOUT) before reading the resources.
 * src_live_debug_note takes the next progress message for hunch's log
 * ("fetching debug info for ... from debuginfod..."). */
int src_live_debug_wait(int timeout_ms);
bool src_live_debug_note(char *buf, size_t len);
/* Main address and whether the launch stopped there (for messages). */
bool src_live_rtlib_ready(const struct pc_source *s);

/* Follow child processes (fork, vfork, process clones) as
 * /Process/<pid> with the kernel's measures: on for a launched program,
 * off for an attached one until asked (src_live_fork.c). */
void src_live_fork_set_follow(struct pc_source *s, bool on);
/* Are children followed (the launched default, or --follow)? */
bool src_live_fork_following(const struct pc_source *s);
/* Attach --tree: follow, and take the process's children (and, found
 * under them later, their descendants) as children followed. */
void src_live_fork_adopt_tree(struct pc_source *s);
/* Processes seen (the program and every child followed). */
size_t src_live_fork_processes(const struct pc_source *s);

#endif

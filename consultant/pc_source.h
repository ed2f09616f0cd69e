/*
 * pc_source.h - the seam between the consultant and whatever feeds it.
 *
 * The consultant never talks to ptrace or files: it talks to a source.
 * A live source wraps the engine (src_live.c); a replay source reads a
 * journal; a sim source scripts values for tests.  This header grows with
 * the issues (enable/disable metrics, samples, cost); today it carries
 * resource discovery and target events.
 */
#ifndef PC_SOURCE_H
#define PC_SOURCE_H

#include <stdbool.h>
#include <stdint.h>

enum pc_disc_kind {
	PC_DISC_FUNCTION,   /* module, srcfile, function, addr */
	PC_DISC_PROCESS,    /* pid */
	PC_DISC_THREAD,     /* pid, tid, function (start routine) */
	PC_DISC_SYNCOBJ,    /* sync_class, name, addr */
	PC_DISC_FILE,       /* name (path) */
};

/* One resource found (or, with `retired`, gone). Strings are borrowed. */
struct pc_discovery {
	enum pc_disc_kind kind;
	bool retired;
	const char *module;     /* functions: the module's display name */
	const char *srcfile;    /* functions: source file basename or NULL */
	const char *function;   /* functions; threads: start function */
	const char *sync_class; /* "Mutex", "CondVar", ... */
	const char *name;       /* sync objects and files */
	uint64_t addr;
	int pid, tid;
};

/* Target events the consultant must know about. */
enum pc_target_event {
	PC_TARGET_EXITED,    /* code = exit status */
	PC_TARGET_KILLED,    /* code = signal number */
	PC_TARGET_EXEC,
	PC_TARGET_DETACHED,
};

typedef void (*pc_disc_fn)(void *arg, const struct pc_discovery *d);

struct pc_source;

struct pc_source_ops {
	const char *kind;  /* "live", "replay", "sim" */
	/* Report every resource discovered or retired since the last call. */
	int (*poll_resources)(struct pc_source *s, pc_disc_fn fn, void *arg);
	void (*close)(struct pc_source *s);
};

struct pc_source {
	const struct pc_source_ops *ops;
	void *impl;
};

#endif

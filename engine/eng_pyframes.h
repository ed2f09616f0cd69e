/*
 * eng_pyframes.h - Python-level stacks of a live CPython 3.11 process,
 * read from its memory with process_vm_readv: the target is never
 * stopped.
 *
 * Opening finds CPython's `_PyRuntime` and `Py_Version` in the target's
 * executable or in a mapped libpython3.x.so (their dynamic symbols), and
 * checks the version in memory: only 3.11's structure layout is known
 * (a table of offsets in eng_pyframes.c, checked against CPython's own
 * headers by tests/pyframes), so any other version is refused with a
 * reason, never read wrongly.
 *
 * A read walks every thread state of every interpreter and, for each,
 * its chain of interpreter frames (innermost first), naming each
 * frame's code object (qualified name, file) and the line of the
 * instruction it is executing (the 3.11 location table).  The target
 * runs while it is read, so every pointer, type and size is checked,
 * the walk is bounded (ENG_PYF_MAX_DEPTH frames, ENG_PYF_MAX_STR bytes
 * a string) and a stack that fails a check is dropped whole: a frame is
 * never invented.
 */
#ifndef ENG_PYFRAMES_H
#define ENG_PYFRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hunch_err.h"

#define ENG_PYF_MAX_DEPTH 256   /* frames of one stack */
#define ENG_PYF_MAX_STR 1024    /* bytes of a name or file (UTF-8) */

/* Why a process's Python stacks cannot be read. */
enum eng_pyframes_why {
	ENG_PYF_OK,
	ENG_PYF_NOT_PYTHON,     /* no _PyRuntime and Py_Version */
	ENG_PYF_VERSION,        /* a CPython other than 3.11 */
	ENG_PYF_UNREADABLE,     /* its memory cannot be read */
	ENG_PYF_NO_MAPS,        /* /proc/PID/maps cannot be read */
	ENG_PYF_NWHY
};
const char *eng_pyframes_why_text(enum eng_pyframes_why why);

/* A code object as read once (cached by address, checked to be the same
 * object at every read).  Stable until eng_pyframes_close. */
struct eng_pycode {
	uint64_t addr;
	char *qualname;         /* UTF-8 */
	char *file;             /* co_filename, UTF-8 */
	int firstline;
};

struct eng_pyframe {
	const struct eng_pycode *code;
	int line;               /* of the instruction executing; 0 unknown */
	bool entry;             /* the first frame of a C-level call of the
				 * interpreter (_PyEval_EvalFrameDefault):
				 * frames up to and including it run in the
				 * innermost such call, the next ones in
				 * the one that called it, ... */
};

struct eng_pystack {
	pid_t tid;              /* the Linux thread (native_thread_id) */
	int nframes;            /* innermost first; 0: no Python running */
	struct eng_pyframe f[ENG_PYF_MAX_DEPTH];
};

struct eng_pyframes_stats {
	uint64_t reads;         /* eng_pyframes_read calls */
	uint64_t stacks;        /* stacks handed on */
	uint64_t dropped;       /* stacks that failed a check */
	uint64_t code_hits, code_misses;
	uint64_t read_ns;       /* hunch CPU time in eng_pyframes_read */
};

struct eng_pyframes;

/* Find CPython in process `pid`.  ENG_PYF_OK and *out, or the reason
 * (*out NULL) with err naming the pid and the file. */
enum eng_pyframes_why eng_pyframes_open(pid_t pid, struct eng_pyframes **out,
					struct hunch_err *err);
void eng_pyframes_close(struct eng_pyframes *pf);
/* "3.11.2" and the file that holds the runtime. */
const char *eng_pyframes_version(const struct eng_pyframes *pf);
const char *eng_pyframes_file(const struct eng_pyframes *pf);

typedef void (*eng_pyframes_fn)(void *arg, const struct eng_pystack *s);
/* Read the Python stack of every thread (only those in `tids` when
 * ntids > 0) and hand each valid one to fn.  Returns the number handed
 * on, or -errno when the process's memory cannot be read at all (it
 * exited). */
int eng_pyframes_read(struct eng_pyframes *pf, const pid_t *tids,
		      size_t ntids, eng_pyframes_fn fn, void *arg);
const struct eng_pyframes_stats *
eng_pyframes_stats(const struct eng_pyframes *pf);

/* The line of code unit `index` (prev_instr's) from a 3.11 location
 * table (co_linetable) starting at `firstline`; -1 before the first
 * instruction gives firstline; 0 when the table says "no location". */
int eng_pyframes_code_line(const uint8_t *table, size_t len, int firstline,
		      long index);

#endif

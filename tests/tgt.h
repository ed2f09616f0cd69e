/*
 * tgt.h - the tests' launched target: a program started under hunch's
 * engine with the runtime library, shared memory, a sampler and the
 * instrumentation manager, its stdin and stdout on pipes; waiting for
 * its lines while handling ptrace events and sampling.  Shared by the
 * instrumentation and metric tests (tests/inst, tests/metric).
 */
#ifndef TESTS_TGT_H
#define TESTS_TGT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "eng_inst.h"
#include "eng_proc.h"
#include "eng_sampler.h"
#include "eng_shm.h"
#include "eng_image.h"

struct tgt {
	struct eng_proc *p;
	struct eng_shm *shm;
	struct eng_sampler *smp;
	struct eng_inst *in;
	struct eng_image *img;
	uint64_t base;          /* runtime = base + image-relative */
	int to, from;           /* stdin, stdout pipes */
	char out[1 << 16];      /* everything printed so far */
	size_t outlen, seen;
	bool ended;
	struct eng_image *libimg[8];  /* images opened by fns_prepare_lib */
	uint32_t guard_var;           /* tests' scratch */
	bool count_calls;             /* IM_COUNTERS also at call sites
					 (before the call: call_var) */
	size_t nlib;
	int status;             /* exit code or -signal */
	/* Library load/unload events seen by tgt_pump, kept until a test
	 * takes them with tgt_wait_lib: any pump may be the one that
	 * receives them, so dropping them there lost the event under load. */
	struct eng_event *libev;
	size_t nlibev;
};

/* Launch `path` with argv (NULL-terminated, argv[0] included) stopped at
 * main, with rtlib, sampler and instrumentation manager.  0 or -1. */
int tgt_launch(struct tgt *t, const char *path, char *const *argv);
/* The same with the target's stdin/stdout given (no pipes kept here). */
int tgt_launch_fds(struct tgt *t, const char *path, char *const *argv,
		   int in_fd, int out_fd);
/* Wait until the target printed a line equal to `line` (ms timeout). */
int tgt_wait_line(struct tgt *t, const char *line, int ms);
int tgt_send(struct tgt *t, const char *s);
int tgt_wait_exit(struct tgt *t, int ms);
/* Poll events and output for `ms`. */
void tgt_pump(struct tgt *t, int ms);
/* What polled events say of the target: its end (ended, status), and
 * library loads and unloads kept for tgt_wait_lib. */
void tgt_take_events(struct tgt *t, const struct eng_event *ev, int n);
/* Pump until every thread of the target is asleep (state S: blocked,
 * e.g. in a barrier or a read), then once more so the sampler reads the
 * values they left; 0, or -1 after `ms`.  What a test checks after "all
 * workers reached the barrier" must not depend on a fixed delay: under
 * load a worker may not have run the last instructions before it. */
int tgt_wait_asleep(struct tgt *t, int ms);
/* Pump until a kept library event of `kind` whose path contains `lib`
 * (taken off the queue, copied to *out if not NULL); 0, or -1 when the
 * target ended or `ms` passed. */
int tgt_wait_lib(struct tgt *t, enum eng_event_kind kind, const char *lib,
		 struct eng_event *out, int ms);
/* Kill the target if it runs, free what tgt_launch made, close the
 * images (tests/inst's tgt_fini also drops their parses first). */
void tgt_close(struct tgt *t);

/* Every function of the executable compared with the file (its code
 * restored, or never patched): how many differ, each named on stderr. */
size_t tgt_code_mismatches(struct tgt *t);
/* A path under the build tree ($HUNCH_BUILD_ROOT). */
const char *build_path(const char *rel);

#endif

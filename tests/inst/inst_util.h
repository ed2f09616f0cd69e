/*
 * inst_util.h - helpers for the instrumentation tests: launching a
 * target under hunch with the runtime library and pipes, waiting for its
 * lines while handling ptrace events and sampling, and a STAND-IN for
 * the function parser (arch/x86_64/x86_parse.c, written elsewhere): a
 * linear capstone decode that finds entry and exit points with the
 * borrowing rules of x86_parse.h, conservatively.
 */
#ifndef INST_UTIL_H
#define INST_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "eng_inst.h"
#include "eng_proc.h"
#include "eng_sampler.h"
#include "eng_shm.h"
#include "eng_symbols.h"
#include "x86_parse.h"

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
void tgt_fini(struct tgt *t);

/* The engine's parser: points of one function, image-relative, in an
 * x86_func the caller owns (su_free); su_forget before closing img. */
int su_parse(const struct eng_image *img, const struct eng_func *f,
	     struct x86_func *out);
void su_free(struct x86_func *f);
void su_forget(const struct eng_image *img);

/* Counter at entry and exit of every function of the executable (and
 * whose name starts with prefix, if not NULL); fills ids.  Returns the
 * number of points requested. */
/* IM_BOTH: a counter mini and a wall-timer mini at every point */
enum inst_mode { IM_COUNTERS, IM_WALL, IM_CPU, IM_BOTH };
struct fn_ctr {
	const struct eng_func *f;
	const struct eng_image *img; /* the file holding f */
	uint64_t base;               /* its runtime = base + image-relative */
	struct x86_func xf;          /* stand-in parse */
	uint32_t entry_var, exit_var, wall_var, cpu_var, call_var;
	uint64_t entry_h, exit_h, wall_h, cpu_h, call_h;
	size_t ncall;                /* call-site requests (count_calls) */
	size_t nentry, nexit;        /* requests active at entry, exits */
	uint32_t req[16];
	uint8_t req_kind[16];        /* enum x86_point_kind of each */
	size_t nreq;
	size_t nrefused;             /* requests refused at commit */
	const char *why;             /* a refused point, if any */
	const char *trap_why;        /* why a point went to the trap */
};
/* Parse every function (name prefix, NULL for all) and allocate its
 * variables. */
struct fn_ctr *fns_prepare(struct tgt *t, const char *prefix, size_t *n);
/* The same for the named functions of a loaded library (file name
 * starting with `lib`, e.g. "libc.so"); functions missing are skipped. */
struct fn_ctr *fns_prepare_lib(struct tgt *t, const char *lib,
			       const char *const *names, size_t *n);
/* Queue requests of `mode` at every point of every function, commit;
 * returns points instrumented or a negative error. */
int fns_instrument(struct tgt *t, struct fn_ctr *c, size_t n,
		   enum inst_mode mode);
/* Queue removal of every request, commit. */
int fns_remove(struct tgt *t, struct fn_ctr *c, size_t n);
void fns_free(struct fn_ctr *c, size_t n);
int instrument_counters(struct tgt *t, const char *prefix,
			struct fn_ctr **out, size_t *n);

/* Every patched byte equals the file's?  Counts mismatches over every
 * function of the image. */
/* A wall (cpu false) or CPU timer `h` at every entry and exit point of
 * xf (started at entries, stopped at exits; call sites left alone):
 * how many points were queued (the caller commits). */
int add_timer(struct tgt *t, const struct x86_func *xf, uint64_t h, bool cpu);
size_t code_mismatches(struct tgt *t);

const char *build_path(const char *rel);

#endif

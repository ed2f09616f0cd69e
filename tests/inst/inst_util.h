/*
 * inst_util.h - helpers for the instrumentation tests, over the launched
 * target of tests/tgt.h: a STAND-IN for
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

#include "tgt.h"
#include "x86_parse.h"

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

/* A wall (cpu false) or CPU timer `h` at every entry and exit point of
 * xf (started at entries, stopped at exits; call sites left alone):
 * how many points were queued (the caller commits). */
int add_timer(struct tgt *t, const struct x86_func *xf, uint64_t h, bool cpu);


#endif

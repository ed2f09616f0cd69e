/*
 * eng_inst_int.h - private state of the instrumentation manager, shared
 * by eng_inst.c (requests, points, commit) and eng_inst_threads.c (the
 * stopped threads' PCs and stack words).
 */
#ifndef ENG_INST_INT_H
#define ENG_INST_INT_H

#include <sys/types.h>
#include <sys/user.h>

#include "eng_codemem.h"
#include "eng_inst.h"
#include "eng_inst_cost.h"
#include "x86_reloc.h"

/* Every stopped thread, read once per commit. */
struct inst_thread {
	pid_t tid;
	struct user_regs_struct regs;
	bool regs_changed;
};

struct inst_threads {
	struct inst_thread *t;
	size_t n;
	uint64_t *words;        /* every stack word of every thread, sorted */
	size_t nwords;
};

/* The target's mappings (from /proc/<pid>/maps), and the end of the
 * one holding an address (0 if none): how far a stack can be read. */
struct inst_range { uint64_t lo, hi; };
size_t eng_inst_threads_read_maps(pid_t pid, struct inst_range **out);
uint64_t eng_inst_threads_map_end(const struct inst_range *r, size_t n,
				  uint64_t a);

int eng_inst_threads_read(struct eng_proc *p, struct inst_threads *th,
		      struct hunch_err *err);
void eng_inst_threads_free(struct inst_threads *th);
/* Is a PC (any thread) or a stack word in [lo, hi)? */
bool eng_inst_threads_pc_in(const struct inst_threads *th, uint64_t lo,
			uint64_t hi);
bool eng_inst_threads_word_in(const struct inst_threads *th, uint64_t lo,
			  uint64_t hi);
int eng_inst_threads_write_regs(struct eng_proc *p, struct inst_threads *th,
			    struct hunch_err *err);

#define BASE_MAX 1024      /* bytes of one base trampoline, at most */
#define MINI_MAX 2048
struct chain {
	uint32_t *id;            /* request ids, in execution order */
	size_t n, cap;
};

/* One patch: the bytes a jmp (or int3) replaces, and the instrumented
 * instructions (sites) inside it, each with its chain of minis. */
struct ipoint {
	struct eng_inst_point pt;   /* pt.addr: the first site requested */
	uint64_t site[X86_TRAMP_MAX_SITES];
	struct chain ch[X86_TRAMP_MAX_SITES];
	size_t nsite;
	uint8_t orig[32];        /* the program's bytes under the patch */
	bool patched;
	bool rebuild;            /* a site was added: new base trampoline */
	bool active;             /* the base is in use (has minis) */
	/* Base trampoline address, 0 if none.  Like Paradyn's, a base
	 * outlives its last mini (kept for the same sites, ksite) so that
	 * enabling the point again costs no generation: its code is the
	 * same, so a thread still inside it from before is fine too. */
	uint64_t base;
	uint64_t ksite[X86_TRAMP_MAX_SITES];
	size_t nksite;
	size_t base_len;
	struct x86_base b;
	bool dirty;              /* chains changed in this commit */
	bool dead;               /* its library was unloaded */
};

struct request {
	enum eng_req_state state;
	uint32_t point;          /* index into points */
	uint64_t site;           /* the instruction it instruments */
	uint8_t *code;           /* snippet code, position independent */
	size_t code_len;
	double cost_ns;          /* charged per pass (eng_inst_cost.h) */
	bool prepend;
	uint64_t mini;           /* address of the mini, 0 if none */
	size_t mini_len;
	size_t tail_off;         /* its tail jump (code, then nops) */
	bool linked;             /* its tail jump is written: reachable */
	enum eng_refusal why;    /* ENG_REQ_FAILED: why */
};

struct pending_free { uint64_t addr; size_t len; };

struct eng_inst {
	struct eng_proc *p;
	struct eng_shm *shm;
	struct eng_codemem *mem;
	struct x86_reloc *reloc;
	struct x86_tramp_env env;
	uint64_t tsc_mult;
	uint32_t tsc_shift;
	bool wall_ns;
	struct eng_inst_cost cost;  /* measured at creation */

	struct ipoint *pts;
	size_t npts, cappts;
	uint32_t *hash;          /* byte address -> point index + 1 */
	uint64_t *hkey;
	size_t hcap, hused;

	struct request *req;     /* id = index + 1 */
	size_t nreq, capreq;
	uint32_t *queue;         /* ids with pending adds/removes */
	size_t nqueue, capqueue;

	struct pending_free *pf;
	size_t npf, cappf;

	/* trap fallback: table in the target, mirrored here */
	uint64_t trap_table;
	/* followed children every write is repeated in (eng_inst_mirror.c) */
	struct eng_inst_mirror *mirror;
	struct hunch_trap_entry *trap_mirror;
	size_t trap_used;
	struct eng_inst_stats st;
	struct eng_funcreloc *fr;   /* relocated functions (eng_funcreloc.h) */
	struct eng_perfsample *ps;    /* stack samples for catchup, or NULL */
	struct eng_stackwalk *sw;   /* catchup's CFI walks (opened lazily) */
	uint64_t thunk_lo, thunk_hi;  /* the shared call thunks' code */
};


/* Shared by eng_inst.c and eng_inst_commit.c. */
int eng_inst_grow(void **arr, size_t *cap, size_t need, size_t elem);
struct request *eng_inst_req_get(const struct eng_inst *in, uint32_t id);
int eng_inst_site_index(const struct ipoint *ip, uint64_t addr);
size_t eng_inst_commit_point_minis(const struct ipoint *ip);
/* Observed-cost units (the wall timer's native units) per ns. */
double eng_inst_native_per_ns(const struct eng_inst *in);
void eng_inst_commit_req_release(struct request *r, enum eng_req_state st);
/* Program code is written at once; trampoline memory through the
 * codemem shadow (flushed before the program's code is patched). */
int eng_inst_commit_wmem(struct eng_inst *in, uint64_t a, const void *b,
			 size_t n, struct hunch_err *err);
int eng_inst_commit_tmem(struct eng_inst *in, uint64_t a, const void *b,
			 size_t n, struct hunch_err *err);
int eng_inst_commit_defer_free(struct eng_inst *in, uint64_t a, size_t len);
int eng_inst_rehash(struct eng_inst *in);
int eng_inst_commit_trap_set(struct eng_inst *in, uint64_t addr, uint64_t tramp,
		  struct hunch_err *err);


/* eng_inst_mirror.c: a commit's writes repeated in the mirrored
 * children (stopped between begin and end). */
void eng_inst_mirror_begin(struct eng_inst *in);
void eng_inst_mirror_write(struct eng_inst *in, uint64_t a, const void *b,
			   size_t n, bool code);
void eng_inst_mirror_end(struct eng_inst *in);
void eng_inst_mirror_destroy(struct eng_inst *in);

#endif

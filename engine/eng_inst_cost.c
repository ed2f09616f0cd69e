/*
 * eng_inst_cost.c - the cost of one pass through instrumentation, as
 * charged to the observed-cost counters and used by predictions (see
 * eng_inst_cost.h).
 *
 * Why measure between calls of a stand-in function, not back to back:
 * the figures used to be the cost of each part run alone in a tight loop
 * (bench/inst's micro target calls `lea; ret`), where nothing overlaps
 * an rdtsc or the base trampoline's pushes and pops.  In a program the
 * CPU runs them beside the program's own work: on a loop of
 * pthread_mutex_lock/unlock and malloc/free, a pass charged 18 ns cost
 * 3.6 ns, and the observed cost of sqlite3 read 97-123% where the real
 * slowdown was a fraction of that.  Together with predicate bodies
 * charged whether or not they ran (the resource-discovery ring at the
 * entry of every sync and I/O function: 10 ns charged, one compare
 * run), that made the observed cost 3-5 times the real slowdown on
 * library-heavy programs, and shedding followed it.
 */
#include "eng_inst_cost.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "hunch_abi.h"

#define MEAS_ITERS 100000u
#define MEAS_REPS 7
#define MEAS_CODE 4096u
#define MEAS_FLOOR_NS 0.25   /* no part is free; noise can say it is */

uint64_t eng_inst_cost_native(double x)
{
	uint64_t k;

	if (!(x > 0))
		return 0;
	k = (uint64_t)(x + 0.5);
	return k ? k : 1;
}

/* Model figures: bench/inst's back-to-back costs (the safe side). */
void eng_inst_cost_model(struct eng_inst_cost *c,
			 const struct x86_tramp_env *env)
{
	memset(c, 0, sizeof *c);
	c->base_ns = 3;
	c->add_ns = 1;
	c->test_ns = 1;
	c->wall_ns = env->wall_rdtsc ? 11 : 40;
	/* bench/inst: an entry+exit CPU timer pair adds 39.2 ns per call
	 * (one base): about 20 ns each, from the runtime library's call. */
	c->cpu_ns = 20;
	/* a traced int3's exception, signal and stop: 3-6 us measured on
	 * a 2 vCPU VM (eng_inst_trapcost.c) */
	c->trap_ns = 6000;
}

double eng_inst_cost_snips(const struct eng_inst_cost *c,
			   const struct x86_tramp_env *env,
			   const struct x86_snip *s, size_t n, bool bodies)
{
	double ns = 0;

	for (size_t i = 0; i < n; i++)
		switch (s[i].kind) {
		case X86_SN_ADD: case X86_SN_SET:
			ns += c->add_ns;
			break;
		case X86_SN_WALL_START: case X86_SN_WALL_STOP:
			ns += c->wall_ns;
			break;
		case X86_SN_CPU_START: case X86_SN_CPU_STOP:
			ns += c->cpu_ns;
			break;
		case X86_SN_IF:
			ns += c->test_ns;
			if (bodies)
				ns += eng_inst_cost_snips(c, env, s[i].body,
							  s[i].nbody, true);
			break;
		}
	return ns;
}

/* ---- charging predicate bodies where they run ---- */

static size_t tree_size(const struct x86_snip *s, size_t n)
{
	size_t k = n;

	for (size_t i = 0; i < n; i++)
		if (s[i].kind == X86_SN_IF)
			k += tree_size(s[i].body, s[i].nbody) + 1;
	return k;
}

struct charge {
	const struct eng_inst_cost *c;
	const struct x86_tramp_env *env;
	double native_per_ns;
	struct x86_snip *pool;
	size_t used;
};

static void fill(struct charge *ch, const struct x86_snip *s, size_t n,
		 struct x86_snip *dst)
{
	for (size_t i = 0; i < n; i++) {
		struct x86_snip *b;
		size_t nb;
		double ns;

		dst[i] = s[i];
		if (s[i].kind != X86_SN_IF)
			continue;
		nb = s[i].nbody + 1;
		b = ch->pool + ch->used;
		ch->used += nb;
		fill(ch, s[i].body, s[i].nbody, b);
		/* What the body costs when it runs: its own parts (nested
		 * tests, not their bodies: those charge themselves) and
		 * this add. */
		ns = eng_inst_cost_snips(ch->c, ch->env, s[i].body,
					 s[i].nbody, false) + ch->c->add_ns;
		b[nb - 1] = (struct x86_snip){
			.kind = X86_SN_ADD,
			.handle = offsetof(struct hunch_block_hdr, obs_cost),
			.delta = (int64_t)eng_inst_cost_native(ns * ch->native_per_ns),
		};
		dst[i].body = b;
		dst[i].nbody = nb;
	}
}

int eng_inst_cost_charge_bodies(const struct eng_inst_cost *c,
				const struct x86_tramp_env *env,
				double native_per_ns,
				const struct x86_snip *s, size_t n,
				struct x86_snip **out, size_t *nout)
{
	size_t total = tree_size(s, n);
	struct charge ch = { c, env, native_per_ns, NULL, n };

	ch.pool = calloc(total ? total : 1, sizeof *ch.pool);
	if (ch.pool == NULL)
		return -ENOMEM;
	fill(&ch, s, n, ch.pool);
	*out = ch.pool;
	*nout = n;
	return 0;
}

/* ---- measuring ---- */

struct buf {
	uint8_t *p;
	size_t len, cap;
	bool overflow;
};

static void put(struct buf *b, const void *bytes, size_t n)
{
	if (b->len + n > b->cap) {
		b->overflow = true;
		return;
	}
	memcpy(b->p + b->len, bytes, n);
	b->len += n;
}

#define PUT(b, ...) do { \
	static const uint8_t by_[] = { __VA_ARGS__ }; \
	put(b, by_, sizeof by_); \
} while (0)

/* The stand-in for a small library function between two passes: a
 * locked add (a mutex's fast path, an atomic reference count), then
 * loads, arithmetic and stores, on the scratch block (%rcx): about 5 ns
 * here, the size of pthread_mutex_lock or malloc's fast path. */
static void put_work(struct buf *b)
{
	PUT(b, 0xf0, 0x48, 0x83, 0x81, 0x00, 0x02, 0x00, 0x00, 0x01);
	PUT(b, 0x4c, 0x8b, 0x99, 0x08, 0x02, 0x00, 0x00);  /* mov 520(%rcx),%r11 */
	PUT(b, 0x4d, 0x6b, 0xdb, 0x03);                    /* imul $3,%r11,%r11 */
	PUT(b, 0x4c, 0x89, 0x99, 0x10, 0x02, 0x00, 0x00);  /* mov %r11,528(%rcx) */
	PUT(b, 0x4c, 0x8b, 0x89, 0x18, 0x02, 0x00, 0x00);  /* mov 536(%rcx),%r9 */
	PUT(b, 0x49, 0x83, 0xc1, 0x07);                    /* add $7,%r9 */
	PUT(b, 0x4d, 0x01, 0xcb);                          /* add %r9,%r11 */
	PUT(b, 0x4c, 0x89, 0x99, 0x20, 0x02, 0x00, 0x00);  /* mov %r11,544(%rcx) */
}

/* The base trampoline as x86_tramp.h lays it out, with the %fs load of
 * the block replaced by a load through %r10: jump in, red zone, saves,
 * flags, guard check and set, jump to the slot, the snippet code `code`
 * (k bytes, none for the base alone) as a mini trampoline holds it, the
 * jump from it to BACK, cost add, guard clear, restores, jump back. */
static void put_base(struct buf *b, const uint8_t *code, size_t k)
{
	PUT(b, 0xe9, 0, 0, 0, 0);                      /* jmp (patch) */
	PUT(b, 0x48, 0x8d, 0x64, 0x24, 0x80);          /* lea -128(%rsp),%rsp */
	PUT(b, 0x50, 0x51, 0x52, 0x9f, 0x0f, 0x90, 0xc0, 0x50);
	PUT(b, 0x49, 0x8b, 0x0a);                      /* mov (%r10),%rcx */
	/* test; jz OUT; cmpq $0,(%rcx); jne OUT (never taken here) */
	put(b, (const uint8_t[]){ 0x48, 0x85, 0xc9, 0x74,
				  (uint8_t)(0x2c + k) }, 5);
	put(b, (const uint8_t[]){ 0x48, 0x83, 0x39, 0x00, 0x75,
				  (uint8_t)(0x26 + k) }, 6);
	PUT(b, 0x48, 0xc7, 0x01, 0x01, 0, 0, 0);       /* movq $1,(%rcx) */
	PUT(b, 0xe9, 0, 0, 0, 0);                      /* to the slot */
	put(b, code, k);
	PUT(b, 0xe9, 0, 0, 0, 0);                      /* to BACK */
	PUT(b, 0x49, 0x8b, 0x0a);                      /* BACK: mov (%r10),%rcx */
	PUT(b, 0x48, 0x81, 0x41, 0x08, 0x10, 0, 0, 0); /* addq $16,8(%rcx) */
	PUT(b, 0x48, 0xc7, 0x01, 0, 0, 0, 0);          /* movq $0,(%rcx) */
	PUT(b, 0x58, 0x04, 0x7f, 0x9e, 0x5a, 0x59, 0x58); /* OUT: restores */
	PUT(b, 0x48, 0x8d, 0xa4, 0x24, 0x80, 0, 0, 0); /* lea 128(%rsp),%rsp */
	PUT(b, 0xe9, 0, 0, 0, 0);                      /* jmp back */
}

/* P_BASE: the base trampoline alone; P_SNIP: a snippet alone (a wall
 * timer's rdtsc pair); P_IN_BASE: a snippet inside the base trampoline,
 * as it runs in the target; the _TIGHT forms: without the stand-in
 * function between the passes. */
enum part { P_NONE, P_BASE, P_SNIP, P_IN_BASE, P_NONE_TIGHT, P_SNIP_TIGHT };

/* Longest snippet that fits the base's rel8 jumps to OUT. */
#define MEAS_MAX_SNIP 80

static int put_part(struct buf *b, enum part part,
		    const struct x86_tramp_env *env, const struct x86_snip *s)
{
	uint8_t code[MEAS_MAX_SNIP];
	int k;

	if (part == P_SNIP_TIGHT)
		part = P_SNIP;
	if (part == P_BASE)
		put_base(b, NULL, 0);
	if ((part != P_SNIP && part != P_IN_BASE) || s == NULL)
		return 0;
	if (part == P_IN_BASE) {
		k = x86_tramp_snip_code(env, s, 1, code, sizeof code);
		if (k < 0)
			return k;
		put_base(b, code, (size_t)k);
		return 0;
	}
	k = x86_tramp_snip_code(env, s, 1, b->p + b->len, b->cap - b->len - 32);
	if (k < 0)
		return k;
	b->len += (size_t)k;
	return 0;
}

/* Two passes per iteration, each after the stand-in function, as a
 * timer's start and stop are around a call (back to back, two rdtsc
 * cost half as much again each: nothing runs beside them):
 *   mov %rdi,%rcx; mov %rsi,%r8; mov %rdx,%r10
 * L: work; s[0]; work; s[1]; dec %r8; jnz L; ret */
static int build(uint8_t *code, enum part part,
		 const struct x86_tramp_env *env, const struct x86_snip *s,
		 size_t n)
{
	struct buf b = { code, 0, MEAS_CODE - 16, false };
	bool work = part != P_NONE_TIGHT && part != P_SNIP_TIGHT;
	size_t loop;
	int32_t back;
	int rc;

	PUT(&b, 0x48, 0x89, 0xf9, 0x49, 0x89, 0xf0, 0x49, 0x89, 0xd2);
	loop = b.len;
	if (work)
		put_work(&b);
	if ((rc = put_part(&b, part, env, n > 0 ? &s[0] : NULL)) < 0)
		return rc;
	if (work)
		put_work(&b);
	if ((rc = put_part(&b, part, env, n > 1 ? &s[1] : n ? &s[0] : NULL)) < 0)
		return rc;
	PUT(&b, 0x49, 0xff, 0xc8, 0x0f, 0x85);
	back = (int32_t)loop - (int32_t)(b.len + 4);
	put(&b, &back, 4);
	PUT(&b, 0xc3);
	return b.overflow ? -ENOSPC : 0;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct meas {
	uint8_t *code[2];      /* without, with the part */
	void *block, *slot;
};

/* Marginal ns per pass of what code[1] adds to code[0]: the fastest of
 * several interleaved runs of each (CPU time of this thread, so time
 * slices given to other programs do not count). */
static double marginal(struct meas *m)
{
	double best[2] = { -1, -1 };

	for (int r = 0; r < MEAS_REPS; r++)
		for (int k = 0; k < 2; k++) {
			void (*fn)(void *, uint64_t, void *);
			uint64_t t0;
			double ns;

			/* POSIX: a data pointer converted to a function
			 * pointer (dlsym works the same way). */
			*(void **)&fn = m->code[k];
			t0 = thread_cpu_ns();
			fn(m->block, MEAS_ITERS, m->slot);
			ns = (double)(thread_cpu_ns() - t0) / MEAS_ITERS;
			if (best[k] < 0 || ns < best[k])
				best[k] = ns;
		}
	/* two passes per iteration */
	return (best[1] - best[0]) / 2 < MEAS_FLOOR_NS ?
	       MEAS_FLOOR_NS : (best[1] - best[0]) / 2;
}

static int measure_part(struct meas *m, enum part part,
			const struct x86_tramp_env *env,
			const struct x86_snip *s, size_t n, double *out)
{
	int rc;

	if (mprotect(m->code[1], MEAS_CODE, PROT_READ | PROT_WRITE) != 0)
		return -errno;
	if ((rc = build(m->code[1], part, env, s, n)) < 0)
		return rc;
	if (mprotect(m->code[1], MEAS_CODE, PROT_READ | PROT_EXEC) != 0)
		return -errno;
	*out = marginal(m);
	return 0;
}

/* What a snippet adds to a pass through the base trampoline it runs
 * in.  Measured alone, each part's cost was summed as if nothing
 * overlapped: a counter and the discovery ring's test on
 * pthread_mutex_lock were charged 0.5 ns each beside a base of 1.0,
 * and the observed cost of a tight lock/unlock loop read 2.7 times its
 * real slowdown. */
static int measure_in_base(struct meas *m, const struct x86_tramp_env *env,
			   const struct x86_snip *s, double base, double *out)
{
	double with;
	int rc = measure_part(m, P_IN_BASE, env, s, 1, &with);

	if (rc < 0)
		return rc;
	*out = with - base < MEAS_FLOOR_NS ? MEAS_FLOOR_NS : with - base;
	return 0;
}

static int build_baseline(struct meas *m, enum part part,
			  const struct x86_tramp_env *env)
{
	int rc;

	if (mprotect(m->code[0], MEAS_CODE, PROT_READ | PROT_WRITE) != 0)
		return -errno;
	if ((rc = build(m->code[0], part, env, NULL, 0)) < 0)
		return rc;
	if (mprotect(m->code[0], MEAS_CODE, PROT_READ | PROT_EXEC) != 0)
		return -errno;
	return 0;
}

/* A wall timer's start or stop.  Beside the stand-in function the CPU
 * overlaps its rdtsc with the function's work (4.1 ns here); back to
 * back it does not (8.8-11 ns).  Programs sit between the two, nearer
 * the first: sqlite3's sync and allocation timers (176 million timer
 * passes over a run) cost it ~3.2 ns an operation by CPU time with and
 * without them, while a tight pthread_mutex_lock/unlock loop with sync
 * timers (bench/cost/bench-lockloop.sh) costs ~6.5.  Charged the mean
 * of the two figures, sqlite3's observed cost read 1.8-2.1 times its
 * real slowdown; charged the first, the loop's read 0.65 of it (the
 * unsafe side).  A quarter of the way from the first to the second
 * keeps both within 30% on the unsafe side and 2x on the safe side. */
static int measure_wall(struct meas *m, const struct x86_tramp_env *env,
			const struct x86_snip wall[2], double *out)
{
	double beside, tight;
	int rc;

	if ((rc = measure_part(m, P_SNIP, env, wall, 2, &beside)) < 0 ||
	    (rc = build_baseline(m, P_NONE_TIGHT, env)) < 0 ||
	    (rc = measure_part(m, P_SNIP_TIGHT, env, wall, 2, &tight)) < 0 ||
	    (rc = build_baseline(m, P_NONE, env)) < 0)
		return rc;
	*out = beside + (tight - beside) / 4;
	return 0;
}

static int measure_all(struct meas *m, struct eng_inst_cost *c,
		       const struct x86_tramp_env *env)
{
	struct x86_expr v = { .kind = X86_EX_VAR, .handle = 64 };
	struct x86_expr z = { .kind = X86_EX_CONST, .v = 0 };
	struct x86_expr lt = { .kind = X86_EX_LT, .l = &v, .r = &z };
	struct x86_snip add = { .kind = X86_SN_ADD, .handle = 64, .delta = 1 };
	/* the counter only grows, so the test is always false */
	struct x86_snip iff = { .kind = X86_SN_IF, .cond = &lt, .body = &add,
				.nbody = 1 };
	struct x86_snip wall[2] = {
		{ .kind = X86_SN_WALL_START, .handle = 128 },
		{ .kind = X86_SN_WALL_STOP, .handle = 128 } };
	struct eng_inst_cost t = *c;
	int rc;

	if ((rc = build_baseline(m, P_NONE, env)) < 0)
		return rc;
	if ((rc = measure_part(m, P_BASE, env, NULL, 0, &t.base_ns)) < 0 ||
	    (rc = measure_in_base(m, env, &add, t.base_ns, &t.add_ns)) < 0 ||
	    (rc = measure_in_base(m, env, &iff, t.base_ns, &t.test_ns)) < 0)
		return rc;
	if (env->wall_rdtsc) {
		if ((rc = measure_wall(m, env, wall, &t.wall_ns)) < 0)
			return rc;
	}
	(void)eng_inst_trapcost_measure(&t.trap_ns);
	t.measured = true;
	*c = t;
	return 0;
}

/* The figures are the machine's, not the program's: measured once per
 * hunch process for each kind of code generated (inline rdtsc or not),
 * not again for each image an exec brings, which waited 45 ms at its
 * entry point for them each time (pyenv's shims exec three times
 * before python runs). */
static struct cost_cache {
	bool valid, wall_rdtsc, shadow_stack;
	struct eng_inst_cost c;
} cost_cache[2];

int eng_inst_cost_measure(struct eng_inst_cost *c,
			  const struct x86_tramp_env *env)
{
	struct cost_cache *cc = &cost_cache[env->wall_rdtsc ? 1 : 0];
	struct meas m = { { NULL, NULL }, NULL, NULL };
	int rc = -ENOMEM;

	if (cc->valid && cc->shadow_stack == env->shadow_stack) {
		*c = cc->c;
		return 0;
	}

	for (int k = 0; k < 2; k++) {
		m.code[k] = mmap(NULL, MEAS_CODE, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m.code[k] == MAP_FAILED)
			m.code[k] = NULL;
	}
	m.block = aligned_alloc(4096, 4096);
	m.slot = malloc(sizeof(void *));
	if (m.code[0] != NULL && m.code[1] != NULL && m.block != NULL &&
	    m.slot != NULL) {
		memset(m.block, 0, 4096);
		memcpy(m.slot, &m.block, sizeof(void *));
		rc = measure_all(&m, c, env);
	}
	for (int k = 0; k < 2; k++)
		if (m.code[k] != NULL)
			munmap(m.code[k], MEAS_CODE);
	free(m.block);
	free(m.slot);
	if (rc == 0)
		*cc = (struct cost_cache){ .valid = true,
			.wall_rdtsc = env->wall_rdtsc,
			.shadow_stack = env->shadow_stack, .c = *c };
	return rc;
}

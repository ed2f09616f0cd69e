/*
 * eng_inst.c - requests, points and the commit that applies them to a
 * running program (see eng_inst.h for the protocol).
 */
#include "eng_inst_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eng_proc.h"
#include "eng_shm.h"
#include "hunch_abi.h"
#include "x86_parse.h"

#define BASE_MAX 1024      /* bytes of one base trampoline, at most */
#define MINI_MAX 2048
#define BASE_COST_NS 3

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
	unsigned cost_ns;
	bool prepend;
	uint64_t mini;           /* address of the mini, 0 if none */
	size_t mini_len;
	const char *why;
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
	struct hunch_trap_entry *trap_mirror;
	size_t trap_used;
	struct eng_inst_stats st;
};

static int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t nc;
	void *n;

	if (need <= *cap)
		return 0;
	nc = *cap ? *cap * 2 : 64;
	while (nc < need)
		nc *= 2;
	n = realloc(*arr, nc * elem);
	if (n == NULL)
		return -ENOMEM;
	*arr = n;
	*cap = nc;
	return 0;
}

void eng_inst_point_from(const struct x86_point *xp, uint64_t base,
			 struct eng_inst_point *out)
{
	memset(out, 0, sizeof *out);
	out->addr = base + xp->addr;
	out->patch_start = base + xp->patch_start;
	out->patch_len = xp->patch_len;
	out->insn_len = xp->insn_len;
	out->trap = !xp->ok;
}

/* CET shadow stacks (Linux 6.6+, glibc 2.39+ opt-in; devguide §7.4):
 * relocated calls are emulated with push + jmp, which the callee's ret
 * would not match, so they are refused then. */
static bool shadow_stack_on(pid_t pid)
{
	char path[64], line[256];
	bool on = false;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (f == NULL)
		return false;
	while (fgets(line, sizeof line, f) != NULL)
		if (strncmp(line, "x86_Thread_features:", 20) == 0 &&
		    strstr(line, "shstk") != NULL)
			on = true;
	fclose(f);
	return on;
}

/* The shared call stubs, once per process (the target is stopped for
 * the allocation, which may need an inferior call of mmap). */
static int make_stubs(struct eng_inst *in, struct hunch_err *err)
{
	uint8_t buf[1024];
	size_t call_off, reg_off;
	bool was_stopped = eng_proc_stopped(in->p);
	uint64_t at, writes = 0;
	int len, rc;

	if (!was_stopped && (rc = eng_stop_all(in->p, err)) < 0)
		return rc;
	len = x86_tramp_stubs(&in->env, buf, sizeof buf, 0, &call_off,
			      &reg_off);
	rc = len < 0 ? hunch_errf(err, len, "stub generation failed") :
	     eng_codemem_alloc(in->mem, eng_proc_module(in->p, 0)->bias,
			       (size_t)len, &at, err);
	if (rc == 0)
		rc = eng_codemem_write(in->mem, at, buf, (size_t)len, err);
	if (rc == 0)
		rc = eng_codemem_flush(in->mem, &writes, err);
	if (rc == 0) {
		in->env.stub_call = at + call_off;
		in->env.stub_reg = at + reg_off;
	}
	if (!was_stopped)
		eng_resume_all(in->p, NULL);
	return rc;
}

int eng_inst_create(struct eng_proc *p, struct eng_shm *shm,
		    struct eng_inst **out, struct hunch_err *err)
{
	volatile struct hunch_shm_header *h = eng_shm_header(shm);
	struct eng_inst *in;
	int rc;

	if ((rc = eng_shm_check_ready(shm, err)) < 0) {
		hunch_err_prefix(err, "instrumentation needs the runtime "
				 "library: ");
		return rc;
	}
	in = calloc(1, sizeof *in);
	if (in == NULL)
		return hunch_errf(err, -ENOMEM, "out of memory");
	in->p = p;
	in->shm = shm;
	in->env.fs_block_off = (int32_t)h->rt_tls_block_off;
	in->env.fn_block = eng_shm_entry(shm, HUNCH_RT_ENTRY_BLOCK);
	in->env.fn_wall_start = eng_shm_entry(shm, HUNCH_RT_ENTRY_WALL_START);
	in->env.fn_wall_stop = eng_shm_entry(shm, HUNCH_RT_ENTRY_WALL_STOP);
	in->env.fn_cpu_start = eng_shm_entry(shm, HUNCH_RT_ENTRY_CPU_START);
	in->env.fn_cpu_stop = eng_shm_entry(shm, HUNCH_RT_ENTRY_CPU_STOP);
	in->env.wall_rdtsc = h->wall_level == HUNCH_LEVEL_HW;
	in->wall_ns = h->wall_level != HUNCH_LEVEL_HW;
	in->env.shadow_stack = shadow_stack_on(eng_proc_pid(p));
	in->tsc_mult = h->tsc_mult;
	in->tsc_shift = h->tsc_shift;
	if (in->env.fn_block == 0 || in->env.fn_cpu_start == 0 ||
	    in->env.fs_block_off == 0) {
		free(in);
		return hunch_errf(err, -EPROTO, "the runtime library in pid %d "
				  "did not publish its entry points; is it the "
				  "same build as hunch?", (int)eng_proc_pid(p));
	}
	if ((rc = eng_codemem_create(p, &in->mem, err)) < 0 ||
	    (rc = x86_reloc_open(&in->reloc)) < 0) {
		eng_inst_destroy(in);
		return rc < 0 ? hunch_errf(err, rc, "cannot open capstone") : rc;
	}
	if ((rc = make_stubs(in, err)) < 0) {
		eng_inst_destroy(in);
		return rc;
	}
	*out = in;
	return 0;
}

void eng_inst_destroy(struct eng_inst *in)
{
	if (in == NULL)
		return;
	for (size_t i = 0; i < in->npts; i++)
		for (size_t k = 0; k < X86_TRAMP_MAX_SITES; k++)
			free(in->pts[i].ch[k].id);
	for (size_t i = 0; i < in->nreq; i++)
		free(in->req[i].code);
	free(in->pts);
	free(in->hash);
	free(in->hkey);
	free(in->req);
	free(in->queue);
	free(in->pf);
	free(in->trap_mirror);
	eng_codemem_destroy(in->mem);
	x86_reloc_close(in->reloc);
	free(in);
}

const struct x86_tramp_env *eng_inst_env(const struct eng_inst *in)
{
	return &in->env;
}

/* ---- points ---- */

static size_t hslot(uint64_t a, size_t cap)
{
	return (size_t)((a * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
}

/* The byte map: every patched-or-requested byte -> its point, so that
 * overlapping requests are found (and merged) by address. */
static struct ipoint *point_at(struct eng_inst *in, uint64_t a)
{
	if (in->hcap == 0)
		return NULL;
	for (size_t i = hslot(a, in->hcap);; i = (i + 1) & (in->hcap - 1)) {
		uint32_t v = in->hash[i];

		if (v == 0)
			return NULL;
		if (in->hkey[i] == a)
			return &in->pts[v - 1];
	}
}

static void hput(uint32_t *h, uint64_t *key, size_t cap, uint64_t a,
		 uint32_t v)
{
	size_t i = hslot(a, cap);

	while (h[i] != 0 && key[i] != a)
		i = (i + 1) & (cap - 1);
	h[i] = v;
	key[i] = a;
}

static int rehash(struct eng_inst *in, size_t need)
{
	size_t cap = in->hcap ? in->hcap : 4096;
	uint32_t *h;
	uint64_t *key;

	while (need * 2 > cap)
		cap *= 2;
	if (cap == in->hcap)
		return 0;
	h = calloc(cap, sizeof *h);
	key = calloc(cap, sizeof *key);
	if (h == NULL || key == NULL) {
		free(h);
		free(key);
		return -ENOMEM;
	}
	for (size_t k = 0; k < in->npts; k++)
		for (unsigned b = 0; b < in->pts[k].pt.patch_len; b++)
			hput(h, key, cap, in->pts[k].pt.patch_start + b,
			     (uint32_t)k + 1);
	free(in->hash);
	free(in->hkey);
	in->hash = h;
	in->hkey = key;
	in->hcap = cap;
	return 0;
}

/* Map the bytes [s, e) to point k. */
static int hmap(struct eng_inst *in, uint64_t s, uint64_t e, uint32_t k)
{
	if (rehash(in, in->hused + (e - s)) < 0)
		return -ENOMEM;
	for (uint64_t a = s; a < e; a++) {
		if (point_at(in, a) == NULL)
			in->hused++;
		hput(in->hash, in->hkey, in->hcap, a, k + 1);
	}
	return 0;
}

static int site_index(const struct ipoint *ip, uint64_t addr)
{
	for (size_t i = 0; i < ip->nsite; i++)
		if (ip->site[i] == addr)
			return (int)i;
	return -1;
}

/* Another instruction of the same patch: sites stay sorted; an active
 * patch gets a new base trampoline at the next commit. */
static int site_add(struct ipoint *ip, uint64_t addr, struct hunch_err *err)
{
	struct chain spare;
	size_t i;

	if (site_index(ip, addr) >= 0)
		return 0;
	if (ip->nsite == X86_TRAMP_MAX_SITES || (ip->pt.trap && ip->nsite > 0))
		return hunch_errf(err, -ENOSPC, "point 0x%" PRIx64 ": too many "
				  "points in one patch", addr);
	spare = ip->ch[ip->nsite];     /* an unused slot's buffer moves */
	for (i = ip->nsite; i > 0 && ip->site[i - 1] > addr; i--) {
		ip->site[i] = ip->site[i - 1];
		ip->ch[i] = ip->ch[i - 1];
	}
	ip->site[i] = addr;
	ip->ch[i] = spare;
	ip->ch[i].n = 0;
	ip->nsite++;
	if (ip->active)
		ip->rebuild = true;
	return 0;
}

static int defer_free(struct eng_inst *in, uint64_t a, size_t len);

/* A point whose patch overlaps an inactive one is merged into it (the
 * union of two overlapping patches has no branch target inside that
 * neither checked, and the generator refuses a call in its middle). */
static int point_merge(struct eng_inst *in, struct ipoint *ip,
		       const struct eng_inst_point *pt, struct hunch_err *err)
{
	uint64_t s = ip->pt.patch_start, e = s + ip->pt.patch_len;
	uint64_t ns = pt->patch_start < s ? pt->patch_start : s;
	uint64_t pe = pt->patch_start + pt->patch_len;
	uint64_t ne = pe > e ? pe : e;

	if (ns == s && ne == e && ip->pt.trap == pt->trap)
		return site_add(ip, pt->addr, err);
	if (ip->pt.trap || pt->trap)
		return hunch_errf(err, -EBUSY, "point 0x%" PRIx64 ": its bytes "
				  "belong to the patch of another point",
				  pt->addr);
	if (ip->active)
		return hunch_errf(err, -EBUSY, "point 0x%" PRIx64 " overlaps "
				  "the active patch at 0x%" PRIx64 "; request "
				  "both points together", pt->addr, s);
	if (ip->base != 0 && defer_free(in, ip->base, ip->base_len) < 0)
		return hunch_errf(err, -ENOMEM, "out of memory");
	ip->base = 0;           /* the kept base was for other bytes */
	if (ne - ns > 32)
		return hunch_errf(err, -ENOSPC, "point 0x%" PRIx64 ": merged "
				  "patch too long", pt->addr);
	ip->pt.patch_start = ns;
	ip->pt.patch_len = (uint8_t)(ne - ns);
	if (hmap(in, ns, ne, (uint32_t)(ip - in->pts)) < 0)
		return hunch_errf(err, -ENOMEM, "out of memory");
	return site_add(ip, pt->addr, err);
}

static int point_get(struct eng_inst *in, const struct eng_inst_point *pt,
		     uint32_t *idx, struct hunch_err *err)
{
	struct ipoint *ip = NULL;
	int rc;

	for (unsigned b = 0; b < pt->patch_len; b++) {
		struct ipoint *o = point_at(in, pt->patch_start + b);

		if (o != NULL && o->dead)
			o = NULL;       /* bytes of an unloaded library */
		if (o != NULL && ip != NULL && o != ip)
			return hunch_errf(err, -EBUSY, "point 0x%" PRIx64
					  " overlaps two patches", pt->addr);
		if (o != NULL)
			ip = o;
	}
	if (ip != NULL) {
		*idx = (uint32_t)(ip - in->pts);
		return point_merge(in, ip, pt, err);
	}
	if (grow((void **)&in->pts, &in->cappts, in->npts + 1,
		 sizeof *in->pts) < 0)
		return hunch_errf(err, -ENOMEM, "out of memory");
	ip = &in->pts[in->npts];
	memset(ip, 0, sizeof *ip);
	ip->pt = *pt;
	ip->site[0] = pt->addr;
	ip->nsite = 1;
	in->npts++;
	rc = hmap(in, pt->patch_start, pt->patch_start + pt->patch_len,
		  (uint32_t)in->npts - 1);
	if (rc < 0)
		return hunch_errf(err, -ENOMEM, "out of memory");
	*idx = (uint32_t)in->npts - 1;
	return 0;
}

/* ---- requests ---- */

static int enqueue(struct eng_inst *in, uint32_t id)
{
	if (grow((void **)&in->queue, &in->capqueue, in->nqueue + 1,
		 sizeof *in->queue) < 0)
		return -ENOMEM;
	in->queue[in->nqueue++] = id;
	return 0;
}

int eng_inst_add(struct eng_inst *in, const struct eng_inst_point *pt,
		 const struct x86_snip *s, size_t n, bool prepend,
		 uint32_t *id, struct hunch_err *err)
{
	uint8_t code[MINI_MAX];
	struct request *r;
	uint32_t pi = 0;
	int len, rc;
	struct eng_inst_point tp;

	if (pt->trap) {      /* the int3 replaces the point instruction only */
		tp = *pt;
		tp.patch_start = pt->addr;
		tp.patch_len = pt->insn_len;
		pt = &tp;
	}
	if (pt->patch_len < (pt->trap ? 1 : 5) || pt->patch_len > 32 ||
	    pt->addr < pt->patch_start ||
	    pt->addr >= pt->patch_start + pt->patch_len)
		return hunch_errf(err, -EINVAL, "point 0x%" PRIx64 ": bad patch "
				  "[0x%" PRIx64 ", +%u)", pt->addr,
				  pt->patch_start, pt->patch_len);
	len = x86_snip_code(&in->env, s, n, code, sizeof code - 16);
	if (len < 0)
		return hunch_errf(err, len, "point 0x%" PRIx64 ": the snippet "
				  "cannot be compiled (%s)", pt->addr,
				  len == -ENOSPC ? "too long" : "malformed");
	if ((rc = point_get(in, pt, &pi, err)) < 0)
		return rc;
	if (grow((void **)&in->req, &in->capreq, in->nreq + 1,
		 sizeof *in->req) < 0 || enqueue(in, (uint32_t)in->nreq + 1) < 0)
		return hunch_errf(err, -ENOMEM, "out of memory");
	r = &in->req[in->nreq];
	memset(r, 0, sizeof *r);
	r->code = malloc((size_t)len + 1);
	if (r->code == NULL)
		return hunch_errf(err, -ENOMEM, "out of memory");
	memcpy(r->code, code, (size_t)len);
	r->code_len = (size_t)len;
	r->cost_ns = x86_snip_cost_ns(&in->env, s, n);
	r->prepend = prepend;
	r->point = pi;
	r->site = pt->addr;
	r->state = ENG_REQ_PENDING;
	*id = (uint32_t)++in->nreq;
	return 0;
}

static struct request *req_get(const struct eng_inst *in, uint32_t id)
{
	if (id == 0 || id > in->nreq)
		return NULL;
	return &in->req[id - 1];
}

int eng_inst_remove(struct eng_inst *in, uint32_t id)
{
	struct request *r = req_get(in, id);

	if (r == NULL)
		return -ENOENT;
	if (r->state == ENG_REQ_PENDING) {    /* never inserted */
		r->state = ENG_REQ_FREE;
		return 0;
	}
	if (r->state != ENG_REQ_ACTIVE)
		return r->state == ENG_REQ_REMOVING ? 0 : -ENOENT;
	r->state = ENG_REQ_REMOVING;
	return enqueue(in, id) < 0 ? -ENOMEM : 0;
}

enum eng_req_state eng_inst_state(const struct eng_inst *in, uint32_t id,
				  const char **why)
{
	const struct request *r = req_get(in, id);

	if (why != NULL)
		*why = r && r->why ? r->why : "";
	return r ? r->state : ENG_REQ_FREE;
}

/* ---- writing into the target ---- */

/* Program code: written at once.  Trampoline memory: through the
 * shadow (tmem), flushed before the program's code is patched. */
static int wmem(struct eng_inst *in, uint64_t a, const void *b, size_t n,
		struct hunch_err *err)
{
	in->st.writes++;
	return eng_write_mem(in->p, a, b, n, err);
}

static int tmem(struct eng_inst *in, uint64_t a, const void *b, size_t n,
		struct hunch_err *err)
{
	return eng_codemem_write(in->mem, a, b, n, err);
}

static int defer_free(struct eng_inst *in, uint64_t a, size_t len)
{
	if (grow((void **)&in->pf, &in->cappf, in->npf + 1, sizeof *in->pf) < 0)
		return -ENOMEM;
	in->pf[in->npf++] = (struct pending_free){ a, len };
	return 0;
}

static uint32_t cost_native(const struct eng_inst *in, unsigned ns)
{
	if (in->wall_ns || in->tsc_mult == 0)
		return ns;
	return (uint32_t)(((uint64_t)ns << in->tsc_shift) / in->tsc_mult);
}

/* Rewrite the jumps of a site's chain: slot -> mini0 -> ... -> BACK,
 * and the observed cost of one pass. */
static int relink_site(struct eng_inst *in, struct ipoint *ip, size_t s,
		       struct hunch_err *err)
{
	const struct x86_site *st = &ip->b.site[s];
	uint64_t back = ip->base + st->back_off;
	uint64_t from = ip->base + st->slot_off;
	unsigned ns = BASE_COST_NS;
	uint8_t j[5];
	uint32_t cost;
	int rc;

	for (size_t i = 0; i < ip->ch[s].n; i++) {
		struct request *r = req_get(in, ip->ch[s].id[i]);

		x86_jmp5_bytes(j, from, r->mini);
		if ((rc = tmem(in, from, j, 5, err)) < 0)
			return rc;
		from = r->mini + r->code_len;
		ns += r->cost_ns;
	}
	x86_jmp5_bytes(j, from, back);
	if ((rc = tmem(in, from, j, 5, err)) < 0)
		return rc;
	cost = cost_native(in, ns);
	return tmem(in, ip->base + st->cost_off, &cost, 4, err);
}

static int relink(struct eng_inst *in, struct ipoint *ip,
		  struct hunch_err *err)
{
	int rc = 0;

	for (size_t s = 0; s < ip->nsite && rc == 0; s++)
		rc = relink_site(in, ip, s, err);
	return rc;
}

static size_t point_minis(const struct ipoint *ip)
{
	size_t n = 0;

	for (size_t s = 0; s < ip->nsite; s++)
		n += ip->ch[s].n;
	return n;
}

/* ---- the commit ---- */

struct commit {
	struct inst_threads th;
	uint32_t *dirty;          /* point indexes touched */
	size_t ndirty, capdirty;
	uint8_t **newbase;        /* per dirty point: base code to write */
};

static int mark_dirty(struct eng_inst *in, struct commit *c, struct ipoint *ip)
{
	if (ip->dirty)
		return 0;
	if (grow((void **)&c->dirty, &c->capdirty, c->ndirty + 1,
		 sizeof *c->dirty) < 0)
		return -ENOMEM;
	ip->dirty = true;
	c->dirty[c->ndirty++] = (uint32_t)(ip - in->pts);
	return 0;
}

/* Checks before the first patch of a point's bytes. */
static int check_fresh(struct eng_inst *in, struct commit *c,
		       struct ipoint *ip, const char **why,
		       struct hunch_err *err)
{
	const struct eng_inst_point *pt = &ip->pt;
	int rc;

	if (!pt->trap && inst_threads_word_in(&c->th, pt->patch_start + 1,
					      pt->patch_start + pt->patch_len)) {
		in->st.refused_stack++;
		return *why = "a stack word points into the bytes to patch "
			      "(maybe a return address); try again later", 1;
	}
	if ((rc = eng_read_mem(in->p, pt->patch_start, ip->orig,
			       pt->patch_len, err)) < 0)
		return rc;
	if (ip->orig[0] == 0xcc)
		return *why = "an int3 is already there (a debugger or hunch's "
			      "own breakpoint)", 1;
	/* the dynamic linker's r_brk carries hunch's own int3 (eng_bp),
	 * which would be written back over the patch later */
	if (eng_proc_r_brk(in->p) >= pt->patch_start &&
	    eng_proc_r_brk(in->p) < pt->patch_start + pt->patch_len)
		return *why = "hunch's breakpoint on the dynamic linker's "
			      "r_brk is in these bytes", 1;
	return 0;
}

/* Threads stopped inside the bytes about to change resume in their
 * relocated copies (written to the threads after the code). */
static int move_pcs(struct eng_inst *in, struct commit *c, struct ipoint *ip,
		    const struct x86_base *nb, uint64_t at, const char **why)
{
	const struct eng_inst_point *pt = &ip->pt;

	for (size_t i = 0; i < c->th.n; i++) {
		struct inst_thread *t = &c->th.t[i];
		uint64_t pc = t->regs.rip, npc;

		if (pc <= pt->patch_start ||
		    pc >= pt->patch_start + pt->patch_len)
			continue;
		npc = x86_tramp_map_pc(nb, pt->patch_start, ip->site, at, pc);
		if (npc == 0)
			return *why = "a thread stopped between instructions "
				      "of the patch", 1;
	}
	for (size_t i = 0; i < c->th.n; i++) {
		struct inst_thread *t = &c->th.t[i];
		uint64_t pc = t->regs.rip;

		if (pc <= pt->patch_start ||
		    pc >= pt->patch_start + pt->patch_len)
			continue;
		t->regs.rip = x86_tramp_map_pc(nb, pt->patch_start, ip->site,
					       at, pc);
		t->regs_changed = true;
		in->st.pcs_moved++;
	}
	return 0;
}

/* Build the base trampoline of a point about to be patched, or rebuilt
 * with a new site (not yet written: c->newbase).  Returns 0, 1 (refused,
 * *why), or -errno. */
static int prepare_point(struct eng_inst *in, struct commit *c,
			 struct ipoint *ip, size_t k, const char **why,
			 struct hunch_err *err)
{
	const struct eng_inst_point *pt = &ip->pt;
	uint8_t buf[BASE_MAX];
	struct x86_base nb;
	bool fresh = !ip->patched;
	uint64_t at;
	size_t alloc;
	int rc;

	if (fresh && (rc = check_fresh(in, c, ip, why, err)) != 0)
		return rc;
	if (!ip->active && ip->base != 0 && ip->nksite == ip->nsite &&
	    memcmp(ip->ksite, ip->site, ip->nsite * sizeof *ip->site) == 0) {
		if (move_pcs(in, c, ip, &ip->b, ip->base, why) != 0)
			return 1;
		ip->active = true;
		return 0;       /* the kept base, unchanged */
	}
	rc = x86_tramp_base(in->reloc, &in->env, ip->orig, pt->patch_len,
			    pt->patch_start, ip->site, ip->nsite,
			    pt->patch_start, buf, sizeof buf, &nb);
	if (rc < 0)
		return *why = nb.why, 1;
	alloc = nb.len + 64;
	if ((rc = eng_codemem_alloc(in->mem, pt->patch_start, alloc, &at,
				    err)) < 0)
		return rc;
	rc = x86_tramp_base(in->reloc, &in->env, ip->orig, pt->patch_len,
			    pt->patch_start, ip->site, ip->nsite, at, buf,
			    sizeof buf, &nb);
	if (rc < 0 || nb.len > alloc ||
	    (fresh && move_pcs(in, c, ip, &nb, at, why) != 0)) {
		eng_codemem_free(in->mem, at, alloc);
		if (rc < 0 || nb.len > alloc)
			*why = rc < 0 ? nb.why : "trampoline grew";
		return 1;
	}
	c->newbase[k] = malloc(nb.len);
	if (c->newbase[k] == NULL)
		return hunch_errf(err, -ENOMEM, "out of memory");
	memcpy(c->newbase[k], buf, nb.len);
	if (ip->base != 0 && defer_free(in, ip->base, ip->base_len) < 0)
		return hunch_errf(err, -ENOMEM, "out of memory");
	ip->b = nb;
	ip->base = at;
	ip->base_len = alloc;
	memcpy(ip->ksite, ip->site, sizeof ip->site);
	ip->nksite = ip->nsite;
	ip->rebuild = false;
	ip->active = true;
	ip->patched = false;    /* (re)write the jmp to the new base */
	return 0;
}

static int chain_insert(struct chain *ch, uint32_t id, bool prepend)
{
	if (grow((void **)&ch->id, &ch->cap, ch->n + 1, sizeof *ch->id) < 0)
		return -ENOMEM;
	if (prepend) {
		memmove(ch->id + 1, ch->id, ch->n * sizeof *ch->id);
		ch->id[0] = id;
	} else {
		ch->id[ch->n] = id;
	}
	ch->n++;
	return 0;
}

static void chain_remove(struct chain *ch, uint32_t id)
{
	for (size_t i = 0; i < ch->n; i++)
		if (ch->id[i] == id) {
			memmove(ch->id + i, ch->id + i + 1,
				(ch->n - i - 1) * sizeof *ch->id);
			ch->n--;
			return;
		}
}

static void req_release(struct request *r, enum eng_req_state st)
{
	free(r->code);
	r->code = NULL;
	r->mini = 0;
	r->state = st;
}

static int do_removals(struct eng_inst *in, struct commit *c)
{
	for (size_t q = 0; q < in->nqueue; q++) {
		struct request *r = req_get(in, in->queue[q]);
		struct ipoint *ip;

		if (r == NULL || r->state != ENG_REQ_REMOVING)
			continue;
		ip = &in->pts[r->point];
		if (site_index(ip, r->site) >= 0)
			chain_remove(&ip->ch[site_index(ip, r->site)],
				     in->queue[q]);
		if (defer_free(in, r->mini, r->mini_len) < 0 ||
		    mark_dirty(in, c, ip) < 0)
			return -ENOMEM;
		req_release(r, ENG_REQ_FREE);
	}
	return 0;
}

static int do_adds(struct eng_inst *in, struct commit *c, int *failed,
		   struct hunch_err *err)
{
	for (size_t q = 0; q < in->nqueue; q++) {
		uint32_t id = in->queue[q];
		struct request *r = req_get(in, id);
		struct ipoint *ip;
		const char *why = NULL;
		int rc;

		if (r == NULL || r->state != ENG_REQ_PENDING)
			continue;
		ip = &in->pts[r->point];
		if ((rc = mark_dirty(in, c, ip)) < 0)
			return hunch_errf(err, rc, "out of memory");
		if (!ip->active || ip->rebuild) {
			size_t k = c->ndirty - 1;

			while (c->dirty[k] != r->point)
				k--;
			rc = prepare_point(in, c, ip, k, &why, err);
			if (rc < 0)
				return rc;
			if (rc > 0) {
				r->why = why;
				req_release(r, ENG_REQ_FAILED);
				(*failed)++;
				continue;
			}
		}
		r->mini_len = r->code_len + 5;
		if ((rc = eng_codemem_alloc(in->mem, ip->base, r->mini_len,
					    &r->mini, err)) < 0)
			return rc;
		if ((rc = tmem(in, r->mini, r->code, r->code_len, err)) < 0)
			return rc;
		if (site_index(ip, r->site) < 0 ||
		    chain_insert(&ip->ch[site_index(ip, r->site)], id,
				 r->prepend) < 0)
			return hunch_errf(err, -ENOMEM, "out of memory");
		r->state = ENG_REQ_ACTIVE;
	}
	return 0;
}

#define TRAP_CAP 8192u      /* entries; 128 KiB in the target */

/* The table the rtlib's SIGTRAP handler reads: allocated, and the
 * handler installed, at the first trap point. */
static int trap_table_init(struct eng_inst *in, uint64_t near,
			   struct hunch_err *err)
{
	uint64_t args[2], ret = 0, fn;
	pid_t tid, tids[4096];
	int rc;

	if (in->trap_table != 0)
		return 0;
	fn = eng_shm_entry(in->shm, HUNCH_RT_ENTRY_TRAP_INSTALL);
	if (fn == 0)
		return hunch_errf(err, -ENOTSUP, "the runtime library has no "
				  "trap handler (older build?)");
	in->trap_mirror = calloc(TRAP_CAP, sizeof *in->trap_mirror);
	if (in->trap_mirror == NULL)
		return hunch_errf(err, -ENOMEM, "out of memory");
	if ((rc = eng_codemem_alloc(in->mem, near, TRAP_CAP *
				    sizeof(struct hunch_trap_entry),
				    &in->trap_table, err)) < 0)
		return rc;
	/* fresh anonymous memory is zero: the table starts empty */
	if (eng_proc_threads(in->p, tids, 4096) < 1)
		return hunch_errf(err, -ESRCH, "no thread");
	tid = tids[0];
	args[0] = in->trap_table;
	args[1] = TRAP_CAP;
	if ((rc = eng_infcall(in->p, tid, fn, args, 2, &ret, err)) < 0)
		return rc;
	if (ret != 0)
		return hunch_errf(err, -EIO, "the runtime library refused to "
				  "install its SIGTRAP handler (%d)", (int)ret);
	return 0;
}

/* Point `addr` at `tramp` in the table (tramp == addr: a removed point,
 * whose original instruction is back). */
static int trap_set(struct eng_inst *in, uint64_t addr, uint64_t tramp,
		    struct hunch_err *err)
{
	uint64_t i = hunch_trap_slot(addr, TRAP_CAP);

	for (size_t n = 0; n < TRAP_CAP; n++, i = (i + 1) & (TRAP_CAP - 1)) {
		struct hunch_trap_entry *e = &in->trap_mirror[i];

		if (e->addr != addr && e->addr != 0)
			continue;
		if (e->addr == 0) {
			if (in->trap_used + 1 >= TRAP_CAP * 3 / 4)
				return hunch_errf(err, -ENOSPC, "trap table "
						  "full at 0x%" PRIx64, addr);
			in->trap_used++;
		}
		e->addr = addr;
		e->tramp = tramp;
		return tmem(in, in->trap_table + i * sizeof *e, e, sizeof *e,
			    err);
	}
	return hunch_errf(err, -ENOSPC, "trap table full");
}

static int write_patch(struct eng_inst *in, struct ipoint *ip,
		       struct hunch_err *err)
{
	uint8_t p[32];
	if (ip->pt.trap) {      /* its table entry is already written */
		p[0] = 0xcc;
		return wmem(in, ip->pt.addr, p, 1, err);
	}
	memset(p, 0xcc, sizeof p);   /* leftover bytes: int3, never run */
	x86_jmp5_bytes(p, ip->pt.patch_start, ip->base);
	return wmem(in, ip->pt.patch_start, p, ip->pt.patch_len, err);
}

/* Put the program's bytes back; a trap keeps its table entry, sending
 * a late SIGTRAP back to the restored instruction. */
static int unpatch(struct eng_inst *in, struct ipoint *ip,
		   struct hunch_err *err)
{
	int rc = wmem(in, ip->pt.patch_start, ip->orig, ip->pt.patch_len, err);

	if (rc == 0 && ip->pt.trap)
		rc = trap_set(in, ip->pt.addr, ip->pt.addr, err);
	return rc;
}

/* Write code and links of every touched point; new bases last (their
 * slot must already lead to written minis). */
static int apply_points(struct eng_inst *in, struct commit *c,
			struct hunch_err *err)
{
	int rc;

	for (size_t k = 0; k < c->ndirty; k++) {
		struct ipoint *ip = &in->pts[c->dirty[k]];

		if (!ip->active)
			continue;
		if (point_minis(ip) == 0) {     /* last mini gone: restore */
			if (ip->patched) {
				if ((rc = unpatch(in, ip, err)) < 0)
					return rc;
				ip->patched = false;
			}
			ip->active = false;  /* the base is kept */
			ip->nsite = 0;     /* sites come back with requests */
			ip->rebuild = false;
			continue;
		}
		if (c->newbase[k] != NULL &&
		    (rc = tmem(in, ip->base, c->newbase[k], ip->b.len, err)) < 0)
			return rc;
		if ((rc = relink(in, ip, err)) < 0)
			return rc;
	}
	/* trap entries before their int3s, all code before any PC or
	 * patch can lead to it */
	for (size_t k = 0; k < c->ndirty; k++) {
		struct ipoint *ip = &in->pts[c->dirty[k]];

		if (ip->active && !ip->patched && ip->pt.trap &&
		    ((rc = trap_table_init(in, ip->base, err)) < 0 ||
		     (rc = trap_set(in, ip->pt.addr, ip->base, err)) < 0))
			return rc;
	}
	if ((rc = eng_codemem_flush(in->mem, &in->st.writes, err)) < 0 ||
	    (rc = inst_threads_write_regs(in->p, &c->th, err)) < 0)
		return rc;
	for (size_t k = 0; k < c->ndirty; k++) {
		struct ipoint *ip = &in->pts[c->dirty[k]];

		if (ip->active && !ip->patched) {
			if ((rc = write_patch(in, ip, err)) < 0)
				return rc;
			ip->patched = true;
		}
	}
	return eng_codemem_flush(in->mem, &in->st.writes, err);
}

/* All or nothing: a thread in a removed mini may still jump through
 * other removed code, so nothing is reused while any PC or stack word
 * points into any of it. */
static void try_free(struct eng_inst *in, const struct inst_threads *th)
{
	for (size_t i = 0; i < in->npf; i++)
		if (inst_threads_pc_in(th, in->pf[i].addr,
				       in->pf[i].addr + in->pf[i].len) ||
		    inst_threads_word_in(th, in->pf[i].addr,
					 in->pf[i].addr + in->pf[i].len)) {
			in->st.frees_deferred++;
			return;
		}
	for (size_t i = 0; i < in->npf; i++)
		eng_codemem_free(in->mem, in->pf[i].addr, in->pf[i].len);
	in->npf = 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void commit_free(struct eng_inst *in, struct commit *c)
{
	for (size_t k = 0; k < c->ndirty; k++) {
		in->pts[c->dirty[k]].dirty = false;
		free(c->newbase ? c->newbase[k] : NULL);
	}
	free(c->newbase);
	free(c->dirty);
	inst_threads_free(&c->th);
}

int eng_inst_commit(struct eng_inst *in, struct hunch_err *err)
{
	struct commit c = { 0 };
	bool was_stopped = eng_proc_stopped(in->p);
	uint64_t t0 = now_ns();
	int failed = 0, rc;

	if (in->nqueue == 0 && in->npf == 0)
		return 0;
	if (!was_stopped && (rc = eng_stop_all(in->p, err)) < 0)
		return rc;
	rc = inst_threads_read(in->p, &c.th, err);
	if (rc == 0 && (rc = do_removals(in, &c)) < 0)
		hunch_errf(err, rc, "out of memory");
	/* one newbase slot per point that can become dirty */
	if (rc == 0) {
		c.newbase = calloc(in->nqueue + c.ndirty + 1, sizeof *c.newbase);
		if (c.newbase == NULL)
			rc = hunch_errf(err, -ENOMEM, "out of memory");
	}
	if (rc == 0)
		rc = do_adds(in, &c, &failed, err);
	if (rc == 0)
		rc = apply_points(in, &c, err);
	if (rc == 0)
		try_free(in, &c.th);
	in->nqueue = 0;
	commit_free(in, &c);
	in->st.commits++;
	if (!was_stopped) {
		int rc2 = eng_resume_all(in->p, rc < 0 ? NULL : err);

		if (rc == 0)
			rc = rc2;
	}
	in->st.last_commit_ns = now_ns() - t0;
	if (rc < 0)
		hunch_err_prefix(err, "instrumenting pid %d: ",
				 (int)eng_proc_pid(in->p));
	return rc < 0 ? rc : failed;
}

int eng_inst_remove_all(struct eng_inst *in, struct hunch_err *err)
{
	for (size_t i = 0; i < in->nreq; i++)
		if (in->req[i].state == ENG_REQ_ACTIVE ||
		    in->req[i].state == ENG_REQ_PENDING)
			eng_inst_remove(in, (uint32_t)i + 1);
	return eng_inst_commit(in, err);
}

void eng_inst_stats(const struct eng_inst *in, struct eng_inst_stats *st)
{
	*st = in->st;
	st->points_patched = 0;
	st->requests_active = 0;
	for (size_t i = 0; i < in->npts; i++)
		st->points_patched += in->pts[i].patched;
	for (size_t i = 0; i < in->nreq; i++)
		st->requests_active += in->req[i].state == ENG_REQ_ACTIVE;
	st->code_bytes = eng_codemem_used(in->mem);
}

int eng_inst_catchup(struct eng_inst *in, uint64_t lo, uint64_t hi,
		     const struct x86_snip *s, size_t n, struct hunch_err *err)
{
	return inst_catchup(in->p, in->shm, in->mem, lo, hi, s, n, err);
}

/* Release a dropped point's requests and trampolines. */
static int drop_point(struct eng_inst *in, struct ipoint *ip,
		      struct hunch_err *err)
{
	int n = 0, rc;

	for (size_t s = 0; s < ip->nsite; s++) {
		for (size_t i = 0; i < ip->ch[s].n; i++) {
			struct request *r = req_get(in, ip->ch[s].id[i]);

			if (defer_free(in, r->mini, r->mini_len) < 0)
				return hunch_errf(err, -ENOMEM, "out of memory");
			req_release(r, ENG_REQ_FREE);
			n++;
		}
		ip->ch[s].n = 0;
	}
	if (ip->base != 0 && defer_free(in, ip->base, ip->base_len) < 0)
		return hunch_errf(err, -ENOMEM, "out of memory");
	/* a dead trap entry: tramp 0 passes any later SIGTRAP there on */
	if (ip->pt.trap && ip->patched &&
	    (rc = trap_set(in, ip->pt.addr, 0, err)) < 0)
		return rc;
	ip->base = 0;
	ip->active = ip->patched = ip->rebuild = false;
	ip->nsite = 0;
	ip->dead = true;
	return n;
}

int eng_inst_drop_range(struct eng_inst *in, uint64_t lo, uint64_t hi,
			struct hunch_err *err)
{
	bool was_stopped = eng_proc_stopped(in->p);
	int n = 0, rc = 0;

	if (!was_stopped && (rc = eng_stop_all(in->p, err)) < 0)
		return rc;
	for (size_t i = 0; i < in->npts && rc >= 0; i++) {
		struct ipoint *ip = &in->pts[i];

		if (ip->dead || ip->pt.patch_start < lo ||
		    ip->pt.patch_start >= hi)
			continue;
		rc = drop_point(in, ip, err);
		n += rc > 0 ? rc : 0;
	}
	/* pending requests there were never inserted: forget them too */
	for (size_t q = 0; q < in->nqueue && rc >= 0; q++) {
		struct request *r = req_get(in, in->queue[q]);

		if (r != NULL && r->state == ENG_REQ_PENDING &&
		    in->pts[r->point].dead) {
			req_release(r, ENG_REQ_FREE);
			n++;
		}
	}
	if (rc >= 0)
		rc = eng_codemem_flush(in->mem, &in->st.writes, err);
	if (!was_stopped)
		eng_resume_all(in->p, NULL);
	return rc < 0 ? rc : n;
}

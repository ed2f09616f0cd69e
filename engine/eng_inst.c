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

#include "eng_funcreloc.h"
#include "eng_proc.h"
#include "eng_shm.h"
#include "eng_stackwalk.h"
#include "hunch_abi.h"
#include "x86_parse.h"

int eng_inst_grow(void **arr, size_t *cap, size_t need, size_t elem)
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

/* The shared call thunks, once per process (the target is stopped for
 * the allocation, which may need an inferior call of mmap). */
static int make_thunks(struct eng_inst *in, struct hunch_err *err)
{
	uint8_t buf[1024];
	size_t call_off, reg_off;
	bool was_stopped = eng_proc_stopped(in->p);
	uint64_t at, writes = 0;
	int len, rc;

	if (!was_stopped && (rc = eng_ptrace_stop_all(in->p, err)) < 0)
		return rc;
	len = x86_tramp_thunks(&in->env, buf, sizeof buf, 0, &call_off,
			       &reg_off);
	rc = len < 0 ? hunch_err_set(err, len, "thunk generation failed") :
	     eng_codemem_alloc(in->mem, eng_solib_module(in->p, 0)->bias,
			       (size_t)len, &at, err);
	if (rc == 0)
		rc = eng_codemem_write(in->mem, at, buf, (size_t)len, err);
	if (rc == 0)
		rc = eng_codemem_flush(in->mem, &writes, err);
	if (rc == 0) {
		in->env.thunk_call = at + call_off;
		in->env.thunk_reg = at + reg_off;
		in->thunk_lo = at;
		in->thunk_hi = at + (uint64_t)len;
	}
	if (!was_stopped)
		eng_ptrace_resume_all(in->p, NULL);
	return rc;
}

void eng_inst_warm(void)
{
	double ns;

	(void)eng_inst_trapcost_measure(&ns);
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
		return hunch_err_set(err, -ENOMEM, "out of memory");
	in->p = p;
	in->shm = shm;
	in->env.fs_block_off = (int32_t)h->rt_tls_block_off;
	in->env.fn_block = eng_shm_entry(shm, HUNCH_RT_ENTRY_BLOCK);
	eng_infcall_set_return(p, eng_shm_entry(shm, HUNCH_RT_ENTRY_INFCALL_RET));
	in->env.fn_wall_start = eng_shm_entry(shm, HUNCH_RT_ENTRY_WALL_START);
	in->env.fn_wall_stop = eng_shm_entry(shm, HUNCH_RT_ENTRY_WALL_STOP);
	in->env.fn_cpu_start = eng_shm_entry(shm, HUNCH_RT_ENTRY_CPU_START);
	in->env.fn_cpu_stop = eng_shm_entry(shm, HUNCH_RT_ENTRY_CPU_STOP);
	in->env.wall_rdtsc = h->wall_level == HUNCH_LEVEL_HW;
	in->wall_ns = h->wall_level != HUNCH_LEVEL_HW;
	in->env.shadow_stack = shadow_stack_on(eng_proc_pid(p));
	in->tsc_mult = h->tsc_mult;
	in->tsc_shift = h->tsc_shift;
	/* What a pass costs, measured here once (eng_inst_cost.h); the
	 * model's safe-side figures if that cannot be done. */
	eng_inst_cost_model(&in->cost, &in->env);
	(void)eng_inst_cost_measure(&in->cost, &in->env);
	if (in->env.fn_block == 0 || in->env.fn_cpu_start == 0 ||
	    in->env.fs_block_off == 0) {
		free(in);
		return hunch_err_set(
			err, -EPROTO,
			"the runtime library in pid %d "
			"did not publish its entry points; is it the "
			"same build as hunch?",
			(int)eng_proc_pid(p));
	}
	if ((rc = eng_codemem_create(p, &in->mem, err)) < 0 ||
	    (rc = x86_reloc_open(&in->reloc)) < 0) {
		eng_inst_destroy(in);
		return rc < 0 ? hunch_err_set(err, rc, "cannot open capstone") : rc;
	}
	if ((rc = make_thunks(in, err)) < 0) {
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
	eng_inst_mirror_destroy(in);
	eng_funcreloc_free(in);
	eng_stackwalk_close(in->sw);
	eng_codemem_destroy(in->mem);
	x86_reloc_close(in->reloc);
	free(in);
}

const struct x86_tramp_env *eng_inst_env(const struct eng_inst *in)
{
	return &in->env;
}

const struct eng_inst_cost *eng_inst_costs(const struct eng_inst *in)
{
	return &in->cost;
}

double eng_inst_native_per_ns(const struct eng_inst *in)
{
	if (in->wall_ns || in->tsc_mult == 0)
		return 1;
	return (double)(1ull << in->tsc_shift) / (double)in->tsc_mult;
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

/* Rebuild the byte map from scratch (after eng_funcreloc_free_compact
 * renumbered the points). */
int eng_inst_rehash(struct eng_inst *in)
{
	free(in->hash);
	free(in->hkey);
	in->hash = NULL;
	in->hkey = NULL;
	in->hcap = in->hused = 0;
	for (size_t k = 0; k < in->npts; k++)
		in->hused += in->pts[k].pt.patch_len;
	return rehash(in, in->hused);
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

int eng_inst_site_index(const struct ipoint *ip, uint64_t addr)
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

	if (eng_inst_site_index(ip, addr) >= 0)
		return 0;
	if (ip->nsite == X86_TRAMP_MAX_SITES || (ip->pt.trap && ip->nsite > 0))
		return hunch_err_set(err, -ENOSPC,
				     "point 0x%" PRIx64 ": too many "
				     "points in one patch",
				     addr);
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
	/* a point too small for its own jmp, inside another point's jmp
	 * patch, needs no trap: it is one more site of that patch */
	if (pt->trap && !ip->pt.trap && pt->addr >= s && pt->addr < e)
		return site_add(ip, pt->addr, err);
	if (pt->trap)
		return hunch_err_set(err, -EBUSY,
				     "point 0x%" PRIx64 ": its bytes "
				     "belong to the patch of another point",
				     pt->addr);
	if (ip->active)
		return hunch_err_set(err, -EBUSY, "point 0x%" PRIx64 " %s 0x%"
				     PRIx64 "; request both points together",
				     pt->addr, ip->pt.trap ?
				     "covers the active trap point at" :
				     "overlaps the active patch at", s);
	ip->pt.trap = false;    /* an inactive trap point becomes a site */
	if (ip->base != 0 &&
	    eng_inst_commit_defer_free(in, ip->base, ip->base_len) < 0)
		return hunch_err_set(err, -ENOMEM, "out of memory");
	ip->base = 0;           /* the kept base was for other bytes */
	if (ne - ns > 32)
		return hunch_err_set(err, -ENOSPC,
				     "point 0x%" PRIx64 ": merged "
				     "patch too long",
				     pt->addr);
	ip->pt.patch_start = ns;
	ip->pt.patch_len = (uint8_t)(ne - ns);
	if (hmap(in, ns, ne, (uint32_t)(ip - in->pts)) < 0)
		return hunch_err_set(err, -ENOMEM, "out of memory");
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
			return hunch_err_set(err, -EBUSY, "point 0x%" PRIx64
					  " overlaps two patches", pt->addr);
		if (o != NULL)
			ip = o;
	}
	if (ip != NULL) {
		*idx = (uint32_t)(ip - in->pts);
		return point_merge(in, ip, pt, err);
	}
	if (eng_inst_grow((void **)&in->pts, &in->cappts, in->npts + 1,
		 sizeof *in->pts) < 0)
		return hunch_err_set(err, -ENOMEM, "out of memory");
	ip = &in->pts[in->npts];
	memset(ip, 0, sizeof *ip);
	ip->pt = *pt;
	ip->site[0] = pt->addr;
	ip->nsite = 1;
	in->npts++;
	rc = hmap(in, pt->patch_start, pt->patch_start + pt->patch_len,
		  (uint32_t)in->npts - 1);
	if (rc < 0)
		return hunch_err_set(err, -ENOMEM, "out of memory");
	*idx = (uint32_t)in->npts - 1;
	return 0;
}

/* ---- requests ---- */

static int enqueue(struct eng_inst *in, uint32_t id)
{
	if (eng_inst_grow((void **)&in->queue, &in->capqueue, in->nqueue + 1,
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
	struct eng_inst_point tp, rp;
	struct x86_snip *charged;
	size_t ncharged;

	/* the first fallback: the point of a relocated copy of its function */
	if ((rc = eng_funcreloc_route(in, pt, &rp, err)) < 0)
		return rc;
	if (rc > 0)
		pt = &rp;
	if (pt->trap) {      /* the int3 replaces the point instruction only */
		tp = *pt;
		tp.patch_start = pt->addr;
		tp.patch_len = pt->insn_len;
		pt = &tp;
	}
	if (pt->patch_len < (pt->trap ? 1 : 5) || pt->patch_len > 32 ||
	    pt->addr < pt->patch_start ||
	    pt->addr >= pt->patch_start + pt->patch_len)
		return hunch_err_set(err, -EINVAL, "point 0x%" PRIx64 ": bad patch "
				  "[0x%" PRIx64 ", +%u)", pt->addr,
				  pt->patch_start, pt->patch_len);
	/* Predicate bodies charge their own cost where they run. */
	if (eng_inst_cost_charge_bodies(&in->cost, &in->env,
					eng_inst_native_per_ns(in), s, n,
					&charged, &ncharged) < 0)
		return hunch_err_set(err, -ENOMEM, "out of memory");
	len = x86_tramp_snip_code(&in->env, charged, ncharged, code,
			    sizeof code - 16);
	free(charged);
	if (len < 0)
		return hunch_err_set(err, len,
				     "point 0x%" PRIx64 ": the snippet "
				     "cannot be compiled (%s)",
				     pt->addr,
				     len == -ENOSPC ? "too long" : "malformed");
	if ((rc = point_get(in, pt, &pi, err)) < 0)
		return rc;
	if (eng_inst_grow((void **)&in->req, &in->capreq, in->nreq + 1,
		 sizeof *in->req) < 0 || enqueue(in, (uint32_t)in->nreq + 1) < 0)
		return hunch_err_set(err, -ENOMEM, "out of memory");
	r = &in->req[in->nreq];
	memset(r, 0, sizeof *r);
	r->code = malloc((size_t)len + 1);
	if (r->code == NULL)
		return hunch_err_set(err, -ENOMEM, "out of memory");
	memcpy(r->code, code, (size_t)len);
	r->code_len = (size_t)len;
	r->cost_ns = eng_inst_cost_snips(&in->cost, &in->env, s, n, false);
	r->prepend = prepend;
	r->point = pi;
	r->site = pt->addr;
	r->linked = false;
	r->state = ENG_REQ_PENDING;
	*id = (uint32_t)++in->nreq;
	return 0;
}

struct request *eng_inst_req_get(const struct eng_inst *in, uint32_t id)
{
	if (id == 0 || id > in->nreq)
		return NULL;
	return &in->req[id - 1];
}

int eng_inst_remove(struct eng_inst *in, uint32_t id)
{
	struct request *r = eng_inst_req_get(in, id);

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
				  enum eng_refusal *why)
{
	const struct request *r = eng_inst_req_get(in, id);

	if (why != NULL)
		*why = r ? r->why : ENG_REFUSAL_NONE;
	return r ? r->state : ENG_REQ_FREE;
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

/* Release a dropped point's requests and trampolines. */
static int drop_point(struct eng_inst *in, struct ipoint *ip,
		      struct hunch_err *err)
{
	int n = 0, rc;

	for (size_t s = 0; s < ip->nsite; s++) {
		for (size_t i = 0; i < ip->ch[s].n; i++) {
			struct request *r =
				eng_inst_req_get(in, ip->ch[s].id[i]);

			if (eng_inst_commit_defer_free(in, r->mini,
						       r->mini_len) < 0)
				return hunch_err_set(err, -ENOMEM, "out of memory");
			eng_inst_commit_req_release(r, ENG_REQ_FREE);
			n++;
		}
		ip->ch[s].n = 0;
	}
	if (ip->base != 0 &&
	    eng_inst_commit_defer_free(in, ip->base, ip->base_len) < 0)
		return hunch_err_set(err, -ENOMEM, "out of memory");
	/* a dead trap entry: tramp 0 passes any later SIGTRAP there on */
	if (ip->pt.trap && ip->patched &&
	    (rc = eng_inst_commit_trap_set(in, ip->pt.addr, 0, err)) < 0)
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

	if (!was_stopped && (rc = eng_ptrace_stop_all(in->p, err)) < 0)
		return rc;
	for (size_t i = 0; i < in->npts && rc >= 0; i++) {
		struct ipoint *ip = &in->pts[i];

		if (ip->dead || ((ip->pt.patch_start < lo ||
				  ip->pt.patch_start >= hi) &&
				 !eng_funcreloc_in_copy_of(in, ip->pt.patch_start,
							   lo, hi)))
			continue;
		rc = drop_point(in, ip, err);
		n += rc > 0 ? rc : 0;
	}
	/* pending requests there were never inserted: forget them too */
	for (size_t q = 0; q < in->nqueue && rc >= 0; q++) {
		struct request *r = eng_inst_req_get(in, in->queue[q]);

		if (r != NULL && r->state == ENG_REQ_PENDING &&
		    in->pts[r->point].dead) {
			eng_inst_commit_req_release(r, ENG_REQ_FREE);
			n++;
		}
	}
	if (rc >= 0)
		eng_funcreloc_drop(in, lo, hi);
	if (rc >= 0)
		rc = eng_codemem_flush(in->mem, &in->st.writes, err);
	if (!was_stopped)
		eng_ptrace_resume_all(in->p, NULL);
	return rc < 0 ? rc : n;
}

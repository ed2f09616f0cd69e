/*
 * eng_inst_commit.c - applying queued requests in one stop of every
 * thread (the protocol is in eng_inst.h), writing trampoline memory,
 * and the trap table.
 */
#include "eng_inst_int.h"
#include "clock_mono.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eng_funcreloc.h"
#include "eng_proc.h"
#include "eng_shm.h"
#include "hunch_abi.h"
#include "eng_fault.h"

/* ---- writing into the target ---- */

/* Program code: written at once.  Trampoline memory: through the
 * shadow (tmem), flushed before the program's code is patched. */
int eng_inst_commit_wmem(struct eng_inst *in, uint64_t a, const void *b,
			 size_t n, struct hunch_err *err)
{
	in->st.writes++;
	int rc;

	eng_codemem_sync(in->mem, a, b, n);   /* a copy's patch */
	if ((rc = eng_mem_write(in->p, a, b, n, err)) == 0)
		eng_inst_mirror_write(in, a, b, n, true);
	return rc;
}

int eng_inst_commit_tmem(struct eng_inst *in, uint64_t a, const void *b,
			 size_t n, struct hunch_err *err)
{
	return eng_codemem_write(in->mem, a, b, n, err);
}

int eng_inst_commit_defer_free(struct eng_inst *in, uint64_t a, size_t len)
{
	if (eng_inst_grow((void **)&in->pf, &in->cappf, in->npf + 1, sizeof *in->pf) < 0)
		return -ENOMEM;
	in->pf[in->npf++] = (struct pending_free){ a, len };
	return 0;
}

static uint32_t cost_native(const struct eng_inst *in, double ns)
{
	return (uint32_t)eng_inst_cost_native(ns * eng_inst_native_per_ns(in));
}

/* Write the jumps of one site's chain, slot -> minis -> BACK, and the
 * observed cost of one pass.  With only_new, write just the jumps whose
 * source nothing can reach yet (a mini not linked before, or a base
 * generated in this commit), so that they can be flushed before any
 * live jump leads to them: if hunch dies between two writes, no live
 * code may jump into a mini whose tail is not written yet.  A kept base
 * is not new even while unpatched: threads sent there before its patch
 * was removed may still be on their way to its slot (a trap point's
 * threads wait there for a CPU), so its slot is written with the live
 * jumps, after the minis it leads to. */
static int relink_site(struct eng_inst *in, struct ipoint *ip, size_t s,
		       bool only_new, bool base_new, struct hunch_err *err)
{
	const struct x86_site *st = &ip->b.site[s];
	uint64_t back = ip->base + st->back_off;
	uint64_t from = ip->base + st->slot_off;
	bool src_new = base_new;
	/* a trap point's int3 costs the thread more than its base: the
	 * trap's exception and stop, charged with its first site */
	double ns = in->cost.base_ns +
		    (ip->pt.trap && s == 0 ? in->cost.trap_ns : 0);
	uint8_t j[5];
	uint32_t cost;
	int rc;

	for (size_t i = 0; i < ip->ch[s].n; i++) {
		struct request *r = eng_inst_req_get(in, ip->ch[s].id[i]);

		x86_emit_jmp5_bytes(j, from, r->mini);
		if ((!only_new || src_new) &&
		    (rc = eng_inst_commit_tmem(in, from, j, 5, err)) < 0)
			return rc;
		from = r->mini + r->tail_off;
		src_new = !r->linked;
		ns += r->cost_ns;
	}
	x86_emit_jmp5_bytes(j, from, back);
	if ((!only_new || src_new) &&
	    (rc = eng_inst_commit_tmem(in, from, j, 5, err)) < 0)
		return rc;
	if (only_new && ip->patched)
		return 0;
	cost = cost_native(in, ns);
	return eng_inst_commit_tmem(in, ip->base + st->cost_off, &cost, 4, err);
}

static int relink(struct eng_inst *in, struct ipoint *ip, bool only_new,
		  bool base_new, struct hunch_err *err)
{
	int rc = 0;

	for (size_t s = 0; s < ip->nsite && rc == 0; s++)
		rc = relink_site(in, ip, s, only_new, base_new, err);
	for (size_t s = 0; !only_new && rc == 0 && s < ip->nsite; s++)
		for (size_t i = 0; i < ip->ch[s].n; i++)
			eng_inst_req_get(in, ip->ch[s].id[i])->linked = true;
	return rc;
}

/* A base losing its last mini is kept: its slots now jump straight to
 * BACK.  A thread still in it before a slot (descheduled, or in the
 * registration call of the slow path) must not follow the old jump into
 * a mini that is freed once no PC is in the mini itself, and may then be
 * reused for another point's code. */
static int unlink_base(struct eng_inst *in, struct ipoint *ip,
		       struct hunch_err *err)
{
	uint8_t j[5];
	int rc = 0;

	for (size_t s = 0; s < ip->b.nsite && rc == 0 && ip->base != 0; s++) {
		uint64_t from = ip->base + ip->b.site[s].slot_off;

		x86_emit_jmp5_bytes(j, from, ip->base + ip->b.site[s].back_off);
		rc = eng_inst_commit_tmem(in, from, j, 5, err);
	}
	return rc;
}

size_t eng_inst_commit_point_minis(const struct ipoint *ip)
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
	if (eng_inst_grow((void **)&c->dirty, &c->capdirty, c->ndirty + 1,
		 sizeof *c->dirty) < 0)
		return -ENOMEM;
	ip->dirty = true;
	c->dirty[c->ndirty++] = (uint32_t)(ip - in->pts);
	return 0;
}

/* Checks before the first patch of a point's bytes. */
static int check_fresh(struct eng_inst *in, struct commit *c,
		       struct ipoint *ip, enum eng_refusal *why,
		       struct hunch_err *err)
{
	const struct eng_inst_point *pt = &ip->pt;
	int rc;

	if (!pt->trap && eng_inst_threads_word_in(&c->th, pt->patch_start + 1,
					      pt->patch_start + pt->patch_len)) {
		in->st.refused_stack++;
		return *why = ENG_REFUSAL_PATCH_STACK, 1;
	}
	if ((rc = eng_mem_read(in->p, pt->patch_start, ip->orig,
			       pt->patch_len, err)) < 0)
		return rc;
	if (ip->orig[0] == 0xcc)
		return *why = ENG_REFUSAL_PATCH_INT3, 1;
	/* the dynamic linker's r_brk carries hunch's own int3 (eng_bp),
	 * which would be written back over the patch later */
	if (eng_proc_r_brk(in->p) >= pt->patch_start &&
	    eng_proc_r_brk(in->p) < pt->patch_start + pt->patch_len)
		return *why = ENG_REFUSAL_PATCH_R_BRK, 1;
	return 0;
}

/* Threads stopped inside the bytes about to change resume in their
 * relocated copies (written to the threads after the code). */
static int move_pcs(struct eng_inst *in, struct commit *c, struct ipoint *ip,
		    const struct x86_base *nb, uint64_t at,
		    enum eng_refusal *why)
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
			return *why = ENG_REFUSAL_PATCH_THREAD, 1;
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

/* A jump that is rewritten while the program runs through it must not
 * straddle a page: each page is one write (eng_mem.c), and hunch killed
 * between the two would leave half a jump. */
static bool straddles(uint64_t a, size_t len)
{
	return (a & 4095) + len > 4096;
}

/* Memory for a base whose slot jumps (rewritten live) straddle no
 * page, and its code for that address (rc of x86_tramp_base in *gen). */
static int base_alloc(struct eng_inst *in, struct ipoint *ip, size_t alloc,
		      uint8_t *buf, struct x86_base *nb, uint64_t *at,
		      int *gen, struct hunch_err *err)
{
	const struct eng_inst_point *pt = &ip->pt;
	uint64_t bad[4];
	size_t nbad = 0;
	int rc;

	for (;;) {
		bool ok = true;

		if ((rc = eng_codemem_alloc(in->mem, pt->patch_start, alloc,
					    at, err)) < 0)
			break;
		*gen = x86_tramp_base(in->reloc, &in->env, ip->orig,
				      pt->patch_len, pt->patch_start, ip->site,
				      ip->nsite, *at, buf, BASE_MAX, nb);
		for (size_t s = 0; *gen == 0 && s < nb->nsite; s++)
			ok = ok && !straddles(*at + nb->site[s].slot_off, 5);
		if (ok || nbad == 4)
			break;
		bad[nbad++] = *at;      /* never used: freed below */
	}
	while (nbad > 0)
		eng_codemem_free(in->mem, bad[--nbad], alloc);
	return rc;
}

/* Build the base trampoline of a point about to be patched, or rebuilt
 * with a new site (not yet written: c->newbase).  Returns 0, 1 (refused,
 * *why), or -errno. */
static int prepare_point(struct eng_inst *in, struct commit *c,
			 struct ipoint *ip, size_t k, enum eng_refusal *why,
			 struct hunch_err *err)
{
	const struct eng_inst_point *pt = &ip->pt;
	uint8_t buf[BASE_MAX];
	struct x86_base nb;
	bool fresh = !ip->patched;
	uint64_t at;
	size_t alloc;
	int rc, gen = 0;

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
		return *why = eng_refusal_of_x86(nb.why), 1;
	alloc = nb.len + 64;
	if ((rc = base_alloc(in, ip, alloc, buf, &nb, &at, &gen, err)) < 0)
		return rc;
	rc = gen;
	if (rc < 0 || nb.len > alloc ||
	    (fresh && move_pcs(in, c, ip, &nb, at, why) != 0)) {
		eng_codemem_free(in->mem, at, alloc);
		if (rc < 0 || nb.len > alloc)
			*why = rc < 0 ? eng_refusal_of_x86(nb.why) :
				ENG_REFUSAL_PATCH_GREW;
		return 1;
	}
	c->newbase[k] = malloc(nb.len);
	if (c->newbase[k] == NULL)
		return hunch_err_set(err, -ENOMEM, "out of memory");
	memcpy(c->newbase[k], buf, nb.len);
	if (ip->base != 0 &&
	    eng_inst_commit_defer_free(in, ip->base, ip->base_len) < 0)
		return hunch_err_set(err, -ENOMEM, "out of memory");
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
	if (eng_inst_grow((void **)&ch->id, &ch->cap, ch->n + 1, sizeof *ch->id) < 0)
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

void eng_inst_commit_req_release(struct request *r, enum eng_req_state st)
{
	free(r->code);
	r->code = NULL;
	r->mini = 0;
	r->state = st;
}

static int do_removals(struct eng_inst *in, struct commit *c)
{
	for (size_t q = 0; q < in->nqueue; q++) {
		struct request *r = eng_inst_req_get(in, in->queue[q]);
		struct ipoint *ip;

		if (r == NULL || r->state != ENG_REQ_REMOVING)
			continue;
		ip = &in->pts[r->point];
		if (eng_inst_site_index(ip, r->site) >= 0)
			chain_remove(&ip->ch[eng_inst_site_index(ip, r->site)],
				     in->queue[q]);
		if (eng_inst_commit_defer_free(in, r->mini, r->mini_len) < 0 ||
		    mark_dirty(in, c, ip) < 0)
			return -ENOMEM;
		eng_inst_commit_req_release(r, ENG_REQ_FREE);
	}
	return 0;
}

/* The snippet code, nops up to the next page if the tail jump would
 * straddle one, and the tail's offset. */
static int write_mini(struct eng_inst *in, struct request *r,
		      struct hunch_err *err)
{
	static const uint8_t nops[4] = { 0x90, 0x90, 0x90, 0x90 };
	uint64_t tail = r->mini + r->code_len;
	size_t pad = straddles(tail, 5) ? 4096 - (tail & 4095) : 0;
	int rc;

	r->tail_off = r->code_len + pad;
	if ((rc = eng_inst_commit_tmem(in, r->mini, r->code, r->code_len,
				       err)) < 0)
		return rc;
	return pad ? eng_inst_commit_tmem(in, tail, nops, pad, err) : 0;
}

static int do_adds(struct eng_inst *in, struct commit *c, int *failed,
		   struct hunch_err *err)
{
	for (size_t q = 0; q < in->nqueue; q++) {
		uint32_t id = in->queue[q];
		struct request *r = eng_inst_req_get(in, id);
		struct ipoint *ip;
		enum eng_refusal why = ENG_REFUSAL_NONE;
		int rc;

		if (r == NULL || r->state != ENG_REQ_PENDING)
			continue;
		ip = &in->pts[r->point];
		if ((rc = mark_dirty(in, c, ip)) < 0)
			return hunch_err_set(err, rc, "out of memory");
		if (!ip->active || ip->rebuild) {
			size_t k = c->ndirty - 1;

			while (c->dirty[k] != r->point)
				k--;
			rc = prepare_point(in, c, ip, k, &why, err);
			if (rc < 0)
				return rc;
			if (rc > 0) {
				r->why = why;
				eng_inst_commit_req_release(r, ENG_REQ_FAILED);
				(*failed)++;
				continue;
			}
		}
		r->mini_len = r->code_len + 5 + 4;   /* + a nop pad */
		if ((rc = eng_codemem_alloc(in->mem, ip->base, r->mini_len,
					    &r->mini, err)) < 0 ||
		    (rc = write_mini(in, r, err)) < 0)
			return rc;
		if (eng_inst_site_index(ip, r->site) < 0 ||
		    chain_insert(&ip->ch[eng_inst_site_index(ip, r->site)], id,
				 r->prepend) < 0)
			return hunch_err_set(err, -ENOMEM, "out of memory");
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
		return hunch_err_set(err, -ENOTSUP,
				     "the runtime library has no "
				     "trap handler (older build?)");
	in->trap_mirror = calloc(TRAP_CAP, sizeof *in->trap_mirror);
	if (in->trap_mirror == NULL)
		return hunch_err_set(err, -ENOMEM, "out of memory");
	if ((rc = eng_codemem_alloc(in->mem, near, TRAP_CAP *
				    sizeof(struct hunch_trap_entry),
				    &in->trap_table, err)) < 0)
		return rc;
	/* fresh anonymous memory is zero: the table starts empty */
	if (eng_proc_threads(in->p, tids, 4096) < 1)
		return hunch_err_set(err, -ESRCH, "no thread");
	tid = tids[0];
	args[0] = in->trap_table;
	args[1] = TRAP_CAP;
	if ((rc = eng_infcall(in->p, tid, fn, args, 2, &ret, err)) < 0)
		return rc;
	if (ret != 0)
		return hunch_err_set(err, -EIO,
				     "the runtime library refused to "
				     "install its SIGTRAP handler (%d)",
				     (int)ret);
	eng_trap_set_table(in->p, in->trap_table, TRAP_CAP);
	return 0;
}

/* Point `addr` at `tramp` in the table (tramp == addr: a removed point,
 * whose original instruction is back). */
int eng_inst_commit_trap_set(struct eng_inst *in, uint64_t addr, uint64_t tramp,
		    struct hunch_err *err)
{
	uint64_t i = hunch_trap_slot(addr, TRAP_CAP);

	for (size_t n = 0; n < TRAP_CAP; n++, i = (i + 1) & (TRAP_CAP - 1)) {
		struct hunch_trap_entry *e = &in->trap_mirror[i];

		if (e->addr != addr && e->addr != 0)
			continue;
		if (e->addr == 0) {
			if (in->trap_used + 1 >= TRAP_CAP * 3 / 4)
				return hunch_err_set(err, -ENOSPC, "trap table "
						  "full at 0x%" PRIx64, addr);
			in->trap_used++;
		}
		e->addr = addr;
		e->tramp = tramp;
		return eng_inst_commit_tmem(in, in->trap_table + i * sizeof *e, e, sizeof *e,
			    err);
	}
	return hunch_err_set(err, -ENOSPC, "trap table full");
}

/* Program code [a, a+n) replaced by `to`.  Across a page it is two
 * writes, and hunch killed between them would leave half a jmp (or half
 * of the program's instruction back), so then an int3 goes first, with
 * a trap entry sending a thread that reaches it to `via` (the base, which
 * runs as the jmp and as the program's bytes do); then the other bytes,
 * then the first.  The entry is left as a removed point's (tramp == a). */
static int write_code(struct eng_inst *in, uint64_t a, const uint8_t *to,
		      size_t n, uint64_t via, struct hunch_err *err)
{
	static const uint8_t int3 = 0xcc;
	int rc;

	if (!straddles(a, n) || trap_table_init(in, via, err) < 0)
		return eng_inst_commit_wmem(in, a, to, n, err);
	in->st.int3_first++;
	if ((rc = eng_inst_commit_trap_set(in, a, via, err)) < 0 ||
	    (rc = eng_codemem_flush(in->mem, &in->st.writes, err)) < 0 ||
	    (rc = eng_inst_commit_wmem(in, a, &int3, 1, err)) < 0 ||
	    (rc = eng_inst_commit_wmem(in, a + 1, to + 1, n - 1, err)) < 0 ||
	    (rc = eng_inst_commit_wmem(in, a, to, 1, err)) < 0)
		return rc;
	return eng_inst_commit_trap_set(in, a, a, err);
}

static int write_patch(struct eng_inst *in, struct ipoint *ip,
		       struct hunch_err *err)
{
	uint8_t p[32];
	if (ip->pt.trap) {      /* its table entry is already written */
		p[0] = 0xcc;
		return eng_inst_commit_wmem(in, ip->pt.addr, p, 1, err);
	}
	memset(p, 0xcc, sizeof p);   /* leftover bytes: int3, never run */
	x86_emit_jmp5_bytes(p, ip->pt.patch_start, ip->base);
	return write_code(in, ip->pt.patch_start, p, ip->pt.patch_len,
			  ip->base, err);
}

/* Put the program's bytes back; a trap keeps its table entry, sending
 * a late SIGTRAP back to the restored instruction. */
static int unpatch(struct eng_inst *in, struct ipoint *ip,
		   struct hunch_err *err)
{
	int rc = ip->pt.trap
			 ? eng_inst_commit_wmem(in, ip->pt.patch_start,
						ip->orig, ip->pt.patch_len, err)
			 : write_code(in, ip->pt.patch_start, ip->orig,
				      ip->pt.patch_len, ip->base, err);

	if (rc == 0 && ip->pt.trap)
		rc = eng_inst_commit_trap_set(in, ip->pt.addr, ip->pt.addr,
					      err);
	return rc;
}

/* Write code and links of every touched point; new bases last (their
 * slot must already lead to written minis). */
static int apply_points(struct eng_inst *in, struct commit *c,
			struct hunch_err *err)
{
	int rc;

	/* New code and the jumps inside it first, flushed before anything
	 * live is changed to lead there (see relink_site). */
	for (size_t k = 0; k < c->ndirty; k++) {
		struct ipoint *ip = &in->pts[c->dirty[k]];

		if (!ip->active || eng_inst_commit_point_minis(ip) == 0)
			continue;
		if (c->newbase[k] != NULL &&
		    (rc = eng_inst_commit_tmem(in, ip->base, c->newbase[k], ip->b.len, err)) < 0)
			return rc;
		if ((rc = relink(in, ip, true, c->newbase[k] != NULL, err)) < 0)
			return rc;
	}
	if ((rc = eng_codemem_flush(in->mem, &in->st.writes, err)) < 0)
		return rc;
	for (size_t k = 0; k < c->ndirty; k++) {
		struct ipoint *ip = &in->pts[c->dirty[k]];

		if (!ip->active)
			continue;
		if (eng_inst_commit_point_minis(ip) == 0) {     /* last mini gone: restore */
			if ((rc = unlink_base(in, ip, err)) < 0)
				return rc;
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
		if ((rc = relink(in, ip, false, false, err)) < 0)
			return rc;
	}
	/* trap entries before their int3s, all code before any PC or
	 * patch can lead to it */
	for (size_t k = 0; k < c->ndirty; k++) {
		struct ipoint *ip = &in->pts[c->dirty[k]];

		if (ip->active && !ip->patched && ip->pt.trap &&
		    ((rc = trap_table_init(in, ip->base, err)) < 0 ||
		     (rc = eng_inst_commit_trap_set(in, ip->pt.addr, ip->base,
						    err)) < 0))
			return rc;
	}
	if ((rc = eng_codemem_flush(in->mem, &in->st.writes, err)) < 0 ||
	    (rc = eng_inst_threads_write_regs(in->p, &c->th, err)) < 0)
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
		if (eng_inst_threads_pc_in(th, in->pf[i].addr,
				       in->pf[i].addr + in->pf[i].len) ||
		    eng_inst_threads_word_in(th, in->pf[i].addr,
					 in->pf[i].addr + in->pf[i].len)) {
			in->st.frees_deferred++;
			return;
		}
	for (size_t i = 0; i < in->npf; i++)
		eng_codemem_free(in->mem, in->pf[i].addr, in->pf[i].len);
	in->npf = 0;
}

static void commit_free(struct eng_inst *in, struct commit *c)
{
	for (size_t k = 0; k < c->ndirty; k++) {
		in->pts[c->dirty[k]].dirty = false;
		free(c->newbase ? c->newbase[k] : NULL);
	}
	free(c->newbase);
	free(c->dirty);
	eng_inst_threads_free(&c->th);
}

/* The process is gone: removals succeed (nothing is left to restore),
 * insertions fail. */
static int commit_ended(struct eng_inst *in)
{
	int failed = 0;

	for (size_t q = 0; q < in->nqueue; q++) {
		struct request *r = eng_inst_req_get(in, in->queue[q]);

		if (r == NULL)
			continue;
		if (r->state == ENG_REQ_REMOVING) {
			eng_inst_commit_req_release(r, ENG_REQ_FREE);
		} else if (r->state == ENG_REQ_PENDING) {
			r->why = ENG_REFUSAL_PROCESS_ENDED;
			eng_inst_commit_req_release(r, ENG_REQ_FAILED);
			failed++;
		}
	}
	in->nqueue = 0;
	in->npf = 0;
	return failed;
}

bool eng_inst_commit_due(struct eng_inst *in)
{
	return in->nqueue > 0 || in->npf > 0 || eng_funcreloc_free_waiting(in);
}

int eng_inst_commit(struct eng_inst *in, struct hunch_err *err)
{
	struct commit c = { 0 };
	bool was_stopped = eng_proc_stopped(in->p);
	uint64_t t0 = clock_mono_ns();
	int failed = 0, rc;

	if (!eng_inst_commit_due(in))
		return 0;
	if (eng_proc_ended(in->p))
		return commit_ended(in);
	if (!was_stopped && (rc = eng_ptrace_stop_all(in->p, err)) < 0)
		return rc;
	eng_fault_commit_start(in->st.commits + 1);
	eng_inst_mirror_begin(in);
	rc = eng_funcreloc_free_compact(in, err);
	if (rc == 0)
		rc = eng_inst_threads_read(in->p, &c.th, err);
	if (rc == 0 && (rc = do_removals(in, &c)) < 0)
		hunch_err_set(err, rc, "out of memory");
	/* one newbase slot per point that can become dirty */
	if (rc == 0) {
		c.newbase = calloc(in->nqueue + c.ndirty + 1, sizeof *c.newbase);
		if (c.newbase == NULL)
			rc = hunch_err_set(err, -ENOMEM, "out of memory");
	}
	if (rc == 0)    /* relocated functions' entries lead to their copies */
		rc = eng_funcreloc_link_before(in, &c.th, &failed, err);
	if (rc == 0)
		rc = do_adds(in, &c, &failed, err);
	if (rc == 0)
		rc = apply_points(in, &c, err);
	if (rc == 0)
		rc = eng_funcreloc_link_after(in, &c.th, err);
	if (rc == 0)
		try_free(in, &c.th);
	if (rc == 0)    /* copies no thread can be in any more */
		rc = eng_funcreloc_free_reclaim(in, &c.th, err);
	in->nqueue = 0;
	commit_free(in, &c);
	eng_inst_mirror_end(in);
	in->st.commits++;
	if (!was_stopped) {
		int rc2 = eng_ptrace_resume_all(in->p, rc < 0 ? NULL : err);

		if (rc == 0)
			rc = rc2;
	}
	in->st.last_commit_ns = clock_mono_ns() - t0;
	if (rc < 0)
		hunch_err_prefix(err, "instrumenting pid %d: ",
				 (int)eng_proc_pid(in->p));
	return rc < 0 ? rc : failed;
}

int eng_inst_commit_remove_all(struct eng_inst *in, struct hunch_err *err)
{
	for (size_t i = 0; i < in->nreq; i++)
		if (in->req[i].state == ENG_REQ_ACTIVE ||
		    in->req[i].state == ENG_REQ_PENDING)
			eng_inst_remove(in, (uint32_t)i + 1);
	return eng_inst_commit(in, err);
}


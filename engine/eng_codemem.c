/*
 * eng_codemem.c - see eng_codemem.h.
 */
#include "eng_codemem.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "eng_proc.h"
#include "eng_image.h"
#include "eng_maps.h"

#define REGION_SIZE (1u << 20)
#define UNIT 32u
#define NUNITS (REGION_SIZE / UNIT)
#define REACH ((int64_t)2 << 30)
#define MARGIN ((int64_t)16 << 20)

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define NCLASS 128         /* free lists for blocks up to 4 KiB */
#define BIG_MAX 256        /* bigger free blocks kept for reuse */

struct flist {
	uint32_t *off;     /* unit offsets of free blocks of one size */
	size_t n, cap;
};

/* Bump allocation, and exact-size free lists: trampolines of the same
 * points come back with the same sizes, so no coalescing is needed. */
struct region {
	uint64_t base;
	uint8_t *shadow;   /* what hunch wrote: the target's bytes */
	size_t dlo, dhi;   /* dirty span of the shadow, not yet written */
	size_t bump;       /* units handed out from the top */
	size_t nused;
	struct flist fl[NCLASS + 1];
	/* freed blocks over 4 KiB (relocated copies of big functions):
	 * first fit, the rest of a block split off into the lists */
	struct bigblk { uint32_t off, units; } big[BIG_MAX];
	size_t nbig;
};

struct eng_codemem {
	struct eng_proc *p;
	struct region **r;
	size_t nr;
	uint64_t mmap_fn;
	void (*tee)(void *, uint64_t, const void *, size_t);
	void (*tee_map)(void *, uint64_t, size_t);
	void *tee_ctx;
};

void eng_codemem_set_tee(struct eng_codemem *m,
			 void (*fn)(void *, uint64_t, const void *, size_t),
			 void (*map)(void *, uint64_t, size_t), void *ctx)
{
	m->tee = fn;
	m->tee_map = map;
	m->tee_ctx = ctx;
}

int eng_codemem_create(struct eng_proc *p, struct eng_codemem **out,
		       struct hunch_err *err)
{
	struct eng_codemem *m = calloc(1, sizeof *m);

	if (m == NULL)
		return hunch_err_set(err, -ENOMEM, "out of memory");
	m->p = p;
	*out = m;
	return 0;
}

void eng_codemem_destroy(struct eng_codemem *m)
{
	if (m == NULL)
		return;
	for (size_t i = 0; i < m->nr; i++) {
		for (size_t k = 0; k <= NCLASS; k++)
			free(m->r[i]->fl[k].off);
		free(m->r[i]->shadow);
		free(m->r[i]);
	}
	free(m->r);
	free(m);
}

/* The target's mmap, found in its libc's symbol table. */
static int find_mmap(struct eng_codemem *m, struct hunch_err *err)
{
	size_t n = eng_solib_nmodules(m->p);

	for (size_t i = 0; i < n && m->mmap_fn == 0; i++) {
		const struct eng_module *mod = eng_solib_module(m->p, i);
		const char *base = strrchr(mod->path, '/');
		struct eng_image *img;
		const struct eng_func *f;

		base = base ? base + 1 : mod->path;
		if (strncmp(base, "libc.so", 7) != 0 &&
		    strncmp(base, "libc-", 5) != 0)
			continue;
		if (eng_image_open(mod->path, &img, NULL) < 0)
			continue;
		f = eng_sym_lazy_func_by_name(img, "mmap");
		if (f != NULL)
			m->mmap_fn = mod->bias + eng_image_link_base(img) +
				     f->addr;
		eng_image_close(img);
	}
	if (m->mmap_fn == 0)
		return hunch_err_set(err, -ENOENT,
				  "no mmap in the libc of pid %d: trampoline "
				  "memory cannot be allocated (static "
				  "program?)", (int)eng_proc_pid(m->p));
	return 0;
}

struct gap { uint64_t lo, hi; };

/* Holes of the address space in [lo, hi), from /proc/<pid>/maps. */
static size_t read_gaps(pid_t pid, struct gap *g, size_t max)
{
	struct eng_maps_line l;
	uint64_t prev_end = 0x10000, b;
	struct eng_maps m;
	size_t n = 0;

	if (eng_maps_open(&m, pid) < 0)
		return 0;
	while (n < max && eng_maps_next(&m, &l)) {
		if (l.lo > prev_end)
			g[n++] = (struct gap){ prev_end, l.lo };
		/* keep brk room: the heap may grow into the next hole */
		b = l.hi;
		if (strcmp(l.path, "[heap]") == 0)
			b += (uint64_t)256 << 20;
		if (b > prev_end)
			prev_end = b;
	}
	if (n < max && prev_end < 0x7ff000000000ull)
		g[n++] = (struct gap){ prev_end, 0x7ff000000000ull };
	eng_maps_close(&m);
	return n;
}

static int map_region(struct eng_codemem *m, uint64_t near,
		      struct hunch_err *err)
{
	struct gap g[1024];
	size_t ng = read_gaps(eng_proc_pid(m->p), g, 1024);
	pid_t tid, tids[4096];
	uint64_t lo = near > (uint64_t)(REACH - MARGIN) ?
		      near - (uint64_t)(REACH - MARGIN) : 0x10000;
	uint64_t hi = near + (uint64_t)(REACH - MARGIN) - REGION_SIZE;
	int rc;

	if ((rc = find_mmap(m, err)) < 0)
		return rc;
	if (eng_proc_threads(m->p, tids, 4096) < 1)
		return hunch_err_set(err, -ESRCH, "no thread to allocate with");
	tid = tids[0];
	/* nearest hole first: try each hole at its end nearest `near` */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t k = 0; k < ng; k++) {
			/* nearest first: upwards above, downwards below */
			size_t i = pass == 0 ? k : ng - 1 - k;
			uint64_t a, args[6], ret;
			struct region *r, **nr;

			if (g[i].hi - g[i].lo < REGION_SIZE + 0x20000)
				continue;
			/* pass 0: holes above near; pass 1: below */
			if ((pass == 0) != (g[i].lo >= near))
				continue;
			a = pass == 0 ? g[i].lo + 0x10000
				      : g[i].hi - 0x10000 - REGION_SIZE;
			a &= ~(uint64_t)0xfff;
			if (a < lo || a > hi)
				continue;
			args[0] = a; args[1] = REGION_SIZE;
			args[2] = PROT_READ | PROT_EXEC;
			args[3] = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE;
			args[4] = (uint64_t)-1; args[5] = 0;
			rc = eng_infcall(m->p, tid, m->mmap_fn, args, 6, &ret, err);
			if (rc < 0)
				return rc;
			if (ret != a)
				continue;
			r = calloc(1, sizeof *r);
			nr = realloc(m->r, (m->nr + 1) * sizeof *nr);
			if (r == NULL || nr == NULL ||
			    (r->shadow = calloc(1, REGION_SIZE)) == NULL) {
				free(r);
				return hunch_err_set(err, -ENOMEM, "out of memory");
			}
			r->base = a;
			if (m->tee_map != NULL)
				m->tee_map(m->tee_ctx, a, REGION_SIZE);
			m->r = nr;
			m->r[m->nr++] = r;
			return 0;
		}
	}
	return hunch_err_set(err, -ENOMEM,
			  "no free address range within 2 GiB of 0x%" PRIx64
			  " in pid %d for trampolines", near,
			  (int)eng_proc_pid(m->p));
}

static void free_units(struct region *r, size_t u, size_t units);

/* First fit among the big free blocks; what is left goes back. */
static bool carve_big(struct region *r, size_t units, size_t *u)
{
	for (size_t i = 0; i < r->nbig; i++) {
		size_t have = r->big[i].units;

		if (have < units)
			continue;
		*u = r->big[i].off;
		r->big[i] = r->big[--r->nbig];
		if (have > units)
			free_units(r, *u + units, have - units);
		return true;
	}
	return false;
}

static bool carve(struct region *r, size_t units, uint64_t *addr)
{
	size_t u;

	if (units <= NCLASS && r->fl[units].n > 0) {
		u = r->fl[units].off[--r->fl[units].n];
	} else if (units > NCLASS && carve_big(r, units, &u)) {
		/* u is the block's */
	} else if (r->bump + units <= NUNITS) {
		u = r->bump;
		r->bump += units;
	} else {
		return false;
	}
	r->nused += units;
	*addr = r->base + u * UNIT;
	return true;
}

static bool in_reach(uint64_t base, uint64_t near)
{
	int64_t d1 = (int64_t)(base - near);
	int64_t d2 = (int64_t)(base + REGION_SIZE - near);

	return d1 > -(REACH - MARGIN) && d2 < REACH - MARGIN;
}

int eng_codemem_alloc(struct eng_codemem *m, uint64_t near, size_t len,
		      uint64_t *addr, struct hunch_err *err)
{
	size_t units = (len + UNIT - 1) / UNIT;
	int rc;

	if (len == 0 || len > REGION_SIZE / 2)
		return hunch_err_set(err, -EINVAL, "bad trampoline size %zu",
				     len);
	for (int tries = 0; tries < 2; tries++) {
		for (size_t i = m->nr; i-- > 0;)
			if (in_reach(m->r[i]->base, near) &&
			    carve(m->r[i], units, addr))
				return 0;
		if (tries == 0 && (rc = map_region(m, near, err)) < 0)
			return rc;
	}
	return hunch_err_set(err, -ENOMEM, "trampoline allocation failed");
}

/* Units [u, u + units) of r are free again (not counted in nused). */
static void free_units(struct region *r, size_t u, size_t units)
{
	struct flist *f;

	if (units > NCLASS) {
		if (r->nbig < BIG_MAX)
			r->big[r->nbig++] = (struct bigblk){ (uint32_t)u,
							     (uint32_t)units };
		return;         /* else leaked, never unsafe */
	}
	f = &r->fl[units];
	if (f->n == f->cap) {
		size_t nc = f->cap ? f->cap * 2 : 16;
		uint32_t *no = realloc(f->off, nc * sizeof *no);

		if (no == NULL)
			return;   /* leaked, never unsafe */
		f->off = no;
		f->cap = nc;
	}
	f->off[f->n++] = (uint32_t)u;
}

void eng_codemem_free(struct eng_codemem *m, uint64_t addr, size_t len)
{
	size_t units = (len + UNIT - 1) / UNIT;

	for (size_t i = 0; i < m->nr; i++) {
		struct region *r = m->r[i];

		if (addr < r->base || addr >= r->base + REGION_SIZE)
			continue;
		r->nused -= units;
		free_units(r, (addr - r->base) / UNIT, units);
		return;
	}
}

int eng_codemem_contains(const struct eng_codemem *m, uint64_t addr)
{
	for (size_t i = 0; i < m->nr; i++)
		if (addr >= m->r[i]->base &&
		    addr < m->r[i]->base + REGION_SIZE)
			return 1;
	return 0;
}

size_t eng_codemem_used(const struct eng_codemem *m)
{
	size_t n = 0;

	for (size_t i = 0; i < m->nr; i++)
		n += m->r[i]->nused * UNIT;
	return n;
}

static struct region *region_of(const struct eng_codemem *m, uint64_t a,
				size_t len)
{
	for (size_t i = 0; i < m->nr; i++)
		if (a >= m->r[i]->base &&
		    a + len <= m->r[i]->base + REGION_SIZE)
			return m->r[i];
	return NULL;
}

void eng_codemem_sync(struct eng_codemem *m, uint64_t addr, const void *buf,
		      size_t len)
{
	struct region *r = region_of(m, addr, len);

	if (r != NULL)
		memcpy(r->shadow + (addr - r->base), buf, len);
}

int eng_codemem_write(struct eng_codemem *m, uint64_t addr, const void *buf,
		      size_t len, struct hunch_err *err)
{
	struct region *r = region_of(m, addr, len);
	size_t off;

	if (r == NULL)
		return hunch_err_set(err, -EFAULT, "0x%" PRIx64 " is not "
				  "trampoline memory", addr);
	off = addr - r->base;
	memcpy(r->shadow + off, buf, len);
	if (r->dhi == 0 || off < r->dlo)
		r->dlo = off;
	if (off + len > r->dhi)
		r->dhi = off + len;
	return 0;
}

int eng_codemem_flush(struct eng_codemem *m, uint64_t *writes,
		      struct hunch_err *err)
{
	for (size_t i = 0; i < m->nr; i++) {
		struct region *r = m->r[i];
		int rc;

		if (r->dhi == 0)
			continue;
		rc = eng_mem_write(m->p, r->base + r->dlo, r->shadow + r->dlo,
				   r->dhi - r->dlo, err);
		if (rc < 0)
			return rc;
		if (m->tee != NULL)
			m->tee(m->tee_ctx, r->base + r->dlo, r->shadow + r->dlo,
			       r->dhi - r->dlo);
		r->dlo = r->dhi = 0;
		(*writes)++;
	}
	return 0;
}

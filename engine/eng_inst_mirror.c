/*
 * eng_inst_mirror.c - every write a commit makes into the program,
 * made in each live followed child too (see eng_inst.h,
 * eng_inst_mirror_add).
 *
 * A followed child that kept its instrumentation has its own segment at
 * the program's address and a copy of the program's image, code memory
 * and runtime library, so the same bytes at the same addresses mean the
 * same thing there.  While the program is stopped for a commit, each
 * mirrored child has every thread seized and stopped too
 * (eng_fork_patch_stop); every trampoline flush and every write into
 * the program's code is repeated in it in the same order (trampolines
 * before the jumps that lead to them), a thread of the child inside
 * bytes being rewritten stepped out first; then the child runs on.
 * A child that ended or exec'ed leaves the mirror quietly (the report's
 * process list says so).  Code memory mapped in the program after the
 * fork is mapped in the child at the same address by an mmap run in
 * one of its threads (eng_fork_patch_mmap).  One that cannot take a
 * write (that mmap failed, a thread would not leave the bytes, the trap
 * handler was installed after its fork) leaves it with a line on stderr
 * naming it: it keeps what it has.  Every code write made in a child is
 * remembered so that the destroy puts the program's bytes back where
 * they still are.
 */
#include "eng_inst_int.h"
#include "eng_codemem.h"
#include "eng_fork_patch.h"
#include "eng_maps.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mirror {
	pid_t pid;
	bool lost;
	bool trap_at_add;              /* the trap handler was in it */
	struct eng_fork_stopped *st;   /* during a commit */
	struct eng_fork_patch *p;      /* code written in it */
	size_t np, capp;
};

struct eng_inst_mirror {
	struct mirror *m;
	size_t n;
};

static void lose(struct mirror *c, const char *why)
{
	if (c->lost)
		return;
	c->lost = true;
	fprintf(stderr, "hunch: process %d: %s; it is not patched any "
		"more: experiments changed from now on do not reach it\n",
		(int)c->pid, why);
}

/* Does pid still map its own segment (not exited, not exec'ed)? */
static bool still_ours(pid_t pid)
{
	struct eng_maps_line l;
	struct eng_maps m;
	bool ok = false;

	if (eng_maps_open(&m, pid) < 0)
		return false;
	while (!ok && eng_maps_next(&m, &l))
		ok = strstr(l.path, "memfd:hunch-shm-kid") != NULL;
	eng_maps_close(&m);
	return ok;
}

static void tee_tmem(void *ctx, uint64_t a, const void *b, size_t n)
{
	eng_inst_mirror_write(ctx, a, b, n, false);
}

/* Code memory mapped in the program: the same mapping in each child,
 * by an mmap run in one of its stopped threads (at any `syscall`
 * instruction of its code), so that the writes that follow reach it. */
static void tee_map(void *ctx, uint64_t a, size_t n)
{
	struct eng_inst *in = ctx;
	char why[160];

	for (size_t i = 0; in->mirror != NULL && i < in->mirror->n; i++) {
		struct mirror *c = &in->mirror->m[i];
		struct eng_fork_stopped *st = c->st;
		long rc = -ESRCH;

		if (c->lost)
			continue;
		if (st == NULL && (st = eng_fork_patch_stop(c->pid)) == NULL) {
			c->lost = true;   /* ended meanwhile */
			continue;
		}
		rc = eng_fork_patch_mmap(st, a, n);
		if (st != c->st)
			eng_fork_patch_resume(st);
		if (rc != (long)a) {
			snprintf(why, sizeof(why), "code memory at 0x%" PRIx64
				 " could not be mapped in it (%s)", a,
				 rc < 0 ? strerror((int)-rc) : "another address");
			lose(c, why);
		}
	}
}

int eng_inst_mirror_add(struct eng_inst *in, pid_t child)
{
	struct eng_inst_mirror *mi = in->mirror;
	struct mirror *m;

	if (mi == NULL && (mi = in->mirror = calloc(1, sizeof(*mi))) == NULL)
		return -ENOMEM;
	if ((m = realloc(mi->m, (mi->n + 1) * sizeof(*m))) == NULL)
		return -ENOMEM;
	mi->m = m;
	memset(&m[mi->n], 0, sizeof(*m));
	m[mi->n].pid = child;
	m[mi->n].trap_at_add = in->trap_table != 0;
	mi->n++;
	eng_codemem_set_tee(in->mem, tee_tmem, tee_map, in);
	return 0;
}

bool eng_inst_mirror_live(const struct eng_inst *in, pid_t child)
{
	for (size_t i = 0; in->mirror != NULL && i < in->mirror->n; i++)
		if (in->mirror->m[i].pid == child)
			return !in->mirror->m[i].lost;
	return false;
}

void eng_inst_mirror_begin(struct eng_inst *in)
{
	for (size_t i = 0; in->mirror != NULL && i < in->mirror->n; i++) {
		struct mirror *c = &in->mirror->m[i];

		if (c->lost)
			continue;
		if (!still_ours(c->pid))
			c->lost = true;   /* ended or exec'ed: in the report */
		else if ((c->st = eng_fork_patch_stop(c->pid)) == NULL)
			lose(c, "its threads could not be stopped");
	}
}

/* The code patch at [a, a+n) as now in c, remembered for the end. */
static int remember(struct mirror *c, uint64_t a, const void *b, size_t n)
{
	struct eng_fork_patch *p;

	if (n > sizeof(p->orig))
		return -EINVAL;
	for (size_t i = 0; i < c->np; i++)
		if (c->p[i].addr == a && c->p[i].len == n) {
			memcpy(c->p[i].cur, b, n);
			return 0;
		}
	if (c->np == c->capp) {
		size_t cap = c->capp ? 2 * c->capp : 16;

		if ((p = realloc(c->p, cap * sizeof(*p))) == NULL)
			return -ENOMEM;
		c->p = p;
		c->capp = cap;
	}
	p = &c->p[c->np];
	memset(p, 0, sizeof(*p));
	p->addr = a;
	p->len = (uint8_t)n;
	if (eng_fork_patch_peek(c->st, a, p->orig, n) != 0)
		return -EFAULT;
	memcpy(p->cur, b, n);
	c->np++;
	return 0;
}

void eng_inst_mirror_write(struct eng_inst *in, uint64_t a, const void *b,
			   size_t n, bool code)
{
	char why[128];
	int rc;

	for (size_t i = 0; in->mirror != NULL && i < in->mirror->n; i++) {
		struct mirror *c = &in->mirror->m[i];

		if (c->lost || c->st == NULL)
			continue;
		if (!c->trap_at_add && in->trap_table != 0) {
			lose(c, "the trap handler was installed after its fork");
			continue;
		}
		if (code && (rc = remember(c, a, b, n)) < 0) {
			snprintf(why, sizeof(why), "0x%" PRIx64 " unreadable "
				 "(%s)", a, strerror(-rc));
			lose(c, why);
			continue;
		}
		if ((rc = eng_fork_patch_write(c->st, a, b, n, code)) < 0) {
			snprintf(why, sizeof(why), "%zu bytes at 0x%" PRIx64
				 " could not be written (%s)", n, a,
				 rc == -EBUSY ? "a thread stays inside them"
					      : strerror(-rc));
			lose(c, why);
		}
	}
}

void eng_inst_mirror_end(struct eng_inst *in)
{
	for (size_t i = 0; in->mirror != NULL && i < in->mirror->n; i++) {
		eng_fork_patch_resume(in->mirror->m[i].st);
		in->mirror->m[i].st = NULL;
	}
}

static struct mirror *find(struct eng_inst *in, pid_t child)
{
	for (size_t i = 0; in->mirror != NULL && i < in->mirror->n; i++)
		if (in->mirror->m[i].pid == child)
			return &in->mirror->m[i];
	return NULL;
}

static bool inherited_at(const struct eng_fork_patch *inh, size_t ninh,
			 uint64_t addr)
{
	for (size_t i = 0; i < ninh; i++)
		if (inh[i].addr == addr)
			return true;
	return false;
}

ssize_t eng_inst_mirror_release(struct eng_inst *in, pid_t child,
				const struct eng_fork_patch *inh, size_t ninh,
				struct eng_fork_patch **out)
{
	struct mirror *c = find(in, child);
	size_t np = c != NULL ? c->np : 0, n = 0;
	struct eng_fork_patch *all = malloc((ninh + np + 1) * sizeof(*all));

	if (all == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < ninh; i++)
		all[n++] = inh[i];
	/* A site the mirror wrote first with a patch: what it read before
	 * is the program's; one it first unpatched was inherited. */
	for (size_t i = 0; i < np; i++)
		if (!inherited_at(inh, ninh, c->p[i].addr))
			all[n++] = c->p[i];
	if (c != NULL) {
		free(c->p);
		c->p = NULL;
		c->np = c->capp = 0;
		c->lost = true;
	}
	*out = all;
	return (ssize_t)n;
}

void eng_inst_mirror_destroy(struct eng_inst *in)
{
	struct hunch_err e = { 0 };

	for (size_t i = 0; in->mirror != NULL && i < in->mirror->n; i++) {
		struct mirror *c = &in->mirror->m[i];

		if (c->np > 0 && still_ours(c->pid) &&
		    eng_fork_patch_restore(c->pid, c->p, c->np, &e) < 0)
			fprintf(stderr, "hunch: %s\n", e.msg);
		free(c->p);
	}
	if (in->mirror != NULL)
		free(in->mirror->m);
	free(in->mirror);
	in->mirror = NULL;
}

/*
 * eng_inst_threads.c - what the stopped threads are doing: their
 * registers, and every 8-byte word of their stacks (from %rsp to the end
 * of the mapping that holds it, at most 512 KiB), sorted for lookups.
 * Without frame pointers a stack cannot be walked cheaply, so any word
 * that looks like an address into changed bytes is treated as a return
 * address: conservative, never wrong in the unsafe direction.
 */
#include "eng_inst_int.h"
#include "sorted_u64.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eng_proc.h"
#include "eng_maps.h"

#define STACK_MAX (512u << 10)

size_t eng_inst_threads_read_maps(pid_t pid, struct inst_range **out)
{
	struct inst_range *r = NULL;
	struct eng_maps_line l;
	struct eng_maps m;
	size_t n = 0, cap = 0;

	if (eng_maps_open(&m, pid) < 0)
		return 0;
	while (eng_maps_next(&m, &l)) {
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 256;
			struct inst_range *nr = realloc(r, nc * sizeof *nr);

			if (nr == NULL)
				break;
			r = nr;
			cap = nc;
		}
		r[n++] = (struct inst_range){ l.lo, l.hi };
	}
	eng_maps_close(&m);
	*out = r;
	return n;
}

uint64_t eng_inst_threads_map_end(const struct inst_range *r, size_t n,
				  uint64_t a)
{
	for (size_t i = 0; i < n; i++)
		if (a >= r[i].lo && a < r[i].hi)
			return r[i].hi;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int add_stack(struct eng_proc *p, struct inst_threads *th,
		     uint64_t rsp, uint64_t end, size_t *cap)
{
	size_t len = end - rsp, nw;
	uint64_t *w;

	if (len > STACK_MAX)
		len = STACK_MAX;
	len &= ~(size_t)7;
	nw = len / 8;
	if (th->nwords + nw > *cap) {
		size_t nc = (th->nwords + nw) * 2;

		w = realloc(th->words, nc * sizeof *w);
		if (w == NULL)
			return -ENOMEM;
		th->words = w;
		*cap = nc;
	}
	if (len == 0 || eng_mem_read(p, rsp, th->words + th->nwords, len,
				     NULL) < 0)
		return 0;    /* unreadable: nothing to scan */
	th->nwords += nw;
	return 0;
}

int eng_inst_threads_read(struct eng_proc *p, struct inst_threads *th,
		      struct hunch_err *err)
{
	pid_t tids[4096];
	size_t n = eng_proc_threads(p, tids, 4096), cap = 0, nr;
	struct inst_range *maps = NULL;
	int rc = 0;

	memset(th, 0, sizeof *th);
	th->t = calloc(n ? n : 1, sizeof *th->t);
	if (th->t == NULL)
		return hunch_err_set(err, -ENOMEM, "out of memory");
	nr = eng_inst_threads_read_maps(eng_proc_pid(p), &maps);
	for (size_t i = 0; i < n; i++) {
		struct inst_thread *t = &th->t[th->n];
		uint64_t end;

		t->tid = tids[i];
		if (eng_regs_get(p, tids[i], &t->regs, NULL) < 0)
			continue;   /* exited meanwhile */
		th->n++;
		end = eng_inst_threads_map_end(maps, nr, t->regs.rsp);
		if (end > t->regs.rsp &&
		    (rc = add_stack(p, th, t->regs.rsp, end, &cap)) < 0)
			break;
	}
	free(maps);
	if (rc < 0)
		return hunch_err_set(err, rc, "out of memory reading stacks");
	qsort(th->words, th->nwords, sizeof *th->words, cmp_u64);
	return 0;
}

void eng_inst_threads_free(struct inst_threads *th)
{
	free(th->t);
	free(th->words);
	memset(th, 0, sizeof *th);
}

bool eng_inst_threads_pc_in(const struct inst_threads *th, uint64_t lo,
			uint64_t hi)
{
	for (size_t i = 0; i < th->n; i++)
		if (th->t[i].regs.rip >= lo && th->t[i].regs.rip < hi)
			return true;
	return false;
}

bool eng_inst_threads_word_in(const struct inst_threads *th, uint64_t lo,
			  uint64_t hi)
{
	size_t a = sorted_u64_lower(th->words, th->nwords, lo);

	return a < th->nwords && th->words[a] < hi;
}

int eng_inst_threads_write_regs(struct eng_proc *p, struct inst_threads *th,
			    struct hunch_err *err)
{
	for (size_t i = 0; i < th->n; i++) {
		int rc;

		if (!th->t[i].regs_changed)
			continue;
		rc = eng_regs_set(p, th->t[i].tid, &th->t[i].regs, err);
		if (rc < 0)
			return rc;
		th->t[i].regs_changed = false;
	}
	return 0;
}

/*
 * eng_fork_shm.c - a forked child's own shared-memory segment at the
 * address of the one it inherited (see eng_fork_shm.h).
 */
#include "eng_fork_shm.h"
#include "eng_fork_sys.h"
#include "eng_proc.h"
#include "eng_maps.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

struct eng_fork_shm {
	pid_t pid;
	int fd;                          /* hunch's, on the child's memfd */
	volatile unsigned char *base;    /* hunch's mapping */
	struct eng_shm_layout lay;
	int forker;                      /* index kept by the forking thread */
	struct eng_clock clk;            /* the parent's: the same levels */
	uint64_t ino;                    /* the memfd's inode, in the maps */
};

static const char kid_name[16] = "hunch-shm-kid";

/* Where the child maps the parent's segment: the mapping of its file
 * (same inode) at offset 0, as long as the whole layout. */
static uint64_t find_mapping(pid_t child, const struct eng_shm *parent)
{
	struct eng_maps_line l;
	struct eng_maps m;
	struct stat st;
	uint64_t at = 0;

	if (fstat(eng_shm_fd(parent), &st) != 0 ||
	    eng_maps_open(&m, child) < 0)
		return 0;
	while (at == 0 && eng_maps_next(&m, &l))
		if (l.inode == (uint64_t)st.st_ino && l.off == 0 &&
		    l.hi - l.lo == eng_shm_layout(parent)->size)
			at = l.lo;
	eng_maps_close(&m);
	return at;
}

static int peek(pid_t pid, uint64_t addr, uint64_t *v)
{
	errno = 0;
	*v = (uint64_t)ptrace(PTRACE_PEEKDATA, pid, addr, 0);
	return errno != 0 ? -errno : 0;
}

/* The index whose block the forking thread's TLS points at, or -1. */
static int forker_index(const struct eng_fork_sys *s,
			const struct eng_shm *parent, uint64_t at)
{
	const struct eng_shm_layout *lay = eng_shm_layout(parent);
	int64_t off = eng_shm_header(parent)->rt_tls_block_off;
	uint64_t b, first = at + lay->blocks_off;

	if (off == 0 || peek(s->pid, s->saved.fs_base + (uint64_t)off, &b) != 0 ||
	    b < first || b >= at + lay->size ||
	    ((b - first) & ((1ull << lay->block_shift) - 1)) != 0)
		return -1;
	return (int)((b - first) >> lay->block_shift);
}

/* The child's segment as its runtime library will find it: the parent's
 * header with the child's pid, an empty ring, one live thread (the
 * forking one, if it had an index), every slot zero. */
static void fill(struct eng_fork_shm *k, const struct eng_shm *parent)
{
	volatile unsigned char *pb = eng_shm_base(parent);
	volatile struct hunch_shm_header *h = eng_fork_shm_header(k);
	struct hunch_thread_slot *ts;
	struct hunch_block_hdr *bh;

	memcpy((void *)h, (const void *)pb, sizeof(*h));
	h->rt_pid = k->pid;
	h->ring_head = 0;
	h->rt_no_index = 0;
	h->rt_traps = h->rt_traps_foreign = h->rt_infcalls_finished = 0;
	if (k->forker < 0)
		return;
	ts = (struct hunch_thread_slot *)(void *)(k->base + k->lay.table_off) +
	     k->forker;
	memcpy(ts, (const void *)(pb + k->lay.table_off +
	       (uint64_t)k->forker * sizeof(*ts)), sizeof(*ts));
	ts->tid = k->pid;
	ts->state = HUNCH_THR_LIVE;
	ts->t_exit = 0;
	bh = (struct hunch_block_hdr *)(void *)(k->base + k->lay.blocks_off +
		((uint64_t)k->forker << k->lay.block_shift));
	memcpy(bh, (const void *)(pb + k->lay.blocks_off +
	       ((uint64_t)k->forker << k->lay.block_shift)), sizeof(*bh));
	bh->guard = 0;
	bh->obs_cost = 0;
}

/* hunch's side: the child's memfd opened through /proc, sized, mapped
 * and filled. */
static int open_fill(struct eng_fork_shm *k, const struct eng_shm *parent,
		     long cfd, struct hunch_err *err)
{
	char path[64];
	struct stat st;
	void *m;

	snprintf(path, sizeof(path), "/proc/%d/fd/%ld", (int)k->pid, cfd);
	k->fd = open(path, O_RDWR | O_CLOEXEC);
	if (k->fd < 0 || ftruncate(k->fd, (off_t)k->lay.size) != 0)
		return hunch_err_set(err, -errno,
				     "child %d: cannot open or size "
				     "its segment %s: %s",
				     (int)k->pid, path, strerror(errno));
	m = mmap(NULL, k->lay.size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 k->fd, 0);
	if (m == MAP_FAILED)
		return hunch_err_set(err, -errno, "child %d: cannot map its "
				  "segment: %s", (int)k->pid, strerror(errno));
	k->base = m;
	if (fstat(k->fd, &st) == 0)
		k->ino = (uint64_t)st.st_ino;
	fill(k, parent);
	return 0;
}

/* In the child: memfd_create, hunch fills it, mmap over the inherited
 * mapping, close.  The name goes 1 KiB below the stack pointer (past
 * the red zone), its bytes put back after. */
static int inject(struct eng_fork_sys *s, struct eng_fork_shm *k,
		  const struct eng_shm *parent, uint64_t at,
		  struct hunch_err *err)
{
	uint64_t name = (s->saved.rsp - 1024) & ~15ull, keep[2];
	long cfd, r;
	int rc;

	if (peek(s->pid, name, &keep[0]) != 0 ||
	    peek(s->pid, name + 8, &keep[1]) != 0 ||
	    eng_fork_write(s->pid, name, kid_name, sizeof(kid_name)) != 0)
		return hunch_err_set(err, -EFAULT,
				     "child %d: cannot write below "
				     "its stack pointer",
				     (int)k->pid);
	cfd = eng_fork_sys_call(s, SYS_memfd_create, (long)name, MFD_CLOEXEC,
				0, 0, 0, 0);
	eng_fork_write(s->pid, name, keep, sizeof(keep));
	if (cfd < 0)
		return hunch_err_set(err, (int)cfd,
				     "child %d: memfd_create in it "
				     "failed: %s",
				     (int)k->pid, strerror((int)-cfd));
	rc = open_fill(k, parent, cfd, err);
	if (rc == 0) {
		r = eng_fork_sys_call(s, SYS_mmap, (long)at, (long)k->lay.size,
				      PROT_READ | PROT_WRITE,
				      MAP_SHARED | MAP_FIXED, cfd, 0);
		if (r != (long)at)
			rc = hunch_err_set(
				err, r < 0 ? (int)r : -EFAULT,
				"child "
				"%d: mmap of its segment at %#" PRIx64
				" failed (%ld)",
				(int)k->pid, at, r);
	}
	eng_fork_sys_call(s, SYS_close, cfd, 0, 0, 0, 0, 0);
	return rc;
}

int eng_fork_shm_new(const struct eng_shm *parent, pid_t child,
		     struct eng_fork_shm **out, struct hunch_err *err)
{
	struct eng_fork_shm *k;
	struct eng_fork_sys s;
	uint64_t at;
	int rc;

	*out = NULL;
	if ((at = find_mapping(child, parent)) == 0)
		return hunch_err_set(err, -ENOENT, "child %d: the segment it "
				  "inherited is not in /proc/%d/maps",
				  (int)child, (int)child);
	if ((rc = eng_fork_sys_begin(&s, child)) != 0)
		return hunch_err_set(err, rc, "child %d: not stopped after its "
				  "fork's system call (%s)", (int)child,
				  strerror(-rc));
	if ((k = calloc(1, sizeof(*k))) == NULL) {
		eng_fork_sys_end(&s);
		return hunch_err_set(err, -ENOMEM, "out of memory");
	}
	k->pid = child;
	k->fd = -1;
	k->lay = *eng_shm_layout(parent);
	k->forker = forker_index(&s, parent, at);
	k->clk = *eng_shm_clock(parent);
	rc = inject(&s, k, parent, at, err);
	if (eng_fork_sys_end(&s) != 0 && rc == 0)
		rc = hunch_err_set(err, -ESRCH, "child %d: its registers could "
				"not be put back", (int)child);
	if (rc != 0) {
		eng_fork_shm_free(k);
		return rc;
	}
	*out = k;
	return 0;
}

void eng_fork_shm_free(struct eng_fork_shm *k)
{
	if (k == NULL)
		return;
	if (k->base != NULL)
		munmap((void *)k->base, k->lay.size);
	if (k->fd >= 0)
		close(k->fd);
	free(k);
}

pid_t eng_fork_shm_pid(const struct eng_fork_shm *k)
{
	return k->pid;
}

int eng_fork_shm_forker(const struct eng_fork_shm *k)
{
	return k->forker;
}

volatile struct hunch_shm_header *
eng_fork_shm_header(const struct eng_fork_shm *k)
{
	return (volatile struct hunch_shm_header *)k->base;
}

/* A free slot past the forker's ends the child's used slots: its
 * threads claim the lowest free index and hunch never frees one in a
 * child, so the used ones are 0..n-1 and the forker's. */
static bool done_at(const struct eng_fork_shm *k, uint32_t i)
{
	return (int)i > k->forker;
}

/* A reading of one slot's variable at `at` (the slot's thread tid). */
/* One thread's value at `at` into *v; false when it has no consistent
 * value now (a timer caught inside its update). */
typedef bool (*slot_read_fn)(const struct eng_fork_shm *k,
			     const volatile unsigned char *at, pid_t tid,
			     bool cpu, int64_t *v);

/* The sum over the child's used slots (those of thread tid, 0: all) of
 * the `size`-byte variable at `handle`, read by fn; *nthreads how many
 * slots were read. */
static int64_t sum_slots(const struct eng_fork_shm *k, uint64_t handle,
			 uint64_t size, pid_t tid, bool cpu, slot_read_fn fn,
			 uint32_t *nthreads)
{
	const volatile struct hunch_thread_slot *t =
		(const volatile struct hunch_thread_slot *)(k->base +
							    k->lay.table_off);
	uint64_t bsize = 1ull << k->lay.block_shift;
	int64_t sum = 0, v;
	uint32_t n = 0;

	if (handle < HUNCH_BLOCK_VARS_START || handle + size > bsize)
		return 0;
	for (uint32_t i = 0; i < k->lay.max_threads; i++) {
		if (t[i].state == HUNCH_THR_FREE && done_at(k, i))
			break;
		if (t[i].state == HUNCH_THR_FREE || (tid != 0 && t[i].tid != tid))
			continue;
		if (!fn(k, k->base + k->lay.blocks_off + i * bsize + handle,
			t[i].tid, cpu, &v))
			return -1;
		sum += v;
		n++;
	}
	if (nthreads != NULL)
		*nthreads = n;
	return sum;
}

static bool read_counter(const struct eng_fork_shm *k,
			 const volatile unsigned char *at, pid_t tid,
			 bool cpu, int64_t *v)
{
	(void)k;
	(void)tid;
	(void)cpu;
	*v = *(const volatile int64_t *)at;
	return true;
}

int64_t eng_fork_shm_counter(const struct eng_fork_shm *k, uint64_t handle,
			     pid_t tid, uint32_t *nthreads)
{
	return sum_slots(k, handle, 8, tid, false, read_counter, nthreads);
}

uint64_t eng_fork_shm_cost_ns(const struct eng_fork_shm *k)
{
	const volatile struct hunch_thread_slot *t =
		(const volatile struct hunch_thread_slot *)(k->base +
							    k->lay.table_off);
	uint64_t bsize = 1ull << k->lay.block_shift, sum = 0;

	for (uint32_t i = 0; i < k->lay.max_threads; i++) {
		const volatile struct hunch_block_hdr *bh;

		if (t[i].state == HUNCH_THR_FREE && done_at(k, i))
			break;
		if (t[i].state == HUNCH_THR_FREE)
			continue;
		bh = (const volatile void *)(k->base + k->lay.blocks_off +
					     i * bsize);
		sum += bh->obs_cost;
	}
	return eng_clock_wall_to_ns(&k->clk, sum);
}

/* Field 1 of schedstat: the thread's CPU ns (the CPU timers' base). */
static bool thread_cpu(pid_t pid, pid_t tid, uint64_t *ns)
{
	char path[96];
	unsigned long long run;
	bool ok;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", (int)pid,
		 (int)tid);
	if ((f = fopen(path, "re")) == NULL)
		return false;
	ok = fscanf(f, "%llu", &run) == 1;
	fclose(f);
	*ns = run;
	return ok;
}

/* One thread's timer in ns, its running part included (protector
 * protocol as the sampler reads it: prot2, fields, prot1); false when
 * no read in 100 was consistent.  A thread descheduled inside the
 * timer's update holds prot1 and prot2 apart until it runs again, and
 * its fields may be half written: a stop's total already raised with
 * its count not yet lowered read the ended interval twice.  The
 * sampler keeps the older value then (eng_sampler.c); here the whole
 * reading is put off to the next tick. */
static bool timer_ns(const struct eng_fork_shm *k,
		     const volatile struct hunch_timer *t, pid_t tid,
		     bool cpu, uint64_t *ns)
{
	uint64_t total = 0, start = 0, now;
	int64_t count = 0;
	bool ok = false;

	for (int i = 0; i < 100 && !ok; i++) {
		uint64_t p2 = t->prot2;

		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		total = t->total;
		count = t->count;
		start = t->start;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		ok = t->prot1 == p2;
	}
	if (!ok)
		return false;
	if (!cpu) {
		if (count > 0) {
			now = eng_clock_wall_native(&k->clk);
			total += now > start ? now - start : 0;
		}
		*ns = eng_clock_wall_to_ns(&k->clk, total);
		return true;
	}
	if (count > 0 && thread_cpu(k->pid, tid, &now))
		total += now > start ? now - start : 0;
	*ns = total;
	return true;
}

static bool read_timer(const struct eng_fork_shm *k,
		       const volatile unsigned char *at, pid_t tid, bool cpu,
		       int64_t *v)
{
	uint64_t ns;

	if (!timer_ns(k, (const volatile struct hunch_timer *)at, tid, cpu,
		      &ns))
		return false;
	*v = (int64_t)ns;
	return true;
}

int64_t eng_fork_shm_timer(const struct eng_fork_shm *k, uint64_t handle,
			   bool cpu, pid_t tid, uint32_t *nthreads)
{
	return sum_slots(k, handle, HUNCH_TIMER_SIZE, tid, cpu, read_timer,
			 nthreads);
}

bool eng_fork_shm_mapped(const struct eng_fork_shm *k)
{
	struct eng_maps_line l;
	struct eng_maps m;
	bool found = false;

	if (k->ino == 0 || eng_maps_open(&m, k->pid) < 0)
		return false;
	while (!found && eng_maps_next(&m, &l))
		found = l.inode == k->ino;
	eng_maps_close(&m);
	return found;
}

void eng_fork_shm_carry_timer(struct eng_fork_shm *k,
			      const struct eng_shm *parent, uint64_t handle,
			      bool cpu)
{
	uint64_t bsize = 1ull << k->lay.block_shift, off, now = 0;
	const volatile struct hunch_timer *pt;
	volatile struct hunch_timer *ct;

	if (k->forker < 0 || handle < HUNCH_BLOCK_VARS_START ||
	    handle + HUNCH_TIMER_SIZE > bsize)
		return;
	off = k->lay.blocks_off + (uint64_t)k->forker * bsize + handle;
	pt = (const volatile struct hunch_timer *)(eng_shm_base(parent) + off);
	ct = (volatile struct hunch_timer *)(k->base + off);
	if (pt->count <= 0 || ct->count != 0)
		return;
	if (cpu && !thread_cpu(k->pid, k->pid, &now))
		return;
	ct->start = cpu ? now : eng_clock_wall_native(&k->clk);
	ct->count = pt->count;
}

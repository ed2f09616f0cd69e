/*
 * eng_shm.c - creating the shared-memory segment and checking the
 * runtime library's handshake (see eng_shm.h).
 */
#include "eng_shm.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

struct eng_shm {
	int fd;
	size_t size;
	char name[64];       /* "" when anonymous or already unlinked */
	bool named;
	volatile struct hunch_shm_header *hdr;
	struct eng_shm_layout lay;
	struct eng_clock clk;
};

static uint64_t round_up(uint64_t x, uint64_t a)
{
	return (x + a - 1) / a * a;
}

static void layout_for(uint32_t threads, uint32_t shift,
		       struct eng_shm_layout *l)
{
	l->max_threads = threads;
	l->block_shift = shift;
	l->ring_size = ENG_SHM_RING_SIZE;
	l->ring_off = round_up(sizeof(struct hunch_shm_header), 64);
	l->table_off = l->ring_off +
		(uint64_t)l->ring_size * sizeof(struct hunch_ring_entry);
	l->blocks_off = round_up(l->table_off + (uint64_t)threads *
				 sizeof(struct hunch_thread_slot), 4096);
	l->size = l->blocks_off + ((uint64_t)threads << shift);
}

/* The largest blocks (then the most threads) that fit in `size`. */
static int layout_fit(uint64_t size, struct eng_shm_layout *l)
{
	uint32_t threads, shift;

	for (threads = ENG_SHM_DEFAULT_THREADS; threads >= 1; threads /= 2)
		for (shift = 30; shift >= 12; shift--) {
			layout_for(threads, shift, l);
			if (l->size <= size)
				return 0;
		}
	return -EINVAL;
}

static void write_layout(struct eng_shm *s)
{
	volatile struct hunch_shm_header *h = s->hdr;

	h->max_threads = s->lay.max_threads;
	h->block_shift = s->lay.block_shift;
	h->ring_off = s->lay.ring_off;
	h->ring_size = s->lay.ring_size;
	h->table_off = s->lay.table_off;
	h->blocks_off = s->lay.blocks_off;
	h->wall_level = (uint32_t)s->clk.wall_level;
	h->cpu_level = (uint32_t)s->clk.cpu_level;
	h->tsc_mult = s->clk.tsc_mult;
	h->tsc_shift = s->clk.tsc_shift;
	h->rt_cpu_level = (uint32_t)s->clk.cpu_level;
}

/* An unguessable name: 128 random bits. */
static int make_name(char *buf, size_t len)
{
	uint64_t r[2];

	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return -errno;
	snprintf(buf, len, "/hunch-%d-%016llx%016llx", (int)getpid(),
		 (unsigned long long)r[0], (unsigned long long)r[1]);
	return 0;
}

/* A hunch killed between creating an attach segment and unlinking it
 * (SIGKILL, power loss) leaves its name in /dev/shm.  Names carry the
 * creating hunch's pid: remove ours whose creator is gone.  A target that
 * still maps such a segment keeps its mapping; only the name goes. */
static void sweep_stale_names(void)
{
	DIR *d = opendir("/dev/shm");
	struct dirent *e;
	struct stat st;
	char path[300];
	int pid;

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (sscanf(e->d_name, "hunch-%d-", &pid) != 1 || pid <= 0)
			continue;
		if (kill(pid, 0) == 0 || errno != ESRCH)
			continue;  /* its hunch still runs (or is not ours) */
		snprintf(path, sizeof(path), "/dev/shm/%.200s", e->d_name);
		if (lstat(path, &st) == 0 && st.st_uid == geteuid())
			unlink(path);
	}
	closedir(d);
}

static int open_segment(struct eng_shm *s, struct hunch_err *err)
{
	int rc;

	if (!s->named) {
		s->fd = memfd_create("hunch-shm", 0);  /* inheritable */
		if (s->fd < 0)
			return hunch_err_set(err, -errno,
				"cannot create the shared-memory segment "
				"(memfd_create: %s)", strerror(errno));
		return 0;
	}
	sweep_stale_names();
	rc = make_name(s->name, sizeof(s->name));
	if (rc < 0)
		return hunch_err_set(err, rc, "cannot make a shm name: %s",
				  strerror(-rc));
	s->fd = shm_open(s->name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC,
			 0600);
	if (s->fd < 0)
		return hunch_err_set(err, -errno,
			"cannot create shared-memory object %s: %s "
			"(is /dev/shm mounted and writable?)", s->name,
			strerror(errno));
	return 0;
}

static int create(const struct eng_shm_layout *lay, bool named,
		  struct eng_shm **out, struct hunch_err *err)
{
	struct eng_shm *s = calloc(1, sizeof(*s));
	void *p;
	int rc;

	if (s == NULL)
		return hunch_err_set(err, -ENOMEM, "out of memory");
	s->lay = *lay;
	s->size = lay->size;
	s->named = named;
	rc = eng_clock_init(&s->clk, 0, getenv, err);
	if (rc < 0) {
		free(s);
		return rc;
	}
	rc = open_segment(s, err);
	if (rc < 0) {
		free(s);
		return rc;
	}
	if (ftruncate(s->fd, (off_t)s->size) != 0) {
		rc = hunch_err_set(err, -errno, "cannot size the shared-memory "
				"segment to %zu bytes: %s", s->size,
				strerror(errno));
		goto fail;
	}
	p = mmap(NULL, s->size, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
	if (p == MAP_FAILED) {
		rc = hunch_err_set(err, -errno, "cannot map the shared-memory "
				"segment: %s", strerror(errno));
		goto fail;
	}
	s->hdr = p;
	s->hdr->magic = HUNCH_ABI_MAGIC;
	s->hdr->abi_version = HUNCH_ABI_VERSION;
	s->hdr->header_size = sizeof(struct hunch_shm_header);
	s->hdr->segment_size = s->size;
	write_layout(s);
	*out = s;
	return 0;
fail:
	if (s->named)
		shm_unlink(s->name);
	close(s->fd);
	free(s);
	return rc;
}

int eng_shm_create(size_t size, bool named, struct eng_shm **out,
		   struct hunch_err *err)
{
	struct eng_shm_layout lay;

	if (size == 0)
		layout_for(ENG_SHM_DEFAULT_THREADS, ENG_SHM_DEFAULT_BLOCK_SHIFT,
			   &lay);
	else if (layout_fit(size, &lay) < 0)
		return hunch_err_set(err, -EINVAL, "a shared-memory segment of "
			"%zu bytes cannot hold even one thread block: ask "
			"for at least 256 KiB, or 0 for the default", size);
	return create(&lay, named, out, err);
}

int eng_shm_create_layout(uint32_t max_threads, uint32_t block_shift,
			  bool named, struct eng_shm **out,
			  struct hunch_err *err)
{
	struct eng_shm_layout lay;

	if (max_threads == 0 || max_threads > 65536 || block_shift < 12 ||
	    block_shift > 30)
		return hunch_err_set(err, -EINVAL, "bad segment layout (%u "
			"threads, blocks of 2^%u bytes): use 1..65536 threads "
			"and block sizes 2^12..2^30", max_threads, block_shift);
	layout_for(max_threads, block_shift, &lay);
	return create(&lay, named, out, err);
}

const struct eng_shm_layout *eng_shm_layout(const struct eng_shm *s)
{
	return &s->lay;
}

const struct eng_clock *eng_shm_clock(const struct eng_shm *s)
{
	return &s->clk;
}

volatile unsigned char *eng_shm_base(const struct eng_shm *s)
{
	return (volatile unsigned char *)s->hdr;
}

void eng_shm_unlink(struct eng_shm *s)
{
	if (s->named && s->name[0] != '\0') {
		shm_unlink(s->name);
		s->name[0] = '\0';
	}
}

void eng_shm_destroy(struct eng_shm *s)
{
	if (s == NULL)
		return;
	eng_shm_unlink(s);
	if (s->hdr != NULL)
		munmap((void *)s->hdr, s->size);
	if (s->fd >= 0)
		close(s->fd);
	free(s);
}

int eng_shm_fd(const struct eng_shm *s)
{
	return s->fd;
}

const char *eng_shm_name(const struct eng_shm *s)
{
	return s->named && s->name[0] ? s->name : NULL;
}

volatile struct hunch_shm_header *eng_shm_header(const struct eng_shm *s)
{
	return s->hdr;
}

int eng_shm_check_ready(const struct eng_shm *s, struct hunch_err *err)
{
	uint32_t state = __atomic_load_n(&s->hdr->rt_state, __ATOMIC_ACQUIRE);

	if (state == HUNCH_RT_NONE)
		return -EAGAIN;
	if (state == HUNCH_RT_READY &&
	    s->hdr->rt_abi_version == HUNCH_ABI_VERSION &&
	    s->hdr->rt_nentry <= HUNCH_RT_NENTRY_MAX)
		return 0;
	if (state == HUNCH_RT_FAILED &&
	    s->hdr->rt_abi_version == HUNCH_ABI_VERSION &&
	    s->hdr->rt_flags != 0)
		return hunch_err_set(err, -EPROTO, "the runtime library in the "
			"target could not use the %zu-byte shared-memory "
			"segment (%s): %s", s->size,
			s->hdr->rt_flags & HUNCH_RT_F_MAP_FAILED ?
				"mmap failed" :
			s->hdr->rt_flags & HUNCH_RT_F_BAD_LAYOUT ?
				"its layout does not fit" :
				"thread-exit hooks could not be installed",
			s->hdr->rt_flags & HUNCH_RT_F_MAP_FAILED ?
				"check the target's address-space limit "
				"(ulimit -v) or ask for a smaller segment" :
				"use the libhunchrt.so built with this hunch");
	return hunch_err_set(err, -EPROTO,
		"the runtime library in the target speaks ABI version %u, "
		"hunch speaks %u: use the libhunchrt.so built with this hunch",
		s->hdr->rt_abi_version, HUNCH_ABI_VERSION);
}

unsigned long eng_shm_entry(const struct eng_shm *s, enum hunch_rt_entry which)
{
	uint32_t n = s->hdr->rt_nentry;

	if ((unsigned)which >= HUNCH_RT_NENTRY_MAX || (uint32_t)which >= n)
		return 0;
	return (unsigned long)s->hdr->rt_entry[which];
}

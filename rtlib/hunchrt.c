/*
 * hunchrt.c - libhunchrt.so start-up and the handshake with hunch.
 *
 * Launched targets get the segment as an inherited file descriptor named
 * by HUNCH_SHM_FD and this library through LD_PRELOAD; the constructor
 * maps the segment, answers the handshake, and scrubs both variables so
 * the program's own children do not inherit them.  Attached targets get
 * this library by an inferior call of dlopen, then hunch calls
 * hunchrt_attach() with the name of a short-lived 0600 shm object; threads
 * that existed before the attach register lazily at their first primitive.
 */
#include "hunchrt.h"
#include "rt_internal.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct rt_global rt_g;

long hunchrt_ping(long x)
{
	return x + 1;
}

/* hunch wrote the layout; the rtlib trusts hunch but not blindly: a
 * layout that does not fit the mapping would make every write a crash. */
static int rt_layout_ok(const struct hunch_shm_header *h, size_t size)
{
	uint64_t blocks_end;

	if (h->max_threads == 0 || h->max_threads > (1u << 16) ||
	    h->block_shift < 12 || h->block_shift > 30 ||
	    h->ring_size == 0 || (h->ring_size & (h->ring_size - 1)) != 0 ||
	    h->ring_size > (1u << 20) || h->tsc_shift > 63)
		return 0;
	if (h->ring_off < sizeof(*h) || h->ring_off % 64 != 0 ||
	    h->ring_off + (uint64_t)h->ring_size *
	    sizeof(struct hunch_ring_entry) > h->table_off ||
	    h->table_off % 64 != 0 ||
	    h->table_off + (uint64_t)h->max_threads *
	    sizeof(struct hunch_thread_slot) > h->blocks_off ||
	    h->blocks_off % 4096 != 0)
		return 0;
	blocks_end = h->blocks_off + ((uint64_t)h->max_threads << h->block_shift);
	return blocks_end <= size && h->segment_size <= size;
}

static void rt_publish_entries(struct hunch_shm_header *h)
{
	uint64_t *e = h->rt_entry;
	char *fs;

	e[HUNCH_RT_ENTRY_ATTACH] = (uint64_t)(uintptr_t)hunchrt_attach;
	e[HUNCH_RT_ENTRY_PING] = (uint64_t)(uintptr_t)hunchrt_ping;
	e[HUNCH_RT_ENTRY_COUNTER_ADD] = (uint64_t)(uintptr_t)hunchrt_counter_add;
	e[HUNCH_RT_ENTRY_COUNTER_SET] = (uint64_t)(uintptr_t)hunchrt_counter_set;
	e[HUNCH_RT_ENTRY_WALL_START] = (uint64_t)(uintptr_t)hunchrt_wall_start;
	e[HUNCH_RT_ENTRY_WALL_STOP] = (uint64_t)(uintptr_t)hunchrt_wall_stop;
	e[HUNCH_RT_ENTRY_CPU_START] = (uint64_t)(uintptr_t)hunchrt_cpu_start;
	e[HUNCH_RT_ENTRY_CPU_STOP] = (uint64_t)(uintptr_t)hunchrt_cpu_stop;
	e[HUNCH_RT_ENTRY_BLOCK] = (uint64_t)(uintptr_t)hunchrt_block;
	e[HUNCH_RT_ENTRY_TRAP_INSTALL] = (uint64_t)(uintptr_t)hunchrt_trap_install;
	e[HUNCH_RT_ENTRY_FRAMES_REGISTER] =
		(uint64_t)(uintptr_t)hunchrt_frames_register;
	e[HUNCH_RT_ENTRY_INFCALL_RET] = (uint64_t)(uintptr_t)hunchrt_infcall_ret;
	e[HUNCH_RT_ENTRY_FRAMES_DEREGISTER] =
		(uint64_t)(uintptr_t)hunchrt_frames_deregister;
	h->rt_nentry = HUNCH_RT_ENTRY_COUNT;
	/* Trampolines load the block pointer as %fs:off (initial-exec TLS
	 * has the same offset in every thread). */
	__asm__("mov %%fs:0, %0" : "=r"(fs));
	h->rt_tls_block_off = (int64_t)((char *)&rt_tls_block - fs);
}

static void rt_set_globals(struct hunch_shm_header *h, size_t size)
{
	uint64_t bmask = (1ull << h->block_shift) - 1;

	rt_g.shm_size = size;
	rt_g.blocks = (char *)h + h->blocks_off;
	rt_g.table = (struct hunch_thread_slot *)((char *)h + h->table_off);
	rt_g.ring = (struct hunch_ring_entry *)((char *)h + h->ring_off);
	rt_g.ring_mask = h->ring_size - 1;
	rt_g.counter_mask = bmask & ~(uint64_t)(HUNCH_COUNTER_SIZE - 1);
	rt_g.timer_mask = bmask & ~(uint64_t)(HUNCH_TIMER_SIZE - 1);
	rt_g.max_threads = h->max_threads;
	rt_g.block_shift = h->block_shift;
	rt_g.wall_hw = h->wall_level == HUNCH_LEVEL_HW;
	rt_g.cpu_hw = h->cpu_level == HUNCH_LEVEL_HW;
	rt_g.tsc_mult = h->tsc_mult;
	rt_g.tsc_shift = h->tsc_shift;
	if (rt_g.tsc_mult == 0)  /* no calibration: no TSC-based levels */
		rt_g.wall_hw = rt_g.cpu_hw = 0;
	else
		rt_g.cpu_trust_ticks = (uint64_t)(((unsigned __int128)
			RT_CPU_TRUST_NS << rt_g.tsc_shift) / rt_g.tsc_mult);
	h->rt_cpu_level = rt_g.cpu_hw ? HUNCH_LEVEL_HW : HUNCH_LEVEL_SW;
}

static void rt_refuse(struct hunch_shm_header *h, size_t size, uint32_t why)
{
	h->rt_abi_version = HUNCH_ABI_VERSION;
	h->rt_flags = why;
	__atomic_store_n(&h->rt_state, HUNCH_RT_FAILED, __ATOMIC_RELEASE);
	munmap(h, size);
}

/* Map the segment behind fd and answer the handshake. */
static int rt_map_segment(int fd)
{
	struct stat st;
	struct hunch_shm_header *h;
	size_t size;

	if (fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof(*h))
		return -1;
	size = (size_t)st.st_size;
	h = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (h == MAP_FAILED) {
		/* Say why through the header page alone (an address-space
		 * limit is the likely cause), instead of leaving hunch to
		 * time out. */
		h = mmap(NULL, sizeof(*h), PROT_READ | PROT_WRITE, MAP_SHARED,
			 fd, 0);
		if (h != MAP_FAILED)
			rt_refuse(h, sizeof(*h), HUNCH_RT_F_MAP_FAILED);
		return -1;
	}
	if (h->magic != HUNCH_ABI_MAGIC || h->abi_version != HUNCH_ABI_VERSION) {
		rt_refuse(h, size, 0);
		return -1;
	}
	if (h->header_size != sizeof(*h) || !rt_layout_ok(h, size)) {
		rt_refuse(h, size, HUNCH_RT_F_BAD_LAYOUT);
		return -1;
	}
	rt_set_globals(h, size);
	h->rt_abi_version = HUNCH_ABI_VERSION;
	h->rt_pid = getpid();
	rt_publish_entries(h);
	rt_trap_handler_init();   /* before hunch can make inferior calls */
	__atomic_store_n(&rt_g.shm, h, __ATOMIC_RELEASE);
	if (rt_thread_init() != 0) {
		__atomic_store_n(&rt_g.shm, NULL, __ATOMIC_RELEASE);
		rt_refuse(h, size, HUNCH_RT_F_INIT_FAILED);
		return -1;
	}
	__atomic_store_n(&h->rt_state, HUNCH_RT_READY, __ATOMIC_RELEASE);
	return 0;
}

int hunchrt_attach(const char *shm_name)
{
	int fd, rc;

	if (rt_g.shm != NULL)
		return 0;
	if (rt_g.inert)
		return -1;
	fd = shm_open(shm_name, O_RDWR, 0);
	if (fd < 0)
		return -1;
	rc = rt_map_segment(fd);
	close(fd);
	return rc;
}

/* Put the user's own LD_PRELOAD back, or remove ours. */
static void rt_scrub_environment(void)
{
	const char *had = getenv(HUNCH_ENV_HAD_PRELOAD);
	const char *orig = getenv(HUNCH_ENV_ORIG_PRELOAD);

	if (had != NULL && strcmp(had, "1") == 0 && orig != NULL)
		setenv("LD_PRELOAD", orig, 1);
	else
		unsetenv("LD_PRELOAD");
	unsetenv(HUNCH_ENV_ORIG_PRELOAD);
	unsetenv(HUNCH_ENV_HAD_PRELOAD);
	unsetenv(HUNCH_ENV_SHM_FD);
}

__attribute__((constructor)) static void rt_init(void)
{
	const char *fdstr = getenv(HUNCH_ENV_SHM_FD);
	char *end;
	long fd;

	if (fdstr == NULL)
		return;  /* dlopen'ed by an attaching hunch: wait for attach */
	fd = strtol(fdstr, &end, 10);
	rt_scrub_environment();
	if (*end != '\0' || fd < 0 || fd > 65535)
		return;
	if (rt_map_segment((int)fd) == 0)
		rt_thread_register(0);  /* the main thread */
	close((int)fd);  /* the program must not see an extra descriptor */
}

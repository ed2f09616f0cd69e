/*
 * hunchrt.c - libhunchrt.so start-up and the handshake with hunch.
 *
 * Launched targets get the segment as an inherited file descriptor named
 * by HUNCH_SHM_FD and this library through LD_PRELOAD; the constructor
 * maps the segment, answers the handshake, and scrubs both variables so
 * the program's own children do not inherit them.  Attached targets get
 * this library by an inferior call of dlopen, then hunch calls
 * hunchrt_attach() with the name of a short-lived 0600 shm object.
 */
#include "hunch_abi.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define RT_EXPORT __attribute__((visibility("default")))

static struct hunch_shm_header *rt_shm;

RT_EXPORT int hunchrt_attach(const char *shm_name);
RT_EXPORT long hunchrt_ping(long x);

long hunchrt_ping(long x)
{
	return x + 1;
}

/* Map the segment behind fd and answer the handshake. */
static int rt_map_segment(int fd)
{
	struct stat st;
	struct hunch_shm_header *h;

	if (fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof(*h))
		return -1;
	h = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 fd, 0);
	if (h == MAP_FAILED)
		return -1;
	if (h->magic != HUNCH_ABI_MAGIC || h->abi_version != HUNCH_ABI_VERSION) {
		h->rt_abi_version = HUNCH_ABI_VERSION;
		h->rt_state = HUNCH_RT_FAILED;
		munmap(h, (size_t)st.st_size);
		return -1;
	}
	h->rt_abi_version = HUNCH_ABI_VERSION;
	h->rt_pid = getpid();
	h->rt_entry[HUNCH_RT_ENTRY_ATTACH] = (uint64_t)(uintptr_t)hunchrt_attach;
	h->rt_entry[HUNCH_RT_ENTRY_PING] = (uint64_t)(uintptr_t)hunchrt_ping;
	h->rt_nentry = HUNCH_RT_ENTRY_PING + 1;
	__atomic_store_n(&h->rt_state, HUNCH_RT_READY, __ATOMIC_RELEASE);
	rt_shm = h;
	return 0;
}

int hunchrt_attach(const char *shm_name)
{
	int fd, rc;

	if (rt_shm != NULL)
		return 0;
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
	rt_map_segment((int)fd);
	close((int)fd);  /* the program must not see an extra descriptor */
}

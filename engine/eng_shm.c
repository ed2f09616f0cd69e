/*
 * eng_shm.c - creating the shared-memory segment and checking the
 * runtime library's handshake (see eng_shm.h).
 */
#include "eng_shm.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#define ENG_SHM_DEFAULT_SIZE (1u << 20)

struct eng_shm {
	int fd;
	size_t size;
	char name[64];       /* "" when anonymous or already unlinked */
	bool named;
	volatile struct hunch_shm_header *hdr;
};

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

static int open_segment(struct eng_shm *s, struct hunch_err *err)
{
	int rc;

	if (!s->named) {
		s->fd = memfd_create("hunch-shm", 0);  /* inheritable */
		if (s->fd < 0)
			return hunch_errf(err, -errno,
				"cannot create the shared-memory segment "
				"(memfd_create: %s)", strerror(errno));
		return 0;
	}
	rc = make_name(s->name, sizeof(s->name));
	if (rc < 0)
		return hunch_errf(err, rc, "cannot make a shm name: %s",
				  strerror(-rc));
	s->fd = shm_open(s->name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC,
			 0600);
	if (s->fd < 0)
		return hunch_errf(err, -errno,
			"cannot create shared-memory object %s: %s "
			"(is /dev/shm mounted and writable?)", s->name,
			strerror(errno));
	return 0;
}

int eng_shm_create(size_t size, bool named, struct eng_shm **out,
		   struct hunch_err *err)
{
	struct eng_shm *s = calloc(1, sizeof(*s));
	void *p;
	int rc;

	if (s == NULL)
		return hunch_errf(err, -ENOMEM, "out of memory");
	s->size = size ? size : ENG_SHM_DEFAULT_SIZE;
	s->named = named;
	rc = open_segment(s, err);
	if (rc < 0) {
		free(s);
		return rc;
	}
	if (ftruncate(s->fd, (off_t)s->size) != 0) {
		rc = hunch_errf(err, -errno, "cannot size the shared-memory "
				"segment to %zu bytes: %s", s->size,
				strerror(errno));
		goto fail;
	}
	p = mmap(NULL, s->size, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
	if (p == MAP_FAILED) {
		rc = hunch_errf(err, -errno, "cannot map the shared-memory "
				"segment: %s", strerror(errno));
		goto fail;
	}
	s->hdr = p;
	s->hdr->magic = HUNCH_ABI_MAGIC;
	s->hdr->abi_version = HUNCH_ABI_VERSION;
	s->hdr->header_size = sizeof(struct hunch_shm_header);
	s->hdr->segment_size = s->size;
	*out = s;
	return 0;
fail:
	if (s->named)
		shm_unlink(s->name);
	close(s->fd);
	free(s);
	return rc;
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
	return hunch_errf(err, -EPROTO,
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

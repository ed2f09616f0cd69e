/*
 * eng_shm.h - hunch's side of the shared-memory segment (rtlib/hunch_abi.h).
 *
 * Launch: a memfd that the target inherits (its number travels in
 * HUNCH_SHM_FD).  Attach: a 0600 POSIX shm object with an unguessable
 * name, unlinked by hunch as soon as the runtime library has mapped it.
 */
#ifndef ENG_SHM_H
#define ENG_SHM_H

#include <stdbool.h>
#include <stddef.h>

#include "eng_clock.h"
#include "hunch_err.h"
#include "hunch_abi.h"

struct eng_shm;

/* hunch's private copy of the layout: the sampler never re-reads these
 * from the segment, where the target could have changed them. */
struct eng_shm_layout {
	uint64_t size;          /* whole segment */
	uint64_t ring_off;
	uint64_t table_off;
	uint64_t blocks_off;
	uint32_t ring_size;     /* entries, power of two */
	uint32_t max_threads;
	uint32_t block_shift;   /* block = 2^block_shift bytes */
};

/* The default: 1,024 threads x 8 MiB blocks (room for 131,071 timers or
 * 1,048,568 counters per thread) = 8 GiB of address space.  The memfd is
 * sparse: memory is used only for the blocks of threads that exist, up to
 * the highest variable offset handed out, and retired blocks are punched
 * out again. */
#define ENG_SHM_DEFAULT_THREADS 1024u
#define ENG_SHM_DEFAULT_BLOCK_SHIFT 23u
#define ENG_SHM_RING_SIZE 4096u

/* Create a segment of `size` bytes (0 = the default layout above) with an
 * initialised header.  With `named`, also give it a /dev/shm name.  A
 * non-zero size keeps up to 1,024 threads and makes the blocks as large as
 * fit.  The TSC is calibrated here (20 ms) and the timer levels chosen
 * (HUNCH_SOFTWARE_LEVEL_{WALL,CPU}_TIMER in hunch's environment). */
int eng_shm_create(size_t size, bool named, struct eng_shm **out,
		   struct hunch_err *err);
/* Same with an explicit thread count and block size (log2). */
int eng_shm_create_layout(uint32_t max_threads, uint32_t block_shift,
			  bool named, struct eng_shm **out,
			  struct hunch_err *err);
void eng_shm_destroy(struct eng_shm *shm);

/* The memfd (launch mode), inheritable: it has no FD_CLOEXEC. */
int eng_shm_fd(const struct eng_shm *shm);
/* The shm_open name ("/hunch-..."), or NULL for an anonymous segment. */
const char *eng_shm_name(const struct eng_shm *shm);
/* Remove the name once both sides have mapped the segment. */
void eng_shm_unlink(struct eng_shm *shm);

/* hunch's mapping of the segment. */
volatile struct hunch_shm_header *eng_shm_header(const struct eng_shm *shm);

/* Check the runtime library's answer to the handshake: 0 when ready,
 * -EAGAIN when it has not answered, -EPROTO (with a message) when it
 * answered with another ABI version or garbage. */
int eng_shm_check_ready(const struct eng_shm *shm, struct hunch_err *err);

const struct eng_shm_layout *eng_shm_layout(const struct eng_shm *shm);
const struct eng_clock *eng_shm_clock(const struct eng_shm *shm);
/* hunch's mapping as bytes (for the sampler's bounds-checked reads). */
volatile unsigned char *eng_shm_base(const struct eng_shm *shm);

/* The address of an rtlib entry point in the target, 0 if unknown. */
unsigned long eng_shm_entry(const struct eng_shm *shm,
			    enum hunch_rt_entry which);

#endif

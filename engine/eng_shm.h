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

#include "eng_err.h"
#include "hunch_abi.h"

struct eng_shm;

/* Create a segment of `size` bytes (0 = the default size) with an
 * initialised header.  With `named`, also give it a /dev/shm name. */
int eng_shm_create(size_t size, bool named, struct eng_shm **out,
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

/* The address of an rtlib entry point in the target, 0 if unknown. */
unsigned long eng_shm_entry(const struct eng_shm *shm,
			    enum hunch_rt_entry which);

#endif

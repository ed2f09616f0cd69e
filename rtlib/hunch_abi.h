/*
 * hunch_abi.h - the one header shared by rtlib/ (inside the target) and
 * engine/ (inside hunch): the layout of the shared-memory segment.
 *
 * hunch creates the segment; the runtime library maps it and answers the
 * handshake by filling `rt_*` fields and setting rt_state.  Everything the
 * engine reads from here is untrusted (the target can scribble on it):
 * every index and length must be bounds-checked by the reader.
 *
 * Bump HUNCH_ABI_VERSION on any incompatible change to this file.
 */
#ifndef HUNCH_ABI_H
#define HUNCH_ABI_H

#include <stdint.h>

#define HUNCH_ABI_MAGIC   0x314d53484e554855ULL  /* "UHUNHSM1" little endian */
#define HUNCH_ABI_VERSION 1

/* Environment handed to a launched target (scrubbed by the rtlib). */
#define HUNCH_ENV_SHM_FD        "HUNCH_SHM_FD"
#define HUNCH_ENV_ORIG_PRELOAD  "HUNCH_ORIG_LD_PRELOAD"
#define HUNCH_ENV_HAD_PRELOAD   "HUNCH_HAD_LD_PRELOAD"

/* rt_state values. */
enum hunch_rt_state {
	HUNCH_RT_NONE = 0,     /* runtime library has not answered yet */
	HUNCH_RT_READY = 1,    /* handshake complete, entry points valid */
	HUNCH_RT_FAILED = 2,   /* rtlib saw the segment but refused it */
};

/* Indexes of rtlib entry points published in the header. */
enum hunch_rt_entry {
	HUNCH_RT_ENTRY_ATTACH = 0,   /* int hunchrt_attach(const char *shm_name) */
	HUNCH_RT_ENTRY_PING,         /* long hunchrt_ping(long x): returns x+1 */
	HUNCH_RT_NENTRY_MAX = 32
};

struct hunch_shm_header {
	uint64_t magic;            /* HUNCH_ABI_MAGIC, written by hunch */
	uint32_t abi_version;      /* HUNCH_ABI_VERSION, written by hunch */
	uint32_t header_size;      /* sizeof(struct hunch_shm_header) */
	uint64_t segment_size;     /* bytes in the whole segment */

	/* Handshake, written by the runtime library. */
	volatile uint32_t rt_state;        /* enum hunch_rt_state */
	uint32_t rt_abi_version;           /* the version the rtlib was built for */
	int32_t rt_pid;                    /* getpid() of the process that mapped */
	uint32_t rt_nentry;                /* valid entries in rt_entry */
	uint64_t rt_entry[HUNCH_RT_NENTRY_MAX];  /* addresses in the target */
};

#endif

/*
 * hunch_abi.h - the one header shared by rtlib/ (inside the target) and
 * engine/ (inside hunch): the layout of the shared-memory segment.
 *
 * hunch creates the segment; the runtime library maps it and answers the
 * handshake by filling `rt_*` fields and setting rt_state.  Everything the
 * engine reads from here is untrusted (the target can scribble on it):
 * every index and length must be bounds-checked by the reader, and hunch
 * keeps its own copy of the layout instead of re-reading it.
 *
 * Segment layout (all offsets from the start of the segment):
 *
 *   0            struct hunch_shm_header (handshake, layout, clocks)
 *   ring_off     struct hunch_ring_entry[ring_size]  thread events
 *   table_off    struct hunch_thread_slot[max_threads]  thread table
 *   blocks_off   max_threads blocks of 2^block_shift bytes, page aligned;
 *                block i belongs to the thread holding index i.  It starts
 *                with struct hunch_block_hdr; variables follow at offsets
 *                hunch hands out (>= HUNCH_BLOCK_VARS_START).
 *
 * A variable is one offset ("handle") that is valid in every block: the
 * thread with index i writes its copy at blocks_off + (i << block_shift) +
 * handle.  Only that thread writes its block (single writer); hunch reads.
 *
 * Bump HUNCH_ABI_VERSION on any incompatible change to this file.
 */
#ifndef HUNCH_ABI_H
#define HUNCH_ABI_H

#include <stdint.h>

#define HUNCH_ABI_MAGIC   0x314d53484e554855ULL  /* "UHUNHSM1" little endian */
#define HUNCH_ABI_VERSION 3

/* Environment handed to a launched target (scrubbed by the rtlib). */
#define HUNCH_ENV_SHM_FD        "HUNCH_SHM_FD"
#define HUNCH_ENV_ORIG_PRELOAD  "HUNCH_ORIG_LD_PRELOAD"
#define HUNCH_ENV_HAD_PRELOAD   "HUNCH_HAD_LD_PRELOAD"

/* Read by hunch (never by the target) to force the software timer levels,
 * like Paradyn's PD_SOFTWARE_LEVEL_*; any non-empty value but "0". */
#define HUNCH_ENV_SW_WALL_TIMER "HUNCH_SOFTWARE_LEVEL_WALL_TIMER"
#define HUNCH_ENV_SW_CPU_TIMER  "HUNCH_SOFTWARE_LEVEL_CPU_TIMER"
#define HUNCH_ENV_SHOW_TIMER    "HUNCH_SHOW_TIMER_INFO"

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
	HUNCH_RT_ENTRY_COUNTER_ADD,  /* void (uint64_t h, int64_t delta) */
	HUNCH_RT_ENTRY_COUNTER_SET,  /* void (uint64_t h, int64_t value) */
	HUNCH_RT_ENTRY_WALL_START,   /* void (uint64_t h) */
	HUNCH_RT_ENTRY_WALL_STOP,    /* void (uint64_t h) */
	HUNCH_RT_ENTRY_CPU_START,    /* void (uint64_t h) */
	HUNCH_RT_ENTRY_CPU_STOP,     /* void (uint64_t h) */
	HUNCH_RT_ENTRY_BLOCK,        /* void *hunchrt_block(void): registers */
	HUNCH_RT_ENTRY_TRAP_INSTALL, /* int (uint64_t table, uint64_t cap), ABI 3 */
	HUNCH_RT_ENTRY_FRAMES_REGISTER, /* long (uint64_t list, uint64_t n): rt_frames.c */
	HUNCH_RT_ENTRY_INFCALL_RET,  /* an int3: inferior calls return here */
	HUNCH_RT_ENTRY_FRAMES_DEREGISTER, /* long (uint64_t list, uint64_t n): rt_frames.c */
	HUNCH_RT_ENTRY_COUNT,        /* entries the rtlib publishes */
	HUNCH_RT_NENTRY_MAX = 32
};

/* Timer levels (devguide §1.17).  Wall: HW = rdtsc ticks, SW =
 * CLOCK_MONOTONIC ns.  CPU: HW = CLOCK_THREAD_CPUTIME_ID read once per
 * context switch (perf task-clock page `lock` + rdtsc), SW =
 * CLOCK_THREAD_CPUTIME_ID on every read; CPU timers are always in ns. */
enum hunch_timer_level {
	HUNCH_LEVEL_HW = 0,
	HUNCH_LEVEL_SW = 1,
};

/* rt_flags: why the rtlib refused (rt_state == HUNCH_RT_FAILED). */
#define HUNCH_RT_F_BAD_LAYOUT 1u   /* layout does not fit the segment */
#define HUNCH_RT_F_MAP_FAILED 2u   /* mmap of the whole segment failed */
#define HUNCH_RT_F_INIT_FAILED 4u  /* pthread key / atfork failed */

/* Thread table states.  Transitions, and who makes them:
 *   FREE -> CLAIMING -> LIVE   the new thread (CAS from FREE), rtlib
 *   LIVE -> PENDING            the exiting thread, after its last write
 *   PENDING -> FREE            hunch, after the final sample and after
 *                              cleaning the block (devguide §1.15) */
enum hunch_thread_state {
	HUNCH_THR_FREE = 0,
	HUNCH_THR_CLAIMING = 1,
	HUNCH_THR_LIVE = 2,
	HUNCH_THR_PENDING = 3,
};

struct hunch_thread_slot {             /* 64 bytes, one cache line */
	volatile uint32_t state;       /* enum hunch_thread_state */
	volatile uint32_t gen;         /* bumped by each claim */
	volatile int32_t tid;
	uint32_t pad0;
	volatile uint64_t start_fn;    /* thread start routine, 0 unknown */
	volatile uint64_t t_create;    /* wall native units */
	volatile uint64_t t_exit;      /* wall native units, 0 while live */
	uint64_t pad1[3];
};

enum hunch_event_kind {
	HUNCH_EV_THREAD_NEW = 1,
	HUNCH_EV_THREAD_EXIT = 2,
	HUNCH_EV_FORK = 3,             /* reserved: not produced yet */
};

/* Multi-producer ring: a producer takes pos = ring_head++ (atomic), fills
 * entry[pos % ring_size], then stores seq = pos + 1 (release).  hunch
 * drains in order; an entry whose seq is behind is not written yet, one
 * whose seq is ahead means hunch was overrun (the table stays the truth). */
struct hunch_ring_entry {              /* 32 bytes */
	volatile uint64_t seq;
	volatile uint32_t kind;        /* enum hunch_event_kind */
	volatile uint32_t idx;         /* thread index */
	volatile int32_t tid;
	volatile uint32_t gen;
	volatile uint64_t start_fn;
};

/* Start of every per-thread block; written only by its thread. */
struct hunch_block_hdr {               /* 64 bytes */
	volatile uint64_t guard;       /* trampoline guard flag */
	volatile uint64_t obs_cost;    /* observed cost, wall native units */
	volatile uint32_t cpu_level;   /* CPU level this thread really uses */
	uint32_t pad0;
	/* When the thread's start routine was called (written once by the
	 * thread just before the call; 0 unknown): catchup starts timers of
	 * that outermost activation here, not at enabling. */
	volatile uint64_t act_wall;    /* wall native units */
	volatile uint64_t act_cpu;     /* the thread's CPU ns */
	uint64_t pad1[3];
};

#define HUNCH_BLOCK_VARS_START 64u

/* A wall or CPU timer slot (devguide §1.9 tTimer), 64-byte aligned. */
struct hunch_timer {
	volatile uint64_t prot1;
	volatile uint64_t prot2;
	volatile int64_t count;        /* nesting; running while > 0 */
	volatile uint64_t start;       /* native units */
	volatile uint64_t total;       /* native units */
	uint64_t pad[3];
};

#define HUNCH_COUNTER_SIZE 8u
#define HUNCH_TIMER_SIZE   64u

struct hunch_shm_header {
	uint64_t magic;            /* HUNCH_ABI_MAGIC, written by hunch */
	uint32_t abi_version;      /* HUNCH_ABI_VERSION, written by hunch */
	uint32_t header_size;      /* sizeof(struct hunch_shm_header) */
	uint64_t segment_size;     /* bytes in the whole segment */

	/* Handshake, written by the runtime library. */
	volatile uint32_t rt_state;        /* enum hunch_rt_state */
	uint32_t rt_abi_version;           /* the version the rtlib was built for */
	int32_t rt_pid;                    /* getpid() of the process that mapped;
					      a followed fork child's own segment:
					      its pid, written by hunch */
	uint32_t rt_nentry;                /* valid entries in rt_entry */
	uint64_t rt_entry[HUNCH_RT_NENTRY_MAX];  /* addresses in the target */

	/* ---- ABI 2: layout and clocks, written by hunch before mapping ---- */
	uint32_t max_threads;      /* entries in the table, blocks */
	uint32_t block_shift;      /* log2(block size), >= 12 */
	uint64_t ring_off;
	uint32_t ring_size;        /* entries, power of two */
	uint32_t wall_level;       /* enum hunch_timer_level chosen by hunch */
	uint64_t table_off;
	uint64_t blocks_off;       /* page aligned */
	uint32_t cpu_level;        /* enum hunch_timer_level requested */
	uint32_t tsc_shift;        /* ns = (ticks * tsc_mult) >> tsc_shift */
	uint64_t tsc_mult;

	/* ---- written by the runtime library ---- */
	volatile int64_t rt_tls_block_off;  /* %fs offset of the block pointer */
	volatile uint32_t rt_cpu_level;     /* worst CPU level any thread got */
	volatile uint32_t rt_flags;         /* HUNCH_RT_F_* with rt_state */
	volatile uint64_t rt_no_index;      /* registrations that found no
					       free index (threads run
					       uninstrumented meanwhile) */
	uint64_t pad_rt[3];

	/* Written by every thread on create/exit: its own cache line. */
	_Alignas(64) volatile uint64_t ring_head;
	uint64_t pad_ring[7];

	/* ---- ABI 3: trap fallback (rtlib/rt_trap.c), written by the rtlib:
	 * racy statistics, not exact counts ---- */
	_Alignas(64) volatile uint64_t rt_traps;  /* int3s sent to trampolines */
	volatile uint64_t rt_traps_foreign;  /* SIGTRAPs passed to the program */
	volatile uint64_t rt_infcalls_finished;  /* inferior calls the rtlib
						    finished for a dead hunch */
	uint64_t pad_trap[5];
};

/* Trap fallback: an int3 at `addr` (a point too small for a jmp) makes
 * the rtlib's SIGTRAP handler resume at `tramp`.  The table lives in the
 * target's trampoline memory (so a forked child keeps a valid copy);
 * hunch passes its address to hunchrt_trap_install once.  Open addressing with
 * linear probing from hunch_trap_slot(addr); addr 0 ends a probe.
 * Entries are never removed: a removed point keeps tramp == addr (its
 * original instruction is back), so a SIGTRAP already raised but not
 * yet delivered still lands correctly. */
struct hunch_trap_entry {
	volatile uint64_t addr;
	volatile uint64_t tramp;
};

/* Inferior calls return to HUNCH_RT_ENTRY_INFCALL_RET (an int3) with
 * this right above the return address (at the %rsp the int3 sees): the
 * thread's registers and XSAVE area before the call.  hunch, alive,
 * takes the SIGTRAP and restores them itself; if hunch died during the
 * call, the rtlib's SIGTRAP handler restores them from here, so the
 * thread resumes exactly where it was (rtlib/rt_trap.c). */
#define HUNCH_INFCALL_MAGIC 0x4c4c41434e464e49ull    /* "INFCALL" */
struct hunch_infcall_save {
	uint64_t magic;            /* HUNCH_INFCALL_MAGIC */
	uint64_t ret;              /* the int3's address, checked too */
	uint64_t regs[27];         /* struct user_regs_struct */
	uint64_t sigmask;          /* the thread's signal mask (bit n-1:
				      signal n) */
	uint64_t xlen;             /* bytes of XSAVE area that follow */
	uint8_t xstate[];          /* NT_X86_XSTATE (standard format) */
};

static inline uint64_t hunch_trap_slot(uint64_t addr, uint64_t cap)
{
	return ((addr * 0x9e3779b97f4a7c15ull) >> 17) & (cap - 1);
}

#endif

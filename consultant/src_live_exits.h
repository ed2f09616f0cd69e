/*
 * src_live_exits.h - the exit status of processes hunch neither traces
 * nor parents (internal to the live source): the followed children run
 * untraced and their parent, the program, reaps them, so their status
 * comes from the kernel's process events (the netlink proc connector,
 * root only) or, failing that, from /proc while they are zombies.
 */
#ifndef SRC_LIVE_EXITS_H
#define SRC_LIVE_EXITS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct src_live_exits;

/* Listen to the kernel's exit events; NULL when they cannot be had
 * (not root, no CONFIG_PROC_EVENTS): the zombie reading remains. */
struct src_live_exits *src_live_exits_open(void);
void src_live_exits_close(struct src_live_exits *e);
/* Read the events pending (never blocks); want(arg, pid) says which
 * pids to keep. */
void src_live_exits_drain(struct src_live_exits *e,
			  bool (*want)(void *arg, pid_t pid), void *arg);
/* The wait status of pid's exit and the CLOCK_MONOTONIC ns it happened
 * at, when an event said so; false otherwise. */
bool src_live_exits_status(const struct src_live_exits *e, pid_t pid,
			   int *status, uint64_t *mono_ns);
/* The wait status of zombie pid from /proc/PID/stat (its exit_code
 * field); false when it is unreadable (reaped). */
bool src_live_exits_zombie_status(pid_t pid, int *status);

#endif

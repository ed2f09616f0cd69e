/*
 * eng_perfsample.h - statistical stack samples of a target's threads.
 *
 * One software `cpu-clock` perf event per thread (inherit off: new
 * threads are added as they are found, exited ones dropped), sampling
 * the user registers and a copy of the top of the user stack
 * (PERF_SAMPLE_REGS_USER + PERF_SAMPLE_STACK_USER).  Optimized code has
 * no frame pointers, so the kernel's own user call chains are useless
 * there; instead each sample is unwound here with libdwfl's CFI unwinder
 * (.eh_frame) over the copied stack, as `perf report` does.
 *
 * Nothing here ever stops the target: the kernel writes samples into
 * ring buffers mmap'ed by hunch, and eng_perfsample_drain reads them.
 *
 * Each thread keeps its most recent samples (ENG_PS_KEEP) with their
 * frames and canonical frame addresses, so that a caller can ask "since
 * when has this activation (function + CFA) been on this thread's
 * stack?" (eng_perfsample_on_stack_since), e.g. to catch up a timer that
 * is inserted while the function is already running.
 */
#ifndef ENG_PERFSAMPLE_H
#define ENG_PERFSAMPLE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "hunch_err.h"

#define ENG_PS_MAX_FRAMES 64   /* frames kept per sample */
#define ENG_PS_KEEP 256        /* recent samples kept per thread */
#define ENG_PS_STACK_BYTES 8192  /* user stack copied per sample */
#define ENG_PS_DEFAULT_HZ 99

/* One sample, unwound.  pc[0] is where the thread was; pc[i > 0] are
 * return addresses minus one (inside the call instruction, so that the
 * caller's function is found even for a call at a function's end).
 * cfa[i] is frame i's canonical frame address (the caller's stack
 * pointer once frame i returns), 0 when unknown (the outermost frame). */
struct eng_psample {
	pid_t tid;
	uint64_t t_ns;          /* CLOCK_MONOTONIC */
	uint64_t cpu_ns;        /* the thread's CPU time counted by its
				 * event so far (since it was opened) */
	int nframes;
	int complete;           /* the unwind reached the outermost frame
				 * (CFI marks its return address undefined:
				 * _start, clone3), so pc[nframes - 1] is the
				 * thread's first function */
	uint64_t pc[ENG_PS_MAX_FRAMES];
	uint64_t cfa[ENG_PS_MAX_FRAMES];
	/* 0: a CPU sample.  Else a switch-out (eng_perfsample_offcpu_start,
	 * eng_perfswitch.h): the stack is where the thread left its CPU,
	 * t_ns when, off_ns the time off a CPU it stands for (in the run
	 * queue or asleep); cpu_ns is 0. */
	uint64_t off_ns;
};

struct eng_perfsample_stats {
	uint64_t samples;       /* samples read */
	uint64_t lost;          /* samples the kernel dropped (ring full) */
	uint64_t frames;        /* frames unwound in all */
	uint64_t unwind_fail;   /* samples unwound to fewer than 2 frames */
	uint64_t drain_ns;      /* hunch CPU time spent draining+unwinding */
	uint64_t drains;
	uint64_t off_samples;   /* switch-outs handed on */
};

struct eng_perfsample;

typedef void (*eng_psample_fn)(void *arg, const struct eng_psample *s);

/* Sample process `pid` at `hz` samples per second of each thread's CPU
 * time (the event counts CPU time: a blocked thread gives no samples).
 * No thread is sampled until added or synced.  Errors name the pid and
 * say what to check (perf_event_paranoid, permissions). */
int eng_perfsample_open(pid_t pid, double hz, struct eng_perfsample **out,
		      struct hunch_err *err);
/* The same with ENG_PS_FP_CHAINS: the kernel's frame-pointer call chains
 * (PERF_SAMPLE_CALLCHAIN) instead of stack copies, no CFAs.  Cheaper,
 * but -O2 code keeps no frame pointers, so chains end after a frame or
 * two there: kept for comparison (bench/hint), not used by hunch. */
#define ENG_PS_FP_CHAINS 0x1u
int eng_perfsample_open_flags(pid_t pid, double hz, unsigned flags,
			    struct eng_perfsample **out, struct hunch_err *err);
/* Sample where every thread leaves its CPU too, from now on, and how
 * long it stays off (eng_perfswitch.h; threads added later too): the
 * switch-outs are drained with the CPU samples and handed to the same
 * callback, off_ns set.  Returns 0, or -errno with the reason (no
 * privilege; frame-pointer chains). */
int eng_perfsample_offcpu_start(struct eng_perfsample *ps,
				struct hunch_err *err);
/* Closes every event; the target runs on untouched. */
void eng_perfsample_close(struct eng_perfsample *ps);

/* Start sampling one thread (no-op if already sampled). */
int eng_perfsample_add_thread(struct eng_perfsample *ps, pid_t tid,
			    struct hunch_err *err);
/* Stop sampling a thread (after draining what it left); its retained
 * samples go too. */
void eng_perfsample_drop_thread(struct eng_perfsample *ps, pid_t tid);
/* Follow /proc/PID/task: add the threads not sampled yet, drop those
 * gone.  Returns the number of threads sampled, or a negative errno when
 * the process is gone. */
int eng_perfsample_sync_threads(struct eng_perfsample *ps);
size_t eng_perfsample_nthreads(const struct eng_perfsample *ps);
/* The threads sampled (up to max), for callers that read their states. */
size_t eng_perfsample_threads(const struct eng_perfsample *ps, pid_t *tids,
			    size_t max);

/* Libraries were loaded or unloaded: re-read the memory map before the
 * next unwind.  (Without this call a sample outside every known module
 * makes it re-read the map, at most every 10 s: samples in hunch's own
 * trampolines or in JIT code are outside every module too.) */
void eng_perfsample_modules_changed(struct eng_perfsample *ps);

/* Read every sample written since the last drain, unwind it, keep it in
 * its thread's recent samples and hand it to fn (fn NULL: to the sink,
 * if any).  Returns the number of samples. */
int eng_perfsample_drain(struct eng_perfsample *ps, eng_psample_fn fn,
		       void *arg);
/* Keep n recent samples (2..65536, about 1 KiB each) for each thread
 * added from now on instead of ENG_PS_KEEP: how far back
 * eng_perfsample_activation_run can see is n sample periods of CPU. */
int eng_perfsample_set_keep(struct eng_perfsample *ps, size_t n);
/* Who gets the samples of a drain that names no fn: the sampler's owner
 * (the hint source) keeps seeing every sample when someone else (catchup,
 * which needs the newest ones) drains. */
void eng_perfsample_set_sink(struct eng_perfsample *ps, eng_psample_fn fn,
			   void *arg);

/* The activation of the function [lo, hi) whose frame has CFA `cfa`
 * (cfa 0: any frame of that function) on thread `tid`: if the thread's
 * newest retained sample has it on its stack, *since_ns is the time of
 * the oldest sample of the unbroken run of recent samples that all have
 * it, and the return is 1, or 2 when that run reaches the oldest retained
 * sample (the activation may be older).  0: not on the newest sample's
 * stack; -ENOENT: the thread has no sample.  A blocked thread gives no
 * samples, so "newest" may be old: compare eng_perfsample_latest's t_ns
 * with the time of the question (ENG_PS_KEEP samples are at least 2.5 s
 * of the thread's CPU time at the default rate).  Samples the kernel
 * dropped (a ring not drained in time) clear the thread's retained ones,
 * so that a run never spans a hole. */
int eng_perfsample_on_stack_since(const struct eng_perfsample *ps, pid_t tid,
				uint64_t lo, uint64_t hi, uint64_t cfa,
				uint64_t *since_ns);

/* The unbroken run of a thread's newest retained samples that all hold
 * one activation: a frame in [lo, hi) whose CFA is `cfa` (0: any) and
 * whose return address is `ra` (0: any; the CFA alone cannot tell two
 * call sites of one caller apart).  Fills *run: its length, and the
 * times of its oldest and newest samples, wall (CLOCK_MONOTONIC) and the
 * thread's CPU time (the event's count).  Returns as
 * eng_perfsample_on_stack_since: 1, 2 (the run reaches the oldest retained
 * sample), 0 (not in the newest sample: n is 0) or -ENOENT. */
struct eng_ps_run {
	unsigned n;             /* samples in the run */
	int to_oldest;          /* it reaches the oldest retained sample */
	uint64_t first_ns, first_cpu;
	uint64_t last_ns, last_cpu;
};
int eng_perfsample_activation_run(const struct eng_perfsample *ps, pid_t tid,
				uint64_t lo, uint64_t hi, uint64_t cfa,
				uint64_t ra, struct eng_ps_run *run);
/* The thread's CPU time since its event counted `count` (a sample's
 * cpu_ns), in schedstat's units (those of CPU timers), given the thread's
 * schedstat CPU time now (`cpu_now`).  The event's count runs faster
 * than schedstat by the steal time (2-15% in this VM, varying with the
 * host's load), so each drain that finds samples reads both clocks, and
 * `count` is mapped between the two readings around it. */
int eng_perfsample_cpu_since(const struct eng_perfsample *ps, pid_t tid,
			   uint64_t count, uint64_t cpu_now,
			   uint64_t *elapsed);
/* Unwind a thread stopped by the caller (ptrace) as a sample would be:
 * its registers and a copy of its stack from %rsp (`len` bytes, as much
 * as a sample copies: ENG_PS_STACK_BYTES), so that its frames' CFAs can
 * be compared with the samples'.  Returns the number of frames. */
int eng_perfsample_unwind_stopped(struct eng_perfsample *ps, pid_t tid,
				const struct user_regs_struct *r,
				const void *stack, size_t len,
				struct eng_psample *out);

/* Unwind a thread blocked in a system call, which is not stopped: from
 * its stack pointer and pc at the call (/proc/TID/syscall, struct
 * eng_taskstate), over a copy of ENG_PS_STACK_BYTES of its stack read
 * with process_vm_readv.  The stack does not move while the thread stays
 * blocked; the other registers are unknown, so a frame whose CFA needs
 * one (a function with a frame pointer) ends the walk.  This is the
 * off-CPU stack: cpu-clock samples never see a blocked thread, and
 * switch-outs are sampled only where asked (eng_perfsample_offcpu_start).
 * Returns the number
 * of frames (at least 1: pc), or -errno when the stack cannot be read
 * (the thread woke and exited). */
int eng_perfsample_unwind_blocked(struct eng_perfsample *ps, pid_t tid,
				uint64_t sp, uint64_t pc,
				struct eng_psample *out);

/* The newest retained sample of a thread, or NULL. */
const struct eng_psample *eng_perfsample_latest(const struct eng_perfsample *ps,
					      pid_t tid);

const struct eng_perfsample_stats *
eng_perfsample_stats(const struct eng_perfsample *ps);

#endif

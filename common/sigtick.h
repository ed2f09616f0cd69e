/*
 * sigtick.h - the signal and timer descriptors that hunch's loops poll.
 *
 * hunch is one thread with one poll loop (DESIGN §1): signals (SIGCHLD
 * for ptrace events, the terminal's, the ending ones) arrive on a
 * signalfd, and the dashboards' redraw tick on a timerfd, so nothing is
 * done in a signal handler.
 */
#ifndef SIGTICK_H
#define SIGTICK_H

#include <signal.h>
#include <stddef.h>

/* Block sigs[0..n) (saving the old mask in *old, if not NULL) and return
 * a non-blocking signalfd that carries them, or -1. */
int sigtick_signals(const int *sigs, size_t n, sigset_t *old);
#define SIGTICK_SIGNALS(arr, old) \
	sigtick_signals((arr), sizeof(arr) / sizeof((arr)[0]), (old))

/* Drain a signalfd; the last signal other than SIGCHLD read (an ending
 * one: SIGINT, SIGTERM, SIGHUP...), or 0. */
int sigtick_read_ending(int sigfd);

/* A non-blocking timerfd that fires every ms milliseconds, or -1. */
int sigtick_timer(long ms);

#endif

/*
 * kspin_drive.h - driving progs/kspin.c from a test: one command line
 * out, one answer line in; the kernel's own account of a thread
 * (schedstat field 1, read fresh) and its state, to wait for a thread
 * to be blocked instead of sleeping a fixed time.
 */
#ifndef KSPIN_DRIVE_H
#define KSPIN_DRIVE_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct kspin {
	FILE *to, *from;
	int pid;
};

/* Send one command, read the answer line into buf ("" at EOF). */
static inline void kspin_cmd(struct kspin *k, const char *cmd, char *buf,
			     size_t len)
{
	if (cmd != NULL) {
		fprintf(k->to, "%s\n", cmd);
		fflush(k->to);
	}
	if (fgets(buf, (int)len, k->from) == NULL)
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

/* Field 1 of /proc/PID/task/TID/schedstat, read fresh; -1 when gone. */
static inline int64_t kspin_sched(int pid, long tid)
{
	char path[96];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/task/%ld/schedstat", pid, tid);
	f = fopen(path, "r");
	if (f == NULL)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* The state letter of /proc/PID/task/TID/stat (after the last ')'). */
static inline char kspin_state(int pid, long tid)
{
	char path[96], buf[512], *p;
	size_t n;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/task/%ld/stat", pid, tid);
	f = fopen(path, "r");
	if (f == NULL)
		return '?';
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p != NULL && p[1] == ' ' ? p[2] : '?';
}

/* Wait (up to 10 s) until the thread sleeps: its CPU time is then
 * final until it wakes.  Under ptrace a stopped thread reads 't'. */
static inline int kspin_wait_blocked(int pid, long tid)
{
	struct timespec d = { 0, 1000000 };

	for (int i = 0; i < 10000; i++) {
		char s = kspin_state(pid, tid);

		if (s == 'S' || s == 'D')
			return 0;
		nanosleep(&d, NULL);
	}
	return -1;
}

#endif

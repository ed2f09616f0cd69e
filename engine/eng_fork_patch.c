/*
 * eng_fork_patch.c - a running child's inherited patches taken out
 * (see eng_fork_patch.h).
 */
#include "eng_fork_patch.h"
#include "eng_proc.h"
#include "eng_fork_sys.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>

#define MAX_TASKS 4096

struct tasks {
	pid_t t[MAX_TASKS];
	size_t n;
};

static bool has(const struct tasks *ts, pid_t tid)
{
	for (size_t i = 0; i < ts->n; i++)
		if (ts->t[i] == tid)
			return true;
	return false;
}

/* Seize and stop one thread; false if it is gone (or never ours). */
static bool stop_one(pid_t tid)
{
	int st;

	if (ptrace(PTRACE_SEIZE, tid, 0, 0) != 0)
		return false;
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) != 0)
		return false;
	for (;;) {
		if (waitpid(tid, &st, __WALL) < 0) {
			if (errno == EINTR)
				continue;
			return false;
		}
		if (!WIFSTOPPED(st))
			return false;        /* exited meanwhile */
		if ((st >> 16) == PTRACE_EVENT_STOP)
			return true;
		/* A signal arrived first: let it go, the interrupt follows. */
		ptrace(PTRACE_CONT, tid, 0, (void *)(long)WSTOPSIG(st));
	}
}

/* Every thread of pid stopped, new ones included (a pass that finds
 * none new ends it). */
static void stop_all(pid_t pid, struct tasks *ts)
{
	char path[64];
	bool more = true;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	while (more && ts->n < MAX_TASKS) {
		struct dirent *e;
		DIR *d = opendir(path);

		more = false;
		if (d == NULL)
			return;
		while ((e = readdir(d)) != NULL && ts->n < MAX_TASKS) {
			pid_t tid = (pid_t)atoi(e->d_name);

			if (tid <= 0 || has(ts, tid))
				continue;
			more = true;
			if (stop_one(tid))
				ts->t[ts->n++] = tid;
			else
				ptrace(PTRACE_DETACH, tid, 0, 0);
		}
		closedir(d);
	}
}

static int peek_bytes(pid_t pid, uint64_t addr, uint8_t *buf, size_t len)
{
	return eng_fork_read(pid, addr, buf, len);
}

struct eng_fork_stopped {
	struct tasks ts;
};

struct eng_fork_stopped *eng_fork_patch_stop(pid_t pid)
{
	struct eng_fork_stopped *st = calloc(1, sizeof(*st));

	if (st != NULL)
		stop_all(pid, &st->ts);
	if (st != NULL && st->ts.n == 0) {
		free(st);
		return NULL;
	}
	return st;
}

/* Would tid's next instruction change (its PC inside [addr, addr+len)
 * where the new bytes differ from those there now)? */
static bool pc_changes(pid_t tid, uint64_t addr, const uint8_t *buf,
		       size_t len)
{
	struct user_regs_struct r;
	uint8_t now[16];
	size_t off, n;

	if (ptrace(PTRACE_GETREGS, tid, 0, &r) != 0)
		return true;
	if (r.rip < addr || r.rip >= addr + len)
		return false;
	off = (size_t)(r.rip - addr);
	n = len - off < sizeof(now) ? len - off : sizeof(now);
	return peek_bytes(tid, r.rip, now, n) != 0 ||
	       memcmp(now, buf + off, n) != 0;
}

/* Is tid's PC strictly inside [addr, addr+len) (past the first byte)? */
static bool pc_inside(pid_t tid, uint64_t addr, size_t len)
{
	struct user_regs_struct r;

	if (ptrace(PTRACE_GETREGS, tid, 0, &r) != 0)
		return true;
	return r.rip > addr && r.rip < addr + len;
}

/* A thread in the way is single-stepped out, as the program's threads
 * are before a patch (at most 64 steps): for program code, one inside
 * the bytes past their first; for code memory, one whose next
 * instruction's bytes change. */
static bool step_out(pid_t tid, uint64_t addr, const uint8_t *buf,
		     size_t len, bool code)
{
	for (int i = 0; i < 64; i++) {
		int st;

		if (code ? !pc_inside(tid, addr, len)
			 : !pc_changes(tid, addr, buf, len))
			return true;
		if (ptrace(PTRACE_SINGLESTEP, tid, 0, 0) != 0 ||
		    waitpid(tid, &st, __WALL) < 0 || !WIFSTOPPED(st))
			return false;
	}
	return false;
}

int eng_fork_patch_write(struct eng_fork_stopped *st, uint64_t addr,
			 const void *buf, size_t len, bool code)
{
	for (size_t i = 0; i < st->ts.n; i++)
		if (!step_out(st->ts.t[i], addr, buf, len, code))
			return -EBUSY;
	return eng_fork_write(st->ts.t[0], addr, buf, len);
}

int eng_fork_patch_peek(struct eng_fork_stopped *st, uint64_t addr,
			void *buf, size_t len)
{
	return peek_bytes(st->ts.t[0], addr, buf, len);
}

long eng_fork_patch_mmap(struct eng_fork_stopped *st, uint64_t addr,
			 size_t len)
{
	uint64_t at = eng_fork_sys_gadget(st->ts.t[0]);
	struct eng_fork_sys s;
	long rc;

	if (at == 0)
		return -ENOEXEC;
	if ((rc = eng_fork_sys_begin_at(&s, st->ts.t[0], at)) < 0)
		return rc;
	rc = eng_fork_sys_call(&s, SYS_mmap, (long)addr, (long)len,
			       PROT_READ | PROT_EXEC,
			       MAP_PRIVATE | MAP_ANONYMOUS |
			       MAP_FIXED_NOREPLACE, -1, 0);
	eng_fork_sys_end(&s);
	return rc;
}

void eng_fork_patch_resume(struct eng_fork_stopped *st)
{
	for (size_t i = 0; st != NULL && i < st->ts.n; i++)
		ptrace(PTRACE_DETACH, st->ts.t[i], 0, 0);
	free(st);
}

int eng_fork_patch_read(pid_t child, struct eng_fork_patch *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (peek_bytes(child, p[i].addr, p[i].cur, p[i].len) != 0)
			return -1;
	return 0;
}

/* The patch is still there: write the program's bytes back. */
static int restore_one(pid_t tid, const struct eng_fork_patch *p)
{
	uint8_t now[32];

	if (peek_bytes(tid, p->addr, now, p->len) != 0)
		return -1;
	if (memcmp(now, p->cur, p->len) != 0)
		return 0;
	return eng_fork_write(tid, p->addr, p->orig, p->len);
}

int eng_fork_patch_restore(pid_t pid, const struct eng_fork_patch *p,
			   size_t n, struct hunch_err *err)
{
	struct tasks *ts = calloc(1, sizeof(*ts));
	size_t bad = 0;
	int rc = 0;

	if (ts == NULL)
		return hunch_err_set(err, -ENOMEM, "out of memory");
	stop_all(pid, ts);
	for (size_t i = 0; ts->n > 0 && i < n; i++)
		if (restore_one(ts->t[0], &p[i]) != 0)
			bad++;
	for (size_t i = 0; i < ts->n; i++)
		ptrace(PTRACE_DETACH, ts->t[i], 0, 0);
	if (ts->n == 0 && kill(pid, 0) == 0)
		rc = hunch_err_set(err, -EPERM,
				   "process %d: could not stop it to "
				   "take its inherited instrumentation out",
				   (int)pid);
	else if (bad > 0 && kill(pid, 0) == 0)
		rc = hunch_err_set(err, -EIO,
				   "process %d: %zu of %zu inherited "
				   "patches could not be restored",
				   (int)pid, bad, n);
	free(ts);
	return rc;
}

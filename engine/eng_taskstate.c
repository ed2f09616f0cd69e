/*
 * eng_taskstate.c - a thread's state from /proc (see eng_taskstate.h).
 */
#include "eng_taskstate.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* eng_metric_sock_name: sockets named as discovery does */
#include "eng_metric_int.h"

/* Read a small /proc file whole; returns its length or -errno. */
static int slurp(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return (int)n;
}

int eng_taskstate_is_io_syscall(long nr)
{
	switch (nr) {
	case SYS_read: case SYS_write: case SYS_pread64: case SYS_pwrite64:
	case SYS_readv: case SYS_writev: case SYS_preadv: case SYS_pwritev:
	case SYS_preadv2: case SYS_pwritev2: case SYS_fsync:
	case SYS_fdatasync: case SYS_sync_file_range: case SYS_sendto:
	case SYS_recvfrom: case SYS_sendmsg: case SYS_recvmsg:
	case SYS_sendfile: case SYS_accept: case SYS_accept4:
	case SYS_connect:
		return 1;
	default:
		return 0;
	}
}

static void stat_path(pid_t pid, pid_t tid, char *path, size_t len)
{
	if (tid > 0)
		snprintf(path, len, "/proc/%d/task/%d/stat", (int)pid,
			 (int)tid);
	else
		snprintf(path, len, "/proc/%d/stat", (int)pid);
}

/* Field k (proc(5)'s number, 3 or more) of a stat line; p points at the
 * space after the command's ')', before field 3.  NULL past the end. */
static const char *stat_field(const char *p, int k)
{
	for (int f = 2; f < k; f++) {
		p = strchr(p, ' ');
		if (p == NULL)
			return NULL;
		p++;
	}
	return p;
}

int eng_taskstate_stat(pid_t pid, pid_t tid, struct eng_taskstat *out)
{
	char path[64], buf[1024];
	const char *p, *f;
	long long cut, cst;
	int rc;

	stat_path(pid, tid, path, sizeof(path));
	if ((rc = slurp(path, buf, sizeof(buf))) < 0)
		return rc;
	/* the command, in parentheses, may hold spaces and ')' */
	if ((p = strrchr(buf, ')')) == NULL || p[1] != ' ')
		return -EINVAL;
	p++;
	memset(out, 0, sizeof(*out));
	out->state = p[1];
	if ((f = stat_field(p, 14)) == NULL ||
	    sscanf(f, "%" SCNu64 " %" SCNu64, &out->utime, &out->stime) != 2)
		return -EINVAL;
	/* cutime and cstime are signed in the kernel's format: never
	 * negative in practice, read as 0 if they were */
	if ((f = stat_field(p, 16)) == NULL ||
	    sscanf(f, "%lld %lld", &cut, &cst) != 2)
		return -EINVAL;
	out->cutime = cut > 0 ? (uint64_t)cut : 0;
	out->cstime = cst > 0 ? (uint64_t)cst : 0;
	out->exit_code = (f = stat_field(p, 52)) != NULL ? atoi(f) : -1;
	return 0;
}

char eng_taskstate_letter(pid_t pid, pid_t tid)
{
	struct eng_taskstat st;
	int rc = eng_taskstate_stat(pid, tid, &st);

	return rc == 0 ? st.state : rc == -EINVAL ? '?' : 0;
}

bool eng_taskstate_dead(pid_t pid, pid_t tid)
{
	char c = eng_taskstate_letter(pid, tid);

	return c == 'Z' || c == 'X';
}

static void read_syscall(pid_t pid, pid_t tid, struct eng_taskstate *st)
{
	char path[64], buf[256], *p, *end;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid,
		 (int)tid);
	if (slurp(path, buf, sizeof(buf)) < 0 || buf[0] < '0' ||
	    buf[0] > '9')
		return;  /* "running", or "-1 SP PC" outside a call */
	st->syscall = strtol(buf, &p, 10);
	for (int i = 0; i < 6; i++) {
		st->args[i] = strtoull(p, &end, 16);
		if (end == p)
			return;
		p = end;
	}
	st->sp = strtoull(p, &end, 16);
	if (end != p)
		st->pc = strtoull(p = end, &end, 16);
	if (end == p)
		st->sp = st->pc = 0;
}

int eng_taskstate_read(pid_t pid, pid_t tid, struct eng_taskstate *out)
{
	char path[64];

	memset(out, 0, sizeof(*out));
	out->tid = tid;
	out->syscall = -1;
	out->state = eng_taskstate_letter(pid, tid);
	if (out->state == 0)
		return -ESRCH;
	if (out->state == 'R') {
		out->wait = ENG_TASK_RUNNING;
		return 0;
	}
	out->wait = ENG_TASK_OTHER;
	if (out->state != 'S' && out->state != 'D')
		return 0;
	read_syscall(pid, tid, out);
	if (out->syscall == SYS_futex)
		out->wait = ENG_TASK_SYNC;
	else if (eng_taskstate_is_io_syscall(out->syscall))
		out->wait = ENG_TASK_IO;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/wchan", (int)pid,
		 (int)tid);
	if (slurp(path, out->wchan, sizeof(out->wchan)) < 0 ||
	    strcmp(out->wchan, "0") == 0)
		out->wchan[0] = '\0';
	return 0;
}

int eng_taskstate_fd_path(pid_t pid, int fd, char *buf, size_t len)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/fd/%d", (int)pid, fd);
	n = readlink(link, buf, len - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	eng_metric_sock_name((int)pid, buf, len); /* "socket:[N]" -> its peer */
	return 0;
}

/*
 * out_forward.c - the forwarder between a launched program and its
 * output, with a copy for the journal (see out_forward.h).
 *
 * The copies travel as frames: one byte for the stream (0 stdout, 1
 * stderr), four for the length, then the bytes.  The forwarder writes a
 * chunk to the terminal before it sends its copy, so once hunch has read
 * the forwarder's EOF everything the program wrote is out, and the
 * report printed after it cannot come before the program's output.
 *
 * When hunch's stdout and stderr are one file (`2>&1`, `&>f`: the same
 * device and inode), the program gets one pipe for both, as it would
 * get that one file without hunch: with two pipes the forwarder could
 * not know in which order the program wrote to them, and the lines
 * would come out in another order than a run without hunch shows.  A
 * user who merged the streams sees them in the order written, and the
 * journal keeps that order; its records are then all `stdout` (which
 * stream a line was written to is lost, as it is in the merged file).
 */
#include "out_forward.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jnl_format.h"
#include "jnl_write.h"

#define FRAME_HDR 5
#define CHUNK 16384
/* Room for copies while hunch is busy (the journal opens after the
 * launch): the forwarder blocks only when this is full. */
#define COPY_PIPE_SIZE (1 << 20)

/* Write it all; false once fd is gone (closed terminal, dead hunch). */
static bool write_all(int fd, const unsigned char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		p += w;
		n -= (size_t)w;
	}
	return true;
}

/* Only its pipes and stdout/stderr: another fd kept open here (hunch's
 * journal, signalfd, ...) would outlive hunch for no reason. */
static void close_others(int keep0, int keep1, int keep2)
{
	long max = sysconf(_SC_OPEN_MAX);

	if (max < 0 || max > 65536)
		max = 65536;
	for (int fd = 3; fd < max; fd++)
		if (fd != keep0 && fd != keep1 && fd != keep2)
			close(fd);
}

/* The forwarder's life: until both pipes reach EOF (every writer, the
 * program and its children, has closed them).  The terminal first, the
 * copy after; a gone terminal or hunch only stops that side. */
static void forward(int in[2], int copy)
{
	unsigned char buf[FRAME_HDR + CHUNK];
	bool out_ok[2] = { true, true };

	for (;;) {
		struct pollfd p[2] = { { in[0], POLLIN, 0 },
				       { in[1], POLLIN, 0 } };

		if (in[0] < 0 && in[1] < 0)
			_exit(0);
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			_exit(1);
		}
		for (int i = 0; i < 2; i++) {
			ssize_t n;
			uint32_t len;

			if (p[i].fd < 0 || !p[i].revents)
				continue;
			n = read(in[i], buf + FRAME_HDR, CHUNK);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				close(in[i]);
				in[i] = -1;
				continue;
			}
			if (out_ok[i])
				out_ok[i] = write_all(1 + i, buf + FRAME_HDR,
						      (size_t)n);
			if (copy < 0)
				continue;
			buf[0] = (unsigned char)i;
			len = (uint32_t)n;
			memcpy(buf + 1, &len, 4);
			if (!write_all(copy, buf, FRAME_HDR + (size_t)n)) {
				close(copy);  /* hunch is gone: drop copies */
				copy = -1;
			}
		}
	}
}

/* Ignore what would end it with hunch: a ^C or hangup to the process
 * group, hunch's death (SIGPIPE on the copies). */
static void forwarder_signals(void)
{
	static const int ign[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT,
				   SIGPIPE, SIGTSTP };
	sigset_t all;

	for (size_t i = 0; i < sizeof(ign) / sizeof(ign[0]); i++)
		signal(ign[i], SIG_IGN);
	sigfillset(&all);
	sigprocmask(SIG_UNBLOCK, &all, NULL);
}

static void close_pair(int p[2])
{
	close(p[0]);
	close(p[1]);
}

/* hunch's stdout and stderr are the same file, pipe or terminal. */
static bool one_output(void)
{
	struct stat a, b;

	return fstat(STDOUT_FILENO, &a) == 0 && fstat(STDERR_FILENO, &b) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* The program's pipes: two, or one for both (pe then -1, -1). */
static int prog_pipes(int po[2], int pe[2], bool merged)
{
	pe[0] = pe[1] = -1;
	if (pipe2(po, O_CLOEXEC) < 0)
		return -1;
	if (!merged && pipe2(pe, O_CLOEXEC) < 0) {
		close_pair(po);
		return -1;
	}
	return 0;
}

static void close_fd(int fd)
{
	if (fd >= 0)
		close(fd);
}

int out_forward_start(struct out_fwd *f)
{
	int po[2], pe[2], pc[2], st;
	pid_t pid;

	memset(f, 0, sizeof(*f));
	f->copy_fd = f->prog_fd[0] = f->prog_fd[1] = -1;
	f->merged = one_output();
	if (prog_pipes(po, pe, f->merged) < 0)
		return -1;
	if (pipe2(pc, O_CLOEXEC) < 0) {
		close_pair(po);
		if (!f->merged)
			close_pair(pe);
		return -1;
	}
	fcntl(pc[1], F_SETPIPE_SZ, COPY_PIPE_SIZE);
	pid = fork();
	if (pid == 0) {
		/* Fork again so that it is nobody's child here: no zombie
		 * for hunch to reap, and hunch's end is not its end. */
		if (fork() != 0)
			_exit(0);
		forwarder_signals();
		close_others(po[0], pe[0], pc[1]);
		/* Nor hunch's stdin: whoever feeds it sees it closed when
		 * hunch and the program are done with it. */
		int null = open("/dev/null", O_RDONLY);
		if (null > 0) {
			dup2(null, 0);
			close(null);
		}
		forward((int[2]){ po[0], pe[0] }, pc[1]);
	}
	close(po[0]);
	close_fd(pe[0]);
	close(pc[1]);
	if (pid < 0 || waitpid(pid, &st, 0) != pid) {
		close(po[1]);
		close_fd(pe[1]);
		close(pc[0]);
		return -1;
	}
	fcntl(pc[0], F_SETFL, O_NONBLOCK);
	f->copy_fd = pc[0];
	f->prog_fd[0] = po[1];
	/* merged: the program's stderr is its stdout's pipe too */
	f->prog_fd[1] = f->merged ? po[1] : pe[1];
	return 0;
}

void out_forward_launched(struct out_fwd *f)
{
	if (f->prog_fd[1] >= 0 && f->prog_fd[1] != f->prog_fd[0])
		close(f->prog_fd[1]);
	if (f->prog_fd[0] >= 0)
		close(f->prog_fd[0]);
	f->prog_fd[0] = f->prog_fd[1] = -1;
}

static void *grow(void *p, size_t *cap, size_t need)
{
	if (need <= *cap)
		return p;
	while (*cap < need)
		*cap = *cap ? *cap * 2 : 4096;
	p = realloc(p, *cap);
	if (p == NULL)
		abort();
	return p;
}

static void emit(struct out_fwd *f, struct jnl_writer *jw, int s, bool eol)
{
	if (jw != NULL)
		jnl_write_output(jw, jnl_write_ts_now(jw), s ? JNL_STDERR
				 : JNL_STDOUT, f->line[s], f->nline[s], eol);
	f->nline[s] = 0;
}

/* One chunk of a stream: a record per line; a line that reaches
 * JNL_OUTPUT_CHUNK goes out with "eol":false, as jnl_write_output would
 * split it, so a program that never writes a newline uses bounded
 * memory. */
static void feed(struct out_fwd *f, struct jnl_writer *jw, int s,
		 const unsigned char *p, size_t n)
{
	while (n > 0) {
		const unsigned char *nl = memchr(p, '\n', n);
		size_t take = nl ? (size_t)(nl - p) : n;

		if (take > JNL_OUTPUT_CHUNK - f->nline[s])
			take = JNL_OUTPUT_CHUNK - f->nline[s];
		f->line[s] = grow(f->line[s], &f->capline[s],
				  f->nline[s] + take + 1);
		memcpy(f->line[s] + f->nline[s], p, take);
		f->nline[s] += take;
		p += take;
		n -= take;
		if (n > 0 && *p == '\n') {
			emit(f, jw, s, true);
			p++;
			n--;
		} else if (f->nline[s] == JNL_OUTPUT_CHUNK) {
			emit(f, jw, s, false);
		}
	}
}

/* The whole frames read so far. */
static void parse(struct out_fwd *f, struct jnl_writer *jw)
{
	size_t at = 0;

	while (f->nin - at >= FRAME_HDR) {
		uint32_t len;

		memcpy(&len, f->in + at + 1, 4);
		if (f->nin - at < FRAME_HDR + len)
			break;
		feed(f, jw, f->in[at] ? 1 : 0, f->in + at + FRAME_HDR, len);
		at += FRAME_HDR + len;
	}
	memmove(f->in, f->in + at, f->nin - at);
	f->nin -= at;
}

void out_forward_pump(struct out_fwd *f, struct jnl_writer *jw)
{
	while (f->copy_fd >= 0) {
		ssize_t n;

		f->in = grow(f->in, &f->capin, f->nin + FRAME_HDR + CHUNK);
		n = read(f->copy_fd, f->in + f->nin, FRAME_HDR + CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return;  /* EAGAIN: nothing more now */
		if (n == 0) {
			/* EOF: the last lines had no newline. */
			close(f->copy_fd);
			f->copy_fd = -1;
			for (int s = 0; s < 2; s++)
				if (f->nline[s] > 0)
					emit(f, jw, s, false);
			return;
		}
		f->nin += (size_t)n;
		parse(f, jw);
	}
}

void out_forward_drain(struct out_fwd *f, struct jnl_writer *jw, int idle_ms)
{
	while (f->copy_fd >= 0) {
		struct pollfd p = { f->copy_fd, POLLIN, 0 };
		int r = poll(&p, 1, idle_ms);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return;
		out_forward_pump(f, jw);
	}
}

void out_forward_close(struct out_fwd *f)
{
	out_forward_launched(f);
	if (f->copy_fd >= 0)
		close(f->copy_fd);
	f->copy_fd = -1;
	free(f->in);
	free(f->line[0]);
	free(f->line[1]);
	f->in = f->line[0] = f->line[1] = NULL;
}

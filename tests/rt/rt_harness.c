/* rt_harness.c - see rt_harness.h. */
#include "rt_harness.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

uint64_t rth_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void fail(const char *what, const struct hunch_err *e)
{
	tap_ok(0, "%s: %s", what, e ? e->msg : strerror(errno));
	exit(tap_done());
}

void rth_init(struct rth *h, const char *prog, double hz, bool named)
{
	struct hunch_err e = { 0 };

	memset(h, 0, sizeof(*h));
	h->prog = prog;
	h->hz = hz;
	h->pid = -1;
	h->to = h->from = -1;
	signal(SIGPIPE, SIG_IGN);
	if (eng_shm_create(0, named, &h->shm, &e) < 0)
		fail("create segment", &e);
	if (eng_sampler_create(h->shm, &h->smp, &e) < 0)
		fail("create sampler", &e);
	if (eng_sampler_set_rate(h->smp, hz, &e) < 0)
		fail("set rate", &e);
}

uint32_t rth_var(struct rth *h, enum eng_var_kind k, uint64_t *handle)
{
	struct hunch_err e = { 0 };
	uint32_t id;

	if (eng_sampler_var_alloc(h->smp, k, &id, handle, &e) < 0)
		fail("allocate a variable", &e);
	return id;
}

static void child(struct rth *h, bool preload, const char *const *args,
		  int in, int out)
{
	const char *argv[32];
	char fdbuf[16];
	int n = 0;

	dup2(in, 0);
	dup2(out, 1);
	if (preload) {
		snprintf(fdbuf, sizeof(fdbuf), "%d", eng_shm_fd(h->shm));
		setenv(HUNCH_ENV_SHM_FD, fdbuf, 1);
		setenv("LD_PRELOAD", getenv("HUNCHRT"), 1);
	}
	argv[n++] = h->prog;
	while (*args != NULL && n < 31)
		argv[n++] = *args++;
	argv[n] = NULL;
	execv(h->prog, (char *const *)argv);
	_exit(127);
}

int rth_launch(struct rth *h, bool preload, const char *const *args)
{
	struct hunch_err e = { 0 };
	int pin[2], pout[2];
	uint64_t t0;

	if (getenv("HUNCHRT") == NULL)
		fail("HUNCHRT is not set (run through meson test)", NULL);
	if (pipe2(pin, O_CLOEXEC) != 0 || pipe2(pout, O_CLOEXEC) != 0)
		fail("pipe", NULL);
	h->pid = fork();
	if (h->pid == 0)
		child(h, preload, args, pin[0], pout[1]);
	close(pin[0]);
	close(pout[1]);
	h->to = pin[1];
	h->from = pout[0];
	eng_sampler_set_pid(h->smp, h->pid);
	h->next_tick = rth_now_ns();
	if (!preload)
		return 0;
	for (t0 = rth_now_ns(); rth_now_ns() - t0 < 5000000000ull;) {
		int rc = eng_shm_check_ready(h->shm, &e);

		if (rc == 0)
			return 0;
		if (rc != -EAGAIN)
			fail("handshake", &e);
		usleep(1000);
	}
	fail("handshake timed out", NULL);
	return -1;
}

static uint64_t cpu_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void rth_tick(struct rth *h)
{
	struct hunch_err e = { 0 };
	uint64_t t0 = rth_now_ns(), c0 = cpu_now_ns(), dt;

	h->tick_start_ns = t0;
	if (eng_sampler_tick(h->smp, &e) < 0)
		fail("tick", &e);
	h->nticks++;
	dt = cpu_now_ns() - c0;
	if (dt > h->max_tick_cpu_ns)
		h->max_tick_cpu_ns = dt;
	dt = rth_now_ns() - t0;
	if (dt > h->max_tick_ns)
		h->max_tick_ns = dt;
	if (h->on_tick != NULL)
		h->on_tick(h, h->ctx);
}

/* Tick if due; return ms until the next tick. */
static int tick_due(struct rth *h)
{
	uint64_t now = rth_now_ns(), period = (uint64_t)(1e9 / h->hz);

	if (now >= h->next_tick) {
		rth_tick(h);
		h->next_tick += period;
		if (h->next_tick < now)   /* fell behind: do not burst */
			h->next_tick = now + period;
		now = rth_now_ns();
	}
	return h->next_tick > now ? (int)((h->next_tick - now) / 1000000) : 0;
}

static int take_line(struct rth *h, const char *prefix, char *out,
		     size_t len)
{
	char *nl;

	while ((nl = memchr(h->buf, '\n', h->blen)) != NULL) {
		size_t l = (size_t)(nl - h->buf);
		int match = strncmp(h->buf, prefix, strlen(prefix)) == 0;

		*nl = '\0';
		if (match && out != NULL)
			snprintf(out, len, "%s", h->buf);
		memmove(h->buf, nl + 1, h->blen - l - 1);
		h->blen -= l + 1;
		if (match)
			return 1;
	}
	return 0;
}

int rth_wait_line(struct rth *h, const char *prefix, char *out, size_t len,
		  int timeout_ms)
{
	uint64_t end = rth_now_ns() + (uint64_t)timeout_ms * 1000000u;

	while (rth_now_ns() < end) {
		struct pollfd p = { .fd = h->from, .events = POLLIN };
		int wait = tick_due(h);

		if (take_line(h, prefix, out, len))
			return 0;
		if (poll(&p, 1, wait) > 0) {
			ssize_t n = read(h->from, h->buf + h->blen,
					 sizeof(h->buf) - 1 - h->blen);

			if (n <= 0)
				return -1;
			h->blen += (size_t)n;
		}
	}
	return -1;
}

int rth_send(struct rth *h, const char *line)
{
	size_t n = strlen(line);

	return write(h->to, line, n) == (ssize_t)n ? 0 : -1;
}

int rth_wait_exit(struct rth *h, int timeout_ms)
{
	uint64_t end = rth_now_ns() + (uint64_t)timeout_ms * 1000000u;

	while (rth_now_ns() < end) {
		int wait = tick_due(h);

		if (waitpid(h->pid, &h->status, WNOHANG) == h->pid) {
			h->reaped = true;
			rth_tick(h);   /* the last exits */
			return 0;
		}
		usleep(wait > 2 ? 2000 : (useconds_t)wait * 1000 + 100);
	}
	return -1;
}

void rth_run(struct rth *h, int ms)
{
	uint64_t end = rth_now_ns() + (uint64_t)ms * 1000000u;

	while (rth_now_ns() < end) {
		uint64_t wait = (uint64_t)tick_due(h), now = rth_now_ns(), left;

		if (now >= end)
			break;
		left = (end - now) / 1000000;
		usleep((useconds_t)((wait < left ? wait : left) * 1000 + 100));
	}
}

int rth_ticks(struct rth *h, uint64_t n, int timeout_ms)
{
	uint64_t end = rth_now_ns() + (uint64_t)timeout_ms * 1000000u;
	uint64_t want = h->nticks + n;

	while (h->nticks < want && rth_now_ns() < end) {
		int wait = tick_due(h);

		if (h->nticks < want)
			usleep((useconds_t)wait * 1000 + 100);
	}
	return h->nticks >= want ? 0 : -1;
}

void rth_fini(struct rth *h)
{
	if (h->pid > 0 && !h->reaped) {
		kill(h->pid, SIGKILL);
		waitpid(h->pid, NULL, 0);
	}
	if (h->to >= 0)
		close(h->to);
	if (h->from >= 0)
		close(h->from);
	eng_sampler_destroy(h->smp);
	eng_shm_destroy(h->shm);
}

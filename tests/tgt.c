/*
 * tgt.c - the tests' launched target (see tgt.h).
 */
#include "tgt.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock_mono.h"

const char *build_path(const char *rel)
{
	static char buf[4096];
	const char *root = getenv("HUNCH_BUILD_ROOT");

	snprintf(buf, sizeof buf, "%s/%s", root ? root : ".", rel);
	return buf;
}

static int launch(struct tgt *t, const char *path, char *const *argv,
		  int in[2], int out[2])
{
	struct eng_launch_opts lo = { 0 };
	struct hunch_err err = { 0 };
	const char *rt = getenv("HUNCHRT");

	if (eng_shm_create(0, false, &t->shm, &err) < 0 ||
	    eng_sampler_create(t->shm, &t->smp, &err) < 0)
		goto fail;
	lo.path = path;
	lo.argv = argv;
	lo.stdin_fd = in[0];
	lo.stdout_fd = out[1];
	lo.stderr_fd = -1;
	lo.rtlib_path = rt ? rt : "rtlib/libhunchrt.so";
	lo.shm = t->shm;
	if (eng_launch(&lo, &t->p, &err) < 0)
		goto fail;
	close(in[0]);
	close(out[1]);
	t->to = in[1];
	t->from = out[0];
	if (t->from >= 0)
		fcntl(t->from, F_SETFL, O_NONBLOCK);
	eng_sampler_set_pid(t->smp, eng_proc_pid(t->p));
	if (eng_inst_create(t->p, t->shm, &t->in, &err) < 0)
		goto fail;
	if (eng_image_open(path, &t->img, &err) < 0)
		goto fail;
	t->base = eng_solib_module(t->p, 0)->bias +
		  eng_image_link_base(t->img);
	return 0;
fail:
	fprintf(stderr, "# launch %s: %s\n", path, err.msg);
	return -1;
}

int tgt_launch(struct tgt *t, const char *path, char *const *argv)
{
	int in[2], out[2];

	memset(t, 0, sizeof *t);
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0)
		return -1;
	return launch(t, path, argv, in, out);
}

int tgt_launch_fds(struct tgt *t, const char *path, char *const *argv,
		   int in_fd, int out_fd)
{
	int in[2] = { in_fd, -1 }, out[2] = { -1, out_fd };

	memset(t, 0, sizeof *t);
	return launch(t, path, argv, in, out);
}

static void read_out(struct tgt *t)
{
	ssize_t n;

	while (t->from >= 0 && t->outlen < sizeof t->out - 1 &&
	       (n = read(t->from, t->out + t->outlen,
			 sizeof t->out - 1 - t->outlen)) > 0)
		t->outlen += (size_t)n;
	t->out[t->outlen] = 0;
}

#define MAX_LIBEV 32

/* Keep a library event for tgt_wait_lib (the oldest go when full). */
static void keep_lib_event(struct tgt *t, const struct eng_event *ev)
{
	if (t->libev == NULL &&
	    (t->libev = calloc(MAX_LIBEV, sizeof *t->libev)) == NULL)
		return;
	if (t->nlibev == MAX_LIBEV) {
		memmove(t->libev, t->libev + 1,
			(MAX_LIBEV - 1) * sizeof *t->libev);
		t->nlibev--;
	}
	t->libev[t->nlibev++] = *ev;
}

static int take_lib_event(struct tgt *t, enum eng_event_kind kind,
			  const char *lib, struct eng_event *out)
{
	for (size_t i = 0; i < t->nlibev; i++) {
		if (t->libev[i].kind != kind ||
		    strstr(t->libev[i].path, lib) == NULL)
			continue;
		if (out != NULL)
			*out = t->libev[i];
		memmove(t->libev + i, t->libev + i + 1,
			(t->nlibev - i - 1) * sizeof *t->libev);
		t->nlibev--;
		return 0;
	}
	return -1;
}

/* Are all threads of pid in state S?  (false if unreadable) */
static bool all_asleep(pid_t pid)
{
	char path[64], buf[512], *s;
	struct dirent *d;
	DIR *dir;
	int n = 0, asleep = 0;

	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	if ((dir = opendir(path)) == NULL)
		return false;
	while ((d = readdir(dir)) != NULL) {
		FILE *f;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "/proc/%d/task/%.16s/stat",
			 (int)pid, d->d_name);
		if ((f = fopen(path, "re")) == NULL)
			continue;
		n++;
		if (fgets(buf, sizeof buf, f) != NULL &&
		    (s = strrchr(buf, ')')) != NULL && s[1] == ' ' &&
		    s[2] == 'S')
			asleep++;
		fclose(f);
	}
	closedir(dir);
	return n > 0 && asleep == n;
}

int tgt_wait_asleep(struct tgt *t, int ms)
{
	uint64_t end = clock_mono_ms() + (uint64_t)ms;

	while (!t->ended && !all_asleep(eng_proc_pid(t->p))) {
		if (clock_mono_ms() >= end)
			return -1;
		tgt_pump(t, 0);
	}
	tgt_pump(t, 0);
	return t->ended ? -1 : 0;
}

int tgt_wait_lib(struct tgt *t, enum eng_event_kind kind, const char *lib,
		 struct eng_event *out, int ms)
{
	uint64_t end = clock_mono_ms() + (uint64_t)ms;

	for (;;) {
		if (take_lib_event(t, kind, lib, out) == 0)
			return 0;
		if (t->ended || clock_mono_ms() >= end)
			return -1;
		tgt_pump(t, 0);
	}
}

void tgt_take_events(struct tgt *t, const struct eng_event *ev, int n)
{
	for (int i = 0; i < n; i++) {
		if (ev[i].kind == ENG_EV_EXITED) {
			t->ended = true;
			t->status = ev[i].status;
		} else if (ev[i].kind == ENG_EV_KILLED) {
			t->ended = true;
			t->status = -ev[i].signo;
		} else if (ev[i].kind == ENG_EV_LIB_LOAD ||
			   ev[i].kind == ENG_EV_LIB_UNLOAD) {
			keep_lib_event(t, &ev[i]);
		}
	}
}

void tgt_pump(struct tgt *t, int ms)
{
	uint64_t end = clock_mono_ms() + (uint64_t)ms;
	struct eng_event ev[16];

	do {
		int n = t->ended ? 0 : eng_ptrace_poll_events(t->p, ev, 16, 5);

		tgt_take_events(t, ev, n);
		if (t->ended || n < 0)
			usleep(2000);
		read_out(t);
		eng_sampler_tick(t->smp, NULL);
	} while (clock_mono_ms() < end);
}

int tgt_wait_line(struct tgt *t, const char *line, int ms)
{
	uint64_t end = clock_mono_ms() + (uint64_t)ms;
	size_t ll = strlen(line);

	while (clock_mono_ms() < end) {
		const char *p = t->out;

		tgt_pump(t, 0);
		while ((p = strstr(p, line)) != NULL) {
			if ((p == t->out || p[-1] == '\n') && p[ll] == '\n')
				return 0;
			p++;
		}
		if (t->ended)
			return -1;
	}
	return -1;
}

int tgt_send(struct tgt *t, const char *s)
{
	return write(t->to, s, strlen(s)) == (ssize_t)strlen(s) ? 0 : -1;
}

int tgt_wait_exit(struct tgt *t, int ms)
{
	uint64_t end = clock_mono_ms() + (uint64_t)ms;

	while (!t->ended && clock_mono_ms() < end)
		tgt_pump(t, 0);
	tgt_pump(t, 10);
	return t->ended ? 0 : -1;
}

void tgt_close(struct tgt *t)
{
	if (t->p != NULL && !eng_proc_ended(t->p))
		eng_detach_kill(t->p);
	eng_inst_destroy(t->in);
	if (t->p != NULL)
		eng_proc_free(t->p);
	eng_sampler_destroy(t->smp);
	eng_shm_destroy(t->shm);
	eng_image_close(t->img);
	for (size_t i = 0; i < t->nlib; i++) {
		eng_image_close(t->libimg[i]);
	}
	if (t->to > 0)
		close(t->to);
	if (t->from > 0)
		close(t->from);
	t->to = t->from = -1;
	free(t->libev);
	memset(t, 0, sizeof *t);
}

size_t tgt_code_mismatches(struct tgt *t)
{
	size_t nf = eng_image_nfuncs(t->img), bad = 0;

	for (size_t i = 0; i < nf; i++) {
		const struct eng_func *f = eng_image_func(t->img, i);
		uint8_t a[4096], b[4096];
		size_t len = f->size < sizeof a ? f->size : sizeof a;

		if (len == 0 || eng_image_read(t->img, f->addr, a, len) < 0)
			continue;
		if (eng_mem_read(t->p, t->base + f->addr, b, len, NULL) < 0 ||
		    memcmp(a, b, len) != 0) {
			fprintf(stderr, "# code of %s differs from the file\n",
				f->name);
			bad++;
		}
	}
	return bad;
}

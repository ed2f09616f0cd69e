/*
 * mt_util.c - see mt_util.h.
 */
#include "mt_util.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int mt_launch(struct mt *t, const char *path)
{
	struct eng_launch_opts lo = { 0 };
	struct hunch_err err = { 0 };
	const char *rt = getenv("HUNCHRT");
	char *argv[] = { (char *)path, NULL };
	int in[2], out[2];

	memset(t, 0, sizeof *t);
	t->to = t->from = -1;
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0)
		return -1;
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
	fcntl(t->from, F_SETFL, O_NONBLOCK);
	eng_sampler_set_pid(t->smp, eng_proc_pid(t->p));
	if (eng_inst_create(t->p, t->shm, &t->in, &err) < 0 ||
	    eng_metric_create(t->p, t->in, t->smp, NULL, &t->m, &err) < 0 ||
	    eng_image_open(path, &t->img, &err) < 0)
		goto fail;
	t->base = eng_proc_module(t->p, 0)->bias + eng_image_link_base(t->img);
	eng_sampler_tick(t->smp, NULL);
	return 0;
fail:
	printf("# launch %s: %s\n", path, err.msg);
	return -1;
}

static void read_out(struct mt *t)
{
	ssize_t n;

	while (t->from >= 0 && t->outlen < sizeof t->out - 1 &&
	       (n = read(t->from, t->out + t->outlen,
			 sizeof t->out - 1 - t->outlen)) > 0)
		t->outlen += (size_t)n;
	t->out[t->outlen] = 0;
}

void mt_pump(struct mt *t, int ms)
{
	uint64_t end = ms_now() + (uint64_t)ms;
	struct eng_event ev[16];

	do {
		int n = t->ended ? 0 : eng_poll_events(t->p, ev, 16, 5);

		for (int i = 0; i < n; i++) {
			if (ev[i].kind == ENG_EV_EXITED) {
				t->ended = true;
				t->status = ev[i].status;
			} else if (ev[i].kind == ENG_EV_KILLED) {
				t->ended = true;
				t->status = -ev[i].signo;
			}
		}
		if (t->ended || n < 0)
			usleep(2000);
		read_out(t);
		eng_sampler_tick(t->smp, NULL);
	} while (ms_now() < end);
}

static bool has_line(const struct mt *t, const char *line)
{
	size_t ll = strlen(line);

	for (const char *p = t->out; (p = strstr(p, line)) != NULL; p++)
		if ((p == t->out || p[-1] == '\n') && p[ll] == '\n')
			return true;
	return false;
}

int mt_start(struct mt *t, const char *cmd)
{
	/* Each phase's answer is new output: forget the old. */
	t->outlen = 0;
	t->out[0] = 0;
	/* Launched stopped at main, and commits keep a stopped program
	 * stopped. */
	if (eng_proc_stopped(t->p) && eng_resume_all(t->p, NULL) < 0)
		return -1;
	return dprintf(t->to, "%s\n", cmd) < 0 ? -1 : 0;
}

int mt_wait(struct mt *t, const char *line, int ms)
{
	uint64_t end = ms_now() + (uint64_t)ms;

	while (ms_now() < end && !t->ended) {
		mt_pump(t, 0);
		if (has_line(t, line)) {
			mt_pump(t, 20);
			return 0;
		}
	}
	printf("# no line \"%s\" (output so far: %s)\n", line, t->out);
	return -1;
}

int mt_phase(struct mt *t, const char *cmd, int ms)
{
	char want[80];

	snprintf(want, sizeof want, "ok %s", cmd);
	return mt_start(t, cmd) < 0 ? -1 : mt_wait(t, want, ms);
}

const char *mt_line(const struct mt *t, const char *prefix)
{
	size_t pl = strlen(prefix);

	for (const char *p = t->out; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (strncmp(p, prefix, pl) == 0)
			return p;
	return NULL;
}

int mt_quit(struct mt *t)
{
	uint64_t end = ms_now() + 10000;

	if (eng_proc_stopped(t->p))
		eng_resume_all(t->p, NULL);
	dprintf(t->to, "quit\n");
	while (!t->ended && ms_now() < end)
		mt_pump(t, 0);
	return t->ended && t->status == 0 ? 0 : -1;
}

void mt_fini(struct mt *t)
{
	eng_metric_destroy(t->m);
	if (t->p != NULL && !eng_proc_ended(t->p))
		eng_kill(t->p);
	eng_inst_destroy(t->in);
	if (t->p != NULL)
		eng_proc_free(t->p);
	eng_sampler_destroy(t->smp);
	eng_shm_destroy(t->shm);
	eng_image_close(t->img);
	if (t->to >= 0)
		close(t->to);
	if (t->from >= 0)
		close(t->from);
	memset(t, 0, sizeof *t);
}

size_t mt_code_mismatches(struct mt *t)
{
	size_t nf = eng_image_nfuncs(t->img), bad = 0;

	for (size_t i = 0; i < nf; i++) {
		const struct eng_func *f = eng_image_func(t->img, i);
		uint8_t a[4096], b[4096];
		size_t len = f->size < sizeof a ? f->size : sizeof a;

		if (len == 0 || eng_image_read(t->img, f->addr, a, len) < 0)
			continue;
		if (eng_read_mem(t->p, t->base + f->addr, b, len, NULL) < 0 ||
		    memcmp(a, b, len) != 0) {
			printf("# code of %s differs from the file\n", f->name);
			bad++;
		}
	}
	return bad;
}

uint64_t mt_data(struct mt *t, const char *name)
{
	for (size_t i = 0; i < eng_image_ndata(t->img); i++) {
		const struct eng_datasym *d = eng_image_data(t->img, i);

		if (strcmp(d->name, name) == 0)
			return t->base + d->addr;
	}
	return 0;
}

int64_t mt_value(struct mt *t, struct eng_minst *mi)
{
	int64_t v = -1;

	eng_sampler_tick(t->smp, NULL);
	eng_metric_value(t->m, mi, &v);
	return v;
}

size_t mt_lib_mismatches(struct mt *t, const char *lib,
			 const char *const *names, size_t n)
{
	size_t bad = 0, nm = eng_proc_nmodules(t->p);

	for (size_t i = 0; i < nm; i++) {
		const struct eng_module *m = eng_proc_module(t->p, i);
		const char *b = strrchr(m->path, '/');
		struct eng_image *img;
		uint64_t base;

		if (strcmp(b ? b + 1 : m->path, lib) != 0 ||
		    eng_image_open(m->path, &img, NULL) < 0)
			continue;
		base = m->bias + eng_image_link_base(img);
		for (size_t k = 0; k < n; k++) {
			const struct eng_func *f =
				eng_image_func_by_name(img, names[k]);
			uint8_t a[4096], c[4096];
			size_t len;

			if (f == NULL)
				continue;
			len = f->size < sizeof a ? f->size : sizeof a;
			if (eng_image_read(img, f->addr, a, len) < 0 ||
			    eng_read_mem(t->p, base + f->addr, c, len, NULL) < 0 ||
			    memcmp(a, c, len) != 0) {
				printf("# code of %s in %s differs\n", names[k],
				       lib);
				bad++;
			}
		}
		eng_image_close(img);
	}
	return bad;
}

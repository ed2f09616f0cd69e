/*
 * inst_util.c - see inst_util.h.
 */
#include "inst_util.h"

#include <capstone/capstone.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char *build_path(const char *rel)
{
	static char buf[4096];
	const char *root = getenv("HUNCH_BUILD_ROOT");

	snprintf(buf, sizeof buf, "%s/%s", root ? root : ".", rel);
	return buf;
}

static uint64_t ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
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
	t->base = eng_proc_module(t->p, 0)->bias +
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
	uint64_t end = ms_now() + (uint64_t)ms;

	while (!t->ended && !all_asleep(eng_proc_pid(t->p))) {
		if (ms_now() >= end)
			return -1;
		tgt_pump(t, 0);
	}
	tgt_pump(t, 0);
	return t->ended ? -1 : 0;
}

int tgt_wait_lib(struct tgt *t, enum eng_event_kind kind, const char *lib,
		 struct eng_event *out, int ms)
{
	uint64_t end = ms_now() + (uint64_t)ms;

	for (;;) {
		if (take_lib_event(t, kind, lib, out) == 0)
			return 0;
		if (t->ended || ms_now() >= end)
			return -1;
		tgt_pump(t, 0);
	}
}

void tgt_pump(struct tgt *t, int ms)
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
			} else if (ev[i].kind == ENG_EV_LIB_LOAD ||
				   ev[i].kind == ENG_EV_LIB_UNLOAD) {
				keep_lib_event(t, &ev[i]);
			}
		}
		if (t->ended || n < 0)
			usleep(2000);
		read_out(t);
		eng_sampler_tick(t->smp, NULL);
	} while (ms_now() < end);
}

int tgt_wait_line(struct tgt *t, const char *line, int ms)
{
	uint64_t end = ms_now() + (uint64_t)ms;
	size_t ll = strlen(line);

	while (ms_now() < end) {
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
	uint64_t end = ms_now() + (uint64_t)ms;

	while (!t->ended && ms_now() < end)
		tgt_pump(t, 0);
	tgt_pump(t, 10);
	return t->ended ? 0 : -1;
}

void tgt_fini(struct tgt *t)
{
	if (t->p != NULL && !eng_proc_ended(t->p))
		eng_kill(t->p);
	eng_inst_destroy(t->in);
	if (t->p != NULL)
		eng_proc_free(t->p);
	eng_sampler_destroy(t->smp);
	eng_shm_destroy(t->shm);
	su_forget(t->img);
	eng_image_close(t->img);
	for (size_t i = 0; i < t->nlib; i++) {
		su_forget(t->libimg[i]);
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

static int add_point(struct tgt *t, struct fn_ctr *c,
		     const struct x86_point *xp, enum inst_mode mode)
{
	bool entry = xp->kind == X86_PT_ENTRY;
	struct x86_snip s = { .kind = X86_SN_ADD, .delta = 1 };
	struct eng_inst_point pt;
	struct hunch_err err = { 0 };

	if (xp->kind == X86_PT_CALL && !(t->count_calls && mode == IM_COUNTERS))
		return 0;
	if (!xp->ok)
		c->trap_why = x86_refusal_str(xp->why); /* relocated, or a trap */
	if (c->nreq == 16)
		return 0;
	if (mode == IM_BOTH)
		return add_point(t, c, xp, IM_COUNTERS) +
		       add_point(t, c, xp, IM_WALL);
	switch (mode) {
	case IM_BOTH:
	case IM_COUNTERS:
		s.handle = entry ? c->entry_h : c->exit_h;
		if (xp->kind == X86_PT_CALL)
			s.handle = c->call_h;
		break;
	case IM_WALL:
		s.kind = entry ? X86_SN_WALL_START : X86_SN_WALL_STOP;
		s.handle = c->wall_h;
		break;
	case IM_CPU:
		s.kind = entry ? X86_SN_CPU_START : X86_SN_CPU_STOP;
		s.handle = c->cpu_h;
		break;
	}
	eng_inst_point_from(xp, c->base, &pt);
	c->req_kind[c->nreq] = (uint8_t)xp->kind;
	if (eng_inst_add(t->in, &pt, &s, 1, false, &c->req[c->nreq], &err) < 0) {
		c->why = "add failed";
		fprintf(stderr, "# %s: %s\n", c->f->name, err.msg);
		return 0;
	}
	c->nreq++;
	return 1;
}

static void alloc_vars(struct tgt *t, struct fn_ctr *cc);

struct fn_ctr *fns_prepare(struct tgt *t, const char *prefix, size_t *nout)
{
	size_t nf = eng_image_nfuncs(t->img), n = 0;
	struct fn_ctr *c = calloc(nf + 1, sizeof *c);

	for (size_t i = 0; i < nf; i++) {
		const struct eng_func *f = eng_image_func(t->img, i);
		struct fn_ctr *cc = &c[n];

		if (prefix && strncmp(f->name, prefix, strlen(prefix)) != 0)
			continue;
		cc->f = f;
		cc->img = t->img;
		cc->base = t->base;
		n++;
		alloc_vars(t, cc);
		su_parse(t->img, f, &cc->xf);
		if (cc->xf.npoints == 0)     /* else the engine chooses how */
			cc->why = x86_refusal_str(cc->xf.why);
	}
	*nout = n;
	return c;
}

static void alloc_vars(struct tgt *t, struct fn_ctr *cc)
{
	eng_sampler_var_alloc(t->smp, ENG_VAR_COUNTER, &cc->call_var,
			      &cc->call_h, NULL);
	eng_sampler_var_alloc(t->smp, ENG_VAR_COUNTER, &cc->entry_var,
			      &cc->entry_h, NULL);
	eng_sampler_var_alloc(t->smp, ENG_VAR_COUNTER, &cc->exit_var,
			      &cc->exit_h, NULL);
	eng_sampler_var_alloc(t->smp, ENG_VAR_WALL_TIMER, &cc->wall_var,
			      &cc->wall_h, NULL);
	eng_sampler_var_alloc(t->smp, ENG_VAR_CPU_TIMER, &cc->cpu_var,
			      &cc->cpu_h, NULL);
}

struct fn_ctr *fns_prepare_lib(struct tgt *t, const char *lib,
			       const char *const *names, size_t *nout)
{
	size_t nm = 0, n = 0, nmod = eng_proc_nmodules(t->p);
	struct fn_ctr *c;
	struct eng_image *img = NULL;
	uint64_t base = 0;

	while (names[nm] != NULL)
		nm++;
	c = calloc(nm + 1, sizeof *c);
	*nout = 0;
	for (size_t i = 0; i < nmod && img == NULL && t->nlib < 8; i++) {
		const struct eng_module *m = eng_proc_module(t->p, i);
		const char *b = strrchr(m->path, '/');

		if (strncmp(b ? b + 1 : m->path, lib, strlen(lib)) != 0 ||
		    eng_image_open(m->path, &img, NULL) < 0)
			continue;
		t->libimg[t->nlib++] = img;
		base = m->bias + eng_image_link_base(img);
	}
	for (size_t k = 0; img != NULL && k < nm; k++) {
		const struct eng_func *f = eng_image_func_by_name(img, names[k]);
		struct fn_ctr *cc = &c[n];

		if (f == NULL)
			continue;
		cc->f = f;
		cc->img = img;
		cc->base = base;
		alloc_vars(t, cc);
		su_parse(img, f, &cc->xf);
		if (cc->xf.npoints == 0)
			cc->why = x86_refusal_str(cc->xf.why);
		n++;
	}
	*nout = n;
	return c;
}

int fns_instrument(struct tgt *t, struct fn_ctr *c, size_t n,
		   enum inst_mode mode)
{
	struct hunch_err err = { 0 };
	int npts = 0, failed;

	for (size_t i = 0; i < n; i++) {
		struct fn_ctr *cc = &c[i];

		cc->nreq = cc->nentry = cc->nexit = cc->nrefused = 0;
		cc->ncall = 0;
		for (size_t k = 0; k < cc->xf.npoints; k++) {
			int a = add_point(t, cc, &cc->xf.points[k], mode);

			npts += a;
			if (cc->xf.points[k].kind == X86_PT_ENTRY)
				cc->nentry += (size_t)a;
			else if (cc->xf.points[k].kind == X86_PT_EXIT)
				cc->nexit += (size_t)a;
			else
				cc->ncall += (size_t)a;
		}
	}
	failed = eng_inst_commit(t->in, &err);
	if (failed < 0) {
		fprintf(stderr, "# commit: %s\n", err.msg);
		return failed;
	}
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < c[i].nreq; k++) {
			enum eng_refusal why;

			if (eng_inst_state(t->in, c[i].req[k], &why) ==
			    ENG_REQ_FAILED) {
				c[i].why = why ? eng_refusal_str(why) : "";
				c[i].nrefused++;
				if (c[i].req_kind[k] == X86_PT_ENTRY)
					c[i].nentry--;
				else if (c[i].req_kind[k] == X86_PT_EXIT)
					c[i].nexit--;
				else
					c[i].ncall--;
				npts--;
			}
		}
	return npts;
}

int fns_remove(struct tgt *t, struct fn_ctr *c, size_t n)
{
	struct hunch_err err = { 0 };
	int rc;

	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < c[i].nreq; k++)
			eng_inst_remove(t->in, c[i].req[k]);
		c[i].nreq = 0;
	}
	rc = eng_inst_commit(t->in, &err);
	if (rc < 0)
		fprintf(stderr, "# commit: %s\n", err.msg);
	return rc;
}

void fns_free(struct fn_ctr *c, size_t n)
{
	for (size_t i = 0; c != NULL && i < n; i++)
		su_free(&c[i].xf);
	free(c);
}

int instrument_counters(struct tgt *t, const char *prefix, struct fn_ctr **out,
			size_t *nout)
{
	*out = fns_prepare(t, prefix, nout);
	return fns_instrument(t, *out, *nout, IM_COUNTERS);
}

int add_timer(struct tgt *t, const struct x86_func *xf, uint64_t h,
		     bool cpu)
{
	struct hunch_err err = { 0 };
	int n = 0;

	for (size_t k = 0; k < xf->npoints; k++) {
		struct x86_snip s = { .handle = h };
		struct eng_inst_point pt;
		uint32_t id;

		if (xf->points[k].kind == X86_PT_CALL)
			continue;
		if (xf->points[k].kind == X86_PT_ENTRY)
			s.kind = cpu ? X86_SN_CPU_START : X86_SN_WALL_START;
		else
			s.kind = cpu ? X86_SN_CPU_STOP : X86_SN_WALL_STOP;
		eng_inst_point_from(&xf->points[k], t->base, &pt);
		if (eng_inst_add(t->in, &pt, &s, 1, false, &id, &err) == 0)
			n++;
		else
			fprintf(stderr, "# add: %s\n", err.msg);
	}
	return n;
}


size_t code_mismatches(struct tgt *t)
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
			fprintf(stderr, "# code of %s differs from the file\n",
				f->name);
			bad++;
		}
	}
	return bad;
}

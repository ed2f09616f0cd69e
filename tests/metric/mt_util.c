/*
 * mt_util.c - see mt_util.h.
 */
#include "mt_util.h"
#include "clock_mono.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int mt_launch(struct mt *t, const char *path)
{
	struct hunch_err err = { 0 };
	char *argv[] = { (char *)path, NULL };

	memset(t, 0, sizeof *t);
	if (tgt_launch(&t->tg, path, argv) < 0)
		return -1;
	if (eng_metric_create(t->tg.p, t->tg.in, t->tg.smp, NULL, &t->m,
			      &err) < 0) {
		printf("# launch %s: %s\n", path, err.msg);
		return -1;
	}
	eng_sampler_tick(t->tg.smp, NULL);
	return 0;
}

void mt_pump(struct mt *t, int ms)
{
	tgt_pump(&t->tg, ms);
}

int mt_start(struct mt *t, const char *cmd)
{
	/* Each phase's answer is new output: forget the old. */
	t->tg.outlen = 0;
	t->tg.out[0] = 0;
	/* Launched stopped at main, and commits keep a stopped program
	 * stopped. */
	if (eng_proc_stopped(t->tg.p) &&
	    eng_ptrace_resume_all(t->tg.p, NULL) < 0)
		return -1;
	return dprintf(t->tg.to, "%s\n", cmd) < 0 ? -1 : 0;
}

int mt_wait(struct mt *t, const char *line, int ms)
{
	if (tgt_wait_line(&t->tg, line, ms) == 0) {
		tgt_pump(&t->tg, 20);
		return 0;
	}
	printf("# no line \"%s\" (output so far: %s)\n", line, t->tg.out);
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

	for (const char *p = t->tg.out; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (strncmp(p, prefix, pl) == 0)
			return p;
	return NULL;
}

int mt_quit(struct mt *t)
{
	uint64_t end = clock_mono_ms() + 10000;

	if (eng_proc_stopped(t->tg.p))
		eng_ptrace_resume_all(t->tg.p, NULL);
	dprintf(t->tg.to, "quit\n");
	while (!t->tg.ended && clock_mono_ms() < end)
		mt_pump(t, 0);
	return t->tg.ended && t->tg.status == 0 ? 0 : -1;
}

void mt_fini(struct mt *t)
{
	eng_metric_destroy(t->m);
	t->m = NULL;
	tgt_close(&t->tg);
}

size_t mt_code_mismatches(struct mt *t)
{
	return tgt_code_mismatches(&t->tg);
}

uint64_t mt_data(struct mt *t, const char *name)
{
	for (size_t i = 0; i < eng_image_ndata(t->tg.img); i++) {
		const struct eng_datasym *d = eng_image_data(t->tg.img, i);

		if (strcmp(d->name, name) == 0)
			return t->tg.base + d->addr;
	}
	return 0;
}

int64_t mt_value(struct mt *t, struct eng_minst *mi)
{
	int64_t v = -1;

	eng_sampler_tick(t->tg.smp, NULL);
	eng_metric_value(t->m, mi, &v);
	return v;
}

size_t mt_lib_mismatches(struct mt *t, const char *lib,
			 const char *const *names, size_t n)
{
	size_t bad = 0, nm = eng_solib_nmodules(t->tg.p);

	for (size_t i = 0; i < nm; i++) {
		const struct eng_module *m = eng_solib_module(t->tg.p, i);
		const char *b = strrchr(m->path, '/');
		struct eng_image *img;
		uint64_t base;

		if (strcmp(b ? b + 1 : m->path, lib) != 0 ||
		    eng_image_open(m->path, &img, NULL) < 0)
			continue;
		base = m->bias + eng_image_link_base(img);
		for (size_t k = 0; k < n; k++) {
			const struct eng_func *f =
				eng_sym_lazy_func_by_name(img, names[k]);
			uint8_t a[4096], c[4096];
			size_t len;

			if (f == NULL)
				continue;
			len = f->size < sizeof a ? f->size : sizeof a;
			if (eng_image_read(img, f->addr, a, len) < 0 ||
			    eng_mem_read(t->tg.p, base + f->addr, c, len, NULL) < 0 ||
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

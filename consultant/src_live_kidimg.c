/*
 * src_live_kidimg.c - a child's own images, from its /proc/PID/maps
 * (see src_live_kidimg.h).
 */
#include "src_live_kidimg.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eng_image.h"
#include "eng_maps.h"
#include "src_live_cg.h"
#include "xmalloc.h"
#include "clock_mono.h"

#define SRC_LIVE_KIDIMG_REREAD_S 0.1   /* a miss re-reads the maps at most this often */

struct file {                 /* one ELF file, shared by the children */
	char *path;
	struct eng_image *img;   /* NULL: not opened yet, or unreadable */
	bool tried;
	bool reported;           /* its functions are in /Code (or known) */
	bool own;                /* reported here: not one of the program's */
};

struct range {
	uint64_t lo, hi;   /* the file's mappings, lowest to highest */
	uint64_t base;     /* runtime address of image-relative 0 */
	size_t file;       /* index in slki.files */
};

struct src_live_kidimg_proc {
	struct src_live_kidimg *k;
	pid_t pid;
	struct range *r;
	size_t nr;
	double read_t;     /* CLOCK_MONOTONIC s of the last reading */
};

struct src_live_kidimg {
	struct file *files;
	size_t nfiles;
	struct src_live_kidimg_proc **procs;
	size_t nprocs;
};

struct src_live_kidimg *src_live_kidimg_new(void)
{
	struct src_live_kidimg *k = calloc(1, sizeof(*k));

	if (k == NULL)
		abort();
	return k;
}

void src_live_kidimg_free(struct src_live_kidimg *k)
{
	if (k == NULL)
		return;
	for (size_t i = 0; i < k->nfiles; i++) {
		eng_image_close(k->files[i].img);
		free(k->files[i].path);
	}
	for (size_t i = 0; i < k->nprocs; i++) {
		free(k->procs[i]->r);
		free(k->procs[i]);
	}
	free(k->files);
	free(k->procs);
	free(k);
}

struct src_live_kidimg_proc *src_live_kidimg_proc(struct src_live_kidimg *k, pid_t pid)
{
	struct src_live_kidimg_proc *p;

	for (size_t i = 0; i < k->nprocs; i++)
		if (k->procs[i]->pid == pid)
			return k->procs[i];
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return NULL;
	p->k = k;
	p->pid = pid;
	k->procs = xrealloc(k->procs, (k->nprocs + 1) * sizeof(*k->procs));
	k->procs[k->nprocs++] = p;
	return p;
}

static size_t file_of(struct src_live_kidimg *k, const char *path)
{
	for (size_t i = 0; i < k->nfiles; i++)
		if (strcmp(k->files[i].path, path) == 0)
			return i;
	k->files = xrealloc(k->files, (k->nfiles + 1) * sizeof(*k->files));
	k->files[k->nfiles] = (struct file){ .path = strdup(path) };
	if (k->files[k->nfiles].path == NULL)
		abort();
	return k->nfiles++;
}

/* The mapping of file offset 0 of a shared object or PIE is its load
 * address (the first PT_LOAD has offset and vaddr 0, as ld lays them
 * out); a non-PIE executable is loaded where it was linked. */
static void read_maps(struct src_live_kidimg_proc *p)
{
	struct eng_maps_line l;
	struct range *r = NULL;
	struct eng_maps m;
	size_t nr = 0;

	p->read_t = clock_mono_s();
	if (eng_maps_open(&m, p->pid) < 0)
		return;
	while (eng_maps_next(&m, &l)) {
		size_t fi;

		if (l.path[0] != '/')
			continue;
		fi = file_of(p->k, l.path);
		if (nr > 0 && r[nr - 1].file == fi && r[nr - 1].hi == l.lo) {
			r[nr - 1].hi = l.hi;   /* the next segment of the file */
			continue;
		}
		if (l.off != 0)
			continue;   /* a segment whose load address is unknown */
		r = xrealloc(r, (nr + 1) * sizeof(*r));
		r[nr++] = (struct range){ l.lo, l.hi, l.lo, fi };
	}
	eng_maps_close(&m);
	free(p->r);
	p->r = r;
	p->nr = nr;
}

static struct eng_image *image(struct src_live_kidimg *k, struct range *r,
			       uint64_t *base)
{
	struct file *fl = &k->files[r->file];

	if (!fl->tried) {
		fl->tried = true;
		if (eng_image_open(fl->path, &fl->img, NULL) < 0)
			fl->img = NULL;
	}
	if (fl->img == NULL)
		return NULL;
	/* non-PIE: linked at its load address, so relative 0 is at 0 +
	 * the link base */
	*base = eng_image_is_pie(fl->img) ? r->base :
		eng_image_link_base(fl->img);
	return fl->img;
}

struct eng_image *src_live_kidimg_image_at(void *arg, uint64_t addr, uint64_t *base)
{
	struct src_live_kidimg_proc *p = arg;

	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < p->nr; i++)
			if (addr >= p->r[i].lo && addr < p->r[i].hi)
				return image(p->k, &p->r[i], base);
		if (pass > 0 || clock_mono_s() - p->read_t < SRC_LIVE_KIDIMG_REREAD_S)
			break;
		read_maps(p);   /* a library loaded since (dlopen) */
	}
	return NULL;
}

static const char *base_of(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	return slash ? slash + 1 : path;
}

/* The where axis learns a child's own program: without its functions
 * the /Code refinement of a rank offered only the launcher's. */
void src_live_kidimg_report(struct src_live_kidimg_proc *p, src_live_kidimg_known_fn known, void *karg,
		 src_live_kidimg_emit_fn emit, void *arg)
{
	if (p->nr == 0)
		read_maps(p);
	for (size_t i = 0; i < p->nr; i++) {
		struct file *fl = &p->k->files[p->r[i].file];
		struct eng_image *img;
		uint64_t base;

		if (fl->reported)
			continue;
		fl->reported = true;
		if (known(karg, fl->path) ||
		    (img = image(p->k, &p->r[i], &base)) == NULL)
			continue;
		for (size_t j = 0; j < eng_image_nfuncs(img); j++) {
			const struct eng_func *f = eng_image_func(img, j);
			struct pc_discovery d = {
				.kind = PC_DISC_FUNCTION,
				.module = eng_image_name(img),
				.srcfile = base_of(eng_sym_lazy_source_file(img, f)),
				.function = eng_sym_lazy_display_name(img, f),
				.addr = base + f->addr,
			};

			emit(arg, &d);
		}
		fl->own = true;
	}
}

size_t src_live_kidimg_nprocs(const struct src_live_kidimg *k)
{
	return k->nprocs;
}

pid_t src_live_kidimg_pid(const struct src_live_kidimg *k, size_t i)
{
	return k->procs[i]->pid;
}

size_t src_live_kidimg_modules(const struct src_live_kidimg *k, struct src_live_cg_module *out,
		    size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < k->nfiles; i++) {
		if (!k->files[i].own || k->files[i].img == NULL)
			continue;
		if (out != NULL && n == max)
			break;
		if (out != NULL)
			out[n] = (struct src_live_cg_module){
				eng_image_name(k->files[i].img),
				k->files[i].img };
		n++;
	}
	return n;
}

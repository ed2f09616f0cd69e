/*
 * src_live_exec.c - the live source follows the program through execve
 * (the shape of every wrapper: `sh -c 'exec T'`, `env T`, `nice T`).
 *
 * At the exec event the engine raises its fence (eng_proc.h: nothing is
 * written into the program and no inferior call runs), so whatever was
 * built on the old image goes without touching the new one: the metric
 * side (instrumentation, sampler, its shared-memory segment) is dropped,
 * the old modules' functions are retired in the where axis (those the
 * consultant was told of), their images are kept (pointers into them may
 * still be held) and the new executable becomes the first module.
 *
 * The engine holds the new image at its entry point, its libraries
 * loaded (ENG_EV_EXEC_ENTRY).  There the runtime library is loaded by
 * dlopen with a new named segment, as for attach: the rtlib scrubbed
 * LD_PRELOAD from the environment at the first image's start, so that
 * the program sees its own environment, and it is never inherited.  The
 * metric side is then built again over the new image and the search
 * goes on; instance handles go on from where the old side stopped.
 *
 * An image hunch cannot instrument (a static program: no dlopen; not
 * x86-64) is followed with the kernel's measures only: CPU time and
 * thread states from /proc, and CPU in code from the hint sampler's
 * stack samples; every other enable is refused with the reason.
 *
 * The consultant hears of each exec as a target event (journaled, so
 * replay repeats it): code 0 when the new image is instrumented, 1 when
 * it is followed with kernel-side measures only.
 */
#include "src_live_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eng_proc.h"
#include "eng_shm.h"
#include "eng_image.h"
#include "src_live_hint.h"
#include "src_live_kids.h"
#include "src_live_kidseg.h"

static const char *base_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* Tell the consultant (poll_events) of one exec. */
static void tell(struct src_live *l, int code)
{
	struct pc_src_event e = {
		.ev = PC_TARGET_EXEC, .code = code, .t = l->src.ops->now(&l->src),
	};

	l->execq = realloc(l->execq, (l->nexecq + 1) * sizeof(*l->execq));
	if (l->execq == NULL)
		abort();
	l->execq[l->nexecq++] = e;
}

int src_live_exec_events(struct src_live *l, pc_event_fn fn, void *arg)
{
	size_t n = l->nexecq;

	for (size_t i = 0; i < n; i++)
		fn(arg, &l->execq[i]);
	l->nexecq = 0;
	return (int)n;
}

/* Drop the metric side of the old image without touching the program
 * (the engine's fence refuses every write meanwhile). */
static void drop_metric_side(struct src_live *l)
{
	/* the children's segments point into the state freed below */
	src_live_kidseg_exec(src_live_kids_segs(l->kids));
	if (l->slo != NULL) {
		pc_src_handle h = src_live_ops_last_handle(l->slo);

		if (h > l->last_h)
			l->last_h = h;
		src_live_ops_unanswered(l->slo, &l->dropped, &l->ndropped);
		src_live_ops_free(l->slo, false);
		l->slo = NULL;
	}
	eng_shm_destroy(l->shm);
	l->shm = NULL;
	l->rtlib_ready = false;
}

/* The old image's modules: retired where the consultant knew them. */
static void retire_modules(struct src_live *l)
{
	for (size_t i = 0; i < l->nmods; i++) {
		struct live_module *m = &l->mods[i];
		struct pc_discovery d = {
			.kind = PC_DISC_FUNCTION, .retired = true,
			.pid = (int)eng_proc_pid(l->proc),
		};

		if (m->reported && m->img != NULL) {
			d.module = eng_image_name(m->img);
			src_live_enqueue(l, &d);
		}
		if (m->img != NULL) {
			l->old_imgs = realloc(l->old_imgs, (l->nold + 1) *
					      sizeof(*l->old_imgs));
			if (l->old_imgs == NULL)
				abort();
			l->old_imgs[l->nold++] = m->img;
		}
		free(m->path);
	}
	l->nmods = 0;
}

void src_live_exec_begin(struct src_live *l, const struct eng_event *ev)
{
	char why[4352];
	const struct eng_module *exe;

	/* The children forked before the exec are reported before it, as
	 * they came: a subshell forked a moment before `exec` was found by
	 * the next scan of /proc, after the exec, once the step's enables
	 * no longer stopped the shell in between. */
	src_live_fork_tick(l, true);
	drop_metric_side(l);
	retire_modules(l);
	l->kernel_only = false;
	if (l->hint != NULL)
		src_live_hint_exec(l->hint);
	if (ev->status == ENG_EXEC_FOREIGN) {
		snprintf(why, sizeof(why), "the program exec'ed %s, which is "
			 "not an x86-64 program: hunch follows it with the "
			 "kernel's measures only (CPU time, thread states)",
			 ev->path);
		l->kernel_only = true;
		free(l->kernel_why);
		l->kernel_why = strdup(why);
		if (l->cfg != NULL)
			src_live_ops_new_kernel(l->proc, l->cfg, l->t0_ns, why,
						&l->slo);
		if (l->slo != NULL)
			src_live_ops_handles_after(l->slo, l->last_h);
		src_live_hook_hints(l);
		eng_exec_release(l->proc, NULL);
		tell(l, 1);
		return;
	}
	exe = eng_solib_nmodules(l->proc) ? eng_solib_module(l->proc, 0) : NULL;
	if (exe != NULL)
		src_live_add_module(l, exe->path, exe->bias, NULL);
}

/* The reason an image is followed with kernel-side measures only. */
static void kernel_reason(struct src_live *l, const char *err, char *why,
			  size_t len)
{
	const char *exe = l->nmods ? base_of(l->mods[0].path) : "the program";

	snprintf(why, len, "%s cannot be instrumented (%s): hunch follows "
		 "it with the kernel's measures only (CPU time, thread "
		 "states)", exe, err);
}

/* The metric side starts after the exec: the reason found then. */
int src_live_exec_kernel_side(struct src_live *l, struct hunch_err *err)
{
	char why[2048];

	(void)err;
	kernel_reason(l, "no runtime library in it", why, sizeof(why));
	return src_live_ops_new_kernel(l->proc, l->cfg, l->t0_ns,
				       l->kernel_why ? l->kernel_why : why,
				       &l->slo);
}

/* The runtime library in the held image, with a new named segment. */
static int load_rtlib(struct src_live *l, struct hunch_err *err)
{
	int rc;

	if (l->rtlib == NULL)
		return hunch_err_set(err, -ENOTSUP, "hunch runs without its "
				  "runtime library");
	rc = eng_shm_create(0, true, &l->shm, err);
	if (rc == 0)
		rc = eng_exec_load_rtlib(l->proc, l->rtlib, l->shm, err);
	if (rc < 0) {
		eng_shm_destroy(l->shm);
		l->shm = NULL;
	}
	return rc;
}

/* The libraries ld.so loaded into the new image: the engine read them
 * at the entry point without an event for each (the executable came at
 * the exec).  Without them its where axis had no libc, and the stack
 * samples in a libpython named no function. */
static void add_libraries(struct src_live *l)
{
	for (size_t i = 1; i < eng_solib_nmodules(l->proc); i++) {
		const struct eng_module *m = eng_solib_module(l->proc, i);

		src_live_add_module(l, m->path, m->bias, NULL);
	}
	if (l->hint != NULL)
		src_live_hint_modules_changed(l->hint);
}

void src_live_exec_entry(struct src_live *l)
{
	struct hunch_err err = { 0 };
	char why[2048];
	int rc;

	add_libraries(l);
	rc = load_rtlib(l, &err);

	if (rc == -ENOENT && l->rtlib != NULL)
		snprintf(err.msg, sizeof(err.msg), "a static program: no "
			 "dynamic linker to load the runtime library with");
	l->rtlib_ready = rc == 0;
	if (rc == 0 && l->cfg != NULL) {
		rc = src_live_ops_new(l->proc, l->shm, l->cfg, l->t0_ns,
				      &l->slo, &err);
		if (rc < 0)
			l->slo = NULL;
	}
	if (rc < 0) {
		kernel_reason(l, err.msg[0] ? err.msg : strerror(-rc), why,
			      sizeof(why));
		l->kernel_only = true;
		l->rtlib_ready = false;
		free(l->kernel_why);
		l->kernel_why = strdup(why);
		if (l->cfg != NULL)
			src_live_ops_new_kernel(l->proc, l->cfg, l->t0_ns, why,
						&l->slo);
	}
	if (l->slo != NULL) {
		src_live_ops_handles_after(l->slo, l->last_h);
		for (size_t i = 0; i < l->nstarts; i++)
			src_live_ops_note_start(l->slo, l->starts[i]);
	}
	src_live_hook_hints(l);
	eng_exec_release(l->proc, NULL);
	tell(l, l->kernel_only ? 1 : 0);
}

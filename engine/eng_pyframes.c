/*
 * eng_pyframes.c - finding CPython 3.11 in a live process and walking
 * its threads' interpreter frames (see eng_pyframes.h); code objects
 * are read by eng_pyframes_code.c.
 */
#include "eng_pyframes_int.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "eng_clock.h"
#include "eng_image.h"
#include "eng_maps.h"

#define MAX_THREADS 4096   /* thread states walked: a cycle guard */

const struct eng_pyf_layout eng_pyframes_layout_311 = {
	.runtime_interp_head = 40,
	.interp_next = 0,
	.interp_threads_head = 16,
	.tstate_next = 8,
	.tstate_interp = 16,
	.tstate_native_tid = 160,
	.tstate_cframe = 56,
	.cframe_current = 8,
	.frame_code = 32,
	.frame_previous = 48,
	.frame_prev_instr = 56,
	.frame_is_entry = 68,
	.frame_owner = 69,
	.obj_type = 8,
	.var_size = 16,
	.code_filename = 112,
	.code_name = 120,
	.code_qualname = 128,
	.code_linetable = 136,
	.code_firstlineno = 72,
	.code_firsttraceable = 168,
	.code_adaptive = 184,
	.bytes_sval = 32,
	.str_length = 16,
	.str_state = 32,
	.str_ascii_data = 48,
	.str_compact_data = 72,
};

static const char *const why_text[ENG_PYF_NWHY] = {
	[ENG_PYF_OK] = "CPython 3.11 found",
	[ENG_PYF_NOT_PYTHON] = "not a CPython program: neither the "
		"executable nor a mapped libpython3.x.so defines _PyRuntime "
		"and Py_Version",
	[ENG_PYF_VERSION] = "a CPython whose frames hunch cannot read: only "
		"3.11's layout is known",
	[ENG_PYF_UNREADABLE] = "the process's memory cannot be read "
		"(process_vm_readv): hunch must be allowed to trace it",
	[ENG_PYF_NO_MAPS] = "its /proc/PID/maps cannot be read: the process "
		"exited or is not ours",
};

const char *eng_pyframes_why_text(enum eng_pyframes_why why)
{
	return why < ENG_PYF_NWHY ? why_text[why] : "unknown reason";
}

int eng_pyframes_mem(const struct eng_pyframes *pf, uint64_t addr, void *buf,
		size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)addr, len };
	ssize_t n = process_vm_readv(pf->pid, &local, 1, &remote, 1, 0);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

int eng_pyframes_u64(const struct eng_pyframes *pf, uint64_t addr, uint64_t *v)
{
	return eng_pyframes_mem(pf, addr, v, sizeof(*v));
}

/* The runtime address of a data symbol of img loaded at base, 0 if
 * none by that name. */
static uint64_t data_sym(const struct eng_image *img, uint64_t base,
			 const char *name)
{
	for (size_t i = 0; i < eng_image_ndata(img); i++) {
		const struct eng_datasym *d = eng_image_data(img, i);

		if (d->global && strcmp(d->name, name) == 0)
			return base + d->addr;
	}
	return 0;
}

static bool is_candidate(const char *path, const char *exe)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return strcmp(path, exe) == 0 || strncmp(base, "libpython3", 10) == 0;
}

/* Look for the runtime in the file mapped at `start` (file offset 0). */
static bool try_file(struct eng_pyframes *pf, const char *path,
		     uint64_t start)
{
	struct eng_image *img;
	uint64_t base;

	if (eng_image_open_flags(path, ENG_IMAGE_NO_DEBUG_FILE |
				 ENG_IMAGE_NO_FDE, &img, NULL) < 0)
		return false;
	/* runtime of relative 0: the first segment (file offset 0) is
	 * mapped at load bias + link base */
	base = start;
	pf->runtime = data_sym(img, base, "_PyRuntime");
	pf->code_type = data_sym(img, base, "PyCode_Type");
	pf->str_type = data_sym(img, base, "PyUnicode_Type");
	pf->bytes_type = data_sym(img, base, "PyBytes_Type");
	/* Py_Version's address, kept in version[] until checked */
	snprintf(pf->version, sizeof(pf->version), "%" PRIu64,
		 data_sym(img, base, "Py_Version"));
	eng_image_close(img);
	if (pf->runtime == 0 || pf->code_type == 0 || pf->str_type == 0 ||
	    pf->bytes_type == 0 || strcmp(pf->version, "0") == 0)
		return false;
	pf->file = strdup(path);
	return pf->file != NULL;
}

/* Scan /proc/PID/maps for the executable and libpython3*.so. */
static enum eng_pyframes_why find_runtime(struct eng_pyframes *pf)
{
	char path[64], exe[PATH_MAX];
	struct eng_maps_line l;
	struct eng_maps m;
	ssize_t n;
	bool found = false;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pf->pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	if (eng_maps_open(&m, pf->pid) < 0)
		return ENG_PYF_NO_MAPS;
	while (!found && eng_maps_next(&m, &l))
		if (l.off == 0 && l.path[0] == '/' && is_candidate(l.path, exe))
			found = try_file(pf, l.path, l.lo);
	eng_maps_close(&m);
	return found ? ENG_PYF_OK : ENG_PYF_NOT_PYTHON;
}

/* Py_Version in memory: 0xMMmmppRS (PY_VERSION_HEX). */
static enum eng_pyframes_why check_version(struct eng_pyframes *pf,
					   struct hunch_err *err)
{
	uint64_t at = strtoull(pf->version, NULL, 10);
	uint32_t v;

	if (eng_pyframes_mem(pf, at, &v, sizeof(v)) < 0) {
		hunch_err_set(err, -EPERM, "pid %d: %s", (int)pf->pid,
			      why_text[ENG_PYF_UNREADABLE]);
		return ENG_PYF_UNREADABLE;
	}
	snprintf(pf->version, sizeof(pf->version), "%u.%u.%u", v >> 24,
		 (v >> 16) & 0xff, (v >> 8) & 0xff);
	if ((v >> 16) != 0x030b) {
		hunch_err_set(err, -ENOTSUP, "pid %d (%s): CPython %s is %s",
			      (int)pf->pid, pf->file, pf->version,
			      why_text[ENG_PYF_VERSION]);
		return ENG_PYF_VERSION;
	}
	pf->lo = &eng_pyframes_layout_311;
	return ENG_PYF_OK;
}

enum eng_pyframes_why eng_pyframes_open(pid_t pid, struct eng_pyframes **out,
					struct hunch_err *err)
{
	struct eng_pyframes *pf = calloc(1, sizeof(*pf));
	enum eng_pyframes_why why;

	*out = NULL;
	if (pf == NULL) {
		hunch_err_set(err, -ENOMEM, "out of memory");
		return ENG_PYF_UNREADABLE;
	}
	pf->pid = pid;
	why = find_runtime(pf);
	if (why != ENG_PYF_OK)
		hunch_err_set(err, -ENOENT, "pid %d: %s", (int)pid,
			      why_text[why]);
	else
		why = check_version(pf, err);
	if (why != ENG_PYF_OK) {
		eng_pyframes_close(pf);
		return why;
	}
	*out = pf;
	return ENG_PYF_OK;
}

void eng_pyframes_close(struct eng_pyframes *pf)
{
	if (pf == NULL)
		return;
	eng_pyframes_code_free(pf);
	free(pf->file);
	free(pf);
}

const char *eng_pyframes_version(const struct eng_pyframes *pf)
{
	return pf->version;
}

const char *eng_pyframes_file(const struct eng_pyframes *pf)
{
	return pf->file;
}

const struct eng_pyframes_stats *
eng_pyframes_stats(const struct eng_pyframes *pf)
{
	return &pf->st;
}

/* A frame's fields, as copied: checked only once the chain is known
 * to be the thread's (read_chain, same_chain), then turned into a
 * stack frame (add_frame). */
struct raw_frame {
	uint64_t at, code, previous, instr;
	uint8_t owner, entry;
};

static int read_frame(struct eng_pyframes *pf, uint64_t addr,
		      struct raw_frame *r)
{
	const struct eng_pyf_layout *lo = pf->lo;
	uint8_t fr[ENG_PYF_FRAME_BYTES];

	if ((addr & 7) != 0 ||
	    eng_pyframes_snap_mem(pf, addr, fr, sizeof(fr)) < 0)
		return -1;
	r->at = addr;
	memcpy(&r->code, fr + lo->frame_code, 8);
	memcpy(&r->previous, fr + lo->frame_previous, 8);
	memcpy(&r->instr, fr + lo->frame_prev_instr, 8);
	r->owner = fr[lo->frame_owner];
	r->entry = fr[lo->frame_is_entry];
	return 0;
}

/* The chain from top by `previous`, from the copy just taken: no other
 * read comes between the copy and its re-check.  The count, or -1. */
static int read_chain(struct eng_pyframes *pf, uint64_t top,
		      struct raw_frame *rf)
{
	int n = 0;

	for (uint64_t frame = top; frame != 0; frame = rf[n++].previous)
		if (n == 2 * ENG_PYF_MAX_DEPTH || read_frame(pf, frame, &rf[n]) < 0)
			return -1;
	return n;
}

/* The thread still runs the frames walked: each frame's code and
 * caller, copied again, and then its current frame, are the same.  A thread that
 * returned and called again while it was copied can leave a chain of
 * valid frames that never were on its stack together (a caller reused
 * by a later call: `c` called by `a` where `b` was). */
static bool same_chain(struct eng_pyframes *pf, uint64_t ts, uint64_t top,
		       const struct raw_frame *rf, int n)
{
	const struct eng_pyf_layout *lo = pf->lo;
	uint64_t cframe, frame;
	struct raw_frame now;

	eng_pyframes_snap_take(pf, top);
	for (int i = 0; i < n; i++)
		if (read_frame(pf, rf[i].at, &now) < 0 ||
		    now.code != rf[i].code || now.previous != rf[i].previous)
			return false;
	return eng_pyframes_u64(pf, ts + lo->tstate_cframe, &cframe) == 0 &&
	       cframe != 0 &&
	       eng_pyframes_u64(pf, cframe + lo->cframe_current, &frame) == 0 &&
	       frame == top;
}

/* One interpreter frame into the stack being built.  Returns 1 added,
 * 0 skipped (an incomplete frame on top, as CPython's tracebacks skip
 * it), -1 invalid (the stack is dropped). */
static int add_frame(struct eng_pyframes *pf, const struct raw_frame *r,
		     bool top)
{
	const struct eng_pyf_code_ent *c = eng_pyframes_code_get(pf, r->code);
	uint64_t first = r->code + pf->lo->code_adaptive;
	struct eng_pyframe *out;

	if (c == NULL || r->owner > ENG_PYF_FRAME_OWNER_MAX || r->entry > 1)
		return -1;
	/* prev_instr is one unit before the code before the first
	 * instruction runs, and never past its end */
	if (r->instr + 2 < first || r->instr >= first + 2 * c->size ||
	    ((r->instr - first) & 1) != 0)
		return -1;
	/* a generator frame with no caller: one suspended, or caught
	 * between its yield and the switch back (current_frame still on
	 * it); a running generator always has a caller */
	if (r->owner == ENG_PYF_FRAME_OWNED_BY_GENERATOR && r->previous == 0)
		return -1;
	/* an incomplete frame has called nothing yet: below the top it is
	 * a caller's slot reused by a new call while the copy held a frame
	 * that had returned */
	if (r->owner != ENG_PYF_FRAME_OWNED_BY_GENERATOR &&
	    r->instr < first + 2 * (uint64_t)c->firsttraceable)
		return top ? 0 : -1;
	if (pf->stack.nframes == ENG_PYF_MAX_DEPTH)
		return -1;
	out = &pf->stack.f[pf->stack.nframes++];
	out->code = &c->pub;
	out->line = eng_pyframes_code_line(c->table, c->ntable, c->pub.firstline,
				      r->instr < first ? -1 :
				      (long)((r->instr - first) / 2));
	out->entry = r->entry;
	return 1;
}

/* The stack of the thread state at ts, once; false if it fails a check. */
static bool walk_once(struct eng_pyframes *pf, uint64_t ts, uint64_t interp)
{
	const struct eng_pyf_layout *lo = pf->lo;
	struct raw_frame rf[2 * ENG_PYF_MAX_DEPTH];
	uint64_t owner, tid, cframe, top;
	int n;
	bool ok;

	pf->stack.nframes = 0;
	if (eng_pyframes_u64(pf, ts + lo->tstate_interp, &owner) < 0 ||
	    owner != interp ||
	    eng_pyframes_u64(pf, ts + lo->tstate_native_tid, &tid) < 0 ||
	    tid == 0 || tid > INT_MAX ||
	    eng_pyframes_u64(pf, ts + lo->tstate_cframe, &cframe) < 0)
		return false;
	pf->stack.tid = (pid_t)tid;
	if (cframe == 0)
		return true;
	if ((cframe & 7) != 0 ||
	    eng_pyframes_u64(pf, cframe + lo->cframe_current, &top) < 0)
		return false;
	eng_pyframes_snap_take(pf, top);
	n = read_chain(pf, top, rf);
	ok = n >= 0 && same_chain(pf, ts, top, rf, n);
	eng_pyframes_snap_fit(pf);
	for (int i = 0; ok && i < n; i++)
		ok = add_frame(pf, &rf[i], i == 0) >= 0;
	return ok;
}

/* A thread that calls and returns all the time moves while it is
 * walked (tens of microseconds): a walk that fails its checks is tried
 * again, up to ENG_PYF_TRIES times. */
#define ENG_PYF_TRIES 4
static bool walk_thread(struct eng_pyframes *pf, uint64_t ts, uint64_t interp)
{
	for (int i = 0; i < ENG_PYF_TRIES; i++)
		if (walk_once(pf, ts, interp))
			return true;
	return false;
}

static bool wanted(pid_t tid, const pid_t *tids, size_t ntids)
{
	if (ntids == 0)
		return true;
	for (size_t i = 0; i < ntids; i++)
		if (tids[i] == tid)
			return true;
	return false;
}

/* Every thread state of the interpreter at interp. */
static int walk_interp(struct eng_pyframes *pf, uint64_t interp,
		       const pid_t *tids, size_t ntids, eng_pyframes_fn fn,
		       void *arg)
{
	uint64_t ts, tid;
	int n = 0, k = 0;

	if (eng_pyframes_u64(pf, interp + pf->lo->interp_threads_head, &ts) < 0)
		return 0;
	for (; ts != 0 && k < MAX_THREADS; k++) {
		if ((ts & 7) != 0)
			break;
		if (ntids > 0 &&
		    (eng_pyframes_u64(pf, ts + pf->lo->tstate_native_tid, &tid) < 0 ||
		     !wanted((pid_t)tid, tids, ntids))) {
			/* not asked for: only its link is read */
		} else if (walk_thread(pf, ts, interp)) {
			fn(arg, &pf->stack);
			pf->st.stacks++;
			n++;
		} else {
			pf->st.dropped++;
		}
		if (eng_pyframes_u64(pf, ts + pf->lo->tstate_next, &ts) < 0)
			break;
	}
	return n;
}

int eng_pyframes_read(struct eng_pyframes *pf, const pid_t *tids,
		      size_t ntids, eng_pyframes_fn fn, void *arg)
{
	uint64_t c0 = eng_clock_thread_cpu_ns();
	uint64_t interp;
	int n = 0, rc, k = 0;

	pf->st.reads++;
	rc = eng_pyframes_u64(pf, pf->runtime + pf->lo->runtime_interp_head,
			 &interp);
	if (rc < 0)
		return rc;
	for (; interp != 0 && (interp & 7) == 0 && k < 64; k++) {
		n += walk_interp(pf, interp, tids, ntids, fn, arg);
		if (eng_pyframes_u64(pf, interp + pf->lo->interp_next, &interp) < 0)
			break;
	}
	pf->st.read_ns += eng_clock_thread_cpu_ns() - c0;
	return n;
}

/*
 * eng_unwind.c - finding a thread's start function by unwinding its
 * stack with libdwfl (see eng_unwind.h).
 */
#include "eng_unwind.h"

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FRAMES 1024

struct eng_unwinder {
	pid_t pid;
	Dwfl *dwfl;
};

/* Frames of one thread, innermost first. */
struct frames {
	Dwarf_Addr pc[MAX_FRAMES];
	bool act[MAX_FRAMES];
	int n;
};

/* The ELF files are found through /proc/<pid>/maps and read from disk;
 * separate debug files are looked up the standard way but not needed. */
static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
};

int eng_unwind_open(pid_t pid, struct eng_unwinder **out,
		      struct hunch_err *err)
{
	struct eng_unwinder *u = calloc(1, sizeof(*u));
	int r;

	*out = NULL;
	if (u == NULL)
		return hunch_err_set(err, -ENOMEM,
				     "out of memory unwinding pid "
				     "%d",
				     pid);
	u->pid = pid;
	u->dwfl = dwfl_begin(&proc_callbacks);
	if (u->dwfl == NULL) {
		free(u);
		return hunch_err_set(err, -ENOMEM,
				     "cannot start libdwfl for pid "
				     "%d: %s",
				     pid, dwfl_errmsg(-1));
	}
	r = dwfl_linux_proc_report(u->dwfl, pid);
	if (r != 0) {
		eng_unwind_close(u);
		return hunch_err_set(err, r > 0 ? -r : -ESRCH,
				  "cannot read the memory map of pid %d "
				  "(/proc/%d/maps): %s; check that the process "
				  "still exists", pid, pid,
				  r > 0 ? strerror(r) : dwfl_errmsg(-1));
	}
	dwfl_report_end(u->dwfl, NULL, NULL);
	/* true: the caller already holds every thread in a ptrace stop,
	 * so libdwfl must neither attach nor detach. */
	r = dwfl_linux_proc_attach(u->dwfl, pid, true);
	if (r != 0) {
		eng_unwind_close(u);
		return hunch_err_set(err, r > 0 ? -r : -EINVAL,
				  "cannot prepare to unwind pid %d: %s", pid,
				  r > 0 ? strerror(r) : dwfl_errmsg(-1));
	}
	*out = u;
	return 0;
}

void eng_unwind_close(struct eng_unwinder *u)
{
	if (u == NULL)
		return;
	if (u->dwfl)
		dwfl_end(u->dwfl);
	free(u);
}

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct frames *fr = arg;
	Dwarf_Addr pc;
	bool act;

	if (!dwfl_frame_pc(state, &pc, &act))
		return DWARF_CB_ABORT;
	fr->pc[fr->n] = pc;
	fr->act[fr->n] = act;
	return ++fr->n < MAX_FRAMES ? DWARF_CB_OK : DWARF_CB_ABORT;
}

/* libc (start_thread, clone3, __libc_start_main), libpthread on older
 * glibc, and the dynamic linker (ld-linux-x86-64.so.2, ld.so). */
static bool is_runtime_module(const char *path)
{
	const char *b = path ? strrchr(path, '/') : NULL;

	b = b ? b + 1 : path;
	if (b == NULL)
		return false;
	return !strncmp(b, "libc.so", 7) || !strncmp(b, "libc-", 5) ||
	       !strncmp(b, "libpthread", 10) || !strncmp(b, "ld-linux", 8) ||
	       !strncmp(b, "ld.so", 5) || !strncmp(b, "ld-2.", 5);
}

/* Return addresses point after the call: look up pc - 1 so that a call
 * at the very end of a function is attributed to that function. */
static Dwarf_Addr lookup_pc(const struct frames *fr, int i)
{
	return fr->act[i] ? fr->pc[i] : fr->pc[i] - 1;
}

/* Fill `out` for frame i: module, bias, and the function's entry. */
static void describe(Dwfl *dwfl, const struct frames *fr, int i,
		     struct eng_thread_start *out)
{
	Dwarf_Addr pc = lookup_pc(fr, i);
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, pc);
	GElf_Off off = 0;
	GElf_Sym sym;
	const char *name = NULL;
	Dwarf_Addr bias = 0;

	out->pc = fr->pc[i];
	if (mod == NULL)
		return;
	dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, &out->module,
			 NULL);
	if (out->module == NULL)
		out->module = dwfl_module_info(mod, NULL, NULL, NULL, NULL,
					       NULL, NULL, NULL);
	if (dwfl_module_getelf(mod, &bias) != NULL)
		out->bias = bias;
	name = dwfl_module_addrinfo(mod, pc, &off, &sym, NULL, NULL, NULL);
	if (name != NULL) {
		out->symbol = name;
		out->pc = pc - off;
		out->at_entry = true;
	}
}

static const char *module_of(Dwfl *dwfl, Dwarf_Addr pc)
{
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, pc);

	return mod ? dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL,
				      NULL) : NULL;
}

int eng_unwind_thread_start(struct eng_unwinder *u, pid_t tid,
			      struct eng_thread_start *out,
			      struct hunch_err *err)
{
	struct frames *fr = calloc(1, sizeof(*fr));
	int i;

	memset(out, 0, sizeof(*out));
	if (fr == NULL)
		return hunch_err_set(err, -ENOMEM, "out of memory unwinding "
				  "thread %d", tid);
	/* An error after some frames is the normal end on x86-64 when the
	 * outermost frame has no CFI: keep what was unwound. */
	dwfl_getthread_frames(u->dwfl, tid, frame_cb, fr);
	if (fr->n == 0) {
		int e = dwfl_errno();

		free(fr);
		return hunch_err_set(err, -ESRCH,
				  "cannot unwind thread %d of pid %d (%s); the "
				  "thread must exist and be ptrace-stopped by "
				  "the calling thread", tid, u->pid,
				  e ? dwfl_errmsg(e) : "no registers");
	}
	/* Outermost frame outside libc; if there is none (a thread that
	 * has not reached its routine yet, or a libc-internal helper),
	 * the outermost frame itself, typically clone3. */
	for (i = fr->n - 1; i >= 0; i--)
		if (!is_runtime_module(module_of(u->dwfl, lookup_pc(fr, i))))
			break;
	if (i < 0)
		i = fr->n - 1;
	describe(u->dwfl, fr, i, out);
	out->nframes = fr->n;
	free(fr);
	return 0;
}

int eng_unwind_thread_start_function(pid_t pid, pid_t tid, uint64_t *pc_out,
			      struct hunch_err *err)
{
	struct eng_unwinder *u;
	struct eng_thread_start ts;
	int r = eng_unwind_open(pid, &u, err);

	if (r < 0)
		return r;
	r = eng_unwind_thread_start(u, tid, &ts, err);
	if (r == 0)
		*pc_out = ts.pc;
	eng_unwind_close(u);
	return r;
}

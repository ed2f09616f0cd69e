/*
 * src_live_threads.c - the live source's threads: discovered, named,
 * retired.
 *
 * Threads are named by their start function.  For threads that exist when
 * hunch arrives (attach, or the main thread at launch) the stack is
 * unwound while the process is stopped.  A thread created later has not
 * yet called its start routine when its clone event arrives, so it is
 * held back briefly and named at the next pump that finds it older than
 * THREAD_NAME_DELAY_MS (one short stop for all such threads together);
 * if its start function cannot be found then, it is tried again a delay
 * later, THREAD_NAME_TRIES times in all, before it is reported unnamed.
 * The start functions seen are the call graph's roots (`callees`).
 *
 * The CFI walk cannot pass hunch's own code (a trampoline, a relocated
 * copy of a function: libdwfl has no unwind information for them), and
 * after an exec the runtime library, loaded by dlopen, does not see
 * pthread_create, so this unwind is the only source of the name.  A
 * thread blocked under a relocated pthread_mutex_lock stays there most
 * of the time, and every try found nothing.  Then the stack is read by
 * its look: the outermost word of the thread's stack mapping that is a
 * return address (a call instruction ends right before it) into a
 * function of the program's modules, not libc, the dynamic linker or
 * the runtime library: the start routine's own call, right under
 * start_thread's frame.
 */
#include "src_live_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/user.h>
#include <time.h>

#include "clock_mono.h"
#include "eng_proc.h"
#include "eng_image.h"
#include "eng_maps.h"
#include "eng_unwind.h"

#define THREAD_NAME_DELAY_MS 100
#define THREAD_NAME_TRIES 3

/* The function containing a runtime address, and its module; NULL if
 * none. */
static const struct eng_func *func_at(struct src_live *l, uint64_t pc,
				      struct live_module **mod)
{
	for (size_t i = 0; i < l->nmods; i++) {
		struct live_module *m = &l->mods[i];
		const struct eng_func *f;
		uint64_t base;

		if (m->img == NULL)
			continue;
		base = m->bias + eng_image_link_base(m->img);
		if (pc < base)
			continue;
		f = eng_image_func_at(m->img, pc - base);
		if (f != NULL) {
			*mod = m;
			return f;
		}
	}
	return NULL;
}

/* The display name of the function containing a runtime address. */
static const char *function_at(struct src_live *l, uint64_t pc)
{
	struct live_module *m;
	const struct eng_func *f = func_at(l, pc, &m);

	return f != NULL ? eng_sym_lazy_display_name(m->img, f) : NULL;
}

/* Is the module of path libc, the dynamic linker or the runtime
 * library (never a thread's start routine)? */
static bool runtime_module(const char *path)
{
	const char *b = strrchr(path, '/');

	b = b ? b + 1 : path;
	return !strncmp(b, "libc.so", 7) || !strncmp(b, "libc-", 5) ||
	       !strncmp(b, "libpthread", 10) || !strncmp(b, "ld-linux", 8) ||
	       !strncmp(b, "ld.so", 5) || !strncmp(b, "libhunchrt", 10);
}

/* The function of a program module holding the return address ra. */
static const char *program_function_at(struct src_live *l, uint64_t ra)
{
	struct live_module *m;
	const struct eng_func *f = func_at(l, ra - 1, &m);

	return f != NULL && !runtime_module(m->path) ?
	       eng_sym_lazy_display_name(m->img, f) : NULL;
}

/* Does a call instruction end right before ra (rel32, or through a
 * register or memory operand)? */
static bool after_call(struct src_live *l, uint64_t ra)
{
	uint8_t b[7];

	if (eng_mem_read(l->proc, ra - 7, b, 7, NULL) < 0)
		return false;
	return b[2] == 0xe8 ||                                /* rel32 */
	       (b[5] == 0xff && (b[6] & 0x38) == 0x10) ||     /* *%reg */
	       (b[4] == 0xff && (b[5] & 0x38) == 0x10) ||     /* *d8() */
	       (b[1] == 0xff && (b[2] & 0x38) == 0x10);       /* *d32() */
}

/* The end of the mapping holding addr (/proc/PID/maps), or 0. */
static uint64_t mapping_end(pid_t pid, uint64_t addr)
{
	struct eng_maps_line l;

	return eng_maps_find(pid, addr, &l) ? l.hi : 0;
}

/* The start routine by the look of the stack (top of this file); the
 * process is stopped. */
static const char *start_by_look(struct src_live *l, pid_t tid)
{
	enum { MAX_SCAN = 1 << 20 };
	struct user_regs_struct r;
	const char *found = NULL;
	uint64_t end, len, *w;

	if (eng_regs_get(l->proc, tid, &r, NULL) < 0)
		return NULL;
	end = mapping_end(eng_proc_pid(l->proc), r.rsp);
	if (end <= r.rsp)
		return NULL;
	len = end - r.rsp > MAX_SCAN ? MAX_SCAN : end - r.rsp;
	len &= ~(uint64_t)7;
	w = malloc(len);
	if (w == NULL || eng_mem_read(l->proc, end - len, w, len, NULL) < 0) {
		free(w);
		return NULL;
	}
	for (size_t i = len / 8; found == NULL && i-- > 0;)
		if (w[i] > 7 && (found = program_function_at(l, w[i])) != NULL &&
		    !after_call(l, w[i]))
			found = NULL;
	free(w);
	return found;
}

/* Remember a thread start function (the call graph's roots). */
static void note_start(struct src_live *l, const char *fn)
{
	if (fn == NULL)
		return;
	for (size_t i = 0; i < l->nstarts; i++)
		if (strcmp(l->starts[i], fn) == 0)
			return;
	l->starts = realloc(l->starts, (l->nstarts + 1) * sizeof(char *));
	if (l->starts == NULL)
		abort();
	l->starts[l->nstarts++] = strdup(fn);
}

/* Name and queue a thread; the process must be stopped.  Unless it is
 * the last try, a thread whose start function cannot be found now (its
 * stack not unwindable at this instant: seen while a new image was being
 * instrumented as its threads started) is left for a later try: false. */
static bool report_thread(struct src_live *l, pid_t tid, bool last_try)
{
	pid_t pid = eng_proc_pid(l->proc);
	struct pc_discovery d = {
		.kind = PC_DISC_THREAD, .pid = pid, .tid = tid,
	};
	uint64_t pc;

	if (tid == pid)
		d.function = "main";
	else if (eng_unwind_thread_start_function(pid, tid, &pc, NULL) == 0)
		d.function = function_at(l, pc);
	if (d.function == NULL && tid != pid)
		d.function = start_by_look(l, tid);
	if (d.function == NULL && !last_try)
		return false;
	if (l->slo != NULL)
		src_live_ops_note_start(l->slo, d.function);
	note_start(l, d.function);
	src_live_enqueue(l, &d);
	return true;
}

void src_live_threads_report_process(struct src_live *l)
{
	pid_t tids[4096];
	size_t n = eng_proc_threads(l->proc, tids, 4096);
	struct pc_discovery d = {
		.kind = PC_DISC_PROCESS, .pid = eng_proc_pid(l->proc),
	};

	src_live_enqueue(l, &d);
	for (size_t i = 0; i < n && i < 4096; i++)
		report_thread(l, tids[i], true);
	l->status.nthreads = (int)n;
}

void src_live_threads_new(struct src_live *l, pid_t tid)
{
	l->pending = realloc(l->pending,
			     (l->npending + 1) * sizeof(*l->pending));
	if (l->pending == NULL)
		abort();
	l->pending[l->npending].tid = tid;
	l->pending[l->npending].seen_ms = clock_mono_ms();
	l->pending[l->npending].tries = 0;
	l->npending++;
}

/* Drop a pending thread that exited before it was named; returns whether
 * it was pending (then it was never reported, so nothing to retire). */
bool src_live_threads_gone(struct src_live *l, pid_t tid)
{
	for (size_t i = 0; i < l->npending; i++) {
		if (l->pending[i].tid == tid) {
			l->pending[i] = l->pending[--l->npending];
			return true;
		}
	}
	return false;
}

/* Name threads that had time to reach their start routine. */
void src_live_threads_name_pending(struct src_live *l)
{
	uint64_t now = clock_mono_ms();
	size_t i, keep = 0;
	bool due = false;

	for (i = 0; i < l->npending; i++)
		due |= now - l->pending[i].seen_ms >= THREAD_NAME_DELAY_MS;
	if (!due || l->status.ended || eng_ptrace_stop_all(l->proc, NULL) < 0)
		return;
	for (i = 0; i < l->npending; i++) {
		struct pending_thread *t = &l->pending[i];

		if (now - t->seen_ms >= THREAD_NAME_DELAY_MS &&
		    report_thread(l, t->tid, t->tries + 1 >= THREAD_NAME_TRIES))
			continue;
		if (now - t->seen_ms >= THREAD_NAME_DELAY_MS) {
			t->tries++;    /* unnamed yet: again a delay later */
			t->seen_ms = now;
		}
		l->pending[keep++] = *t;
	}
	l->npending = keep;
	eng_ptrace_resume_all(l->proc, NULL);
}


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
 */
#include "src_live_int.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eng_proc.h"
#include "eng_symbols.h"
#include "eng_unwind.h"

#define THREAD_NAME_DELAY_MS 100
#define THREAD_NAME_TRIES 3

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The display name of the function containing a runtime address. */
static const char *function_at(struct src_live *l, uint64_t pc)
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
		if (f != NULL)
			return eng_func_display_name(m->img, f);
	}
	return NULL;
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
	else if (eng_thread_start_function(pid, tid, &pc, NULL) == 0)
		d.function = function_at(l, pc);
	if (d.function == NULL && !last_try)
		return false;
	if (l->slo != NULL)
		slo_note_start(l->slo, d.function);
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
	l->pending[l->npending].seen_ms = now_ms();
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
	uint64_t now = now_ms();
	size_t i, keep = 0;
	bool due = false;

	for (i = 0; i < l->npending; i++)
		due |= now - l->pending[i].seen_ms >= THREAD_NAME_DELAY_MS;
	if (!due || l->status.ended || eng_stop_all(l->proc, NULL) < 0)
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
	eng_resume_all(l->proc, NULL);
}


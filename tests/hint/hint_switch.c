/*
 * hint_switch.c - switch-out samples (engine/eng_perfswitch.h) of a
 * child of this test that naps in hs_nap (a 2 ms nanosleep in a loop),
 * taken by the software context-switches event, which needs no tracefs
 * (a fresh Debian machine does not mount it), and by the
 * sched:sched_switch tracepoint where tracefs gives its id.  For each:
 * the thread's switch-outs are sampled; each sample's user pc is in the
 * C library (the sleep's system call) and its copied user stack holds a
 * return address into hs_nap; and the time off the CPU the samples
 * stand for is the child's time asleep: at least half of the time
 * watched and never more than it.
 *
 *   hint_switch
 */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock_mono.h"
#include "eng_image.h"
#include "eng_perfsample.h"
#include "eng_perfswitch.h"
#include "tap.h"

/* eng_perfsample.c's register set: ax..ip (bits 0-8), r8..r15 */
#define REGS_MASK (0x1ffull | (0xffull << 16))
#define REG_IP 8
#define WATCH_NS 1000000000ull

static volatile unsigned long hs_sink;

__attribute__((noinline)) static void hs_nap(void)
{
	struct timespec ts = { 0, 2000000 };

	for (;;) {
		nanosleep(&ts, NULL);
		hs_sink++;
	}
}

struct seen {
	pid_t pid;
	uint64_t lo, hi;         /* hs_nap's code */
	size_t unwound, in_libc, ret_in_nap;
	size_t handed;
	uint64_t off_ns;
};

/* Is addr in a mapping of the C library in process pid? */
static bool in_libc(pid_t pid, uint64_t addr)
{
	char path[64], line[4200], file[4096];
	unsigned long long lo, hi;
	bool yes = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return false;
	while (!yes && fgets(line, sizeof(line), f) != NULL) {
		file[0] = '\0';
		if (sscanf(line, "%llx-%llx %*s %*s %*s %*s %4095s", &lo, &hi,
			   file) >= 2 && addr >= lo && addr < hi)
			yes = strstr(file, "/libc.so") != NULL;
	}
	fclose(f);
	return yes;
}

static int unwind(void *arg, pid_t tid, uint64_t t_ns, const uint64_t *regs,
		  const uint8_t *stack, size_t len, struct eng_psample *out)
{
	struct seen *s = arg;
	bool ret = false;

	(void)t_ns;
	s->unwound++;
	s->in_libc += in_libc(s->pid, regs[REG_IP]);
	for (size_t i = 0; i + 8 <= len && !ret; i += 8) {
		uint64_t v;

		memcpy(&v, stack + i, 8);
		ret = v > s->lo && v <= s->hi;   /* a call's return address */
	}
	s->ret_in_nap += ret;
	memset(out, 0, sizeof(*out));
	out->tid = tid;
	out->nframes = 1;
	out->pc[0] = regs[REG_IP];
	return 1;
}

static void handed(void *arg, const struct eng_psample *p)
{
	struct seen *s = arg;

	s->handed++;
	s->off_ns += p->off_ns;
}

/* Watch the child's switch-outs with event `tp` for WATCH_NS. */
static void watch(pid_t pid, uint64_t lo, uint64_t hi, uint64_t tp,
		  const char *name)
{
	struct seen s = { .pid = pid, .lo = lo, .hi = hi };
	struct eng_perfswitch *sw;
	const char *why = "";
	uint64_t t0, t1;

	if (!tap_ok(eng_perfswitch_open(pid, tp, REGS_MASK, &sw, &why) == 0,
		    "%s: the child's switch-outs sampled (%s)", name, why))
		return;
	eng_perfswitch_drain(sw, unwind, &s, handed, &s);   /* the start */
	s = (struct seen){ .pid = pid, .lo = lo, .hi = hi };
	t0 = clock_mono_ns();
	do {
		usleep(100000);
		eng_perfswitch_drain(sw, unwind, &s, handed, &s);
		t1 = clock_mono_ns();
	} while (t1 - t0 < WATCH_NS);
	eng_perfswitch_close(sw);
	tap_diag("%s: %zu switch-outs unwound, %zu handed on, %.3f s off "
		 "of %.3f s watched", name, s.unwound, s.handed,
		 (double)s.off_ns / 1e9, (double)(t1 - t0) / 1e9);
	tap_ok(s.unwound >= 50 && s.handed >= 50, "%s: at least 50 "
	       "switch-outs in 1 s of 2 ms naps (%zu)", name, s.handed);
	tap_eq(s.in_libc, s.unwound, "%s: each left its CPU in the C "
	       "library's sleep", name);
	tap_eq(s.ret_in_nap, s.unwound, "%s: each one's stack holds a "
	       "return into hs_nap", name);
	tap_ok((double)s.off_ns >= 0.5 * (double)(t1 - t0) &&
	       s.off_ns <= t1 - t0 + 100000000ull, "%s: the time off they "
	       "stand for is the child's sleep: at least half the time "
	       "watched, not more", name);
}

int main(void)
{
	struct eng_image *img = NULL;
	const struct eng_func *f;
	uint64_t lo, tp;
	pid_t pid;
	int st;

	if (eng_image_open("/proc/self/exe", &img, NULL) < 0 ||
	    (f = eng_sym_lazy_func_by_name(img, "hs_nap")) == NULL ||
	    f->size == 0) {
		tap_ok(0, "hs_nap found in this test's symbols");
		return tap_done();
	}
	lo = (uint64_t)(uintptr_t)hs_nap;
	if ((pid = fork()) == 0)
		hs_nap();
	usleep(50000);
	watch(pid, lo, lo + f->size, ENG_PERFSWITCH_SW_EVENT,
	      "context-switches");
	tp = eng_perfswitch_tracepoint();
	if (tp != ENG_PERFSWITCH_SW_EVENT)
		watch(pid, lo, lo + f->size, tp, "sched:sched_switch");
	else
		tap_diag("tracefs gives no sched:sched_switch id here: only "
			 "the software event was watched");
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	eng_image_close(img);
	return tap_done();
}

/*
 * inst_catchup_stale.c - catchup counts live frames only
 * (progs/inst_stale.c): the target blocks in read() from st_block,
 * whose uninitialised buffer still holds st_leaf's old return address
 * into st_outer.  A scan of the stack words (what catchup did before it
 * walked stacks by CFI) takes that word for an activation of st_outer:
 * a timer or constraint started there is never stopped, since no exit
 * of st_outer comes.  Catchup must find the thread inside main and
 * st_block only, with a whole CFI walk of its stack.
 *
 * Then `inst_stale spin`, with a CPU timer on st_work (called in a
 * loop): stopped while inside the rtlib's timer call (or the vDSO
 * under it), which a trampoline's mini made through the call thunk, the
 * thread's stack cannot be walked by CFI past the thunk.  Catchup walks
 * on from the instrumented instruction (x86_tramp_thunk_frame): main is
 * found, and the stale word into st_outer_deep, 4 KiB down in dead
 * stack, is not.  Stopped inside st_work's trampoline itself (hunch's
 * code memory, where no CFI describes the frame), the thread is
 * single-stepped out of it first, then found in main alone.
 */
#include "inst_util.h"
#include "tap.h"
#include "eng_funcreloc.h"
#include "eng_points.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/user.h>

/* Does the stopped thread's stack hold a word that is a return
 * address into f, as a plain scan would judge it?  The scenario's own
 * check: without one, this test would prove nothing. */
static int stale_words(struct tgt *t, const struct eng_func *f)
{
	uint64_t lo = t->base + f->addr, hi = lo + f->size, w[4096];
	struct user_regs_struct r;
	int n = 0;

	size_t len = sizeof(w);

	if (eng_regs_get(t->p, eng_proc_pid(t->p), &r, NULL) < 0)
		return -1;
	/* up to the stack's end: halve until the read stays inside */
	while (len >= 64 && eng_mem_read(t->p, r.rsp, w, len, NULL) < 0)
		len /= 2;
	if (len < 64)
		return -1;
	for (size_t i = 0; i < len / 8; i++)
		if (w[i] > lo && w[i] <= hi)
			n++;
	return n;
}

static void catch_up(struct tgt *t, const char *name, uint64_t h,
		     int expect, bool thunk, bool copy)
{
	const struct eng_func *f = eng_sym_lazy_func_by_name(t->img, name);
	struct x86_snip start = { .kind = X86_SN_WALL_START, .handle = h };
	struct eng_catchup_info ci;
	struct hunch_err err = { 0 };
	int caught;

	caught = eng_inst_catchup_info(t->in, t->base + f->addr,
				       t->base + f->addr + f->size, &start, 1,
				       &ci, &err);
	tap_eq(caught, expect, "catchup on %s: %d thread(s) inside (%s)",
	       name, expect, err.msg);
	tap_eq((int)ci.activations, expect, "  %s: %d activation(s)", name,
	       expect);
	tap_ok(ci.walked == 1 && ci.scanned == 0 &&
	       ci.through_thunk == (thunk ? 1u : 0u) &&
	       ci.through_copy == (copy ? 1u : 0u), "  the stack was walked "
	       "whole by CFI%s%s (walked %u, scanned %u, through_thunk %u, "
	       "through_copy %u)", thunk ? ", on through the call thunk" : "",
	       copy ? ", on through the relocated copy" : "", ci.walked,
	       ci.scanned, ci.through_thunk, ci.through_copy);
}

/* The mapping holding addr names one of these? */
static bool mapped_in(pid_t pid, uint64_t addr, const char *a, const char *b)
{
	char path[64], line[512];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	while (f != NULL && !found && fgets(line, sizeof line, f) != NULL) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && addr >= lo &&
		    addr < hi)
			found = strstr(line, a) != NULL || strstr(line, b) != NULL;
	}
	if (f != NULL)
		fclose(f);
	return found;
}

/* Is addr in an executable mapping with no file: hunch's code memory
 * (trampolines), in this target? */
static bool in_anon_exec(pid_t pid, uint64_t addr)
{
	char path[64], line[512], perms[8];
	bool found = false;
	FILE *f;
	int n;

	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	while (f != NULL && !found && fgets(line, sizeof line, f) != NULL) {
		unsigned long lo, hi;

		n = 0;
		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &lo, &hi,
			   perms, &n) >= 3 && addr >= lo && addr < hi)
			found = perms[2] == 'x' && (n == 0 || line[n] == '\n' ||
						    line[n] == '\0');
	}
	if (f != NULL)
		fclose(f);
	return found;
}

/* eng_bp_step_while's test: the thread is not yet in hunch's code. */
static bool outside_code_memory(void *arg, uint64_t pc)
{
	return !in_anon_exec(*(pid_t *)arg, pc);
}

/* Stopped inside st_work's trampoline (hunch's code memory): catchup
 * steps the thread out of it first, then finds main, and not the stale
 * word into st_outer_deep; the thread is back in the program's code.
 * The thread is brought there by single steps from wherever it stopped
 * (st_work, and its trampoline, come every few dozen instructions),
 * unless a system call comes first:
 * stopping it at random until a stop landed in the trampoline took up
 * to 5000 stops, and under a loaded CI the spin loop's 60 s ran out
 * before. */
static void trampoline_case(struct tgt *t)
{
	struct eng_catchup_info ci;
	struct hunch_err err = { 0 };
	struct user_regs_struct r;
	const struct eng_func *f;
	pid_t pid = eng_proc_pid(t->p);
	int rc, tries, caught;

	/* a step never enters a system call (the CPU timer's
	 * clock_gettime makes one): from such a stop, run on and try again */
	for (tries = 0, rc = -1; tries < 200 && rc != 0; tries++) {
		eng_ptrace_resume_all(t->p, NULL);
		tgt_pump(t, 1);
		eng_ptrace_stop_all(t->p, NULL);
		rc = eng_bp_step_while(t->p, pid, outside_code_memory, &pid,
				       100000);
	}
	if (!tap_ok(rc == 0 && eng_regs_get(t->p, pid, &r, NULL) == 0 &&
		    in_anon_exec(pid, r.rip), "spin: single-stepped into "
		    "st_work's trampoline, from stop %d of at most 200 (%d)",
		    tries, rc))
		return;
	f = eng_sym_lazy_func_by_name(t->img, "st_outer_deep");
	caught = eng_inst_catchup_info(t->in, t->base + f->addr,
				       t->base + f->addr + f->size, NULL, 0,
				       &ci, &err);
	tap_ok(caught == 0 && ci.stepped_out == 1, "catchup on st_outer_deep "
	       "from a trampoline: stepped out (%u), no activation (%d: %s)",
	       ci.stepped_out, caught, err.msg);
	f = eng_sym_lazy_func_by_name(t->img, "main");
	caught = eng_inst_catchup_info(t->in, t->base + f->addr,
				       t->base + f->addr + f->size, NULL, 0,
				       &ci, &err);
	tap_ok(caught == 1 && ci.activations == 1 && ci.scanned == 0,
	       "catchup on main: found, its stack walked (caught %d, "
	       "activations %u, walked %u, scanned %u, stepped out %u)",
	       caught, ci.activations, ci.walked, ci.scanned, ci.stepped_out);
	tap_ok(eng_regs_get(t->p, eng_proc_pid(t->p), &r, NULL) == 0 &&
	       !in_anon_exec(eng_proc_pid(t->p), r.rip),
	       "the thread is out of hunch's code memory");
}

static void spin_case(const char *path)
{
	char *av[] = { (char *)path, "spin", NULL };
	const struct eng_func *fw;
	struct hunch_err err = { 0 };
	struct x86_func xf;
	uint32_t var, tvar;
	uint64_t h, th;
	struct tgt t;
	int tries;

	if (!tap_ok(tgt_launch(&t, path, av) == 0, "spin: launched"))
		return;
	eng_sampler_var_alloc(t.smp, ENG_VAR_WALL_TIMER, &var, &h, NULL);
	eng_sampler_var_alloc(t.smp, ENG_VAR_CPU_TIMER, &tvar, &th, NULL);
	fw = eng_sym_lazy_func_by_name(t.img, "st_work");
	su_parse(t.img, fw, &xf);
	tap_ok(add_timer(&t, &xf, th, true) >= 2, "spin: CPU timer queued at "
	       "st_work's entry and exit");
	tap_eq(eng_inst_commit(t.in, &err), 0, "spin: inserted (%s)", err.msg);
	eng_ptrace_resume_all(t.p, NULL);
	tap_ok(tgt_wait_line(&t, "spinning", 10000) == 0, "spin: spinning");
	/* stop it now and then until it is caught inside the timer's call */
	for (tries = 0; tries < 2000; tries++) {
		struct user_regs_struct r;

		tgt_pump(&t, 1);
		eng_ptrace_stop_all(t.p, NULL);
		if (eng_regs_get(t.p, eng_proc_pid(t.p), &r, NULL) == 0 &&
		    mapped_in(eng_proc_pid(t.p), r.rip, "[vdso]", "libhunchrt"))
			break;
		eng_ptrace_resume_all(t.p, NULL);
	}
	if (tap_ok(tries < 2000, "spin: caught inside the rtlib's timer call "
		   "(or the vDSO) after %d stops", tries + 1)) {
		tap_ok(stale_words(&t, eng_sym_lazy_func_by_name(
				   t.img, "st_outer_deep")) >= 1,
		       "spin: its stack holds a stale return address into "
		       "st_outer_deep");
		catch_up(&t, "st_outer_deep", h, 0, true, false);
		catch_up(&t, "main", h, 1, true, false);
	}
	trampoline_case(&t);
	eng_inst_commit_remove_all(t.in, NULL);
	tap_eq(tgt_code_mismatches(&t), 0, "spin: every code byte equals the "
	       "file's");
	su_free(&xf);
	tgt_fini(&t);
}

/* The last call point of f: st_block's read(). */
static int last_call(const struct x86_func *xf)
{
	int last = -1;

	for (size_t k = 0; xf != NULL && k < xf->npoints; k++)
		if (xf->points[k].kind == X86_PT_CALL)
			last = (int)k;
	return last;
}

/* st_block relocated before it first runs (an after-call point on its
 * read() forces the copy): the thread then blocks in read() with its
 * return address in the copy, in hunch's code memory, where libdwfl
 * knows no CFI.  Catchup walks on from the same place in the original:
 * st_block (in its copy) and main are found, and the stale word into
 * st_outer, above the copy's frame, is not taken for one.  Before, the
 * words above the copy were judged by their look, and st_outer was
 * caught up. */
static void copy_case(const char *path)
{
	char *av[] = { (char *)path, NULL };
	struct x86_snip add = { .kind = X86_SN_ADD, .delta = 1 };
	struct eng_points_cache *pc = NULL;
	struct hunch_err err = { 0 };
	enum eng_refusal why = ENG_REFUSAL_NONE;
	const struct eng_func *fb;
	const struct x86_func *xf;
	struct eng_inst_point cp, ap;
	uint64_t h, lo, hi;
	uint32_t var, cvar, id;
	struct tgt t;
	int k;

	if (!tap_ok(tgt_launch(&t, path, av) == 0 &&
		    eng_points_cache_new(&pc, &err) == 0 &&
		    eng_funcreloc_image(t.in, pc, t.img, t.base, &err) == 0,
		    "copy: launched, relocation on (%s)", err.msg))
		return;
	eng_sampler_var_alloc(t.smp, ENG_VAR_WALL_TIMER, &var, &h, NULL);
	eng_sampler_var_alloc(t.smp, ENG_VAR_COUNTER, &cvar, &add.handle, NULL);
	fb = eng_sym_lazy_func_by_name(t.img, "st_block");
	xf = eng_points_of(pc, t.img, fb, NULL);
	k = last_call(xf);
	if (k >= 0)
		eng_inst_point_from(&xf->points[k], t.base, &cp);
	tap_ok(k >= 0 &&
	       eng_funcreloc_post_call(t.in, &cp, &ap, &why, &err) == 1 &&
	       eng_inst_add(t.in, &ap, &add, 1, false, &id, &err) == 0 &&
	       eng_inst_commit(t.in, &err) == 0 &&
	       eng_funcreloc_copy_range(t.in, t.base + fb->addr,
					t.base + fb->addr + fb->size, &lo,
					&hi) == 1,
	       "copy: st_block relocated, a counter after its read() (%s%s)",
	       why ? eng_refusal_str(why) : "", err.msg);
	eng_ptrace_resume_all(t.p, NULL);
	tap_ok(tgt_wait_line(&t, "blocked", 10000) == 0 &&
	       tgt_wait_asleep(&t, 10000) == 0, "copy: blocked in read(), "
	       "called from the copy");
	eng_ptrace_stop_all(t.p, NULL);
	tap_ok(stale_words(&t, eng_sym_lazy_func_by_name(t.img, "st_outer")) >=
		       1, "copy: its stack holds a stale return address into "
		       "st_outer");
	catch_up(&t, "st_outer", h, 0, false, true);
	catch_up(&t, "st_block", h, 1, false, true);
	catch_up(&t, "main", h, 1, false, true);
	eng_inst_commit_remove_all(t.in, NULL);
	eng_ptrace_resume_all(t.p, NULL);
	tgt_send(&t, "q\n");
	tap_ok(tgt_wait_line(&t, "done", 10000) == 0 &&
	       tgt_wait_exit(&t, 10000) == 0 && t.status == 0,
	       "copy: the target went on and exited 0");
	tgt_fini(&t);
	eng_points_cache_free(pc);
}

int main(int argc, char **argv)
{
	char *av[] = { argv[1], NULL };
	uint32_t var;
	uint64_t h;
	struct tgt t;

	if (argc != 2 || !tap_ok(tgt_launch(&t, argv[1], av) == 0, "launched"))
		return tap_done();
	eng_sampler_var_alloc(t.smp, ENG_VAR_WALL_TIMER, &var, &h, NULL);
	eng_ptrace_resume_all(t.p, NULL);
	tap_ok(tgt_wait_line(&t, "blocked", 10000) == 0 &&
	       tgt_wait_asleep(&t, 10000) == 0, "target blocked in read()");
	eng_ptrace_stop_all(t.p, NULL);
	tap_ok(stale_words(&t, eng_sym_lazy_func_by_name(t.img, "st_outer")) >=
		       1,
	       "its stack holds a stale return address into st_outer");
	catch_up(&t, "st_outer", h, 0, false, false);
	catch_up(&t, "st_leaf", h, 0, false, false);
	catch_up(&t, "st_block", h, 1, false, false);
	catch_up(&t, "main", h, 1, false, false);
	eng_ptrace_resume_all(t.p, NULL);
	tgt_send(&t, "q\n");
	tap_ok(tgt_wait_line(&t, "done", 10000) == 0, "target went on");
	tap_ok(tgt_wait_exit(&t, 10000) == 0 && t.status == 0, "exited 0");
	tgt_fini(&t);
	spin_case(argv[1]);
	copy_case(argv[1]);
	return tap_done();
}

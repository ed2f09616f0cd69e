/*
 * eng_metric_tail.c - which exits of which functions end a focus
 * function's timer (or nesting counter) when the function tail-calls.
 *
 * f's last act may be `jmp g` (at -O2 any `return g(x);`), or `jmp
 * g@plt`: f's frame is gone, g runs in its place and returns straight
 * to f's caller.  Stopping f's inclusive timer at that jmp makes f read
 * ~0 when g does its work.  So f's timer keeps running until the
 * function it tail-called returns: the tail closure of f is every
 * function reached from f by direct tail calls, transitively (through
 * PLT entries, by their GOT slot's JUMP_SLOT relocation, to the function
 * they reach in another module), up to
 * MTAIL_MAX functions.  One per-thread variable T holds the stack
 * pointer of the frame slot f left (its return address), so that the
 * right return ends the timer: a closure function's `ret` with %rsp ==
 * T is the return of f's tail-called work; the same function called
 * normally returns at another %rsp and leaves f's timer alone.  The
 * rules, per exit of f (entry: start as before) and of a closure
 * function g (MTAIL_* roles, wrapped in eng_metric_gen.c):
 *   f ret, or a jmp out of the closure (indirect, to f itself, or too
 *     far):                stop; if (SP == T) T = 0
 *   f jmp into the closure: if (T == 0) T = SP; if (T != SP) stop
 *     (a nested f, T taken by an outer one, stops as before: the outer
 *     timer still counts that time)
 *   g ret, or a jmp out:  if (SP == T) { stop; T = 0 }
 *   g jmp to f:           if (SP == T) stop   (f's entry starts again:
 *     mutual recursion through tail calls counts once)
 *   g jmp into the closure: nothing.
 * A tail-called function that never returns (longjmp, exit) leaves T
 * set: later tail calls of f then stop at their jmp, as before.
 */
#include "eng_metric_int.h"

#include <errno.h>
#include <string.h>

#include "eng_sym_plt.h"

static bool same(const struct mfunc *a, const struct mfunc *b)
{
	return a->mod == b->mod && a->f == b->f;
}

/* The function a PLT entry at `at` of mod reaches: the function its
 * GOT slot's symbol names, in the first other module that defines it. */
static bool through_plt(const struct eng_metric *m, const struct mmod *mod,
			uint64_t at, struct mfunc *out)
{
	char name[256];

	if (!eng_sym_plt_name(mod->img, at, name, sizeof(name)))
		return false;
	for (size_t i = 0; i < m->nmods; i++) {
		const struct eng_func *f = m->mods[i].img ?
			eng_sym_lazy_func_by_name(m->mods[i].img, name) : NULL;

		if (&m->mods[i] != mod && f != NULL && f->size > 0) {
			*out = (struct mfunc){ &m->mods[i], f };
			return true;
		}
	}
	return false;
}

/* The function a direct tail call at xp of fn reaches; false for any
 * other exit. */
static bool tail_target(const struct eng_metric *m, const struct mfunc *fn,
			const struct x86_point *xp, struct mfunc *out)
{
	const struct eng_func *f;

	if (xp->kind != X86_PT_EXIT || !xp->tail_call || xp->indirect ||
	    xp->target == 0 || fn->mod->img == NULL)
		return false;
	f = eng_image_func_at(fn->mod->img, xp->target);
	if (f == NULL || f->addr != xp->target)
		return through_plt(m, fn->mod, xp->target, out);
	*out = (struct mfunc){ fn->mod, f };
	return true;
}

static bool member(const struct mtail *t, const struct mfunc *fn)
{
	for (size_t i = 0; i < t->n; i++)
		if (same(&t->fn[i], fn))
			return true;
	return false;
}

int eng_metric_tail_closure(struct eng_metric *m, const struct mfunc *f,
		  struct mtail *t, struct hunch_err *err)
{
	t->f = *f;
	t->n = 0;
	/* Breadth first from f; t->fn doubles as the queue. */
	for (size_t q = 0; q <= t->n && t->n < MTAIL_MAX; q++) {
		const struct mfunc *from = q == 0 ? f : &t->fn[q - 1];
		const struct x86_func *xf;
		struct mfunc to;

		if (q > 0 && q - 1 >= t->n)
			break;
		xf = eng_points_of(m->pc, from->mod->img, from->f, err);
		if (xf == NULL)
			return -ENOMEM;
		for (size_t k = 0; k < xf->npoints && t->n < MTAIL_MAX; k++)
			if (tail_target(m, from, &xf->points[k], &to) &&
			    !same(&to, f) && !member(t, &to) &&
			    to.mod->img != NULL)
				t->fn[t->n++] = to;
	}
	return 0;
}

enum mtail_role eng_metric_tail_role(const struct eng_metric *m,
				     const struct mtail *t,
				     const struct mfunc *at,
				     const struct x86_point *xp)
{
	bool is_f = same(at, &t->f);
	struct mfunc to;
	bool tail = tail_target(m, at, xp, &to);

	if (xp->kind != X86_PT_EXIT)
		return MTAIL_PLAIN;
	if (is_f)
		return tail && member(t, &to) ? MTAIL_F_TAIL : MTAIL_F_EXIT;
	if (tail && same(&to, &t->f))
		return MTAIL_G_TO_F;
	if (tail && member(t, &to))
		return MTAIL_G_ON;
	return MTAIL_G_EXIT;
}

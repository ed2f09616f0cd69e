/*
 * test_fixtures.c - exact points, patch areas, targets and verdicts of
 * the hand-made functions in pfix.S, through the engine's points cache
 * (so eng_points.c is tested too), plus the parser on raw buffers.
 *
 *   test-parse-fixtures PARSE_FIXTURES_EXE
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eng_points.h"
#include "eng_image.h"
#include "parse_why.h"
#include "tap.h"
#include "x86_decode.h"
#include "x86_parse.h"

struct fx {
	struct eng_image *img;
	struct eng_points_cache *cache;
};

static const struct x86_func *get(struct fx *fx, const char *name,
				  uint64_t *base)
{
	const struct eng_func *f = eng_sym_lazy_func_by_name(fx->img, name);
	struct hunch_err err = { 0 };
	const struct x86_func *xf;

	if (!tap_ok(f != NULL, "%s: found", name))
		return NULL;
	xf = eng_points_of(fx->cache, fx->img, f, &err);
	if (!tap_ok(xf != NULL, "%s: parsed %s", name, err.msg))
		return NULL;
	*base = f->addr;
	return xf;
}

static const char *kind_name(enum x86_point_kind k)
{
	return x86_parse_point_kind_name(k);
}

/* Points as "KIND +OFF +PATCHOFF/LEN ok" or "... no:WHY@OFF" (WHY:
 * parse_why_name), one string per point, in order. */
static void check_points(const char *name, const struct x86_func *f,
			 uint64_t base, const char *const *want, size_t n)
{
	tap_eq(f->npoints, n, "%s: %zu points", name, n);
	for (size_t i = 0; i < n && i < f->npoints; i++) {
		const struct x86_point *p = &f->points[i];
		char got[256];
		int len = snprintf(got, sizeof(got), "%s +%llu +%llu/%u ",
				   kind_name(p->kind),
				   (unsigned long long)(p->addr - base),
				   (unsigned long long)(p->patch_start - base),
				   p->patch_len);

		if (p->ok)
			snprintf(got + len, sizeof(got) - (size_t)len, "ok");
		else
			snprintf(got + len, sizeof(got) - (size_t)len,
				 "no:%s@%lld", parse_why_name(p->why),
				 p->why_at ? (long long)(p->why_at - base) : -1LL);
		if (!tap_ok(strcmp(got, want[i]) == 0, "%s: point %zu is %s",
			    name, i, want[i]))
			tap_diag("  got %s", got);
	}
}

static void check_verdict(const char *name, const struct x86_func *f,
			  uint64_t base, bool ok, enum x86_refusal why,
			  long long why_off)
{
	tap_eq(f->ok, ok, "%s: %s", name, ok ? "ok" : "refused");
	if (why != X86_REFUSAL_NONE) {
		tap_ok(f->why == why, "%s: why is %s (got %s)", name,
		       parse_why_name(why), parse_why_name(f->why));
		tap_eq(f->why_at ? (long long)(f->why_at - base) : -1LL,
		       why_off, "%s: why at +%lld", name, why_off);
	}
}

static void check_targets(const char *name, const struct x86_func *f,
			  uint64_t base, const unsigned *want, size_t n)
{
	bool same = f->ntargets == n;

	for (size_t i = 0; same && i < n; i++)
		same = f->targets[i] - base == want[i];
	if (!tap_ok(same, "%s: targets exactly as expected", name)) {
		for (size_t i = 0; i < f->ntargets; i++)
			tap_diag("  target +%llu",
				 (unsigned long long)(f->targets[i] - base));
	}
}

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define POINTS(name, f, base, ...) do {                                  \
	static const char *const w_[] = { __VA_ARGS__ };                 \
	check_points(name, f, base, w_, N(w_));                          \
} while (0)
#define TARGETS(name, f, base, ...) do {                                 \
	static const unsigned w_[] = { __VA_ARGS__ };                    \
	check_targets(name, f, base, w_, N(w_));                         \
} while (0)

static void small_and_loops(struct fx *fx)
{
	const struct x86_func *f;
	uint64_t b;

	if ((f = get(fx, "pf_tiny", &b)) != NULL) {
		check_verdict("pf_tiny", f, b, false, X86_REFUSAL_SMALL, -1);
		POINTS("pf_tiny", f, b, "entry +0 +0/3 no:SMALL@-1",
		       "exit +2 +0/3 no:SMALL@-1");
	}
	if ((f = get(fx, "pf_loop2", &b)) != NULL) {
		check_verdict("pf_loop2", f, b, false, X86_REFUSAL_TARGET, 2);
		POINTS("pf_loop2", f, b, "entry +0 +0/2 no:TARGET@2",
		       "exit +10 +5/6 ok");
		TARGETS("pf_loop2", f, b, 2);
		tap_eq(f->ninsns, 5, "pf_loop2: 5 instructions");
	}
	if ((f = get(fx, "pf_misaligned", &b)) != NULL)
		check_verdict("pf_misaligned", f, b, false,
			      X86_REFUSAL_MISALIGNED, 2);
}

static void switches(struct fx *fx)
{
	const struct x86_func *f;
	uint64_t b;

	if ((f = get(fx, "pf_pic_switch", &b)) != NULL) {
		check_verdict("pf_pic_switch", f, b, true, X86_REFUSAL_NONE, 0);
		tap_ok(f->has_jump_table && f->njump_tables == 1 &&
		       !f->unresolved_indirect_jump,
		       "pf_pic_switch: one resolved jump table");
		TARGETS("pf_pic_switch", f, b, 24, 30, 36, 42, 48);
		POINTS("pf_pic_switch", f, b, "entry +0 +0/5 ok",
		       "exit +29 +24/6 ok", "exit +35 +30/6 ok",
		       "exit +41 +36/6 ok", "exit +47 +42/6 ok",
		       "exit +53 +48/6 ok");
	}
	if ((f = get(fx, "pf_o0_switch", &b)) != NULL) {
		tap_ok(f->has_jump_table && !f->unresolved_indirect_jump,
		       "pf_o0_switch: gcc -O0's table resolved");
		TARGETS("pf_o0_switch", f, b, 48, 55, 62, 69, 74);
		POINTS("pf_o0_switch", f, b, "entry +0 +0/7 ok",
		       "exit +75 +74/2 no:TARGET@74");
	}
	if ((f = get(fx, "pf_abs_switch", &b)) != NULL) {
		check_verdict("pf_abs_switch", f, b, true, X86_REFUSAL_NONE, 0);
		tap_ok(f->has_jump_table && f->njump_tables == 1,
		       "pf_abs_switch: absolute table resolved");
		TARGETS("pf_abs_switch", f, b, 14, 20, 26, 32);
	}
	if ((f = get(fx, "pf_table_in_text", &b)) != NULL) {
		check_verdict("pf_table_in_text", f, b, true, X86_REFUSAL_NONE, 0);
		tap_ok(f->ndata == 1 && f->data[0].start - b == 16 &&
		       f->data[0].end - b == 32,
		       "pf_table_in_text: the table's 16 bytes are data");
		TARGETS("pf_table_in_text", f, b, 32, 38, 44);
		tap_eq(f->ninsns, 12, "pf_table_in_text: 12 instructions "
		       "(padding decoded, table skipped)");
	}
	if ((f = get(fx, "pf_unresolved", &b)) != NULL) {
		check_verdict("pf_unresolved", f, b, false, X86_REFUSAL_TARGET, 16);
		tap_ok(f->unresolved_indirect_jump && !f->has_jump_table,
		       "pf_unresolved: no bound, so unresolved");
		POINTS("pf_unresolved", f, b, "entry +0 +0/7 ok",
		       "exit +18 +16/3 no:TARGET@16",
		       "exit +24 +19/6 no:UNRESOLVED@-1");
	}
}

static void data_in_code(struct fx *fx)
{
	const struct x86_func *f;
	uint64_t b;

	if ((f = get(fx, "pf_data", &b)) != NULL) {
		check_verdict("pf_data", f, b, false, X86_REFUSAL_UNDECODABLE, 7);
		POINTS("pf_data", f, b, "entry +0 +0/5 no:UNDECODABLE@7");
	}
	if ((f = get(fx, "pf_data_hidden", &b)) != NULL)
		check_verdict("pf_data_hidden", f, b, false,
			      X86_REFUSAL_MISALIGNED, 13);
}

static void tails_and_exits(struct fx *fx)
{
	const struct x86_func *f;
	uint64_t b;

	if ((f = get(fx, "pf_tail", &b)) != NULL) {
		check_verdict("pf_tail", f, b, true, X86_REFUSAL_NONE, 0);
		POINTS("pf_tail", f, b, "entry +0 +0/5 ok", "exit +5 +5/5 ok");
		tap_ok(f->npoints == 2 && f->points[1].tail_call &&
		       !f->points[1].indirect &&
		       f->points[1].target ==
		       eng_sym_lazy_func_by_name(fx->img, "pf_loop2")->addr,
		       "pf_tail: a direct tail call to pf_loop2");
	}
	if ((f = get(fx, "pf_tail_got", &b)) != NULL) {
		POINTS("pf_tail_got", f, b, "entry +0 +0/9 ok", "exit +3 +3/6 ok");
		tap_ok(f->npoints == 2 && f->points[1].tail_call &&
		       f->points[1].indirect && !f->unresolved_indirect_jump,
		       "pf_tail_got: jmp *slot(%%rip) is an indirect tail call");
	}
	if ((f = get(fx, "pf_tail_ptr", &b)) != NULL) {
		check_verdict("pf_tail_ptr", f, b, true, X86_REFUSAL_NONE, 0);
		POINTS("pf_tail_ptr", f, b, "entry +0 +0/8 ok", "exit +8 +4/6 ok");
	}
	if ((f = get(fx, "pf_tail_cond", &b)) != NULL) {
		POINTS("pf_tail_cond", f, b, "entry +0 +0/7 ok",
		       "exit +7 +2/7 ok", "exit +9 +2/8 ok");
		tap_ok(f->npoints == 3 && f->points[1].cond &&
		       f->points[1].tail_call && f->points[1].overlaps &&
		       f->points[2].overlaps,
		       "pf_tail_cond: jne out is a conditional tail call; "
		       "the two exit areas overlap");
	}
	if ((f = get(fx, "pf_retpad", &b)) != NULL) {
		check_verdict("pf_retpad", f, b, true, X86_REFUSAL_NONE, 0);
		POINTS("pf_retpad", f, b, "entry +0 +0/6 ok", "exit +11 +11/5 ok");
		tap_ok(f->npoints == 2 && f->points[1].start_is_target,
		       "pf_retpad: the ret is a target, so the patch takes "
		       "the int3/nop padding after it");
	}
}

static void entries_and_calls(struct fx *fx)
{
	const struct x86_func *f;
	uint64_t b;

	if ((f = get(fx, "pf_endbr", &b)) != NULL) {
		check_verdict("pf_endbr", f, b, false,
			      X86_REFUSAL_CALL_INSIDE, 7);
		POINTS("pf_endbr", f, b, "entry +4 +4/8 ok", "call +7 +7/5 ok",
		       "exit +15 +12/4 no:CALL_INSIDE@7");
		tap_ok(f->endbr && f->npoints > 0 && f->points[0].after_endbr,
		       "pf_endbr: entry after endbr64, which stays in place");
	}
	if ((f = get(fx, "pf_call_target", &b)) != NULL) {
		check_verdict("pf_call_target", f, b, false, X86_REFUSAL_TARGET, 9);
		POINTS("pf_call_target", f, b, "entry +0 +0/6 ok",
		       "call +11 +9/4 no:TARGET@9", "call +13 +13/5 ok",
		       "exit +22 +18/5 ok");
		tap_ok(f->npoints == 4 && f->points[1].indirect &&
		       !f->points[2].indirect,
		       "pf_call_target: indirect and direct call sites");
	}
	if ((f = get(fx, "pf_victim", &b)) != NULL) {
		check_verdict("pf_victim", f, b, false, X86_REFUSAL_TARGET, 2);
		POINTS("pf_victim", f, b, "entry +0 +0/2 no:TARGET@2",
		       "exit +10 +5/6 ok");
	}
	if ((f = get(fx, "pf_intruder", &b)) != NULL)
		POINTS("pf_intruder", f, b, "entry +0 +0/5 ok", "exit +5 +0/7 ok");
	if ((f = get(fx, "pf_cgoto", &b)) != NULL) {
		tap_ok(f->code_address_taken && f->unresolved_indirect_jump,
		       "pf_cgoto: a label's address as an immediate makes the "
		       "jmp *%%rax unresolved, not a tail call");
		TARGETS("pf_cgoto", f, b, 7, 10);
		POINTS("pf_cgoto", f, b, "entry +0 +0/5 ok",
		       "exit +9 +7/3 no:TARGET@7",
		       "exit +15 +10/6 no:UNRESOLVED@-1");
	}
	if ((f = get(fx, "pf_hot", &b)) != NULL) {
		check_verdict("pf_hot", f, b, false, X86_REFUSAL_TARGET, 32);
		tap_ok(f->has_jump_table && !f->unresolved_indirect_jump,
		       "pf_hot: its table, with entries in pf_hot.cold, resolves");
		POINTS("pf_hot", f, b, "entry +0 +0/9 ok",
		       "exit +32 +32/1 no:TARGET@32");
	}
	if ((f = get(fx, "pf_hot.cold", &b)) != NULL) {
		check_verdict("pf_hot.cold", f, b, false, X86_REFUSAL_TARGET, 2);
		POINTS("pf_hot.cold", f, b, "entry +0 +0/2 no:TARGET@2");
	}
	if ((f = get(fx, "main", &b)) != NULL)
		POINTS("main", f, b, "entry +0 +0/5 ok", "exit +6 +2/5 ok");
}

/* The parser on raw bytes, without a context or an image. */
static void raw_buffers(void)
{
	static const uint8_t empty_ret[] = { 0xc3 };
	static const uint8_t trunc[] = { 0x90, 0x90, 0x90, 0x90, 0xe8, 0x00 };
	struct x86_decoder *d;
	struct x86_func f;

	if (!tap_ok(x86_decode_open(&d) == 0, "decoder opens"))
		return;
	tap_eq(x86_parse_function(d, empty_ret, 1, 0x400, NULL, &f), 0,
	       "a 1-byte function parses without a context");
	tap_ok(!f.ok && f.why == X86_REFUSAL_SMALL && f.npoints == 2,
	       "... refused as too small, with entry and exit");
	x86_parse_func_free(&f);
	tap_eq(x86_parse_function(d, trunc, sizeof(trunc), 0x400, NULL, &f),
	       0, "a call cut by the function's end parses");
	tap_ok(!f.ok && f.why == X86_REFUSAL_UNDECODABLE && f.why_at == 0x404,
	       "... refused: undecodable bytes at the cut instruction");
	x86_parse_func_free(&f);
	tap_eq(x86_parse_function(d, empty_ret, 0, 0x400, NULL, &f), 0,
	       "a 0-byte function parses");
	tap_ok(!f.ok && f.npoints == 0, "... refused, with no points");
	x86_parse_func_free(&f);
	x86_decode_close(d);
}

int main(int argc, char **argv)
{
	struct fx fx = { 0 };
	struct hunch_err err = { 0 };

	if (argc != 2) {
		fprintf(stderr, "usage: %s PARSE_FIXTURES_EXE\n", argv[0]);
		return 2;
	}
	if (!tap_ok(eng_image_open(argv[1], &fx.img, &err) == 0,
		    "open %s %s", argv[1], err.msg) ||
	    !tap_ok(eng_points_cache_new(&fx.cache, &err) == 0, "cache"))
		return tap_done();
	small_and_loops(&fx);
	switches(&fx);
	data_in_code(&fx);
	tails_and_exits(&fx);
	entries_and_calls(&fx);
	{
		size_t before = eng_points_parsed(fx.cache);
		uint64_t b;

		get(&fx, "pf_tail", &b);
		tap_eq(eng_points_parsed(fx.cache), before,
		       "a second request is served from the cache");
	}
	raw_buffers();
	eng_points_forget(fx.cache, fx.img);
	eng_points_cache_free(fx.cache);
	eng_image_close(fx.img);
	return tap_done();
}

/*
 * where_tailcallees.c - the static call graph through tail calls, as the
 * consultant asks the live source for callees (pc_source `callees`), on
 * the program file of tests/targets' bn_tailchain (-O2 PIE: bntc_b is
 * `jmp bntc_c`; bntc_ping and bntc_pong jmp to each other and to
 * bntc_hot; objdump-checked by e2e_tail_perf):
 *   - bntc_b's callees are exactly bntc_c (its tail call);
 *   - bntc_a's are exactly bntc_now, bntc_b, bntc_ping (its calls),
 *     bntc_c (reached by bntc_b's tail call: bntc_b has no frame while
 *     it runs), bntc_pong and bntc_hot (through ping's and pong's tail
 *     calls, transitively);
 *   - bntc_ping's are exactly bntc_pong and bntc_hot (mutual recursion
 *     through jmps, walked once; bntc_ping itself, reached through
 *     bntc_pong, is no refinement of itself and is left out);
 *   - bntc_c's are exactly bntc_hot (a call, no tail call).
 *
 * usage: where_tailcallees PROGRAM
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src_live.h"
#include "tap.h"

#define MAXP 64

struct answer {
	char *p[MAXP];
	int n;
};

static void on_path(void *arg, const char *path)
{
	struct answer *a = arg;

	if (a->n < MAXP)
		a->p[a->n++] = strdup(path);
}

/* Are the callees of bn_tailchain.c's fn exactly the functions named
 * in want, each once? (Prints the answer when not.) */
static bool exactly(struct pc_source *src, const char *prog, const char *fn,
		    const char *const *want, int nwant)
{
	char path[512], p[512];
	struct answer a = { 0 };
	bool ok;

	snprintf(path, sizeof(path), "/Code/%s/bn_tailchain.c/%s", prog, fn);
	src->ops->callees(src, path, on_path, &a);
	ok = a.n == nwant;
	for (int i = 0; i < nwant && ok; i++) {
		int n = 0;

		snprintf(p, sizeof(p), "/Code/%s/bn_tailchain.c/%s", prog,
			 want[i]);
		for (int k = 0; k < a.n; k++)
			n += strcmp(a.p[k], p) == 0;
		ok = n == 1;
	}
	if (!ok)
		for (int k = 0; k < a.n; k++)
			tap_diag("  %s: %s", fn, a.p[k]);
	for (int k = 0; k < a.n; k++)
		free(a.p[k]);
	return ok;
}

int main(int argc, char **argv)
{
	static const char *const b[] = { "bntc_c" };
	static const char *const a[] = { "bntc_now", "bntc_b", "bntc_ping",
					 "bntc_c", "bntc_pong", "bntc_hot" };
	static const char *const ping[] = { "bntc_pong", "bntc_hot" };
	static const char *const c[] = { "bntc_hot" };
	struct hunch_err err = { 0 };
	struct pc_source *src = NULL;
	const char *prog;

	if (argc != 2) {
		tap_ok(0, "usage: where_tailcallees PROGRAM");
		return tap_done();
	}
	prog = strrchr(argv[1], '/') ? strrchr(argv[1], '/') + 1 : argv[1];
	if (!tap_ok(src_live_open_file(argv[1], &src, &err) == 0,
		    "%s read as a file", prog)) {
		tap_diag("  %s", err.msg);
		return tap_done();
	}
	tap_ok(exactly(src, prog, "bntc_b", b, 1),
	       "bntc_b's callees: exactly bntc_c (its tail call)");
	tap_ok(exactly(src, prog, "bntc_a", a, 6),
	       "bntc_a's callees: bntc_now, bntc_b, bntc_ping, and through "
	       "tail calls bntc_c, bntc_pong, bntc_hot");
	tap_ok(exactly(src, prog, "bntc_ping", ping, 2),
	       "bntc_ping's callees: bntc_pong and bntc_hot, not itself "
	       "(mutual tail recursion)");
	tap_ok(exactly(src, prog, "bntc_c", c, 1),
	       "bntc_c's callees: exactly bntc_hot");
	src->ops->close(src);
	return tap_done();
}

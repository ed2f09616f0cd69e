/*
 * test_targets.c - every function the targets' sources define, in every
 * variant of every target (tests/targets: -O0 -O2 -O3 -Os, PIE and
 * non-PIE, stripped copies, clang): an entry point that can be patched,
 * at least one exit, and exactly the call sites (plus tail calls) to the
 * program's own functions that the source has (calls.expected).  Then
 * instruction boundaries and call sites against objdump -d.
 *
 *   test-parse-targets   (environment: TARGETS_DIR, HUNCH_SOURCE_ROOT)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eng_points.h"
#include "eng_image.h"
#include "parse_check.h"
#include "parse_why.h"
#include "tap.h"

static const char *const progs[] = {
	"single", "threads", "forkexec", "signals", "exceptions",
	"pthread_exit", "dlopen", "blockread", "demo",
};

struct expect {
	char prog[32], caller[64], callee[64];
	int n;
	char over[4][32];   /* "VARIANT-SUBSTRING=N" */
	int nover;
};

/* verdicts.expected: "noexit PROG FUNC" or "refused SUBSTR FUNC WHY". */
struct verdict {
	bool noexit;
	char where[32], func[64];
	enum x86_refusal why;   /* refused: the entry's refusal */
};

struct run {
	const char *tdir, *sdir;
	struct expect *ex;
	size_t nex;
	struct verdict *vd;
	size_t nvd;
	struct eng_points_cache *cache;
	size_t funcs, funcs_ok;     /* source functions, all variants */
	size_t all, all_ok;         /* every function, all variants */
};

static void load_expect(struct run *r)
{
	char path[4096], line[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/tests/parse/calls.expected", r->sdir);
	f = fopen(path, "r");
	if (!tap_ok(f != NULL, "read %s", path))
		return;
	while (fgets(line, sizeof(line), f)) {
		struct expect e = { 0 };
		int used = 0, more;

		if (line[0] == '#' ||
		    sscanf(line, "%31s %63s %63s %d%n", e.prog, e.caller,
			   e.callee, &e.n, &used) != 4)
			continue;
		while (e.nover < 4 && sscanf(line + used, " %31s%n",
					     e.over[e.nover], &more) == 1) {
			e.nover++;
			used += more;
		}
		r->ex = realloc(r->ex, (r->nex + 1) * sizeof(*r->ex));
		r->ex[r->nex++] = e;
	}
	fclose(f);
	snprintf(path, sizeof(path), "%s/tests/parse/verdicts.expected",
		 r->sdir);
	f = fopen(path, "r");
	if (!tap_ok(f != NULL, "read %s", path))
		return;
	while (fgets(line, sizeof(line), f)) {
		struct verdict v = { 0 };
		char kind[16];
		int used = 0;

		if (line[0] == '#' || sscanf(line, "%15s %31s %63s %n", kind,
					     v.where, v.func, &used) != 3)
			continue;
		v.noexit = strcmp(kind, "noexit") == 0;
		line[strcspn(line, "\n")] = '\0';
		v.why = parse_why_of(line + used);
		if (!v.noexit && v.why == X86_REFUSAL_NONE)
			tap_diag("%s: unknown refusal '%s'", path, line + used);
		r->vd = realloc(r->vd, (r->nvd + 1) * sizeof(*r->vd));
		r->vd[r->nvd++] = v;
	}
	fclose(f);
}

/* The count a variant should have (the -O0 count unless overridden). */
static int expected_count(const struct expect *e, const char *variant)
{
	for (int k = 0; k < e->nover; k++) {
		const char *eq = strchr(e->over[k], '=');
		char sub[32];

		if (eq == NULL)
			continue;
		snprintf(sub, sizeof(sub), "%.*s", (int)(eq - e->over[k]),
			 e->over[k]);
		if (strstr(variant, sub) != NULL)
			return atoi(eq + 1);
	}
	return e->n;
}

static const struct verdict *verdict_for(const struct run *r, bool noexit,
					 const char *variant, const char *func)
{
	for (size_t k = 0; k < r->nvd; k++)
		if (r->vd[k].noexit == noexit &&
		    strstr(variant, r->vd[k].where) == variant &&
		    strcmp(r->vd[k].func, func) == 0)
			return &r->vd[k];
	return NULL;
}

/* A function by the name its .functions line gives (demangled). */
static const struct eng_func *by_name(struct eng_image *img, const char *n)
{
	const struct eng_func *f = eng_sym_lazy_func_by_name(img, n);

	for (size_t i = 0; f == NULL && i < eng_image_nfuncs(img); i++)
		if (strcmp(eng_sym_lazy_display_name(img,
						     eng_image_func(img, i)),
			   n) == 0)
			f = eng_image_func(img, i);
	return f;
}

static const struct x86_func *parse(struct run *r, struct eng_image *img,
				    const struct eng_func *f)
{
	struct hunch_err err = { 0 };
	const struct x86_func *xf = eng_points_of(r->cache, img, f, &err);

	if (xf == NULL)
		tap_diag("%s", err.msg);
	return xf;
}

/* Calls plus direct tail calls from xf to callee. */
static void count_calls(const struct x86_func *xf, uint64_t callee,
			int *calls, int *tails)
{
	*calls = *tails = 0;
	for (size_t i = 0; i < xf->npoints; i++) {
		const struct x86_point *p = &xf->points[i];

		if (p->indirect || p->target != callee)
			continue;
		*calls += p->kind == X86_PT_CALL;
		*tails += p->kind == X86_PT_EXIT;
	}
}

static void check_calls(struct run *r, struct eng_image *img,
			const char *prog, const char *variant)
{
	bool o0 = strstr(variant, "-O0-") != NULL;
	size_t bad = 0, n = 0;

	for (size_t k = 0; k < r->nex; k++) {
		const struct expect *e = &r->ex[k];
		const struct eng_func *a, *b;
		const struct x86_func *xf;
		int calls, tails;

		if (strcmp(e->prog, prog) != 0)
			continue;
		n++;
		a = by_name(img, e->caller);
		b = by_name(img, e->callee);
		if (a == NULL || b == NULL || (xf = parse(r, img, a)) == NULL) {
			bad++;
			continue;
		}
		count_calls(xf, b->addr, &calls, &tails);
		/* -O0 calls exactly as written; optimised code may turn a
		 * call in tail position into a jmp. */
		if (calls + tails != expected_count(e, variant) ||
		    (o0 && tails != 0)) {
			tap_diag("  %s: %s -> %s: %d calls + %d tail calls, "
				 "expected %d", variant, e->caller, e->callee,
				 calls, tails, expected_count(e, variant));
			bad++;
		}
	}
	tap_ok(bad == 0, "%s: the %zu caller/callee pairs have exactly the "
	       "source's call sites", variant, n);
}

/* The entry can be patched, or is refused for the expected reason. */
static bool entry_as_expected(const struct run *r, const struct x86_func *xf,
			      const char *variant, const char *name)
{
	const struct verdict *v = verdict_for(r, false, variant, name);
	bool have = xf->npoints > 0 && xf->points[0].kind == X86_PT_ENTRY;
	enum x86_refusal why = have ? xf->points[0].why : xf->why;

	if (have && xf->points[0].ok && v == NULL)
		return true;
	if (have && !xf->points[0].ok && v != NULL &&
	    why != X86_REFUSAL_NONE && why == v->why)
		return true;
	tap_diag("  %s: %s: entry %s: %s", variant, name,
		 have && xf->points[0].ok ? "ok" : "refused",
		 parse_why_name(why));
	return false;
}

static void check_functions(struct run *r, struct eng_image *img,
			    const char *prog, const char *variant)
{
	char path[4096], line[512], why[256];
	size_t n = 0, entry_bad = 0, exit_bad = 0, inv_bad = 0, ok = 0;
	FILE *fl;

	snprintf(path, sizeof(path), "%s/tests/targets/%s.functions",
		 r->sdir, prog);
	if ((fl = fopen(path, "r")) == NULL)
		return;
	while (fgets(line, sizeof(line), fl)) {
		char *name = strchr(line, ' ');
		const struct eng_func *f;
		const struct x86_func *xf;
		size_t exits = 0;

		if (name == NULL)
			continue;
		name[strcspn(name, "\n")] = '\0';
		name++;
		n++;
		if ((f = by_name(img, name)) == NULL ||
		    (xf = parse(r, img, f)) == NULL) {
			tap_diag("  %s: %s not found", variant, name);
			entry_bad++;
			continue;
		}
		for (size_t i = 0; i < xf->npoints; i++)
			exits += xf->points[i].kind == X86_PT_EXIT;
		if (!entry_as_expected(r, xf, variant, name))
			entry_bad++;
		if ((exits == 0) != (verdict_for(r, true, variant, name) !=
				     NULL)) {
			tap_diag("  %s: %s: %zu exits", variant, name, exits);
			exit_bad++;
		}
		if (!pc_invariants(xf, why, sizeof(why))) {
			tap_diag("  %s: %s: %s", variant, name, why);
			inv_bad++;
		}
		ok += xf->ok;
	}
	fclose(fl);
	r->funcs += n;
	r->funcs_ok += ok;
	tap_ok(n > 0 && entry_bad == 0, "%s: all %zu source functions have a "
	       "patchable entry (or the expected refusal)", variant, n);
	tap_ok(exit_bad == 0, "%s: every source function has an exit "
	       "(but the ones that never return)", variant);
	tap_ok(inv_bad == 0, "%s: invariants hold", variant);
	tap_diag("%s: %zu of %zu source functions ok", variant, ok, n);
}

static void check_variant(struct run *r, const char *prog,
			  const char *variant)
{
	char path[4096];
	struct eng_image *img;
	struct hunch_err err = { 0 };

	snprintf(path, sizeof(path), "%s/%s", r->tdir, variant);
	if (!tap_ok(eng_image_open(path, &img, &err) == 0, "open %s %s",
		    variant, err.msg))
		return;
	check_functions(r, img, prog, variant);
	check_calls(r, img, prog, variant);
	for (size_t i = 0; i < eng_image_nfuncs(img); i++) {
		const struct x86_func *xf = parse(r, img, eng_image_func(img, i));

		r->all++;
		r->all_ok += xf != NULL && xf->ok;
	}
	eng_points_forget(r->cache, img);
	eng_image_close(img);
}

/* Instruction starts and call instructions of one function, as objdump
 * sees them, against the parser's.  objdump decodes independently of
 * capstone, so agreement is evidence for both. */
static void objdump_one(struct run *r, struct eng_image *img,
			const char *variant, const char *name)
{
	const struct eng_func *f = by_name(img, name);
	const struct x86_func *xf = f ? parse(r, img, f) : NULL;
	uint64_t link = eng_image_link_base(img);
	size_t n = 0, same = 0, calls = 0, calls_same = 0, my_calls = 0;
	char cmd[8192], line[1024];
	FILE *p;

	if (xf == NULL) {
		tap_ok(0, "%s: %s found for objdump", variant, name);
		return;
	}
	snprintf(cmd, sizeof(cmd), "objdump -d --no-show-raw-insn "
		 "--start-address=0x%llx --stop-address=0x%llx '%s/%s'",
		 (unsigned long long)(f->addr + link),
		 (unsigned long long)(f->addr + link + f->size), r->tdir,
		 variant);
	if ((p = popen(cmd, "r")) == NULL)
		return;
	while (fgets(line, sizeof(line), p)) {
		unsigned long long a;
		char text[1024];
		bool is_call = false;

		if (sscanf(line, " %llx:\t%1023[^\n]", &a, text) != 2)
			continue;
		for (char *t = strtok(text, " \t"); t; t = strtok(NULL, " \t"))
			is_call |= strcmp(t, "call") == 0;
		same += n < xf->ninsns && xf->insns[n] == a - link;
		n++;
		if (is_call) {
			calls++;
			for (size_t i = 0; i < xf->npoints; i++)
				calls_same += xf->points[i].kind == X86_PT_CALL &&
					      xf->points[i].addr == a - link;
		}
	}
	pclose(p);
	for (size_t i = 0; i < xf->npoints; i++)
		my_calls += xf->points[i].kind == X86_PT_CALL;
	tap_ok(n == xf->ninsns && same == n && n > 0, "%s: %s: %zu instruction "
	       "boundaries as objdump's (%zu agree of %zu)", variant, name,
	       xf->ninsns, same, n);
	tap_ok(calls == calls_same && calls == my_calls, "%s: %s: %zu call "
	       "sites as objdump's", variant, name, calls);
}

static void objdump_checks(struct run *r)
{
	static const char *const v[][2] = {
		{ "single", "single-O2-pie" }, { "threads", "threads-O0-nopie" },
		{ "exceptions", "exceptions-O3-pie" },
		{ "demo", "demo-Os-nopie" }, { "single", "single-clang-O2-pie" },
		{ "signals", "signals-O3-nopie" },
	};
	char path[4096], line[512];

	for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++) {
		struct eng_image *img;
		FILE *fl;

		snprintf(path, sizeof(path), "%s/%s", r->tdir, v[k][1]);
		if (eng_image_open(path, &img, NULL) < 0)
			continue;
		snprintf(path, sizeof(path), "%s/tests/targets/%s.functions",
			 r->sdir, v[k][0]);
		if ((fl = fopen(path, "r")) != NULL) {
			while (fgets(line, sizeof(line), fl)) {
				char *name = strchr(line, ' ');

				if (name == NULL)
					continue;
				name[strcspn(name, "\n")] = '\0';
				objdump_one(r, img, v[k][1], name + 1);
			}
			fclose(fl);
		}
		eng_points_forget(r->cache, img);
		eng_image_close(img);
	}
}

int main(void)
{
	static const char *const opts[] = { "O0", "O2", "O3", "Os" };
	struct run r = { .tdir = getenv("TARGETS_DIR"),
			 .sdir = getenv("HUNCH_SOURCE_ROOT") };
	char v[256];

	if (r.tdir == NULL || r.sdir == NULL) {
		fprintf(stderr, "set TARGETS_DIR and HUNCH_SOURCE_ROOT\n");
		return 2;
	}
	load_expect(&r);
	if (eng_points_cache_new(&r.cache, NULL) < 0)
		return 2;
	for (size_t p = 0; p < sizeof(progs) / sizeof(progs[0]); p++)
		for (size_t o = 0; o < 4; o++)
			for (int pie = 0; pie < 2; pie++)
				for (int st = 0; st < 2; st++) {
					snprintf(v, sizeof(v), "%s-%s-%s%s",
						 progs[p], opts[o],
						 pie ? "pie" : "nopie",
						 st ? "-stripped" : "");
					check_variant(&r, progs[p], v);
				}
	check_variant(&r, "single", "single-clang-O2-pie");
	check_variant(&r, "threads", "threads-clang-O2-pie");
	check_variant(&r, "single", "single-clang-O2-pie-stripped");
	check_variant(&r, "threads", "threads-clang-O2-pie-stripped");
	tap_diag("source functions ok: %zu of %zu (%.1f%%); all functions "
		 "ok: %zu of %zu (%.1f%%)", r.funcs_ok, r.funcs,
		 100.0 * (double)r.funcs_ok / (double)r.funcs, r.all_ok, r.all,
		 100.0 * (double)r.all_ok / (double)r.all);
	objdump_checks(&r);
	eng_points_cache_free(r.cache);
	free(r.ex);
	free(r.vd);
	return tap_done();
}

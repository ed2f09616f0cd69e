/*
 * bench_parse.c - time to parse every function of a big library into
 * instrumentation points, against capstone decoding the same bytes
 * linearly (cs_disasm_iter, detail off and detail on), in the same run.
 *
 *   bench-parse [-n ROUNDS] [FILE]     (default libLLVM-14.so.1, 3 rounds)
 *
 * Every function's bytes are read into memory first, so no row pays for
 * I/O.  Each row is the best of ROUNDS, in CPU seconds of this thread
 * (the machine is shared; CPU time is steadier than wall time, which is
 * printed too).  See README.md.
 */
#include <capstone/capstone.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "eng_points.h"
#include "eng_image.h"
#include "x86_decode.h"
#include "x86_parse.h"

struct corpus {
	struct eng_image *img;
	size_t n;
	uint8_t **code;
	const struct eng_func **f;
};

struct timing {
	double cpu, wall;
	size_t count;   /* instructions or ok functions, for sanity */
};

static double clk(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static size_t capstone_pass(const struct corpus *c, bool detail)
{
	csh h;
	cs_insn *in;
	size_t count = 0;

	cs_open(CS_ARCH_X86, CS_MODE_64, &h);
	cs_option(h, CS_OPT_DETAIL, detail ? CS_OPT_ON : CS_OPT_OFF);
	in = cs_malloc(h);
	for (size_t i = 0; i < c->n; i++) {
		const uint8_t *p = c->code[i];
		size_t left = c->f[i]->size;
		uint64_t a = c->f[i]->addr;

		while (left > 0) {
			if (cs_disasm_iter(h, &p, &left, &a, in)) {
				count++;
			} else {  /* skip a byte, as objdump would */
				p++;
				left--;
				a++;
			}
		}
	}
	cs_free(in, 1);
	cs_close(&h);
	return count;
}

static int read_img(void *arg, uint64_t addr, void *buf, size_t len)
{
	return eng_image_read(arg, addr, buf, len);
}

/* fast: the sweep's own opcode tables (the default); otherwise capstone
 * (detail off) decodes every instruction. */
static size_t parse_pass(const struct corpus *c, bool fast)
{
	struct x86_decoder *d;
	struct x86_parse_ctx ctx = { .read = read_img, .arg = c->img,
				     .abs_base = eng_image_link_base(c->img) };
	size_t ok = 0;

	if (x86_decode_open(&d) < 0)
		return 0;
	x86_decode_set_fast(d, fast);
	for (size_t i = 0; i < c->n; i++) {
		struct x86_func f;

		if (x86_parse_function(d, c->code[i], c->f[i]->size,
				       c->f[i]->addr, &ctx, &f) == 0) {
			ok += f.ok;
			x86_parse_func_free(&f);
		}
	}
	x86_decode_close(d);
	return ok;
}

static size_t cache_pass(const struct corpus *c, bool detail_unused)
{
	struct eng_points_cache *pc;
	size_t ok = 0;

	(void)detail_unused;
	if (eng_points_cache_new(&pc, NULL) < 0)
		return 0;
	for (size_t i = 0; i < c->n; i++) {
		const struct x86_func *f = eng_points_of(pc, c->img, c->f[i],
							 NULL);

		ok += f != NULL && f->ok;
	}
	eng_points_cache_free(pc);
	return ok;
}

static struct timing best_of(int rounds, const struct corpus *c,
			     size_t (*fn)(const struct corpus *, bool),
			     bool arg)
{
	struct timing best = { 1e30, 1e30, 0 };

	for (int r = 0; r < rounds; r++) {
		double c0 = clk(CLOCK_THREAD_CPUTIME_ID), w0 = clk(CLOCK_MONOTONIC);
		size_t count = fn(c, arg);
		double cpu = clk(CLOCK_THREAD_CPUTIME_ID) - c0;
		double wall = clk(CLOCK_MONOTONIC) - w0;

		if (cpu < best.cpu)
			best = (struct timing){ cpu, wall, count };
	}
	return best;
}

static int load(const char *path, struct corpus *c)
{
	struct hunch_err err = { 0 };

	if (eng_image_open(path, &c->img, &err) < 0) {
		fprintf(stderr, "bench-parse: %s\n", err.msg);
		return -1;
	}
	c->n = eng_image_nfuncs(c->img);
	c->code = calloc(c->n, sizeof(*c->code));
	c->f = calloc(c->n, sizeof(*c->f));
	for (size_t i = 0; i < c->n; i++) {
		c->f[i] = eng_image_func(c->img, i);
		c->code[i] = malloc(c->f[i]->size ? c->f[i]->size : 1);
		if (eng_image_read(c->img, c->f[i]->addr, c->code[i],
				   c->f[i]->size) != 0)
			c->f[i] = &(struct eng_func){ .addr = c->f[i]->addr };
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *path = "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1";
	int rounds = 3, opt;
	struct corpus c = { 0 };
	struct timing off, on, parse, parse_cs, cache;
	size_t bytes = 0;

	while ((opt = getopt(argc, argv, "n:")) != -1)
		if (opt == 'n')
			rounds = atoi(optarg) > 0 ? atoi(optarg) : 1;
	if (optind < argc)
		path = argv[optind];
	if (load(path, &c) < 0)
		return 1;
	for (size_t i = 0; i < c.n; i++)
		bytes += c.f[i]->size;
	printf("%s: %zu functions, %.1f MB of code, best of %d, CPU seconds "
	       "(wall)\n", path, c.n, (double)bytes / 1e6, rounds);
	off = best_of(rounds, &c, capstone_pass, false);
	on = best_of(rounds, &c, capstone_pass, true);
	parse = best_of(rounds, &c, parse_pass, true);
	parse_cs = best_of(rounds, &c, parse_pass, false);
	cache = best_of(rounds, &c, cache_pass, false);
	printf("  capstone, detail off   %6.2f s (%6.2f)  %zu instructions  "
	       "1.00x\n", off.cpu, off.wall, off.count);
	printf("  capstone, detail on    %6.2f s (%6.2f)  %.2fx\n", on.cpu,
	       on.wall, on.cpu / off.cpu);
	printf("  x86_parse_function     %6.2f s (%6.2f)  %.2fx of detail off, "
	       "%.2fx of detail on  (%zu functions ok)\n", parse.cpu,
	       parse.wall, parse.cpu / off.cpu, parse.cpu / on.cpu,
	       parse.count);
	printf("  parse, capstone only   %6.2f s (%6.2f)  %.2fx of detail off, "
	       "%.2fx of detail on  (tables off)\n", parse_cs.cpu,
	       parse_cs.wall, parse_cs.cpu / off.cpu, parse_cs.cpu / on.cpu);
	printf("  eng_points_of (cached) %6.2f s (%6.2f)  %.2fx of detail off, "
	       "%.2fx of detail on\n", cache.cpu, cache.wall,
	       cache.cpu / off.cpu, cache.cpu / on.cpu);
	printf("goal: parse within 1.20x of capstone's bare decoding (detail "
	       "off): %s (%.2fx; with capstone alone %.2fx)\n",
	       parse.cpu <= 1.2 * off.cpu ? "met" : "NOT met",
	       parse.cpu / off.cpu, parse_cs.cpu / off.cpu);
	return 0;
}

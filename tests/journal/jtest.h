/*
 * jtest.h - helpers shared by the journal tests: a header, a journal
 * with every record kind, temporary files, whole-file reads.
 */
#ifndef JTEST_H
#define JTEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "jnl_read.h"
#include "jnl_write.h"

static const char *const jt_argv[] = { "./prog", "--fast", "in put", NULL };

/* A header with small but real hypotheses and tunables documents;
 * the caller owns *hyp and *tun. */
static inline struct jnl_header jt_header(json_t **hyp, json_t **tun)
{
	struct jnl_header h = {
		.program = "prog", .argv = jt_argv, .mode = "batch",
		.start_wall = { 1795334400, 123456789 },
		.start_mono_ns = 5000000000ull, .tsc_hz = 2894561000.0,
		.tsc_invariant = true,
	};

	*hyp = json_pack("{s:i,s:[{s:s,s:s,s:s,s:f}]}", "version", 1,
			 "hypotheses", "name", "CPUbound", "metric", "cpu",
			 "compare", ">", "threshold", 0.2);
	*tun = json_pack("{s:f,s:i,s:f}", "costLimit", 0.1,
			 "MaxPendingSearches", 30, "sampleInterval", 0.2);
	h.hypotheses = *hyp;
	h.tunables = *tun;
	return h;
}

/* mkdtemp under $TMPDIR; "path/name" into buf. */
static inline const char *jt_tmpdir(void)
{
	static char dir[256];

	if (dir[0] == '\0') {
		const char *t = getenv("TMPDIR");

		snprintf(dir, sizeof(dir), "%s/hunch-jnl-XXXXXX", t ? t : "/tmp");
		if (mkdtemp(dir) == NULL) {
			perror("mkdtemp");
			exit(2);
		}
	}
	return dir;
}

static inline void jt_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", jt_tmpdir(), name);
}

static inline char *jt_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *b = NULL;
	long n;

	if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0)
		goto out;
	rewind(f);
	b = malloc((size_t)n + 1);
	if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		b = NULL;
	}
	if (b) {
		b[n] = '\0';
		*len = (size_t)n;
	}
out:
	if (f)
		fclose(f);
	return b;
}

static inline int jt_spit(const char *path, const void *b, size_t len)
{
	FILE *f = fopen(path, "wb");
	int ok = f && fwrite(b, 1, len, f) == len;

	if (f && fclose(f) != 0)
		ok = 0;
	return ok ? 0 : -1;
}

static inline void jt_rm_tmpdir(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", jt_tmpdir());
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", jt_tmpdir());
}

#endif

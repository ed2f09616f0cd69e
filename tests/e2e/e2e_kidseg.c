/*
 * e2e_kidseg.c - forked children measured by the instrumentation they
 * inherited, through the pc_source interface only (as the consultant
 * uses it): bn_forkers --calls 1000 (tests/targets, -O2 PIE) under a
 * test counter of bnfk_work's calls enabled on the whole job before the
 * workers fork.  Each worker counts into its own segment, so:
 * - bnfk_calls on /Process/<worker i> (enabled after the fork, sharing
 *   the job's instance) adds up to exactly (i+1) * 1000;
 *   on worker 1's main thread /Process/<w>/<w> to exactly 2000;
 * - bnfk_calls on /Process (the job) adds up to 7000: the program's
 *   1000 and its workers' 6000;
 * - bnfk_calls on /Process/<program> adds up to 1000: the workers never
 *   count into the program's slots;
 * - bnfk_calls2, the same counter enabled only after the fork (a new
 *   snippet in the trampolines the workers inherited, written into each
 *   running worker too), counts the workers' 6000 calls on /Process,
 *   exactly 1000 on /Process/<worker 0>, and 0 on /Process/<program>
 *   (the program made its calls before: its slot does not move);
 * - bnfk_rets, a counter at bnfk_work's return, a point the program
 *   did not have patched at the fork, enabled after it: 3000 on
 *   /Process/<worker 2>, 6000 on the job (the patch, its trampoline and
 *   their code written into each running worker);
 * - snprintf in libc, first instrumented after the fork (code memory
 *   near libc mapped then, and in each worker at the same address):
 *   exactly 1 on worker 0, 3 on the job;
 * - every instance disabled while the workers wait at their end: each
 *   worker's code equals its files again (the program's removals are
 *   made in the workers too); enabled again, the workers run patches
 *   again, and the detach below takes them out;
 * - the source closed (hunch detaches) while the workers still run:
 *   every worker's code equals its files again (it ran the patches it
 *   inherited until then), none is traced or stopped;
 * - the program and its workers exit 0 with their usual output.
 *
 * usage: e2e_kidseg BN_FORKERS   (env HUNCHRT, HUNCH_SOURCE_ROOT)
 */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pc_config.h"
#include "src_live.h"
#include "tap.h"

#define NH 14

static const char test_metric[] =
	"{ \"version\": 1,\n"
	"  \"lists\": { \"bnfk_funcs\": [ \"bnfk_work\" ],\n"
	"    \"bnfk_libc\": [ \"snprintf\" ] },\n"
	"  \"metrics\": {\n"
	"   \"bnfk_calls\": {\n"
	"    \"title\": \"bnfk_work calls\", \"units\": \"calls/s\",\n"
	"    \"unit_style\": \"unnormalized\", \"aggregate\": \"sum\",\n"
	"    \"style\": \"event_counter\", \"type\": \"counter\",\n"
	"    \"constraints\": [ \"procedure\", \"module\", \"thread\" ],\n"
	"    \"base\": [ { \"foreach\": \"bnfk_funcs\", \"at\": \"entry\",\n"
	"      \"constrained\": true,\n"
	"      \"do\": [ { \"op\": \"add\", \"value\": 1 } ] } ] },\n"
	"   \"bnfk_calls2\": {\n"
	"    \"title\": \"bnfk_work calls again\", \"units\": \"calls/s\",\n"
	"    \"unit_style\": \"unnormalized\", \"aggregate\": \"sum\",\n"
	"    \"style\": \"event_counter\", \"type\": \"counter\",\n"
	"    \"constraints\": [ \"procedure\", \"module\", \"thread\" ],\n"
	"    \"base\": [ { \"foreach\": \"bnfk_funcs\", \"at\": \"entry\",\n"
	"      \"constrained\": true,\n"
	"      \"do\": [ { \"op\": \"add\", \"value\": 1 } ] } ] },\n"
	"   \"bnfk_rets\": {\n"
	"    \"title\": \"bnfk_work returns\", \"units\": \"calls/s\",\n"
	"    \"unit_style\": \"unnormalized\", \"aggregate\": \"sum\",\n"
	"    \"style\": \"event_counter\", \"type\": \"counter\",\n"
	"    \"constraints\": [ \"procedure\", \"module\", \"thread\" ],\n"
	"    \"base\": [ { \"foreach\": \"bnfk_funcs\", \"at\": \"exit\",\n"
	"      \"constrained\": true,\n"
	"      \"do\": [ { \"op\": \"add\", \"value\": 1 } ] } ] },\n"
	"   \"bnfk_snprintf\": {\n"
	"    \"title\": \"snprintf calls\", \"units\": \"calls/s\",\n"
	"    \"unit_style\": \"unnormalized\", \"aggregate\": \"sum\",\n"
	"    \"style\": \"event_counter\", \"type\": \"counter\",\n"
	"    \"constraints\": [ \"procedure\", \"module\", \"thread\" ],\n"
	"    \"base\": [ { \"foreach\": \"bnfk_libc\", \"at\": \"entry\",\n"
	"      \"constrained\": true,\n"
	"      \"do\": [ { \"op\": \"add\", \"value\": 1 } ] } ] } } }\n";

struct t {
	struct pc_source *src;
	struct src_live_status st;
	int to, from, err;
	char out[8192], errs[8192];
	size_t outlen, errlen;
	pc_src_handle h[NH];
	int status[NH];
	bool sampled[NH];
	char reason[NH][512];
	double sum[NH];
};

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void on_disc(void *arg, const struct pc_discovery *d)
{
	(void)arg;
	(void)d;
}

static void on_reply(void *arg, const struct pc_src_reply *r)
{
	struct t *t = arg;

	if (r->req >= NH)
		return;
	t->status[r->req] = r->status < 0 ? r->status : 1;
	t->sampled[r->req] = r->sampled;
	snprintf(t->reason[r->req], sizeof(t->reason[0]), "%s",
		 r->reason ? r->reason : "");
	if (r->status >= 0)
		t->h[r->req] = r->handle;
}

static void on_sample(void *arg, const struct pc_src_sample *s)
{
	struct t *t = arg;

	for (int i = 0; i < NH; i++)
		if (t->h[i] != 0 && t->h[i] == s->handle)
			t->sum[i] += s->value * (s->t1 - s->t0);
}

static void drain(int fd, char *buf, size_t *len, size_t cap)
{
	ssize_t n;

	while (*len < cap - 1 &&
	       (n = read(fd, buf + *len, cap - 1 - *len)) > 0)
		*len += (size_t)n;
	buf[*len] = '\0';
}

static void pump(struct t *t, double secs)
{
	double end = mono() + secs;

	do {
		src_live_pump(t->src, 10, &t->st);
		t->src->ops->poll_resources(t->src, on_disc, t);
		t->src->ops->poll_replies(t->src, on_reply, t);
		t->src->ops->poll_samples(t->src, on_sample, t);
		drain(t->from, t->out, &t->outlen, sizeof(t->out));
		drain(t->err, t->errs, &t->errlen, sizeof(t->errs));
	} while (mono() < end && !t->st.ended);
}

static struct pc_config *load_config(void)
{
	const char *root = getenv("HUNCH_SOURCE_ROOT");
	struct pc_config *c = pc_config_new();
	struct pc_diags ds = { 0 };
	struct hunch_err e = { 0 };
	char def[4096];

	snprintf(def, sizeof(def), "%s/hypotheses/default.json",
		 root ? root : ".");
	if (pc_config_load_file(c, def, &ds, &e) < 0 ||
	    pc_config_load_string(c, "test", test_metric, &ds, &e) < 0) {
		tap_diag("config: %s", e.msg);
		pc_jx_diags_free(&ds);
		pc_config_free(c);
		return NULL;
	}
	pc_jx_diags_free(&ds);
	return c;
}

static int launch(struct t *t, char **argv)
{
	int in[2], out[2], err[2];
	struct src_live_launch lo = {
		.argv = argv, .rtlib = getenv("HUNCHRT"),
	};
	struct hunch_err e = { 0 };

	memset(t, 0, sizeof(*t));
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 ||
	    pipe2(err, O_CLOEXEC) < 0)
		return -1;
	lo.stdin_fd = in[0];
	lo.stdout_fd = out[1];
	lo.stderr_fd = err[1];
	if (src_live_launch(&lo, &t->src, &e) < 0) {
		tap_diag("launch %s: %s", argv[0], e.msg);
		return -1;
	}
	close(in[0]);
	close(out[1]);
	close(err[1]);
	t->to = in[1];
	t->from = out[0];
	t->err = err[0];
	fcntl(t->from, F_SETFL, O_NONBLOCK);
	fcntl(t->err, F_SETFL, O_NONBLOCK);
	return 0;
}

static int enable(struct t *t, const char *metric, const char *proc,
		  uint64_t req)
{
	struct pc_src_focus f = { .path = { "/Code", proc, "/SyncObject",
					    "/Files" } };

	return t->src->ops->enable(t->src, metric, &f, req);
}

/* The workers' pids, in fork order, from "worker <i> pid <pid>". */
static int workers(struct t *t, int *pid)
{
	int n = 0;

	for (const char *p = t->errs; (p = strstr(p, "worker ")) != NULL;
	     p++) {
		int i, w;

		if (sscanf(p, "worker %d pid %d", &i, &w) == 2 && i >= 0 &&
		    i < 3) {
			pid[i] = w;
			n++;
		}
	}
	return n;
}

/* Executable file mappings of pid whose bytes differ from the file's. */
static int code_differs(pid_t pid)
{
	char path[64], line[1024], file[900];
	unsigned long long lo, hi, off;
	int bad = 0, mem;
	FILE *maps;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if ((maps = fopen(path, "re")) == NULL)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	if ((mem = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		fclose(maps);
		return -1;
	}
	while (fgets(line, sizeof(line), maps) != NULL) {
		char perm[8];
		static char a[1 << 20], b[1 << 20];
		ssize_t n;
		int fd;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %899s", &lo, &hi,
			   perm, &off, file) != 5 || perm[2] != 'x' ||
		    file[0] != '/' || (fd = open(file, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		for (unsigned long long at = lo; at < hi; at += sizeof(a)) {
			size_t len = hi - at < sizeof(a) ? hi - at : sizeof(a);

			n = pread(fd, a, len, (off_t)(off + at - lo));
			if (n <= 0)
				break;
			if (pread(mem, b, (size_t)n, (off_t)at) != n ||
			    memcmp(a, b, (size_t)n) != 0) {
				bad++;
				break;
			}
		}
		close(fd);
	}
	close(mem);
	fclose(maps);
	return bad;
}

static bool traced_or_stopped(pid_t pid)
{
	char path[64], line[256];
	bool bad = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return false;
	while (fgets(line, sizeof(line), f) != NULL) {
		char st = 0;
		int tracer = 0;

		if (sscanf(line, "TracerPid: %d", &tracer) == 1 && tracer != 0)
			bad = true;
		if (sscanf(line, "State: %c", &st) == 1 &&
		    (st == 't' || st == 'T'))
			bad = true;
	}
	fclose(f);
	return bad;
}

static bool counted(const struct t *t)
{
	return t->sum[1] >= 1000 - 1e-6 && t->sum[2] >= 2000 - 1e-6 &&
	       t->sum[3] >= 3000 - 1e-6 && t->sum[0] >= 7000 - 1e-6 &&
	       t->sum[5] >= 6000 - 1e-6 && t->sum[6] >= 1000 - 1e-6 &&
	       t->sum[9] >= 6000 - 1e-6 && t->sum[10] >= 3000 - 1e-6 &&
	       t->sum[12] >= 1 - 1e-6 && t->sum[13] >= 3 - 1e-6;
}

int main(int argc, char **argv)
{
	char wf[] = "/tmp/hunch-e2e-kidseg-XXXXXX", wend[64], proc[64];
	char *av[] = { NULL, "--calls", "1000", "--wait-file", wf, NULL };
	struct pc_config *cfg = load_config();
	struct hunch_err err = { 0 };
	int pid[3] = { 0 }, fd;
	pid_t ppid;
	double end;
	struct t t;

	if (!tap_ok(cfg != NULL && argc == 2, "defaults + test metrics load"))
		return tap_done();
	if ((fd = mkstemp(wf)) < 0)
		return tap_done();
	close(fd);
	unlink(wf);
	snprintf(wend, sizeof(wend), "%s.end", wf);
	av[0] = argv[1];
	if (!tap_ok(launch(&t, av) == 0, "bn_forkers --calls launched"))
		return tap_done();
	src_live_fork_set_follow(t.src, true);
	ppid = src_live_pid(t.src);
	t.src->ops->poll_resources(t.src, on_disc, &t);
	if (!tap_ok(src_live_metrics_start(t.src, cfg, &err) == 0,
		    "metrics started"))
		tap_diag("%s", err.msg);
	snprintf(proc, sizeof(proc), "/Process/%d", (int)src_live_pid(t.src));
	tap_ok(enable(&t, "bnfk_calls", "/Process", 0) == 0 &&
	       enable(&t, "bnfk_calls", proc, 4) == 0,
	       "bnfk_calls enabled on the job and on the program's process");
	t.src->ops->poll_replies(t.src, on_reply, &t);
	tap_ok(t.status[0] == 1 && t.status[4] == 1 && !t.sampled[0] &&
	       !t.sampled[4], "both instrumented (%s%s)", t.reason[0],
	       t.reason[4]);
	src_live_resume(t.src, NULL);
	dprintf(t.to, "go\n");
	for (end = mono() + 60; mono() < end && !t.st.ended &&
	     (workers(&t, pid) < 3 || src_live_fork_processes(t.src) < 4);)
		pump(&t, 0.05);
	tap_eq(workers(&t, pid), 3, "the 3 workers forked");
	tap_eq(src_live_fork_processes(t.src), 4, "and are followed");
	for (int i = 0; i < 3; i++) {
		snprintf(proc, sizeof(proc), "/Process/%d", pid[i]);
		enable(&t, "bnfk_calls", proc, (uint64_t)(1 + i));
	}
	snprintf(proc, sizeof(proc), "/Process/%d/%d", pid[1], pid[1]);
	enable(&t, "bnfk_calls", proc, 7);
	enable(&t, "bnfk_calls2", "/Process", 5);
	snprintf(proc, sizeof(proc), "/Process/%d", pid[0]);
	enable(&t, "bnfk_calls2", proc, 6);
	snprintf(proc, sizeof(proc), "/Process/%d", (int)ppid);
	enable(&t, "bnfk_calls2", proc, 8);
	enable(&t, "bnfk_rets", "/Process", 9);
	snprintf(proc, sizeof(proc), "/Process/%d", pid[2]);
	enable(&t, "bnfk_rets", proc, 10);
	enable(&t, "bnfk_snprintf", "/Process", 13);
	snprintf(proc, sizeof(proc), "/Process/%d", pid[0]);
	enable(&t, "bnfk_snprintf", proc, 12);
	t.src->ops->poll_replies(t.src, on_reply, &t);
	for (int i = 0; i < 3; i++)
		tap_ok(t.status[1 + i] == 1 && !t.sampled[1 + i],
		       "bnfk_calls on worker %d's process: measured, not "
		       "sampled (%s)", i, t.reason[1 + i]);
	tap_ok(t.status[7] == 1 && !t.sampled[7], "bnfk_calls on worker 1's "
	       "main thread: measured, not sampled (%s)", t.reason[7]);
	tap_ok(t.status[5] == 1 && !t.sampled[5], "bnfk_calls2 on the job "
	       "after the fork: instrumented (%s)", t.reason[5]);
	for (int k = 6; k <= 13; k += k == 10 ? 2 : 1)
		tap_ok(t.status[k] == 1 && !t.sampled[k], "request %d, enabled "
		       "after the fork: instrumented (%s)", k, t.reason[k]);
	close(open(wf, O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
	for (end = mono() + 60; mono() < end && !t.st.ended && !counted(&t);)
		pump(&t, 0.05);
	pump(&t, 0.5);   /* past a sample period: nothing more counted */
	for (int i = 0; i < 3; i++)
		tap_ok(fabs(t.sum[1 + i] - 1000.0 * (i + 1)) < 1e-6,
		       "worker %d: its bnfk_work calls add up to %d (%.9g)",
		       i, 1000 * (i + 1), t.sum[1 + i]);
	tap_ok(fabs(t.sum[7] - 2000) < 1e-6, "worker 1's main thread: 2000 "
	       "(%.9g)", t.sum[7]);
	tap_ok(fabs(t.sum[0] - 7000) < 1e-6, "the job: 1000 + 6000 calls "
	       "(%.9g)", t.sum[0]);
	tap_ok(fabs(t.sum[4] - 1000) < 1e-6, "the program's process: its "
	       "own 1000 only (%.9g)", t.sum[4]);
	tap_ok(fabs(t.sum[5] - 6000) < 1e-6, "bnfk_calls2, enabled after the "
	       "fork: the workers' 6000 calls on the job (%.9g)", t.sum[5]);
	tap_ok(fabs(t.sum[6] - 1000) < 1e-6, "bnfk_calls2 on worker 0: 1000 "
	       "(%.9g)", t.sum[6]);
	tap_ok(fabs(t.sum[8]) < 1e-6, "bnfk_calls2 on the program's process: "
	       "0, its slot does not move (%.9g)", t.sum[8]);
	tap_ok(fabs(t.sum[9] - 6000) < 1e-6, "bnfk_rets, a new patch after "
	       "the fork: the workers' 6000 returns on the job (%.9g)",
	       t.sum[9]);
	tap_ok(fabs(t.sum[10] - 3000) < 1e-6, "bnfk_rets on worker 2: 3000 "
	       "(%.9g)", t.sum[10]);
	tap_ok(fabs(t.sum[12] - 1) < 1e-6, "snprintf in libc, enabled after "
	       "the fork on worker 0 (code memory near libc mapped in the "
	       "worker too): its one call after the enable (%.9g)", t.sum[12]);
	tap_ok(fabs(t.sum[13] - 3) < 1e-6, "snprintf on the job: the workers' "
	       "3 calls, none in the program meanwhile (%.9g)", t.sum[13]);
	for (int i = 0; i < 3; i++)
		tap_ok(code_differs(pid[i]) > 0, "worker %d runs the patches it "
		       "inherited", i);
	for (int k = 0; k < NH; k++)
		if (t.h[k] != 0)
			t.src->ops->disable(t.src, t.h[k]);
	for (end = mono() + 30; mono() < end && !t.st.ended &&
	     (code_differs(pid[0]) != 0 || code_differs(pid[1]) != 0 ||
	      code_differs(pid[2]) != 0);)
		pump(&t, 0.05);
	for (int i = 0; i < 3; i++)
		tap_eq(code_differs(pid[i]), 0, "every instance disabled: "
		       "worker %d's code equals its files", i);
	enable(&t, "bnfk_rets", "/Process", 11);
	for (end = mono() + 30; mono() < end && !t.st.ended &&
	     code_differs(pid[2]) <= 0;)
		pump(&t, 0.05);
	tap_ok(code_differs(pid[2]) > 0, "bnfk_rets enabled again: worker 2 "
	       "runs its patch again");
	t.src->ops->close(t.src);   /* hunch detaches; the workers run on */
	for (int i = 0; i < 3; i++) {
		tap_eq(code_differs(pid[i]), 0, "after the detach worker %d's "
		       "code equals its files", i);
		tap_ok(!traced_or_stopped(pid[i]), "worker %d is neither "
		       "traced nor stopped", i);
	}
	close(open(wend, O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
	for (end = mono() + 60; mono() < end &&
	     strstr(t.out, "bn_forkers done\n") == NULL;)
		drain(t.from, t.out, &t.outlen, sizeof(t.out)), usleep(10000);
	dprintf(t.to, "exit\n");
	{
		int st = -1;

		tap_ok(waitpid(ppid, &st, 0) == ppid && WIFEXITED(st) &&
		       WEXITSTATUS(st) == 0, "the program exited 0: every "
		       "worker exited 0");
	}
	drain(t.from, t.out, &t.outlen, sizeof(t.out));
	tap_ok(strcmp(t.out, "bn_forkers workers=3 seconds=10\n"
		      "bn_forkers done\n") == 0, "its usual output");
	unlink(wf);
	unlink(wend);
	pc_config_free(cfg);
	return tap_done();
}

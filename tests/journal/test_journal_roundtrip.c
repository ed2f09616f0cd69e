/*
 * test_journal_roundtrip.c - a journal with every record kind, written by
 * the writer and read back by the reader: every field equal, doubles to
 * the bit, bytes of program output exact, the header as given.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/utsname.h>

#include "hunch_config.h"
#include "jtest.h"
#include "tap.h"

#define FOCUS "</Code/prog/x.c/f,/Process,/SyncObject,/Files>"

static const struct pc_discovery discs[] = {
	{ .kind = PC_DISC_FUNCTION, .module = "prog", .srcfile = "x.c",
	  .function = "f", .addr = 0x401136 },
	{ .kind = PC_DISC_FUNCTION, .module = "libc.so.6",
	  .function = "memcpy", .addr = 0x7f3a12345678 },
	{ .kind = PC_DISC_FUNCTION, .module = "[vsyscall]",
	  .function = "time", .addr = 0xffffffffff600400 },
	{ .kind = PC_DISC_PROCESS, .pid = 4242 },
	{ .kind = PC_DISC_THREAD, .pid = 4242, .tid = 4243, .function = "worker" },
	{ .kind = PC_DISC_SYNCOBJ, .sync_class = "Mutex", .name = "queue_lock",
	  .addr = 0x404040 },
	{ .kind = PC_DISC_FILE, .name = "/tmp/data \"quoted\".bin" },
	{ .kind = PC_DISC_THREAD, .retired = true, .pid = 4242, .tid = 4243 },
	{ .kind = PC_DISC_FUNCTION, .retired = true, .module = "plugin.so",
	  .srcfile = "p.c", .function = "g", .addr = 0x7f0000001000 },
};
#define N_DISCS (sizeof(discs) / sizeof(discs[0]))

struct out_case {
	enum jnl_stream s;
	const char *bytes;
	size_t len;
	bool eol;
};
static const struct out_case outs[] = {
	{ JNL_STDOUT, "hello, world", 12, true },
	{ JNL_STDERR, "h\xc3\xa9llo \xe2\x9c\x93 utf-8", 16, true },
	{ JNL_STDOUT, "\x1b[31mred\x1b[0m\ttab\r", 17, true },
	{ JNL_STDOUT, "\xff\xfe\0abc", 6, true },          /* b64 */
	{ JNL_STDERR, "", 0, true },
	{ JNL_STDOUT, "no newline yet", 14, false },
};
#define N_OUTS (sizeof(outs) / sizeof(outs[0]))
#define BIG_LEN (3 * JNL_OUTPUT_CHUNK + 123)

static const struct jnl_target targets[] = {
	{ JNL_TEV_THREAD_START, 4242, 4243, 0, 0, "worker", false, 0 },
	{ JNL_TEV_THREAD_EXIT, 4242, 4243, 0, 0, NULL, false, 0 },
	{ JNL_TEV_SIGNAL, 4242, 4242, 0, SIGUSR1, NULL, false, 0 },
	{ JNL_TEV_EXEC, 4242, 0, 0, 0, NULL, true, 1.25 },
	{ JNL_TEV_EXIT, 4242, 0, 3, 0, NULL, true, 2.5 },
	{ JNL_TEV_KILLED, 4242, 0, 0, SIGSEGV, NULL, true, 0.0 },
	{ JNL_TEV_DETACHED, 4242, 0, 0, 0, NULL, false, 0 },
};
#define N_TARGETS (sizeof(targets) / sizeof(targets[0]))

static const uint64_t sample_ids[] = { 1, 2, 3, 4, 5, 6, 7, 8, 1ull << 40 };
#define N_SAMPLES (sizeof(sample_ids) / sizeof(sample_ids[0]))
static double sample_vals[N_SAMPLES];

static void init_samples(void)
{
	volatile double a = 0.1, b = 0.2;
	const double v[N_SAMPLES] = { a + b, 1e-300, 123456789.123456789,
		-0.0, 42.0, NAN, 1.7976931348623157e308, 5e-324, INFINITY };

	memcpy(sample_vals, v, sizeof(v));
}

/* The generic records: kind and fields, as the consultant will pass them. */
static json_t *generic_fields(int k, const char **kind)
{
	switch (k) {
	case 0: *kind = "node";
		return json_pack("{s:i,s:s,s:s,s:[i],s:i,s:b,s:s}", "node", 7, "hyp",
				 "CPUbound", "focus", FOCUS, "parents", 0, "phase", 0,
				 "why", 0, "name", "CPUbound" FOCUS);
	case 1: *kind = "edge";
		return json_pack("{s:i,s:i,s:i,s:b,s:b}", "node", 7, "parent", 3,
				 "phase", 0, "why", 1, "shadow", 1);
	case 2: *kind = "node_state";
		return json_pack("{s:i,s:s,s:s,s:{s:f,s:f,s:f,s:i}}", "node", 7,
				 "state", "true", "from", "active", "evidence",
				 "value", 0.42, "threshold", 0.2, "observed_s", 3.4,
				 "samples", 17);
	case 3: *kind = "action";
		return json_pack("{s:s,s:s,s:f,s:f}", "action", "tunable", "name",
				 "costLimit", "value", 0.2, "old", 0.1);
	case 4: *kind = "action";
		return json_pack("{s:s}", "action", "pause");
	case 5: *kind = "action";
		return json_pack("{s:s}", "action", "resume");
	case 6: *kind = "action";
		return json_pack("{s:s,s:i,s:s}", "action", "phase_start", "phase",
				 1, "name", "steady state");
	case 7: *kind = "action";
		return json_pack("{s:s,s:s,s:s}", "action", "experiment", "hyp",
				 "ExcessiveSyncWaitingTime", "focus", FOCUS);
	case 8: *kind = "x_future_kind";   /* from a newer hunch */
		return json_pack("{s:i}", "whatever", 1);
	case 9: *kind = "stack_samples";   /* the report's, as recorded */
		return json_pack("{s:{s:i,s:f,s:[{s:s,s:s,s:i,s:f}]}}",
				 "samples", "count", 80, "seconds", 0.8,
				 "self", "function", "memcmp", "module",
				 "libc.so.6", "samples", 48, "percent", 60.0);
	default: return NULL;
	}
}
#define N_GENERIC 10

static char big[BIG_LEN];

/* The source side (pc_source_ops), as the live loop will record it. */
static const struct pc_src_focus focus = { { "/Code/prog/x.c/f<int, char>",
	"/Process/4242", "/SyncObject", "/Files" } };
static const struct pc_src_reply reply_ok = { 17, 0, 1ull << 33, NULL, true };
static const struct pc_src_reply reply_bad = { 18, -EPERM, 0,
	"cannot instrument f: no room for a jump", false };
static const struct pc_src_sample srcs[] = {
	{ 1, 0.2, 0.4, 0.25 }, { 2, 0.2, 0.4, 0.5 }, { 3, 0.3, 0.4, 0.125 },
};
static const char *const callees[] = { "/Code/prog/x.c/g", "/Code/libc.so.6/-/memcpy" };


static double ts_of(int n);

static int write_source(struct jnl_writer *w, int *n)
{
	int bad = 0;

	bad |= jnl_write_tick(w, ts_of((*n)++), 12.6);
	bad |= jnl_write_period(w, ts_of((*n)++), 0.4);
	bad |= jnl_write_predict(w, ts_of((*n)++), "cpu_time", &focus, 0.0125);
	bad |= jnl_write_enable(w, ts_of((*n)++), "cpu_time", &focus, 17, 0.0125, 7, 0);
	bad |= jnl_write_enable(w, ts_of((*n)++), "wall_time", &focus, 18, 0.5, -1, -1);
	bad |= jnl_write_reply(w, ts_of((*n)++), &reply_ok);
	bad |= jnl_write_reply(w, ts_of((*n)++), &reply_bad);
	bad |= jnl_write_samples(w, ts_of((*n)++), srcs, 3);   /* two records */
	bad |= jnl_write_cost(w, ts_of((*n)++), 0.0311, 0.03, 0.1, 0, 0);
	bad |= jnl_write_cost(w, ts_of((*n)++), 0.02, -1, -1, 0, 0);
	bad |= jnl_write_cost(w, ts_of((*n)++), 0.01, -1, -1, 138, 0.232);
	bad |= jnl_write_callees(w, ts_of((*n)++), NULL, callees, 1);
	bad |= jnl_write_callees(w, ts_of((*n)++), "/Code/prog/x.c/f", callees, 2);
	bad |= jnl_write_hint(w, ts_of((*n)++), "/Code/prog/x.c/f", 0.75);
	bad |= jnl_write_disable(w, ts_of((*n)++), 1ull << 33, "concluded");
	return bad;
}

/* ts of the n-th record: not on a microsecond, to check the rounding. */
static double ts_of(int n)
{
	return n * 0.2 + 3e-7;
}

static double ts_rounded(int n)
{
	return (double)(int64_t)(ts_of(n) * 1e6 + 0.5) / 1e6;
}

static int write_journal(const char *path, const struct jnl_header *h)
{
	struct jnl_writer *w;
	struct hunch_err err = { 0 };
	int n = 0, bad = 0;
	size_t k;

	if (jnl_write_open(&w, path, h, NULL, &err) != 0) {
		tap_diag("%s", err.msg);
		return -1;
	}
	for (k = 0; k < N_DISCS; k++)
		bad |= jnl_write_discovery(w, ts_of(n++), &discs[k]);
	for (k = 0; k < N_OUTS; k++)
		bad |= jnl_write_output(w, ts_of(n++), outs[k].s, outs[k].bytes,
					outs[k].len, outs[k].eol);
	bad |= jnl_write_output(w, ts_of(n++), JNL_STDOUT, big, BIG_LEN, true);
	for (k = 0; k < N_TARGETS; k++)
		bad |= jnl_write_target(w, ts_of(n++), &targets[k]);
	bad |= jnl_write_sample_arrays(w, ts_of(n++), 12.2, 12.4, N_SAMPLES,
				       sample_ids, sample_vals);
	bad |= write_source(w, &n);
	bad |= jnl_write_flush(w);
	for (int g = 0; g < N_GENERIC; g++) {
		const char *kind;
		json_t *f = generic_fields(g, &kind);

		bad |= jnl_write_json(w, kind, ts_of(n++), f);
		json_decref(f);
	}
	bad |= jnl_write_end(w, ts_of(n++), "target_exited",
			     "prog exited with status 3");
	bad |= jnl_write_close(w, &err);
	return bad ? -1 : n;
}

static int next(struct jnl_reader *r, struct jnl_record *rec)
{
	struct hunch_err err = { 0 };
	int rc = jnl_read_next(r, rec, &err);

	if (rc == JNL_NEXT_BAD)
		tap_diag("unexpected: %s", err.msg);
	return rc;
}

static bool streq(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a && b && strcmp(a, b) == 0);
}

static bool disc_equal(const struct pc_discovery *a,
		       const struct pc_discovery *b)
{
	return a->kind == b->kind && a->retired == b->retired &&
	       streq(a->module, b->module) && streq(a->srcfile, b->srcfile) &&
	       streq(a->function, b->function) &&
	       streq(a->sync_class, b->sync_class) && streq(a->name, b->name) &&
	       a->addr == b->addr && a->pid == b->pid && a->tid == b->tid;
}

static void check_header(const json_t *h, const struct jnl_header *want)
{
	struct utsname u;
	const json_t *k = json_object_get(h, "kernel");
	const json_t *c = json_object_get(h, "clock");
	json_t *argv = json_pack("[s,s,s]", jt_argv[0], jt_argv[1], jt_argv[2]);

	uname(&u);
	tap_eq(json_integer_value(json_object_get(h, "journal_version")), 1,
	       "header: journal_version 1");
	tap_ok(streq(json_string_value(json_object_get(h, "hunch_version")),
		     HUNCH_VERSION), "header: hunch_version %s", HUNCH_VERSION);
	tap_ok(streq(json_string_value(json_object_get(h, "host")), u.nodename),
	       "header: host is the nodename");
	tap_ok(streq(json_string_value(json_object_get(k, "release")), u.release) &&
	       streq(json_string_value(json_object_get(k, "machine")), u.machine),
	       "header: kernel release and machine from uname");
	tap_ok(json_equal(json_object_get(json_object_get(h, "target"), "argv"),
			  argv), "header: target argv");
	tap_ok(streq(json_string_value(json_object_get(h, "program")), "prog") &&
	       streq(json_string_value(json_object_get(h, "mode")), "batch"),
	       "header: program and mode");
	tap_ok(streq(json_string_value(json_object_get(h, "start_wall")),
		     "2026-11-22T08:00:00.123456Z"),
	       "header: start_wall in ISO 8601 UTC, microseconds");
	tap_eq(json_integer_value(json_object_get(h, "start_mono_ns")),
	       5000000000ll, "header: start_mono_ns");
	tap_ok(json_real_value(json_object_get(c, "tsc_hz")) == want->tsc_hz &&
	       json_is_true(json_object_get(c, "tsc_invariant")),
	       "header: clock calibration");
	tap_ok(json_equal(json_object_get(h, "hypotheses"), (json_t *)want->hypotheses),
	       "header: hypotheses document equal");
	tap_ok(json_equal(json_object_get(h, "tunables"), (json_t *)want->tunables),
	       "header: tunables equal");
	json_decref(argv);
}

struct walk {
	struct jnl_reader *r;
	struct jnl_record rec;
	int n;            /* records read after the header */
	int ts_bad;
	bool seen[JNL_REC_NKINDS];
};

/* Read the next record; `same_ts`: it shares the previous one's ts
 * (the chunks of one long output line). */
static bool step_ts(struct walk *wk, bool same_ts)
{
	if (next(wk->r, &wk->rec) != JNL_NEXT_RECORD)
		return false;
	wk->seen[wk->rec.kind] = true;
	if (same_ts)
		wk->n--;
	wk->ts_bad += wk->rec.ts != ts_rounded(wk->n);
	wk->n++;
	return true;
}

static bool step(struct walk *wk)
{
	return step_ts(wk, false);
}

static void check_discoveries(struct walk *wk)
{
	int bad = 0;

	for (size_t k = 0; k < N_DISCS; k++) {
		struct pc_discovery d;

		if (!step(wk) || wk->rec.kind != JNL_REC_RESOURCE ||
		    jnl_record_discovery_decode(wk->rec.json, &d, NULL) != 0 ||
		    !disc_equal(&d, &discs[k])) {
			tap_diag("discovery %zu differs (line %llu)", k,
				 (unsigned long long)wk->rec.line);
			bad++;
		}
	}
	tap_eq(bad, 0, "%zu discoveries (all kinds, retired, 64-bit addr) round-trip",
	       N_DISCS);
}

static bool output_is(struct walk *wk, const struct out_case *o,
		      bool same_ts)
{
	struct jnl_output got;
	bool ok;

	if (!step_ts(wk, same_ts) || wk->rec.kind != JNL_REC_OUTPUT ||
	    jnl_record_output_decode(wk->rec.json, &got, NULL) != 0)
		return false;
	ok = got.stream == o->s && got.eol == o->eol && got.len == o->len &&
	     memcmp(got.bytes, o->bytes, o->len) == 0;
	free(got.bytes);
	return ok;
}

static void check_outputs(struct walk *wk)
{
	int bad = 0, b64 = 0;

	for (size_t k = 0; k < N_OUTS; k++) {
		if (!output_is(wk, &outs[k], false)) {
			tap_diag("output %zu differs", k);
			bad++;
		}
		b64 += json_object_get(wk->rec.json, "b64") != NULL;
	}
	tap_eq(bad, 0, "%zu output lines round-trip byte for byte", N_OUTS);
	tap_eq(b64, 1, "only the line with invalid UTF-8 and NUL is base64");
	bad = 0;
	for (size_t off = 0, k = 0; off < BIG_LEN; off += JNL_OUTPUT_CHUNK, k++) {
		size_t n = BIG_LEN - off < JNL_OUTPUT_CHUNK ? BIG_LEN - off
							    : JNL_OUTPUT_CHUNK;
		struct out_case o = { JNL_STDOUT, big + off, n,
				      off + n == BIG_LEN };

		bad += !output_is(wk, &o, k > 0);
	}
	tap_eq(bad, 0, "a %d-byte line comes back as 4 chunks, eol on the last",
	       BIG_LEN);
}

static void check_targets(struct walk *wk)
{
	int bad = 0;

	for (size_t k = 0; k < N_TARGETS; k++) {
		struct jnl_target t;
		const struct jnl_target *w = &targets[k];

		if (!step(wk) || wk->rec.kind != JNL_REC_TARGET ||
		    jnl_record_target_decode(wk->rec.json, &t, NULL) != 0 ||
		    t.event != w->event || t.pid != w->pid || t.tid != w->tid ||
		    t.code != w->code || t.signal != w->signal ||
		    t.has_t != w->has_t || t.t != w->t ||
		    !streq(t.function, w->function)) {
			tap_diag("target event %zu differs", k);
			bad++;
		}
	}
	tap_eq(bad, 0, "%zu target events round-trip", N_TARGETS);
}

static void check_samples(struct walk *wk)
{
	struct jnl_sample s = { 0 };
	int bad = 0;

	if (!step(wk) || wk->rec.kind != JNL_REC_SAMPLE ||
	    jnl_record_sample_decode(wk->rec.json, &s, NULL) != 0 || s.n != N_SAMPLES) {
		tap_ok(0, "sample record read back");
		return;
	}
	for (size_t k = 0; k < N_SAMPLES; k++) {
		bool same = isfinite(sample_vals[k])
			? memcmp(&s.vals[k], &sample_vals[k], sizeof(double)) == 0
			: isnan(s.vals[k]);

		bad += !same || s.ids[k] != sample_ids[k];
	}
	tap_ok(s.t0 == 12.2 && s.t1 == 12.4 && bad == 0,
	       "samples: ids and values to the bit (0.1+0.2, -0, subnormal, max; NaN/inf as null)");
	jnl_record_sample_free(&s);
}

static const json_t *field(const struct walk *wk, const char *name)
{
	return json_object_get(wk->rec.json, name);
}

static bool focus_is(const json_t *arr)
{
	struct pc_src_focus f;

	if (jnl_record_focus_decode(arr, &f, NULL) != 0)
		return false;
	for (int h = 0; h < PC_SRC_NHIER; h++)
		if (!streq(f.path[h], focus.path[h]))
			return false;
	return true;
}

static bool reply_is(struct walk *wk, const struct pc_src_reply *want)
{
	struct pc_src_reply r;

	return step(wk) && wk->rec.kind == JNL_REC_REPLY &&
	       jnl_record_reply_decode(wk->rec.json, &r, NULL) == 0 &&
	       r.req == want->req && r.status == want->status &&
	       r.handle == want->handle && streq(r.reason, want->reason) &&
	       r.sampled == want->sampled;
}

static bool samples_are(struct walk *wk, const struct pc_src_sample *want,
			size_t n, bool same_ts)
{
	struct jnl_sample s;
	bool ok;

	if (!step_ts(wk, same_ts) || wk->rec.kind != JNL_REC_SAMPLE ||
	    jnl_record_sample_decode(wk->rec.json, &s, NULL) != 0)
		return false;
	ok = s.n == n;
	for (size_t k = 0; ok && k < n; k++) {
		struct pc_src_sample x = jnl_record_sample_at(&s, k);

		ok = x.handle == want[k].handle && x.t0 == want[k].t0 &&
		     x.t1 == want[k].t1 && x.value == want[k].value;
	}
	jnl_record_sample_free(&s);
	return ok;
}

static void check_source(struct walk *wk)
{
	const json_t *c;

	tap_ok(step(wk) && wk->rec.kind == JNL_REC_TICK &&
	       json_real_value(field(wk, "now")) == 12.6, "tick with the source's now");
	tap_ok(step(wk) && wk->rec.kind == JNL_REC_PERIOD &&
	       json_real_value(field(wk, "seconds")) == 0.4, "period");
	tap_ok(step(wk) && wk->rec.kind == JNL_REC_PREDICT &&
	       streq(json_string_value(field(wk, "metric")), "cpu_time") &&
	       focus_is(field(wk, "focus")) &&
	       json_real_value(field(wk, "cost")) == 0.0125,
	       "predict: metric, focus (a path with a comma stays whole), cost");
	tap_ok(step(wk) && wk->rec.kind == JNL_REC_ENABLE &&
	       json_integer_value(field(wk, "req")) == 17 &&
	       streq(json_string_value(field(wk, "metric")), "cpu_time") &&
	       focus_is(field(wk, "focus")) &&
	       json_real_value(field(wk, "predicted_cost")) == 0.0125 &&
	       json_integer_value(field(wk, "node")) == 7 &&
	       json_integer_value(field(wk, "phase")) == 0,
	       "enable: req, metric, focus, predicted cost, node, phase");
	tap_ok(step(wk) && wk->rec.kind == JNL_REC_ENABLE &&
	       field(wk, "node") == NULL && field(wk, "phase") == NULL,
	       "enable without a node: no node or phase field");
	tap_ok(reply_is(wk, &reply_ok), "reply: success with a 64-bit handle, sampled");
	tap_ok(reply_is(wk, &reply_bad) && field(wk, "inst") == NULL,
	       "reply: failure with status and reason, no handle");
	tap_ok(samples_are(wk, srcs, 2, false) && samples_are(wk, srcs + 2, 1, true),
	       "samples of two intervals: two records, every pc_src_sample exact");
	tap_ok(step(wk) && wk->rec.kind == JNL_REC_COST &&
	       json_real_value(field(wk, "observed")) == 0.0311 &&
	       json_real_value(field(wk, "predicted")) == 0.03 &&
	       json_real_value(field(wk, "limit")) == 0.1, "cost with prediction and limit");
	tap_ok(step(wk) && wk->rec.kind == JNL_REC_COST &&
	       field(wk, "predicted") == NULL && field(wk, "limit") == NULL &&
	       field(wk, "holds") == NULL && field(wk, "held") == NULL,
	       "cost alone");
	tap_ok(step(wk) && wk->rec.kind == JNL_REC_COST &&
	       json_integer_value(field(wk, "holds")) == 138 &&
	       json_real_value(field(wk, "held")) == 0.232,
	       "cost with the program's holds");
	tap_ok(step(wk) && wk->rec.kind == JNL_REC_CALLEES && field(wk, "path") == NULL &&
	       json_array_size(field(wk, "callees")) == 1, "callees of the start (no path)");
	c = step(wk) ? field(wk, "callees") : NULL;
	tap_ok(wk->rec.kind == JNL_REC_CALLEES &&
	       streq(json_string_value(field(wk, "path")), "/Code/prog/x.c/f") &&
	       streq(json_string_value(json_array_get(c, 1)), callees[1]),
	       "callees of a function");
	tap_ok(step(wk) && wk->rec.kind == JNL_REC_HINT &&
	       json_real_value(field(wk, "share")) == 0.75, "hint");
	tap_ok(step(wk) && wk->rec.kind == JNL_REC_DISABLE &&
	       (uint64_t)json_integer_value(field(wk, "inst")) == 1ull << 33 &&
	       streq(json_string_value(field(wk, "reason")), "concluded"),
	       "disable");
}

static void check_generic(struct walk *wk)
{
	int bad = 0;

	for (int g = 0; g < N_GENERIC; g++) {
		const char *kind;
		json_t *f = generic_fields(g, &kind);

		json_object_set_new(f, "t", json_string(kind));
		json_object_set_new(f, "ts", json_real(ts_rounded(wk->n)));
		if (!step(wk) || !json_equal((json_t *)wk->rec.json, f) ||
		    !streq(wk->rec.kind_name, kind)) {
			tap_diag("generic record %d (%s) differs", g, kind);
			bad++;
		}
		json_decref(f);
	}
	tap_eq(bad, 0, "%d generic records (node, edge, node_state, actions, an unknown kind, stack_samples) equal",
	       N_GENERIC);
}

static void check_end(struct walk *wk)
{
	const char *msg = "x";

	tap_ok(step(wk) && wk->rec.kind == JNL_REC_END &&
	       streq(json_string_value(json_object_get(wk->rec.json, "reason")),
		     "target_exited") &&
	       streq(json_string_value(json_object_get(wk->rec.json, "message")),
		     "prog exited with status 3"),
	       "end record with reason and message");
	tap_eq(json_integer_value(json_object_get(wk->rec.json, "records")),
	       wk->rec.line - 1, "end record counts the records before it");
	tap_ok(next(wk->r, &wk->rec) == JNL_NEXT_END &&
	       jnl_read_end(wk->r, &msg) == JNL_END_COMPLETE && msg == NULL,
	       "the journal ends complete, no message");
}

static void test_roundtrip(void)
{
	json_t *hyp, *tun;
	struct jnl_header h = jt_header(&hyp, &tun);
	struct hunch_err err = { 0 };
	struct walk wk = { 0 };
	char path[300];
	int n;

	jt_path(path, sizeof(path), "all.jsonl");
	init_samples();
	for (size_t k = 0; k < BIG_LEN; k++)
		big[k] = (char)('a' + k % 26);
	n = write_journal(path, &h);
	tap_ok(n > 0, "writer accepted every record");
	if (jnl_read_open(&wk.r, path, &err) != 0) {
		tap_ok(0, "open: %s", err.msg);
		return;
	}
	check_header(jnl_read_header(wk.r), &h);
	check_discoveries(&wk);
	check_outputs(&wk);
	check_targets(&wk);
	check_samples(&wk);
	check_source(&wk);
	check_generic(&wk);
	check_end(&wk);
	tap_eq(wk.ts_bad, 0, "every ts is the one written, rounded to the microsecond");
	size_t flen;
	char *text = jt_slurp(path, &flen);
	tap_ok(text && strstr(text, "\"t0\":12.2,\"t1\":12.4,\"i\":[1,2,3") &&
	       strstr(text, "0.30000000000000004"),
	       "a field needing 17 digits does not lengthen its neighbours (\"t0\":12.2)");
	free(text);
	for (int k = 1; k < JNL_REC_NKINDS; k++)
		tap_ok(k == JNL_REC_HEADER || wk.seen[k],
		       "record kind \"%s\" is in the round trip", jnl_format_kind_name(k));
	tap_ok(wk.seen[JNL_REC_UNKNOWN], "an unknown kind is passed on, not refused");
	jnl_read_close(wk.r);
	json_decref(hyp);
	json_decref(tun);
}

/* A ts earlier than the last one (or NaN) is raised to it. */
static void test_time_order(void)
{
	json_t *hyp, *tun;
	struct jnl_header h = jt_header(&hyp, &tun);
	struct jnl_writer *w;
	struct jnl_reader *r;
	struct jnl_record rec;
	const double in[] = { 5.0, 3.0, NAN, 7.25 }, want[] = { 5.0, 5.0, 5.0, 7.25 };
	char path[300];
	int bad = 0;

	jt_path(path, sizeof(path), "order.jsonl");
	jnl_write_open(&w, path, &h, NULL, NULL);
	for (int k = 0; k < 4; k++) {
		json_t *f = json_pack("{s:f}", "observed", 0.0);

		jnl_write_json(w, "cost", in[k], f);
		json_decref(f);
	}
	jnl_write_close(w, NULL);
	if (jnl_read_open(&r, path, NULL) == 0) {
		for (int k = 0; k < 4; k++)
			bad += next(r, &rec) != JNL_NEXT_RECORD || rec.ts != want[k];
		jnl_read_close(r);
	}
	tap_eq(bad, 0, "a ts that goes back (or is NaN) is written as the last one");
	json_decref(hyp);
	json_decref(tun);
}

static uint64_t rng = 6;

static unsigned rnd(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % n);
}

/* Random bytes: mostly text, with invalid UTF-8, NUL, controls, quotes,
 * backslashes and multi-byte characters mixed in. */
static size_t random_bytes(unsigned char *b, size_t max)
{
	static const char *const pieces[] = { "a", "Z", " ", "\"", "\\", "\t",
		"\x1b[0m", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xff",
		"\xc3", "\x80", "\0", "\r", "\x7f", "\\u0000", "}" };
	size_t n = 0, want = rnd(20) == 0 ? rnd((unsigned)max) : rnd(200);

	while (n < want) {
		unsigned k = rnd(sizeof(pieces) / sizeof(pieces[0]));
		size_t l = k == 13 ? 1 : strlen(pieces[k]);

		if (n + l > max)
			break;
		memcpy(b + n, pieces[k], l);
		n += l;
	}
	return n;
}

/* 1,000 random output lines: the bytes of each stream come back exactly. */
static void test_random_outputs(void)
{
	enum { N = 1000, MAX = 3 * JNL_OUTPUT_CHUNK, CAP = 16 << 20 };
	json_t *hyp, *tun;
	struct jnl_header h = jt_header(&hyp, &tun);
	unsigned char *line = malloc(MAX), *want[2], *got[2];
	size_t wlen[2] = { 0, 0 }, glen[2] = { 0, 0 };
	struct jnl_writer *w;
	struct jnl_reader *r;
	struct jnl_record rec;
	char path[300];
	int bad = 0;

	for (int s = 0; s < 2; s++) {
		want[s] = malloc((size_t)CAP);
		got[s] = malloc((size_t)CAP);
	}
	jt_path(path, sizeof(path), "random.jsonl");
	jnl_write_open(&w, path, &h, NULL, NULL);
	for (int k = 0; k < N; k++) {
		size_t n = random_bytes(line, MAX);
		int s = (int)rnd(2);
		bool eol = rnd(4) != 0;

		if (wlen[s] + n + 1 > (size_t)CAP)
			break;
		memcpy(want[s] + wlen[s], line, n);
		wlen[s] += n;
		if (eol)
			want[s][wlen[s]++] = '\n';
		jnl_write_output(w, k * 0.01, s ? JNL_STDERR : JNL_STDOUT, line, n, eol);
	}
	jnl_write_close(w, NULL);
	if (jnl_read_open(&r, path, NULL) == 0) {
		while (jnl_read_next(r, &rec, NULL) == JNL_NEXT_RECORD) {
			struct jnl_output o;

			if (jnl_record_output_decode(rec.json, &o, NULL) != 0)
				o.len = CAP;   /* counted as bad below */
			if (glen[o.stream] + o.len + 1 > (size_t)CAP) {
				bad++;
				free(o.bytes);
				continue;
			}
			memcpy(got[o.stream] + glen[o.stream], o.bytes, o.len);
			glen[o.stream] += o.len;
			if (o.eol)
				got[o.stream][glen[o.stream]++] = '\n';
			free(o.bytes);
		}
		jnl_read_close(r);
	}
	tap_ok(bad == 0 && wlen[0] == glen[0] && wlen[1] == glen[1] &&
	       memcmp(want[0], got[0], wlen[0]) == 0 &&
	       memcmp(want[1], got[1], wlen[1]) == 0,
	       "%d random output lines (invalid UTF-8, NUL, escapes, up to 3 chunks): stdout %zu and stderr %zu bytes come back exactly",
	       N, wlen[0], wlen[1]);
	for (int s = 0; s < 2; s++) {
		free(want[s]);
		free(got[s]);
	}
	free(line);
	json_decref(hyp);
	json_decref(tun);
}

int main(void)
{
	test_roundtrip();
	test_time_order();
	test_random_outputs();
	jt_rm_tmpdir();
	return tap_done();
}

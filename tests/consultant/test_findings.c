/*
 * test_findings.c - findings on the sim source (sim_world.h): the true
 * nodes of one cause grouped into one finding across hierarchies and
 * hypotheses (a mutex waited for and locked often, in one function; a
 * function's small I/O on a file and the CPU it costs), ranked by
 * seconds per second, said in plain words; which are new to tell; the
 * report's text head and JSON `findings`; a finding on one thread of a
 * job of two processes measured by that thread, not the whole job; a
 * wait for another process of the job, which computes, ranked after it.
 */
#include <math.h>

#include "pc_findings.h"
#include "pc_report.h"
#include "sim_world.h"

#define AT(f) "<" f ",/Process,/SyncObject,/Files>"
#define OBJ(o) "</Code,/Process,/SyncObject/" o ",/Files>"
#define FILE_AT(p) "</Code,/Process,/SyncObject,/Files" p ">"

static char *line_of(struct world *w, const struct pc_finding *f)
{
	static char buf[1024];

	return pc_findings_text_line(w->pc, f, buf, sizeof(buf));
}

static void line_is(struct world *w, const struct pc_finding *f,
		    const char *want, const char *what)
{
	const char *got = f ? line_of(w, f) : "(none)";

	tap_ok(strcmp(got, want) == 0, "%s", what);
	if (tap_failed)
		tap_diag("got  %s\nwant %s", got, want);
}

/* The findings in order, with what each may be a symptom of. */
static void diag_findings(struct world *w, const struct pc_findings *fs)
{
	for (size_t i = 0; i < fs->n; i++)
		tap_diag("%zu. %s (symptom of %d)", i + 1,
			 line_of(w, &fs->f[i]), fs->f[i].symptom_of);
}

static size_t count_hyp(struct world *w, const struct pc_finding *f,
			const char *hyp)
{
	size_t k = 0;

	for (size_t i = 0; i < f->nnodes; i++)
		k += strcmp(w->cfg->hyp[f->nodes[i]->hyp].name, hyp) == 0;
	return k;
}

/* A mutex waited for (0.6 s/s) and locked often (200000 a second) at
 * each of the n foci, nothing anywhere else but a little CPU. */
static void script_mutex(struct world *w, const char *const *hot, size_t n)
{
	src_sim_script(w->sim, "cpu_inclusive", "*", 0, 0.05, 0);
	src_sim_script(w->sim, "sync_wait", "*", 0, 0, 0);
	src_sim_script(w->sim, "sync_ops", "*", 0, 0, 0);
	for (size_t i = 0; i < n; i++) {
		src_sim_script(w->sim, "sync_wait", hot[i], 0, 0.6, 0);
		src_sim_script(w->sim, "sync_ops", hot[i], 0, 2e5, 0);
	}
}

/* A mutex in `locker`: waited for (sync_wait) and locked very often
 * (sync_ops), seen as a function, the process and the object under
 * both hypotheses: one finding. */
static void test_sync(void)
{
	struct world *w = world_new(NULL, NULL);
	struct pc_findings fs = { 0 };
	struct pc_findings_told told = { 0 };
	const char *hot[] = { TOP, AT(F_MAIN), AT(F_LOCKER),
			      "</Code,/Process/100,/SyncObject,/Files>",
			      OBJ("Mutex"), OBJ("Mutex/big_lock") };
	const struct pc_finding *f;

	script_mutex(w, hot, sizeof(hot) / sizeof(hot[0]));
	world_run(w, 12.0);
	pc_findings_build(w->pc, NULL, &fs);
	tap_eq(fs.n, 1, "sync: one finding for the mutex's 6 true leaves");
	f = fs.n ? &fs.f[0] : NULL;
	tap_ok(f && strcmp(w->cfg->hyp[f->hyp].name,
			   "ExcessiveSyncWaitingTime") == 0,
	       "sync: its cause is the waiting, not the operations");
	tap_ok(f && strcmp(pc_res_get(w->res, f->where[0])->path,
			   F_LOCKER) == 0 &&
	       strcmp(pc_res_get(w->res, f->where[1])->path,
		      "/Process/100") == 0 &&
	       strcmp(pc_res_get(w->res, f->where[2])->path,
		      "/SyncObject/Mutex/big_lock") == 0 &&
	       strcmp(pc_res_get(w->res, f->where[3])->path, "/Files") == 0,
	       "sync: where: locker, process 100, big_lock, no file");
	tap_eq(f ? (long)count_hyp(w, f, "ExcessiveSyncWaitingTime") : -1, 3,
	       "sync: 3 waiting nodes (function, process, object)");
	tap_eq(f ? (long)count_hyp(w, f, "FrequentSyncOperations") : -1, 3,
	       "sync: 3 lock-operation nodes, the same three");
	tap_ok(f && fabs(f->impact - 0.6) < 1e-9, "sync: impact 0.6 s/s");
	tap_eq(f ? f->nthreads : -1, 1, "sync: the 1 thread started in main");
	tap_ok(f && f->nchain == 3 && strcmp(f->chain[2]->name,
	       "ExcessiveSyncWaitingTime" AT(F_LOCKER)) == 0,
	       "sync: chain top -> main -> locker");
	line_is(w, f, "1 thread spends 60% of its time waiting for mutex "
		"`big_lock`, in `locker` (demo.c); 200000 lock operations "
		"per second", "sync: in plain words, with units");
	tap_ok(f && pc_findings_text_tell(&told, pc_consult_search(w->pc, 0),
					  f),
	       "sync: new the first time");
	tap_ok(f && !pc_findings_text_tell(&told, pc_consult_search(w->pc, 0),
					   f),
	       "sync: not new the second time");
	pc_findings_text_told_free(&told);
	pc_findings_free(&fs);
	world_free(w);
}

/* The same mutex, and one thread's node that does not name `locker`:
 * evidence of the finding, not its where (the process stays), and its
 * threads still counted from the chain's start function. */
static void test_sync_thread(void)
{
	struct world *w = world_new(NULL, NULL);
	struct pc_findings fs = { 0 };
	const char *hot[] = { TOP, AT(F_MAIN), AT(F_LOCKER),
			      "</Code,/Process/100,/SyncObject,/Files>",
			      "</Code,/Process/100/101:worker,/SyncObject,/Files>",
			      OBJ("Mutex"), OBJ("Mutex/big_lock") };
	const struct pc_finding *f;
	size_t k = 0;

	src_sim_script(w->sim, "cpu_inclusive", "*", 0, 0.05, 0);
	src_sim_script(w->sim, "sync_wait", "*", 0, 0, 0);
	src_sim_script(w->sim, "sync_ops", "*", 0, 0, 0);
	for (size_t i = 0; i < sizeof(hot) / sizeof(hot[0]); i++)
		src_sim_script(w->sim, "sync_wait", hot[i], 0, 0.6, 0);
	world_run(w, 12.0);
	pc_findings_build(w->pc, NULL, &fs);
	tap_eq(fs.n, 1, "sync, a thread: one finding");
	f = fs.n ? &fs.f[0] : NULL;
	for (size_t i = 0; f && i < f->nnodes; i++)
		k += strcmp(f->nodes[i]->name, "ExcessiveSyncWaitingTime"
			    "</Code,/Process/100/101:worker,/SyncObject,"
			    "/Files>") == 0;
	tap_eq(k, 1, "sync, a thread: the thread's node is its evidence");
	tap_ok(f && strcmp(pc_res_get(w->res, f->where[1])->path,
			   "/Process/100") == 0,
	       "sync, a thread: its where is the process, not that thread");
	line_is(w, f, "1 thread spends 60% of its time waiting for mutex "
		"`big_lock`, in `locker` (demo.c)",
		"sync, a thread: the same words");
	pc_findings_free(&fs);
	world_free(w);
}

/* The same mutex waited for everywhere but on the thread's own node in
 * `locker`, where only its lock operations are true: the finding's
 * value is the waiting, so its where is the process, not the thread
 * that another hypothesis named ("thread 101 spends 2.54 s per second
 * waiting" on the demo, for four workers' waiting). */
static void test_sync_ops_thread(void)
{
	struct world *w = world_new(NULL, NULL);
	struct pc_findings fs = { 0 };
	const char *hot[] = { TOP, AT(F_MAIN), AT(F_LOCKER),
			      "</Code,/Process/100,/SyncObject,/Files>",
			      "<" F_LOCKER ",/Process/100,/SyncObject,/Files>",
			      OBJ("Mutex"), OBJ("Mutex/big_lock") };
	const char *ops = "<" F_LOCKER ",/Process/100/101:worker,/SyncObject,"
			  "/Files>";
	const struct pc_finding *f;
	size_t k = 0;

	script_mutex(w, hot, sizeof(hot) / sizeof(hot[0]));
	src_sim_script(w->sim, "sync_ops", ops, 0, 2e5, 0);
	world_run(w, 30.0);
	pc_findings_build(w->pc, NULL, &fs);
	f = fs.n ? &fs.f[0] : NULL;
	for (size_t i = 0; f && i < f->nnodes; i++)
		k += strcmp(f->nodes[i]->name, "FrequentSyncOperations<"
			    F_LOCKER ",/Process/100/101:worker,/SyncObject,"
			    "/Files>") == 0;
	if (k != 1) {
		const struct pc_search *ss = pc_consult_search(w->pc, 0);

		for (size_t i = 0; i < ss->nn; i++)
			if (ss->nodes[i]->truth == PC_TRUE ||
			    strstr(ss->nodes[i]->name, "101:worker"))
				tap_diag("%d %s", ss->nodes[i]->truth,
					 ss->nodes[i]->name);
	}
	tap_eq(k, 1, "sync ops, a thread: its lock operations' node is in "
	       "the finding");
	tap_ok(f && strcmp(w->cfg->hyp[f->hyp].name,
			   "ExcessiveSyncWaitingTime") == 0 &&
	       strcmp(pc_res_get(w->res, f->where[1])->path,
		      "/Process/100") == 0,
	       "sync ops, a thread: the waiting's where is the process, not "
	       "the thread only the lock operations named");
	pc_findings_free(&fs);
	world_free(w);
}

/* Four threads started in `locker` wait for big_lock, 0.6 s/s each:
 * the function's and the process's nodes read their 2.4 s/s, but only
 * two of the threads' own nodes have concluded (the other two sit in
 * the hysteresis band, as on a loaded machine): the finding counts the
 * four threads started there, not the two concluded, so its words add
 * up ("2 threads spend 120% of their time" cannot be). */
static void test_sync_some_threads(void)
{
	struct world *w = world_new(NULL, NULL);
	struct pc_findings fs = { 0 };
	const char *hot[] = { TOP, AT(F_MAIN), AT(F_LOCKER),
			      "</Code,/Process/100,/SyncObject,/Files>",
			      OBJ("Mutex"), OBJ("Mutex/big_lock") };
	const struct pc_finding *f;

	for (int tid = 102; tid <= 105; tid++)
		src_sim_thread(w->sim, 100, tid, "locker");
	src_sim_script(w->sim, "cpu_inclusive", "*", 0, 0.05, 0);
	src_sim_script(w->sim, "sync_wait", "*", 0, 0, 0);
	src_sim_script(w->sim, "sync_ops", "*", 0, 0, 0);
	for (size_t i = 0; i < sizeof(hot) / sizeof(hot[0]); i++)
		src_sim_script(w->sim, "sync_wait", hot[i], 0, 2.4, 0);
	src_sim_script(w->sim, "sync_wait",
		       "</Code,/Process/100/102:locker,/SyncObject,/Files>",
		       0, 0.6, 0);
	src_sim_script(w->sim, "sync_wait",
		       "</Code,/Process/100/103:locker,/SyncObject,/Files>",
		       0, 0.6, 0);
	src_sim_script(w->sim, "sync_wait",
		       "</Code,/Process/100/104:locker,/SyncObject,/Files>",
		       0, 0.2, 0.05);
	src_sim_script(w->sim, "sync_wait",
		       "</Code,/Process/100/105:locker,/SyncObject,/Files>",
		       0, 0.2, 0.05);
	world_run(w, 10.0);
	pc_findings_build(w->pc, NULL, &fs);
	f = fs.n ? &fs.f[0] : NULL;
	tap_eq(f ? f->nthreads : -1, 4, "some threads concluded: the 4 "
	       "threads started in locker");
	line_is(w, f, "4 threads spend 60% of their time waiting for mutex "
		"`big_lock`, in `locker` (demo.c)",
		"some threads concluded: the words add up");
	pc_findings_free(&fs);
	world_free(w);
}

/* The mutex of test_sync in a job of two processes, 100 and 200, each
 * waiting 0.6 s/s and locking 200000 times a second: the lock
 * operations beside the wait are the two processes' together, as the
 * wait is, not one process's. */
static void test_sync_job(void)
{
	struct world *w = world_new(NULL, NULL);
	struct pc_findings fs = { 0 };
	const char *job[] = { TOP, AT(F_MAIN), AT(F_LOCKER), OBJ("Mutex"),
			      OBJ("Mutex/big_lock") };
	const char *part[] = { "</Code,/Process/100,/SyncObject,/Files>",
			       "</Code,/Process/100/100:main,/SyncObject,/Files>",
			       "</Code,/Process/200,/SyncObject,/Files>",
			       "</Code,/Process/200/200:main,/SyncObject,/Files>" };

	src_sim_thread(w->sim, 200, 200, "main");
	src_sim_script(w->sim, "cpu_inclusive", "*", 0, 0.05, 0);
	src_sim_script(w->sim, "sync_wait", "*", 0, 0, 0);
	src_sim_script(w->sim, "sync_ops", "*", 0, 0, 0);
	for (size_t i = 0; i < sizeof(job) / sizeof(job[0]); i++) {
		src_sim_script(w->sim, "sync_wait", job[i], 0, 1.2, 0);
		src_sim_script(w->sim, "sync_ops", job[i], 0, 4e5, 0);
	}
	for (size_t i = 0; i < sizeof(part) / sizeof(part[0]); i++) {
		src_sim_script(w->sim, "sync_wait", part[i], 0, 0.6, 0);
		src_sim_script(w->sim, "sync_ops", part[i], 0, 2e5, 0);
	}
	world_run(w, 12.0);
	pc_findings_build(w->pc, NULL, &fs);
	tap_eq(fs.n, 1, "sync, a job of two: one finding");
	line_is(w, fs.n ? &fs.f[0] : NULL, "2 processes spend 1.20 s per "
		"second waiting for mutex `big_lock`, in `locker` (demo.c); "
		"400000 lock operations per second", "sync, a job of two: "
		"the lock operations are the two processes' (400000), as the "
		"wait is");
	if (tap_failed)
		diag_findings(w, &fs);
	pc_findings_free(&fs);
	world_free(w);
}

/* `writer` does 10-byte I/O on /tmp/out.log (blocked 0.5 s/s), which
 * also costs it 0.5 CPUs; `work` computes 0.4 CPUs.  Two findings, the
 * I/O first. */
static void test_io_and_cpu(void)
{
	struct world *w = world_new(NULL, NULL);
	struct pc_report_meta m = { .target = "demo", .pid = 100,
				    .mode = "sim" };
	struct pc_findings fs = { 0 };
	const char *io[] = { TOP, AT(F_MAIN), AT(F_WRITER),
			     FILE_AT("/tmp/out.log") };
	json_t *j, *jf;
	char *text = NULL;
	size_t len = 0;
	FILE *tf;

	src_sim_script(w->sim, "cpu_inclusive", "*", 0, 0.05, 0);
	src_sim_script(w->sim, "cpu_inclusive", TOP, 0, 0.9, 0);
	src_sim_script(w->sim, "cpu_inclusive", AT(F_MAIN), 0, 0.9, 0);
	src_sim_script(w->sim, "cpu_inclusive", AT(F_WRITER), 0, 0.5, 0);
	src_sim_script(w->sim, "cpu_inclusive", AT(F_COMPUTE), 0, 0.4, 0);
	src_sim_script(w->sim, "cpu_inclusive", AT(F_WORK), 0, 0.4, 0);
	src_sim_script(w->sim, "io_wait", "*", 0, 0, 0);
	src_sim_script(w->sim, "io_bytes", "*", 0, 100, 0);
	for (size_t i = 0; i < sizeof(io) / sizeof(io[0]); i++) {
		src_sim_script(w->sim, "io_wait", io[i], 0, 0.5, 0);
		src_sim_script(w->sim, "io_ops", io[i], 0, 10, 0);
	}
	world_run(w, 14.0);
	pc_findings_build(w->pc, NULL, &fs);
	tap_eq(fs.n, 2, "io+cpu: two findings");
	line_is(w, fs.n > 0 ? &fs.f[0] : NULL,
		"1 thread does I/O in 10-byte operations on `/tmp/out.log`, "
		"in `writer` (io.c); using 0.50 CPUs; 0.50 s per second "
		"blocked in I/O", "io+cpu: first the small I/O, with the "
		"CPU it costs and the time blocked");
	tap_ok(fs.n > 0 && fabs(fs.f[0].impact - 0.5) < 1e-9,
	       "io+cpu: its impact is the time blocked: 0.5 s/s");
	line_is(w, fs.n > 1 ? &fs.f[1] : NULL,
		"1 thread uses 0.40 CPUs computing, in `work` (demo.c)",
		"io+cpu: then the computing, at its deepest function");
	tap_ok(fs.n > 1 && fs.f[1].symptom_of == -1 && fs.f[1].nchain == 4,
	       "io+cpu: the CPU one stands alone, chain of 4");

	j = pc_report_json(w->pc, &m);
	jf = json_object_get(j, "findings");
	tap_eq(json_integer_value(json_object_get(j, "version")), 8,
	       "report schema version 8");
	tap_eq(json_array_size(jf), 2, "JSON: 2 findings");
	tap_ok(json_equal(jf, json_object_get(json_array_get(
		json_object_get(j, "phases"), 0), "findings")),
	       "JSON: the global phase's findings at the top level");
	tap_ok(strcmp(json_string_value(json_object_get(json_array_get(jf, 0),
		"hypothesis")), "TooManySmallIOOps") == 0 &&
	       json_integer_value(json_object_get(json_array_get(jf, 0),
		"rank")) == 1 &&
	       strcmp(json_string_value(json_object_get(json_object_get(
		json_array_get(jf, 0), "where"), "file")),
		"/Files/tmp/out.log") == 0 &&
	       json_is_null(json_object_get(json_object_get(
		json_array_get(jf, 0), "where"), "object")),
	       "JSON: finding 1's hypothesis, rank, file, no object");
	tf = open_memstream(&text, &len);
	pc_report_text(w->pc, &m, tf);
	fclose(tf);
	tap_ok(strstr(text, "\nfindings, most impact first:\n 1. 1 thread "
		      "does I/O in 10-byte operations") != NULL &&
	       strstr(text, "\n    impact 0.50 s/s, true since ") != NULL &&
	       strstr(text, "\n 2. 1 thread uses 0.40 CPUs computing, in "
		      "`work` (demo.c)\n") != NULL &&
	       strstr(text, "\ndetails (every most refined true node") <
	       strstr(text, "\nGlobal phase"),
	       "text: the findings lead, the details follow");
	if (tap_failed)
		tap_diag("%s", text);
	free(text);
	json_decref(j);
	pc_findings_free(&fs);
	world_free(w);
}

/* The mutex of test_sync, whose contending thread also burns 0.8 CPUs
 * in the C library's lock-wait path (`__lll_lock_wait`, called by
 * `locker`), and `work` computing 0.4: the lock-wait CPU is the lock's
 * time (lock_wait_internals), ranked after the computing though its
 * impact is the largest. */
static void test_lock_wait_cpu(void)
{
	struct world *w = world_new(NULL, NULL);
	struct pc_findings fs = { 0 };
	const char *hot[] = { TOP, AT(F_MAIN), AT(F_LOCKER),
			      "</Code,/Process/100,/SyncObject,/Files>",
			      OBJ("Mutex"), OBJ("Mutex/big_lock") };
	const char *lll = "/Code/libc.so.6/lowlevellock.c/__lll_lock_wait";
	char at_lll[256];

	snprintf(at_lll, sizeof(at_lll), AT("%s"), lll);
	src_sim_function(w->sim, "libc.so.6", "lowlevellock.c",
			 "__lll_lock_wait");
	src_sim_call(w->sim, F_LOCKER, lll);
	src_sim_script(w->sim, "cpu_inclusive", "*", 0, 0.05, 0);
	src_sim_script(w->sim, "cpu_inclusive", TOP, 0, 1.2, 0);
	src_sim_script(w->sim, "cpu_inclusive", AT(F_MAIN), 0, 1.2, 0);
	src_sim_script(w->sim, "cpu_inclusive", AT(F_LOCKER), 0, 0.8, 0);
	src_sim_script(w->sim, "cpu_inclusive", at_lll, 0, 0.8, 0);
	src_sim_script(w->sim, "cpu_inclusive", AT(F_COMPUTE), 0, 0.4, 0);
	src_sim_script(w->sim, "cpu_inclusive", AT(F_WORK), 0, 0.4, 0);
	src_sim_script(w->sim, "sync_wait", "*", 0, 0, 0);
	src_sim_script(w->sim, "sync_ops", "*", 0, 0, 0);
	for (size_t i = 0; i < sizeof(hot) / sizeof(hot[0]); i++)
		src_sim_script(w->sim, "sync_wait", hot[i], 0, 0.6, 0);
	world_run(w, 14.0);
	pc_findings_build(w->pc, NULL, &fs);
	tap_eq(fs.n, 3, "lock-wait CPU: three findings");
	tap_ok(fs.n == 3 &&
	       strcmp(w->cfg->hyp[fs.f[0].hyp].name,
		      "ExcessiveSyncWaitingTime") == 0 &&
	       strcmp(pc_res_get(w->res, fs.f[1].where[0])->path,
		      F_WORK) == 0 &&
	       strcmp(pc_res_get(w->res, fs.f[2].where[0])->path, lll) == 0,
	       "lock-wait CPU: the mutex, the computing in work, then the "
	       "CPU in __lll_lock_wait");
	tap_ok(fs.n == 3 && fs.f[2].symptom_of == 0,
	       "lock-wait CPU: a symptom of the mutex (rank 1)");
	if (tap_failed)
		diag_findings(w, &fs);
	pc_findings_free(&fs);
	world_free(w);
}

/* The small I/O of test_io_and_cpu, whose writer's CPU (0.9: system
 * time) is all in the C library's `write` it calls, where no I/O node
 * is tested: the CPU in write is the file's time (io_funcs), ranked
 * after `work`'s computing though its impact is the largest. */
static void test_io_call_cpu(void)
{
	struct world *w = world_new(NULL, NULL);
	struct pc_findings fs = { 0 };
	const char *io[] = { TOP, AT(F_MAIN), AT(F_WRITER),
			     FILE_AT("/tmp/out.log") };
	const char *wr = "/Code/libc.so.6/write.c/write";
	char at_wr[256];
	size_t k = 0;

	snprintf(at_wr, sizeof(at_wr), AT("%s"), wr);
	src_sim_function(w->sim, "libc.so.6", "write.c", "write");
	src_sim_call(w->sim, F_WRITER, wr);
	src_sim_script(w->sim, "cpu_inclusive", "*", 0, 0.05, 0);
	src_sim_script(w->sim, "cpu_inclusive", TOP, 0, 1.3, 0);
	src_sim_script(w->sim, "cpu_inclusive", AT(F_MAIN), 0, 1.3, 0);
	src_sim_script(w->sim, "cpu_inclusive", AT(F_WRITER), 0, 0.9, 0);
	src_sim_script(w->sim, "cpu_inclusive", at_wr, 0, 0.9, 0);
	src_sim_script(w->sim, "cpu_inclusive", AT(F_COMPUTE), 0, 0.4, 0);
	src_sim_script(w->sim, "cpu_inclusive", AT(F_WORK), 0, 0.4, 0);
	src_sim_script(w->sim, "io_wait", "*", 0, 0, 0);
	src_sim_script(w->sim, "io_bytes", "*", 0, 100, 0);
	for (size_t i = 0; i < sizeof(io) / sizeof(io[0]); i++) {
		src_sim_script(w->sim, "io_wait", io[i], 0, 0.5, 0);
		src_sim_script(w->sim, "io_ops", io[i], 0, 10, 0);
	}
	world_run(w, 14.0);
	pc_findings_build(w->pc, NULL, &fs);
	for (size_t i = 0; i < fs.n; i++)
		k += strcmp(pc_res_get(w->res, fs.f[i].where[0])->path,
			    wr) == 0;
	tap_ok(fs.n >= 3 && k == 1 &&
	       strcmp(pc_res_get(w->res, fs.f[fs.n - 1].where[0])->path,
		      wr) == 0 && fs.f[fs.n - 1].symptom_of >= 0 &&
	       strcmp(w->cfg->hyp[fs.f[fs.f[fs.n - 1].symptom_of].hyp].name,
		      "TooManySmallIOOps") == 0,
	       "write's CPU: last, a symptom of the small I/O on the file");
	tap_ok(fs.n >= 3 && strcmp(w->cfg->hyp[fs.f[0].hyp].name,
				   "TooManySmallIOOps") == 0 &&
	       strcmp(pc_res_get(w->res, fs.f[1].where[0])->path,
		      F_WORK) == 0,
	       "write's CPU: the small I/O first, then the computing in work");
	if (tap_failed)
		diag_findings(w, &fs);
	pc_findings_free(&fs);
	world_free(w);
}

/* A job of two processes: process 100's worker thread blocked reading
 * (1.0 s/s, no file named, or a regular file), process 200 computing
 * in work (0.8 CPUs).  A wait with no file is for the other process,
 * which computes: ranked after its CPU, symptom_of it; a wait on a
 * regular file is its own cause and leads. */
static void test_job_wait(const char *file)
{
	struct world *w = world_new(NULL, NULL);
	struct pc_findings fs = { 0 };
	const char *io[] = { TOP, AT(F_MAIN), AT(F_WRITER),
			     "</Code,/Process/100,/SyncObject,/Files>",
			     "</Code,/Process/100/101:worker,/SyncObject,/Files>",
			     NULL, NULL };
	const char *cpu[] = { TOP, AT(F_MAIN), AT(F_COMPUTE), AT(F_WORK),
			      "</Code,/Process/200,/SyncObject,/Files>",
			      "</Code,/Process/200/200:main,/SyncObject,/Files>" };
	const char *what = file ? "job wait on a file" : "job wait";
	char at_file[256];
	int io_at = -1, cpu_at = -1;

	if (file != NULL) {
		snprintf(at_file, sizeof(at_file), FILE_AT("%s"), file);
		io[5] = at_file;
	}
	src_sim_thread(w->sim, 200, 200, "main");
	src_sim_script(w->sim, "cpu_inclusive", "*", 0, 0.02, 0);
	for (size_t i = 0; i < sizeof(cpu) / sizeof(cpu[0]); i++)
		src_sim_script(w->sim, "cpu_inclusive", cpu[i], 0, 0.8, 0);
	src_sim_script(w->sim, "io_wait", "*", 0, 0, 0);
	src_sim_script(w->sim, "io_bytes", "*", 0, 8000, 0);
	src_sim_script(w->sim, "io_ops", "*", 0, 1, 0);
	for (size_t i = 0; io[i] != NULL; i++)
		src_sim_script(w->sim, "io_wait", io[i], 0, 1.0, 0);
	world_run(w, 14.0);
	pc_findings_build(w->pc, NULL, &fs);
	for (size_t i = 0; i < fs.n; i++) {
		const char *h = w->cfg->hyp[fs.f[i].hyp].name;

		if (strcmp(h, "ExcessiveIOBlockingTime") == 0 && io_at < 0)
			io_at = (int)i;
		if (strcmp(h, "CPUbound") == 0 && cpu_at < 0)
			cpu_at = (int)i;
	}
	tap_ok(io_at >= 0 && cpu_at >= 0, "%s: the wait and the CPU are "
	       "findings (%d, %d)", what, io_at, cpu_at);
	if (file == NULL)
		tap_ok(io_at >= 0 && cpu_at == 0 &&
		       fs.f[io_at].symptom_of == 0 &&
		       fs.f[io_at].symptom_why == PC_SYMPTOM_OTHER_PROCESS &&
		       strcmp(pc_findings_text_symptom(fs.f[io_at].symptom_why),
			      "a wait for another process of the job, which "
			      "computes") == 0,
		       "%s: the other process's CPU first, the wait after it, "
		       "a wait for it", what);
	else
		tap_ok(io_at == 0 && fs.f[0].symptom_of == -1 &&
		       fs.f[0].symptom_why == PC_SYMPTOM_NONE,
		       "%s: the wait leads, no symptom (it reads a file)",
		       what);
	if (tap_failed)
		diag_findings(w, &fs);
	pc_findings_free(&fs);
	world_free(w);
}

/* Nothing true: no finding, and the text has no findings head. */
/* A job of two processes: the whole job's CPU (1.9) concluded, then
 * process 100's node fell back to false while its main thread's stayed
 * true (0.95): the finding names that one thread and says its 0.95,
 * not the job's 1.9, which counts process 200's CPU too. */
static void test_job_thread(void)
{
	struct world *w = world_new(NULL, NULL);
	struct pc_findings fs = { 0 };
	const struct pc_finding *f = NULL;

	src_sim_thread(w->sim, 200, 200, "main");
	src_sim_script(w->sim, "cpu_inclusive", "*", 0, 0.05, 0);
	src_sim_script(w->sim, "cpu_inclusive", TOP, 0, 1.9, 0);
	src_sim_script(w->sim, "cpu_inclusive",
		       "</Code,/Process/100,/SyncObject,/Files>", 0, 0.95, 0);
	src_sim_script(w->sim, "cpu_inclusive",
		       "</Code,/Process/100,/SyncObject,/Files>", 6, 0.05, 0);
	src_sim_script(w->sim, "cpu_inclusive",
		       "</Code,/Process/100/100:main,/SyncObject,/Files>", 0,
		       0.95, 0);
	world_run(w, 14.0);
	pc_findings_build(w->pc, NULL, &fs);
	for (size_t i = 0; i < fs.n && f == NULL; i++)
		if (fs.f[i].nthreads == 1 && fs.f[i].nprocs == 1)
			f = &fs.f[i];
	if (f == NULL) {
		tap_diag("%zu findings", fs.n);
		for (size_t i = 0; i < fs.n; i++)
			tap_diag("%s", line_of(w, &fs.f[i]));
		world_dump(w);
	}
	tap_ok(f != NULL, "job of two: a finding on one thread");
	tap_ok(f != NULL && fabs(f->impact - 0.95) < 1e-9,
	       "job of two: its impact is that thread's 0.95 CPUs, not the "
	       "job's 1.9 (%g)", f ? f->impact : NAN);
	pc_findings_free(&fs);
	world_free(w);
}

static void test_none(void)
{
	struct world *w = world_new(NULL, NULL);
	struct pc_findings fs = { 0 };
	char *text = NULL;
	size_t len = 0;
	FILE *tf;

	src_sim_script(w->sim, "cpu_inclusive", "*", 0, 0.05, 0);
	world_run(w, 8.0);
	pc_findings_build(w->pc, NULL, &fs);
	tap_eq(fs.n, 0, "nothing true: no finding");
	tf = open_memstream(&text, &len);
	pc_report_text(w->pc, NULL, tf);
	fclose(tf);
	tap_ok(strstr(text, "findings") == NULL && strstr(text, "\n\nGlobal "
		      "phase") != NULL, "nothing true: no findings head");
	free(text);
	pc_findings_free(&fs);
	world_free(w);
}

/* A Python function (the live source's `<python>` module) under main,
 * computing: its finding names the line the source says its samples
 * were most at (the hint question "PATH?line"), and the result line is
 * that finding.  A C function is not asked its line: work's finding
 * stays "(demo.c)" though the sim would answer 7. */
static void test_python_line(void)
{
	struct world *w = world_new(NULL, NULL);
	struct pc_findings fs = { 0 };
	const char *py = "/Code/" PC_FINDINGS_PY_MODULE "/loop.py/f";
	char at_py[256], q[256], result[512];

	snprintf(at_py, sizeof(at_py), AT("%s"), py);
	snprintf(q, sizeof(q), "%s" PC_FINDINGS_LINE_Q, py);
	src_sim_function(w->sim, PC_FINDINGS_PY_MODULE, "loop.py", "f");
	src_sim_call(w->sim, F_MAIN, py);
	src_sim_hint(w->sim, q, 4);
	src_sim_hint(w->sim, F_WORK PC_FINDINGS_LINE_Q, 7);
	src_sim_script(w->sim, "cpu_inclusive", "*", 0, 0.05, 0);
	src_sim_script(w->sim, "cpu_inclusive", TOP, 0, 1.4, 0);
	src_sim_script(w->sim, "cpu_inclusive", AT(F_MAIN), 0, 1.4, 0);
	src_sim_script(w->sim, "cpu_inclusive", at_py, 0, 0.98, 0);
	src_sim_script(w->sim, "cpu_inclusive", AT(F_COMPUTE), 0, 0.4, 0);
	src_sim_script(w->sim, "cpu_inclusive", AT(F_WORK), 0, 0.4, 0);
	world_run(w, 14.0);
	pc_findings_build(w->pc, NULL, &fs);
	tap_eq(fs.n, 2, "python line: two findings");
	tap_eq(fs.n > 0 ? fs.f[0].line : -1, 4, "python line: f's line, 4");
	line_is(w, fs.n > 0 ? &fs.f[0] : NULL,
		"1 thread uses 0.98 CPUs computing, in `f` (loop.py:4)",
		"python line: said after the file, and no C caller (the "
		"interpreter's loop is every Python function's)");
	tap_eq(fs.n > 1 ? fs.f[1].line : -1, 0,
	       "python line: a C function is not asked its line");
	line_is(w, fs.n > 1 ? &fs.f[1] : NULL,
		"1 thread uses 0.40 CPUs computing, in `work` (demo.c)",
		"python line: work's finding has no line");
	pc_report_result(w->pc, w->pc->global, NULL, result, sizeof(result));
	tap_ok(strcmp(result, "bottleneck: 1 thread uses 0.98 CPUs "
		      "computing, in `f` (loop.py:4)") == 0,
	       "python line: the result is the lead finding, with its line");
	if (tap_failed)
		tap_diag("result: %s", result);
	pc_findings_free(&fs);
	world_free(w);
}

/* A Python generator `g` driven by `f` (`sum(... for ...)`): its finding
 * names f as its caller, the Python function whose own lines hold the
 * rest of the CPU; the interpreter's loop is never named. */
/* g reached from f on the chain; the samples say how often f called g
 * directly (1: the generator under f's sum(); 0: f is further up, as a
 * pool's `BaseProcess.run` above `mapstar` above `work`). */
static void python_caller_case(double direct, const char *want,
			       const char *what)
{
	struct world *w = world_new(NULL, NULL);
	struct pc_findings fs = { 0 };
	const char *pf = "/Code/" PC_FINDINGS_PY_MODULE "/loop.py/f";
	const char *pg = "/Code/" PC_FINDINGS_PY_MODULE "/loop.py/g";
	char at_f[256], at_g[256], q[256];

	snprintf(at_f, sizeof(at_f), AT("%s"), pf);
	snprintf(at_g, sizeof(at_g), AT("%s"), pg);
	snprintf(q, sizeof(q), "%s" PC_FINDINGS_LINE_Q, pg);
	src_sim_function(w->sim, PC_FINDINGS_PY_MODULE, "loop.py", "f");
	src_sim_function(w->sim, PC_FINDINGS_PY_MODULE, "loop.py", "g");
	src_sim_call(w->sim, F_MAIN, pf);
	src_sim_call(w->sim, pf, pg);
	src_sim_hint(w->sim, q, 3);
	snprintf(q, sizeof(q), "%s" PC_FINDINGS_CALLER_Q "%s", pg, pf);
	src_sim_hint(w->sim, q, direct);
	src_sim_script(w->sim, "cpu_inclusive", "*", 0, 0.05, 0);
	src_sim_script(w->sim, "cpu_inclusive", TOP, 0, 0.98, 0);
	src_sim_script(w->sim, "cpu_inclusive", AT(F_MAIN), 0, 0.98, 0);
	src_sim_script(w->sim, "cpu_inclusive", at_f, 0, 0.98, 0);
	src_sim_script(w->sim, "cpu_inclusive", at_g, 0, 0.6, 0);
	world_run(w, 14.0);
	pc_findings_build(w->pc, NULL, &fs);
	line_is(w, fs.n > 0 ? &fs.f[0] : NULL, want, what);
	pc_findings_free(&fs);
	world_free(w);
}

static void test_python_caller(void)
{
	python_caller_case(1, "1 thread uses 0.60 CPUs computing, in `g` "
			   "(loop.py:3), called from `f` (loop.py)",
			   "python caller: the generator's finding names f "
			   "around it");
	python_caller_case(0, "1 thread uses 0.60 CPUs computing, in `g` "
			   "(loop.py:3)",
			   "python caller: a function above that never calls "
			   "it directly is not named its caller");
}

/* A function holding part of a thread's CPU: its finding says how much
 * the thread uses in all, so that 0.57 CPUs is not read as the program
 * using half a CPU (the rest is in its callers).  Not said when the
 * function holds (nearly) all of it. */
static void test_cpu_in_all(void)
{
	static const char *const proc =
		"</Code,/Process/100,/SyncObject,/Files>";
	static const char *const thr =
		"</Code,/Process/100/101:worker,/SyncObject,/Files>";

	const double in_work[] = { 0.57, 0.93 };
	const char *const want[] = {
		"1 thread uses 0.57 CPUs computing, in `work` (demo.c), of "
		"0.96 CPUs in all",
		"1 thread uses 0.93 CPUs computing, in `work` (demo.c)",
	};

	for (size_t i = 0; i < 2; i++) {
		struct world *w = world_new(NULL, NULL);
		struct pc_findings fs = { 0 };

		src_sim_script(w->sim, "cpu_inclusive", "*", 0, 0.05, 0);
		src_sim_script(w->sim, "cpu_inclusive", TOP, 0, 0.96, 0);
		src_sim_script(w->sim, "cpu_inclusive", proc, 0, 0.96, 0);
		src_sim_script(w->sim, "cpu_inclusive", AT(F_MAIN), 0, 0.96, 0);
		src_sim_script(w->sim, "cpu_inclusive", AT(F_COMPUTE), 0,
			       in_work[i], 0);
		src_sim_script(w->sim, "cpu_inclusive", AT(F_WORK), 0,
			       in_work[i], 0);
		src_sim_script(w->sim, "cpu_inclusive", thr, 0, 0.96, 0);
		world_run(w, 14.0);
		pc_findings_build(w->pc, NULL, &fs);
		tap_eq(fs.n, 1, "in all: one finding (%.2f in work)",
		       in_work[i]);
		line_is(w, fs.n > 0 ? &fs.f[0] : NULL, want[i],
			"in all: the thread's CPU beside the function's when "
			"it is more");
		pc_findings_free(&fs);
		world_free(w);
	}
}

/* The same mutex, its findings built and told as batch mode does, every
 * 0.2 s of the search: told once when its first node below the top is
 * true, and once more when it has come to rest in `locker`, not at each
 * level on the way; then never again. */
static void test_told_narrowed(void)
{
	struct world *w = world_new(NULL, NULL);
	struct pc_findings_told told = { 0 };
	const char *hot[] = { TOP, AT(F_MAIN), AT(F_LOCKER),
			      "</Code,/Process/100,/SyncObject,/Files>",
			      OBJ("Mutex"), OBJ("Mutex/big_lock") };
	char lines[4][1024] = { { 0 } };
	int n = 0;

	script_mutex(w, hot, sizeof(hot) / sizeof(hot[0]));
	for (double t = 0.2; t <= 12.0 + 1e-9; t += 0.2) {
		struct pc_findings fs = { 0 };

		world_run(w, t);
		pc_findings_build(w->pc, NULL, &fs);
		for (size_t i = 0; i < fs.n; i++) {
			if (!pc_findings_text_tell(&told,
					pc_consult_search(w->pc, 0), &fs.f[i]))
				continue;
			if (n < 4)
				snprintf(lines[n], sizeof(lines[n]), "%s",
					 line_of(w, &fs.f[i]));
			n++;
		}
		pc_findings_free(&fs);
	}
	tap_eq(n, 2, "told: twice in 12 s (first true, then at rest)");
	for (int i = 0; i < n && i < 4; i++)
		tap_diag("told %d: %s", i + 1, lines[i]);
	tap_ok(strstr(lines[0], "in `locker`") == NULL,
	       "told: the first line does not name locker yet");
	tap_ok(strstr(lines[1], "waiting for mutex `big_lock`, in `locker` "
		      "(demo.c)") != NULL,
	       "told: the second names the mutex and locker");
	pc_findings_text_told_free(&told);
	world_free(w);
}

int main(void)
{
	test_sync();
	test_sync_thread();
	test_sync_ops_thread();
	test_sync_some_threads();
	test_sync_job();
	test_io_and_cpu();
	test_lock_wait_cpu();
	test_io_call_cpu();
	test_none();
	test_job_thread();
	test_job_wait(NULL);
	test_job_wait("/tmp/data.bin");
	test_python_line();
	test_python_caller();
	test_cpu_in_all();
	test_told_narrowed();
	return tap_done();
}

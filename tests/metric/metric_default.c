/*
 * metric_default.c - every metric of the shipped hypotheses/default.json
 * translated by the consultant's adapter (consultant/src_live_metric.c)
 * and compiled against a real target (tests/targets threads-O2-pie and
 * its libc) on every kind of focus its constraints cover: the whole
 * program, a function, a source file, a module, the process, a thread, the Mutex class,
 * a mutex, a file.  Internal
 * metrics, the kernel's run-queue wait (read, not instrumented) and foci
 * a metric has no constraint for are refused with a reason.  Then the translated sync_ops on mt_lock and io_bytes on
 * stdout run to the end of the program and count exactly.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mt_util.h"
#include "pc_config.h"
#include "src_live_metric.h"
#include "tap.h"

enum { F_TOP, F_FUNC, F_FILE_SRC, F_MODULE, F_PROCESS, F_THREAD, F_CLASS, F_MUTEX,
       F_FILE, NF };
static const char *const fnames[NF] = { "top", "function", "source file",
	"module",
	"process", "thread", "Mutex class", "mutex", "file" };

struct foc {
	struct pc_src_focus f;
	struct src_live_metric_resolved r;
	char buf[4][128];
	const char *needs;       /* the constraint that covers it */
};

static void foci(struct mt *t, const char *exe, struct foc *fo)
{
	static const char *const roots[4] = { "/Code", "/Process",
					      "/SyncObject", "/Files" };
	int pid = eng_proc_pid(t->tg.p);

	memset(fo, 0, NF * sizeof *fo);
	for (int i = 0; i < NF; i++)
		for (int h = 0; h < 4; h++)
			fo[i].f.path[h] = roots[h];
	snprintf(fo[F_FUNC].buf[0], 128, "/Code/%s/threads.c/mt_increment", exe);
	fo[F_FUNC].f.path[0] = fo[F_FUNC].buf[0];
	fo[F_FUNC].needs = "procedure";
	snprintf(fo[F_FILE_SRC].buf[0], 128, "/Code/%s/threads.c", exe);
	fo[F_FILE_SRC].f.path[0] = fo[F_FILE_SRC].buf[0];
	fo[F_FILE_SRC].needs = "module";
	snprintf(fo[F_MODULE].buf[0], 128, "/Code/%s", exe);
	fo[F_MODULE].f.path[0] = fo[F_MODULE].buf[0];
	fo[F_MODULE].needs = "module";
	snprintf(fo[F_PROCESS].buf[1], 128, "/Process/%d", pid);
	fo[F_PROCESS].f.path[1] = fo[F_PROCESS].buf[1];
	fo[F_CLASS].f.path[2] = "/SyncObject/Mutex";
	fo[F_CLASS].needs = "sync_object";
	snprintf(fo[F_THREAD].buf[1], 128, "/Process/%d/%d:main", pid, pid);
	fo[F_THREAD].f.path[1] = fo[F_THREAD].buf[1];
	fo[F_THREAD].needs = "thread";
	fo[F_MUTEX].f.path[2] = "/SyncObject/Mutex/mt_lock";
	fo[F_MUTEX].r = (struct src_live_metric_resolved){ .has_key = true,
		.key = mt_data(t, "mt_lock") };
	fo[F_MUTEX].needs = "sync_object";
	fo[F_FILE].f.path[3] = "/Files/stdout";
	fo[F_FILE].r = (struct src_live_metric_resolved){ .has_key = true,
		.key = 1 };
	fo[F_FILE].needs = "file";
}

static bool lists(const struct pc_metric_def *md, const char *con)
{
	for (size_t i = 0; con != NULL && i < md->nconstraints; i++)
		if (strcmp(md->constraints[i], con) == 0)
			return true;
	return con == NULL;
}

static struct eng_minst *compile(struct mt *t, const struct pc_config *cfg,
				 const struct pc_metric_def *md,
				 const struct foc *fo, const char *fname,
				 bool keep)
{
	struct hunch_err err = { 0 };
	struct src_live_metric *s = NULL;
	struct eng_minst *mi = NULL;
	struct eng_minst_info info = { 0 };
	bool want = lists(md, fo->needs) && md->type != PC_BASE_INTERNAL &&
		    md->kernel != PC_KERNEL_RUNQUEUE;
	int rc = src_live_metric_translate(cfg, md, &fo->f, &fo->r, &s, &err);

	if (rc == 0)
		rc = eng_metric_enable(t->m, src_live_metric_def(s),
				       src_live_metric_focus(s), &mi, &err);
	if (rc == 0)
		eng_metric_info(t->m, mi, &info);
	if (want && md->absent_is_zero) {
		/* threads has no MPI: 0 where /Code is whole, else refused */
		const char *c = fo->f.path[0];
		bool whole = c == NULL || strcmp(c, "/Code") == 0;

		tap_ok(whole ? rc == 0 && info.points == 0 :
		       rc < 0 && strstr(err.msg, "none of its functions is in "
					"the program") != NULL,
		       "%s on the %s focus (none of its functions here): %s",
		       md->name, fname, whole ? "counts 0" : "refused");
		want = false;
	} else if (want)
		tap_ok(rc == 0 && info.points > 0, "%s on the %s focus "
		       "compiles: %zu functions, %zu points (%zu traps, %zu "
		       "refused)", md->name, fname, info.functions, info.points,
		       info.traps, info.refused);
	else
		tap_ok(rc < 0 && err.msg[0] != 0, "%s on the %s focus is "
		       "refused: %s", md->name, fname, err.msg);
	if (rc < 0 && want)
		tap_diag("  %s", err.msg);
	if (rc == 0 && !keep) {
		eng_metric_disable(t->m, mi, NULL);
		mi = NULL;
	}
	src_live_metric_free(s);
	return mi;
}

static void every_metric(struct mt *t, const struct pc_config *cfg,
			 const struct foc *fo)
{
	for (size_t i = 0; i < cfg->nmet; i++)
		for (int k = 0; k < NF; k++)
			compile(t, cfg, &cfg->met[i], &fo[k], fnames[k], false);
	tap_eq(mt_code_mismatches(t), 0, "every byte of the executable "
	       "restored after all of them");
}

static long file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static void run_counts(struct mt *t, const struct pc_config *cfg,
		       const struct foc *fo, const char *expected)
{
	const struct pc_metric_def *ops = pc_metric_def_find(cfg, "sync_ops");
	const struct pc_metric_def *bytes = pc_metric_def_find(cfg, "io_bytes");
	struct eng_minst *a = compile(t, cfg, ops, &fo[F_MUTEX], "mutex", true);
	struct eng_minst *b = compile(t, cfg, bytes, &fo[F_FILE], "file", true);
	long want = file_size(expected);

	tap_ok(mt_quit(t) == 0, "threads runs to the end");
	tap_eq(a ? mt_value(t, a) : -1, 80000, "sync_ops on mt_lock: 40000 "
	       "locks + 40000 unlocks, exactly (the other mutex excluded)");
	tap_eq(b ? mt_value(t, b) : -1, want, "io_bytes on stdout: exactly "
	       "the bytes of threads.expected-out");
}

int main(void)
{
	const char *src = getenv("HUNCH_SOURCE_ROOT");
	const char *tdir = getenv("TARGETS_DIR");
	char json[4096], prog[4096], exp[4096];
	struct pc_config *cfg = pc_config_new();
	struct pc_diags ds = { 0 };
	struct hunch_err err = { 0 };
	struct foc fo[NF];
	struct mt t;

	snprintf(json, sizeof json, "%s/hypotheses/default.json",
		 src ? src : "..");
	snprintf(prog, sizeof prog, "%s/threads-O2-pie", tdir ? tdir : ".");
	snprintf(exp, sizeof exp, "%s/tests/targets/threads.expected-out",
		 src ? src : "..");
	if (!tap_ok(pc_config_load_file(cfg, json, &ds, &err) == 0,
		    "load %s", json))
		tap_diag("%s", err.msg);
	if (mt_launch(&t, prog) == 0) {
		foci(&t, "threads-O2-pie", fo);
		every_metric(&t, cfg, fo);
		run_counts(&t, cfg, fo, exp);
		mt_fini(&t);
	} else {
		tap_ok(0, "launch %s", prog);
	}
	pc_jx_diags_free(&ds);
	pc_config_free(cfg);
	return tap_done();
}

/*
 * test_journal_write_err.c - the writer when the disk says no: /dev/full
 * (ENOSPC from the first byte), a file size limit hit mid-journal
 * (EFBIG after a partial write), and a real full filesystem (a 64 KiB
 * tmpfs in a private mount namespace, when we may mount).  The error is
 * reported with its message, the writes after it are dropped and
 * counted, nothing crashes, and the reader replays what reached the disk
 * up to the last complete record.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "jtest.h"
#include "tap.h"

static void header(struct jnl_header *h, json_t **hyp, json_t **tun)
{
	*h = jt_header(hyp, tun);
}

static void test_dev_full(void)
{
	json_t *hyp, *tun;
	struct jnl_header h;
	struct jnl_writer *w;
	struct hunch_err err = { 0 };
	struct pc_discovery d = { .kind = PC_DISC_PROCESS, .pid = 1 };
	struct jnl_stats st;
	int rcs = 0;

	header(&h, &hyp, &tun);
	tap_eq(jnl_write_open(&w, "/dev/full", &h, NULL, &err), 0,
	       "/dev/full opens: a write error is not an open error");
	tap_ok(jnl_write_error(w) != NULL &&
	       strcmp(jnl_write_error(w)->msg,
		      "journal /dev/full: write failed at byte 0 (line 1, ts 0.000 s): No space left on device; "
		      "the search goes on, records from here on are not journaled: free space there, or journal elsewhere with --journal FILE") == 0,
	       "the header's failed write is reported: \"%s\"",
	       jnl_write_error(w) ? jnl_write_error(w)->msg : "(none)");
	for (int k = 0; k < 10; k++)
		rcs += jnl_write_discovery(w, k * 0.2, &d) == -ENOSPC;
	rcs += jnl_write_output(w, 2.0, JNL_STDOUT, "x", 1, true) == -ENOSPC;
	rcs += jnl_write_end(w, 2.2, "user_quit", NULL) == -ENOSPC;
	tap_eq(rcs, 12, "every write after the error returns -ENOSPC");
	tap_eq(jnl_write_flush(w), -ENOSPC,
	       "jnl_write_flush returns the error");
	jnl_write_get_stats(w, &st);
	tap_ok(st.records == 1 && st.written == 0 && st.dropped == 13 &&
	       st.bytes == 0,
	       "counted: 1 record accepted, 0 written, 13 dropped (header + 12)");
	hunch_err_clear(&err);
	tap_eq(jnl_write_close(w, &err), -ENOSPC, "close returns the error");
	tap_ok(strstr(err.msg, "No space left on device") != NULL,
	       "close hands the message over");
	json_decref(hyp);
	json_decref(tun);
}

/* What a child that filled a disk saw, sent to the parent. */
struct fill_result {
	int skip;                 /* errno of a mount we may not do */
	int err_code;
	char msg[HUNCH_ERR_MAX];
	struct jnl_stats st;
	int after;                /* writes after the error that failed */
	long size;
	int open_rc;
	uint64_t read_records, bad;
	int end;
	char end_msg[HUNCH_ERR_MAX];
};

static void read_back(const char *path, struct fill_result *res)
{
	struct jnl_reader *r;
	struct jnl_record rec;
	struct jnl_read_stats rs;
	struct hunch_err err = { 0 };
	const char *msg = NULL;
	struct stat sb;
	int rc;

	res->size = stat(path, &sb) == 0 ? (long)sb.st_size : -1;
	res->open_rc = jnl_read_open(&r, path, &err);
	if (res->open_rc != 0) {
		snprintf(res->end_msg, sizeof(res->end_msg), "%s", err.msg);
		return;
	}
	while ((rc = jnl_read_next(r, &rec, &err)) != JNL_NEXT_END)
		;
	res->end = jnl_read_end(r, &msg);
	snprintf(res->end_msg, sizeof(res->end_msg), "%s", msg ? msg : "");
	jnl_read_get_stats(r, &rs);
	res->read_records = rs.records;
	res->bad = rs.bad_lines;
	jnl_read_close(r);
}

/* Write a search's records, a tick every 10, until the writer fails;
 * then 5 more, close, and read the file back. */
static void fill(const char *path, struct fill_result *res)
{
	json_t *hyp, *tun;
	struct jnl_header h;
	struct jnl_writer *w;
	struct hunch_err err = { 0 };
	uint64_t ids[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	double vals[8];

	header(&h, &hyp, &tun);
	jnl_write_open(&w, path, &h, NULL, &err);
	for (int k = 0; k < 100000 && !jnl_write_error(w); k++) {
		for (int i = 0; i < 8; i++)
			vals[i] = k / (i + 3.0);
		jnl_write_sample_arrays(w, k * 0.2, k * 0.2, k * 0.2 + 0.2, 8,
					ids, vals);
		jnl_write_output(w, k * 0.2, JNL_STDOUT, "some output line", 16, true);
		if (k % 10 == 9)
			jnl_write_flush(w);
	}
	for (int k = 0; k < 5; k++)
		res->after += jnl_write_output(w, 1e5, JNL_STDERR, "late", 4,
					       true) < 0;
	if (jnl_write_error(w)) {
		res->err_code = jnl_write_error(w)->code;
		snprintf(res->msg, sizeof(res->msg), "%s", jnl_write_error(w)->msg);
	}
	jnl_write_get_stats(w, &res->st);
	jnl_write_close(w, NULL);
	read_back(path, res);
	json_decref(hyp);
	json_decref(tun);
}

static int run_child(void (*fn)(struct fill_result *), struct fill_result *res)
{
	int p[2], status;
	pid_t pid;

	memset(res, 0, sizeof(*res));
	if (pipe(p) != 0 || (pid = fork()) < 0)
		return -1;
	if (pid == 0) {
		struct fill_result mine = { 0 };

		close(p[0]);
		fn(&mine);
		_exit(write(p[1], &mine, sizeof(mine)) == sizeof(mine) ? 0 : 3);
	}
	close(p[1]);
	if (read(p[0], res, sizeof(*res)) != sizeof(*res))
		res->skip = -1;
	close(p[0]);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static void fill_rlimit(struct fill_result *res)
{
	struct rlimit rl = { 65536, 65536 };
	char path[300];

	/* The limit's signal would kill us: ignored, write() says EFBIG. */
	signal(SIGXFSZ, SIG_IGN);
	jt_path(path, sizeof(path), "fsize.jsonl");
	setrlimit(RLIMIT_FSIZE, &rl);
	fill(path, res);
}

static void fill_tmpfs(struct fill_result *res)
{
	char dir[300], path[350];

	jt_path(dir, sizeof(dir), "tmpfs");
	mkdir(dir, 0700);
	if (unshare(CLONE_NEWNS) != 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
	    mount("hunch-jnl", dir, "tmpfs", 0, "size=64k,mode=0700") != 0) {
		res->skip = errno;
		return;
	}
	snprintf(path, sizeof(path), "%s/full.jsonl", dir);
	fill(path, res);
	umount(dir);
}

/* The checks shared by both ways of filling a disk. */
static void check_fill(const char *what, const struct fill_result *res,
		       int code, const char *advice)
{
	uint64_t lines;

	tap_eq(res->err_code, code, "%s: the writer reports %s", what,
	       strerror(-code));
	tap_ok(strstr(res->msg, strerror(-code)) && strstr(res->msg, advice) &&
	       strstr(res->msg, "the search goes on"),
	       "%s: message says what, where and what to do: \"%s\"", what,
	       res->msg);
	tap_ok(res->after == 5 && res->st.written + res->st.dropped ==
	       res->st.records + 5,
	       "%s: %llu written + %llu dropped = %llu records + 5 after the error",
	       what, (unsigned long long)res->st.written,
	       (unsigned long long)res->st.dropped,
	       (unsigned long long)res->st.records);
	tap_ok(res->open_rc == 0 && res->bad == 0 &&
	       res->read_records == res->st.written,
	       "%s: the reader replays exactly the %llu records written (got %llu)",
	       what, (unsigned long long)res->st.written,
	       (unsigned long long)res->read_records);
	lines = res->st.written + 1;
	char want[64];
	snprintf(want, sizeof(want), ": line %llu (byte ", (unsigned long long)lines);
	tap_ok((res->end == JNL_END_TRUNCATED && strstr(res->end_msg, want) &&
		strstr(res->end_msg, "is incomplete")) ||
	       (res->end == JNL_END_NO_END && strstr(res->end_msg, "without an end record")),
	       "%s: the reader says where the journal stops: \"%s\"", what,
	       res->end_msg);
}

static void test_rlimit(void)
{
	struct fill_result res;

	tap_ok(run_child(fill_rlimit, &res) == 0, "file size limit: the child did not crash");
	check_fill("file size limit", &res, -EFBIG, "ulimit -f");
	tap_ok(res.size == 65536 && res.st.bytes == 65536,
	       "file size limit: 65536 bytes on disk, as many counted (%ld, %llu)",
	       res.size, (unsigned long long)res.st.bytes);
}

static void test_tmpfs(void)
{
	struct fill_result res;

	if (run_child(fill_tmpfs, &res) != 0) {
		tap_ok(0, "full tmpfs: the child did not crash");
		return;
	}
	if (res.skip) {
		tap_diag("SKIP full tmpfs: cannot mount a tmpfs here (%s); /dev/full and the file size limit cover ENOSPC and a cut write",
			 strerror(res.skip));
		return;
	}
	tap_ok(1, "full tmpfs: the child did not crash");
	check_fill("full tmpfs", &res, -ENOSPC, "free space there");
}

/* Between ticks the buffer is written once it passes flush_bytes, so
 * memory stays bounded when 10,000 resources arrive at once. */
static void test_flush_bytes(void)
{
	json_t *hyp, *tun;
	struct jnl_header h;
	struct jnl_writer *w;
	struct jnl_writer_opts o = { .flush_bytes = 4096 };
	struct jnl_stats st;
	struct pc_discovery d = { .kind = PC_DISC_FUNCTION, .module = "m",
				  .function = "f", .addr = 1 };
	char path[300];

	header(&h, &hyp, &tun);
	jt_path(path, sizeof(path), "flush.jsonl");
	jnl_write_open(&w, path, &h, &o, NULL);
	for (int k = 0; k < 1000; k++)
		jnl_write_discovery(w, 0.1, &d);
	jnl_write_get_stats(w, &st);
	tap_ok(st.written > 900 && st.written < st.records && st.ticks == 1,
	       "past flush_bytes the buffer is written before the tick (%llu of %llu)",
	       (unsigned long long)st.written, (unsigned long long)st.records);
	jnl_write_flush(w);
	jnl_write_get_stats(w, &st);
	tap_eq(st.written, st.records, "the tick writes the rest");
	jnl_write_close(w, NULL);
	json_decref(hyp);
	json_decref(tun);
}

int main(void)
{
	jt_tmpdir();   /* before fork: the children write under ours */
	test_dev_full();
	test_rlimit();
	test_tmpfs();
	test_flush_bytes();
	jt_rm_tmpdir();
	return tap_done();
}

/*
 * test_infcall.c - inferior calls: the right value, every register put
 * back, and a thread blocked in read() whose system call restarts
 * afterwards as if nothing happened (the next line written to stdin is
 * what read() returns).
 */
#include "proc_util.h"

#include <sys/user.h>

static char *env[] = { "PATH=/usr/bin:/bin", NULL };

static bool same_regs(const struct user_regs_struct *a,
		      const struct user_regs_struct *b)
{
	return memcmp(a, b, sizeof(*a)) == 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_blocked(const char *name)
{
	char *path = prog(name), *argv[] = { path, NULL };
	struct user_regs_struct before, after;
	struct hunch_err err = { 0 };
	struct run_result r;
	struct hrun h;
	uint64_t fn, args[3] = { 1, 2, 3 }, ret = 0, sum = 0;
	pid_t pid;
	double t0;
	int rc;

	memset(&r, 0, sizeof(r));
	if (!tap_ok(launch(&h, argv, env, NULL, false, &err) == 0,
		    "%s: launched", name)) {
		tap_diag("%s", err.msg);
		return;
	}
	pid = eng_proc_pid(h.p);
	fn = sym_addr(path, "add3") + eng_solib_module(h.p, 0)->bias;
	args[0] = 4, args[1] = 5, args[2] = 6;
	rc = eng_infcall(h.p, pid, fn, args, 3, &ret, &err);
	tap_ok(rc == 0 && ret == 15, "%s: add3(4,5,6) at main = %llu", name,
	       (unsigned long long)ret);
	eng_ptrace_resume_all(h.p, &err);
	wait_output(h.p, h.out, &r, "ready 0\n", 5000);
	tap_ok(wait_in_syscall(pid, 0, 10000), "%s: blocked in read() "
	       "(/proc/%d/syscall)", name, (int)pid);
	eng_ptrace_stop_all(h.p, &err);
	eng_regs_get(h.p, pid, &before, &err);
	tap_ok(before.orig_rax == 0 && (long)before.rax == -512,
	       "%s: stopped inside read (orig_rax %lld, rax %lld)", name,
	       (long long)before.orig_rax, (long long)before.rax);
	args[0] = 1, args[1] = 2, args[2] = 3;
	ret = 0;
	rc = eng_infcall(h.p, pid, fn, args, 3, &ret, &err);
	if (!tap_ok(rc == 0 && ret == 6, "%s: add3(1,2,3) in read() = %llu",
		    name, (unsigned long long)ret))
		tap_diag("%s", err.msg);
	eng_regs_get(h.p, pid, &after, &err);
	tap_ok(same_regs(&before, &after), "%s: every register put back",
	       name);
	t0 = now_s();
	for (int i = 0; i < 100; i++) {
		args[0] = (uint64_t)i;
		if (eng_infcall(h.p, pid, fn, args, 3, &ret, &err) == 0)
			sum += ret;
	}
	tap_eq(sum, 4950 + 500, "%s: 100 more calls sum right", name);
	tap_diag("%s: %.1f us per inferior call", name,
		 (now_s() - t0) * 1e6 / 100);
	eng_ptrace_resume_all(h.p, &err);
	if (write(h.in, "hello\n", 6) != 6)
		tap_diag("write failed");
	wait_output(h.p, h.out, &r, "got: hello\n", 5000);
	close(h.in);
	h.in = -1;
	finish(h.p, h.out, &r, 5000);
	if (!tap_ok(strcmp(r.out, "ready 0\ngot: hello\neof\n") == 0,
		    "%s: read() restarted and returned the next line", name))
		tap_diag("output: %s", r.out);
	tap_ok(r.exited && r.code == 0, "%s: exit 0", name);
	hrun_close(&h);
}

/* Memory: reads match the file, writes go through read-only text
 * (patched code runs), bad addresses give a message. */
static void test_memory(void)
{
	char *path = prog("p_block"), *argv[] = { path, NULL };
	static const uint8_t ret42[] = { 0xb8, 0x2a, 0, 0, 0, 0xc3 };
	struct hunch_err err = { 0 };
	uint8_t mem[16], file[16], orig[6], back[32];
	uint64_t fn, link, args[3] = { 1, 2, 3 }, ret = 0, where = 0;
	struct hrun h;
	pid_t pid;
	char want[32];
	int rc;

	if (launch(&h, argv, env, NULL, false, &err) != 0)
		return;
	pid = eng_proc_pid(h.p);
	link = sym_addr(path, "add3");
	fn = link + eng_solib_module(h.p, 0)->bias;
	tap_ok(eng_mem_read(h.p, fn, mem, 16, &err) == 0 &&
	       file_bytes(path, link, file, 16) == 0 &&
	       memcmp(mem, file, 16) == 0, "add3's bytes read = the file's");
	eng_mem_read(h.p, fn, orig, sizeof(orig), &err);
	rc = eng_mem_write(h.p, fn, ret42, sizeof(ret42), &err);
	tap_ok(rc == 0, "write into read-only text (%s)", rc ? err.msg : "ok");
	eng_infcall(h.p, pid, fn, args, 3, &ret, &err);
	tap_eq(ret, 42, "the patched add3 returns 42");
	eng_mem_write(h.p, fn, orig, sizeof(orig), &err);
	eng_infcall(h.p, pid, fn, args, 3, &ret, &err);
	tap_eq(ret, 6, "restored, add3(1,2,3) = 6 again");
	rc = eng_mem_read(h.p, 8, mem, 4, &err);
	snprintf(want, sizeof(want), "0x8 in process %d", (int)pid);
	tap_ok(rc < 0 && strstr(err.msg, want), "a bad read says where: %s",
	       err.msg);
	rc = eng_infcall_push(h.p, pid, "scratch string", 15, &where, &err);
	tap_ok(rc == 0 && eng_mem_read(h.p, where, back, 15, &err) == 0 &&
	       strcmp((char *)back, "scratch string") == 0,
	       "infcall_push puts a string on the stack and it reads back");
	eng_detach_kill(h.p);
	hrun_close(&h);
}

static void test_refusals(void)
{
	char *path = prog("p_block"), *argv[] = { path, NULL };
	struct hunch_err err = { 0 };
	struct hrun h;
	uint64_t ret;
	int rc;

	if (launch(&h, argv, env, NULL, false, &err) != 0)
		return;
	eng_ptrace_resume_all(h.p, &err);
	rc = eng_infcall(h.p, eng_proc_pid(h.p), 0x1000, NULL, 0, &ret, &err);
	tap_ok(rc == -EBUSY && strstr(err.msg, "not stopped"),
	       "infcall on a running thread is refused: %s", err.msg);
	eng_ptrace_stop_all(h.p, &err);
	/* A call into unmapped memory faults at that address, not at 0:
	 * it must come back as an error with the program intact. */
	eng_detach_infcall_timeout(h.p, 2000);
	rc = eng_infcall(h.p, eng_proc_pid(h.p), 0x10, NULL, 0, &ret, &err);
	tap_ok(rc < 0, "a call to a bad address fails: %s", err.msg);
	eng_ptrace_resume_all(h.p, &err);
	if (write(h.in, "x\n", 2) != 2)
		tap_diag("write failed");
	close(h.in);
	h.in = -1;
	struct run_result r;

	memset(&r, 0, sizeof(r));
	finish(h.p, h.out, &r, 5000);
	tap_ok(r.exited && r.code == 0 && strstr(r.out, "got: x\n"),
	       "the program runs on normally after a failed call");
	hrun_close(&h);
}

int main(void)
{
	test_blocked("p_block");
	test_blocked("p_block_nopie");
	test_memory();
	test_refusals();
	tap_ok(no_children(), "no child process left behind");
	return tap_done();
}

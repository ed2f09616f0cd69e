/*
 * test_solib.c - shared libraries loaded and unloaded at run time are
 * reported (path and bias, checked against /proc/pid/maps) through the
 * r_debug breakpoint, which the program never notices; detach leaves no
 * int3 behind (main, entry and r_brk hold the file's bytes again).
 */
#include "proc_util.h"

static char *env[] = { "PATH=/usr/bin:/bin", NULL };

/* Start of the first mapping of `path` (file offset 0) in pid. */
static uint64_t map_start(pid_t pid, const char *path)
{
	char mp[64], line[4352];
	unsigned long long lo = 0, off = 1;
	uint64_t r = 0;
	FILE *f;

	snprintf(mp, sizeof(mp), "/proc/%d/maps", (int)pid);
	f = fopen(mp, "r");
	while (f && r == 0 && fgets(line, sizeof(line), f)) {
		char *name = strchr(line, '/');

		if (name == NULL)
			continue;
		name[strcspn(name, "\n")] = '\0';
		if (strcmp(name, path) == 0 &&
		    sscanf(line, "%llx-%*x %*s %llx", &lo, &off) == 2 &&
		    off == 0)
			r = lo;
	}
	if (f)
		fclose(f);
	return r;
}

static const struct eng_event *find_ev(const struct run_result *r,
				       enum eng_event_kind k)
{
	for (int i = 0; i < r->nev; i++)
		if (r->ev[i].kind == k)
			return &r->ev[i];
	return NULL;
}

static void test_load_unload(void)
{
	char *path = prog("p_dlopen"), *lib = prog("libplug.so");
	char go[64], close_[64];
	char *argv[] = { path, go, lib, close_, NULL };
	struct hunch_err err = { 0 };
	struct run_result r, d;
	const struct eng_event *ev;
	struct hrun h;
	size_t nmods;
	uint64_t start;
	char real[4096];

	if (realpath(lib, real) == NULL)
		snprintf(real, sizeof(real), "%s", lib);
	snprintf(go, sizeof(go), "/tmp/hunch-solib-go-%d", (int)getpid());
	snprintf(close_, sizeof(close_), "/tmp/hunch-solib-close-%d",
		 (int)getpid());
	unlink(go);
	unlink(close_);
	memset(&r, 0, sizeof(r));
	if (!tap_ok(launch(&h, argv, env, NULL, false, &err) == 0,
		    "launch p_dlopen")) {
		tap_diag("%s", err.msg);
		return;
	}
	tap_ok(eng_proc_r_brk(h.p) != 0, "r_brk found (0x%llx)",
	       (unsigned long long)eng_proc_r_brk(h.p));
	nmods = eng_solib_nmodules(h.p);
	eng_ptrace_resume_all(h.p, &err);
	wait_output(h.p, h.out, &r, "ready\n", 5000);
	touch(go);
	wait_output(h.p, h.out, &r, "value 7\n", 5000);
	/* Give the event a moment (it precedes the output anyway). */
	for (int i = 0; i < 10 && !find_ev(&r, ENG_EV_LIB_LOAD); i++)
		wait_output(h.p, h.out, &r, "never", 20);
	ev = find_ev(&r, ENG_EV_LIB_LOAD);
	tap_ok(ev && strcmp(ev->path, lib) == 0, "ENG_EV_LIB_LOAD for %s",
	       ev ? ev->path : "(none)");
	start = map_start(eng_proc_pid(h.p), real);
	tap_ok(ev && start != 0 && ev->bias == start, "its bias 0x%llx is "
	       "where the file is mapped (0x%llx)",
	       ev ? (unsigned long long)ev->bias : 0ULL,
	       (unsigned long long)start);
	tap_eq(eng_solib_nmodules(h.p), nmods + 1, "one more module listed");
	touch(close_);
	finish(h.p, h.out, &r, 5000);
	ev = find_ev(&r, ENG_EV_LIB_UNLOAD);
	tap_ok(ev && strcmp(ev->path, lib) == 0, "ENG_EV_LIB_UNLOAD after "
	       "dlclose");
	tap_ok(r.exited && r.code == 0, "p_dlopen exits 0 under hunch");
	hrun_close(&h);
	run_direct(argv, env, NULL, NULL, &d);
	tap_ok(strcmp(d.out, r.out) == 0 && d.exited && d.code == 0,
	       "output identical to a direct run");
	if (strcmp(d.out, r.out) != 0)
		tap_diag("direct:\n%s\nhunch:\n%s", d.out, r.out);
	unlink(go);
	unlink(close_);
}

/* Compare 16 bytes in the (detached) process with the file. */
static bool same_as_file(pid_t pid, uint64_t addr, const char *file,
			 uint64_t vaddr)
{
	uint8_t a[16], b[16];
	char mp[64];
	int fd;
	bool ok;

	snprintf(mp, sizeof(mp), "/proc/%d/mem", (int)pid);
	fd = open(mp, O_RDONLY);
	ok = fd >= 0 && pread(fd, a, 16, (off_t)addr) == 16 &&
	     file_bytes(file, vaddr, b, 16) == 0 && memcmp(a, b, 16) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

static void test_detach_clean(void)
{
	char *path = prog("p_dlopen"), *lib = prog("libplug.so");
	char go[64];
	char *argv[] = { path, go, lib, NULL };
	struct hunch_err err = { 0 };
	struct hrun h;
	const char *ld = NULL;
	uint64_t bias, ldbias = 0, main_a, entry, rbrk;
	pid_t pid;
	int st;

	snprintf(go, sizeof(go), "/tmp/hunch-solib-go2-%d", (int)getpid());
	unlink(go);
	if (launch(&h, argv, env, NULL, false, &err) != 0) {
		tap_ok(0, "launch: %s", err.msg);
		return;
	}
	pid = eng_proc_pid(h.p);
	bias = eng_solib_module(h.p, 0)->bias;
	main_a = eng_proc_main(h.p);
	entry = eng_proc_entry(h.p);
	rbrk = eng_proc_r_brk(h.p);
	for (size_t i = 1; i < eng_solib_nmodules(h.p); i++)
		if (strstr(eng_solib_module(h.p, i)->path, "ld-linux")) {
			ld = strdup(eng_solib_module(h.p, i)->path);
			ldbias = eng_solib_module(h.p, i)->bias;
		}
	tap_ok(ld != NULL && rbrk > ldbias, "r_brk lies in ld.so (%s)",
	       ld ? ld : "?");
	tap_ok(eng_detach(h.p, &err) == 0, "detach at main");
	tap_ok(same_as_file(pid, main_a, path, main_a - bias),
	       "main holds the file's bytes after detach");
	tap_ok(same_as_file(pid, entry, path, entry - bias),
	       "the entry point holds the file's bytes after detach");
	tap_ok(ld && same_as_file(pid, rbrk, ld, rbrk - ldbias),
	       "r_brk holds ld.so's bytes after detach");
	/* And it runs through a dlopen without tripping on anything. */
	touch(go);
	waitpid(pid, &st, 0);
	tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the detached program "
	       "dlopens and exits 0 (status 0x%x)", st);
	hrun_close(&h);
	unlink(go);
}

/* Four threads dlopen/dlclose concurrently: every r_brk hit is stepped
 * over with the other threads stopped, none is lost or doubled. */
static void test_concurrent(void)
{
	char *path = prog("p_dlstress"), *lib = prog("libplug.so");
	char *argv[] = { path, lib, NULL };
	struct hunch_err err = { 0 };
	struct run_result r;
	struct hrun h;
	size_t nmods;

	memset(&r, 0, sizeof(r));
	if (launch(&h, argv, env, NULL, false, &err) != 0) {
		tap_ok(0, "launch p_dlstress: %s", err.msg);
		return;
	}
	nmods = eng_solib_nmodules(h.p);
	eng_ptrace_resume_all(h.p, &err);
	finish(h.p, h.out, &r, 30000);
	tap_ok(r.exited && r.code == 0 && strcmp(r.out, "total 5600\n") == 0,
	       "four threads x 200 dlopen/dlclose: right output (%s)", one_line(r.out));
	tap_ok(r.nkind[ENG_EV_LIB_LOAD] > 0 &&
	       r.nkind[ENG_EV_LIB_LOAD] == r.nkind[ENG_EV_LIB_UNLOAD],
	       "loads and unloads balance: %d and %d",
	       r.nkind[ENG_EV_LIB_LOAD], r.nkind[ENG_EV_LIB_UNLOAD]);
	tap_eq(eng_solib_nmodules(h.p), nmods, "the module list is back to "
	       "where it started");
	hrun_close(&h);
}

int main(void)
{
	test_load_unload();
	test_concurrent();
	test_detach_clean();
	tap_ok(no_children(), "no child process left behind");
	return tap_done();
}

/*
 * proc_util.h - helpers for the process-control tests: find the test
 * programs, run one directly and under hunch with the same inputs, look
 * a symbol up in a file (with libelf, independent of engine/), and check
 * that nothing was left behind.
 */
#ifndef PROC_UTIL_H
#define PROC_UTIL_H

#include "eng_proc.h"
#include "eng_shm.h"
#include "tap.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static inline char *prog(const char *name)
{
	const char *root = getenv("HUNCH_BUILD_ROOT");
	char *p;

	if (asprintf(&p, "%s/tests/proc/progs/%s", root ? root : ".",
		     name) < 0)
		abort();
	return p;
}

static inline const char *rtlib(void)
{
	const char *r = getenv("HUNCHRT");

	return r ? r : "./rtlib/libhunchrt.so";
}

struct run_result {
	char out[65536];
	size_t outlen;
	bool exited;     /* else killed */
	int code;        /* exit code, or signal */
	bool core;
	struct eng_event ev[16];   /* the first events seen */
	int nev;
	int nkind[16];             /* events seen, by kind */
	int nsig[65];              /* ENG_EV_SIGNAL, by signal */
};

static inline void record(struct run_result *r, const struct eng_event *ev,
			  int n)
{
	for (int i = 0; i < n; i++) {
		if (ev[i].kind == ENG_EV_EXITED) {
			r->exited = true;
			r->code = ev[i].status;
		} else if (ev[i].kind == ENG_EV_KILLED) {
			r->exited = false;
			r->code = ev[i].signo;
			r->core = ev[i].core;
		}
		if (r->nev < 16)
			r->ev[r->nev++] = ev[i];
		if ((unsigned)ev[i].kind < 16)
			r->nkind[ev[i].kind]++;
		if (ev[i].kind == ENG_EV_SIGNAL && ev[i].signo > 0 &&
		    ev[i].signo < 65)
			r->nsig[ev[i].signo]++;
	}
}

static inline void slurp(int fd, struct run_result *r)
{
	ssize_t n;

	while (r->outlen < sizeof(r->out) - 1 &&
	       (n = read(fd, r->out + r->outlen,
			 sizeof(r->out) - 1 - r->outlen)) > 0)
		r->outlen += (size_t)n;
	r->out[r->outlen] = '\0';
}

static inline void feed(int fd, const char *in)
{
	if (in != NULL && write(fd, in, strlen(in)) < 0)
		perror("write");
	close(fd);
}

/* Run directly: the reference for a run under hunch. */
static inline int run_direct(char *const argv[], char *const envp[],
			     const char *cwd, const char *in,
			     struct run_result *r)
{
	int ip[2], op[2], st;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	if (pipe2(ip, O_CLOEXEC) || pipe2(op, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid == 0) {
		if (cwd && chdir(cwd))
			_exit(126);
		dup2(ip[0], 0);
		dup2(op[1], 1);
		execve(argv[0], argv, envp);
		_exit(127);
	}
	close(ip[0]);
	close(op[1]);
	feed(ip[1], in);
	slurp(op[0], r);
	close(op[0]);
	waitpid(pid, &st, 0);
	r->exited = WIFEXITED(st);
	r->code = r->exited ? WEXITSTATUS(st) : WTERMSIG(st);
	r->core = !r->exited && WCOREDUMP(st);
	return 0;
}

static inline long long ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Collect events until the end, reading output as it comes (a full
 * pipe would otherwise block the program). */
static inline int finish(struct eng_proc *p, int outfd, struct run_result *r,
			 int timeout_ms)
{
	struct eng_event ev[8];
	long long end = ms_now() + timeout_ms;

	fcntl(outfd, F_SETFL, O_NONBLOCK);
	while (!eng_proc_ended(p) && ms_now() < end) {
		int n = eng_ptrace_poll_events(p, ev, 8, 20);

		if (n > 0)
			record(r, ev, n);
		slurp(outfd, r);
	}
	for (int n; (n = eng_ptrace_poll_events(p, ev, 8, 0)) > 0; )
		record(r, ev, n);
	/* Once it has ended, read to EOF; otherwise only what is there. */
	if (eng_proc_ended(p))
		fcntl(outfd, F_SETFL, 0);
	slurp(outfd, r);
	fcntl(outfd, F_SETFL, 0);
	return eng_proc_ended(p) ? 0 : -ETIMEDOUT;
}

struct hrun {
	struct eng_proc *p;
	struct eng_shm *shm;
	int in, out;    /* our ends */
};

static inline int launch(struct hrun *h, char *const argv[],
			 char *const envp[], const char *cwd, bool with_rt,
			 struct hunch_err *err)
{
	struct eng_launch_opts o;
	int ip[2], op[2], rc;

	memset(h, 0, sizeof(*h));
	h->in = h->out = -1;
	if (with_rt && eng_shm_create(0, false, &h->shm, err) < 0)
		return -1;
	if (pipe2(ip, O_CLOEXEC) || pipe2(op, O_CLOEXEC))
		return -1;
	memset(&o, 0, sizeof(o));
	o.path = argv[0];
	o.argv = argv;
	o.envp = envp;
	o.cwd = cwd;
	o.stdin_fd = ip[0];
	o.stdout_fd = op[1];
	o.stderr_fd = -1;
	o.rtlib_path = with_rt ? rtlib() : NULL;
	o.shm = h->shm;
	rc = eng_launch(&o, &h->p, err);
	close(ip[0]);
	close(op[1]);
	h->in = ip[1];
	h->out = op[0];
	return rc;
}

static inline void hrun_close(struct hrun *h)
{
	if (h->p)
		eng_proc_free(h->p);
	eng_shm_destroy(h->shm);
	if (h->in >= 0)
		close(h->in);
	if (h->out >= 0)
		close(h->out);
	memset(h, 0, sizeof(*h));
}

/* Launch, resume at main, feed stdin, run to the end. */
static inline int run_hunch(char *const argv[], char *const envp[],
			    const char *cwd, const char *in,
			    struct run_result *r, struct hunch_err *err)
{
	struct hrun h;
	int rc;

	memset(r, 0, sizeof(*r));
	rc = launch(&h, argv, envp, cwd, false, err);
	if (rc == 0)
		rc = eng_ptrace_resume_all(h.p, err);
	if (rc == 0) {
		feed(h.in, in);
		h.in = -1;
		rc = finish(h.p, h.out, r, 20000);
	}
	hrun_close(&h);
	return rc;
}

/* The link-time address of a symbol, from the file's .symtab. */
static inline uint64_t sym_addr(const char *path, const char *name)
{
	Elf_Scn *s = NULL;
	uint64_t v = 0;
	GElf_Shdr sh;
	Elf *e;
	int fd = open(path, O_RDONLY);

	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	while (e && v == 0 && (s = elf_nextscn(e, s)) != NULL) {
		Elf_Data *d = elf_getdata(s, NULL);

		if (gelf_getshdr(s, &sh) == NULL || sh.sh_type != SHT_SYMTAB)
			continue;
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *n;

			if (!gelf_getsym(d, (int)i, &sym))
				continue;
			n = elf_strptr(e, sh.sh_link, sym.st_name);
			if (n && strcmp(n, name) == 0 && sym.st_value) {
				v = sym.st_value;
				break;
			}
		}
	}
	elf_end(e);
	close(fd);
	return v;
}

/* Bytes of the file at a link-time address. */
static inline int file_bytes(const char *path, uint64_t vaddr, void *buf,
			     size_t len)
{
	Elf *e;
	size_t n = 0;
	int fd = open(path, O_RDONLY), rc = -1;

	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (e && elf_getphdrnum(e, &n) == 0)
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(e, (int)i, &ph) ||
			    ph.p_type != PT_LOAD || vaddr < ph.p_vaddr ||
			    vaddr + len > ph.p_vaddr + ph.p_filesz)
				continue;
			rc = pread(fd, buf, len, (off_t)(ph.p_offset + vaddr -
						       ph.p_vaddr)) ==
			     (ssize_t)len ? 0 : -1;
			break;
		}
	elf_end(e);
	close(fd);
	return rc;
}

/* No child of ours is left (running, stopped or zombie). */
static inline bool no_children(void)
{
	int st;

	return waitpid(-1, &st, WNOHANG | __WALL) < 0 && errno == ECHILD;
}

/* /dev/shm/hunch-<our pid>-* objects. */
static inline int shm_count(void)
{
	char prefix[64];
	struct dirent *de;
	int n = 0;
	DIR *d = opendir("/dev/shm");

	snprintf(prefix, sizeof(prefix), "hunch-%d-", (int)getpid());
	while (d && (de = readdir(d)) != NULL)
		n += strncmp(de->d_name, prefix, strlen(prefix)) == 0;
	if (d)
		closedir(d);
	return n;
}

/* Ours beyond those that were there when the test started: a killed
 * process that had our pid before may have left some. */
static int shm_baseline = -1;

static inline int shm_leftovers(void)
{
	if (shm_baseline < 0)
		shm_baseline = shm_count();
	return shm_count() - shm_baseline;
}

/* Wait until the program's output contains `want`. */
static inline bool wait_output(struct eng_proc *p, int fd,
			       struct run_result *r, const char *want,
			       int timeout_ms)
{
	struct eng_event ev[8];

	long long end = ms_now() + timeout_ms;

	fcntl(fd, F_SETFL, O_NONBLOCK);
	while (ms_now() < end) {
		slurp(fd, r);
		if (strstr(r->out, want) != NULL)
			return true;
		if (p != NULL) {
			int n = eng_ptrace_poll_events(p, ev, 8, 10);

			if (n > 0)
				record(r, ev, n);
		} else
			usleep(10000);
	}
	return false;
}

/* Wait until thread `tid` sleeps in system call `nr` (the first field of
 * /proc/<tid>/syscall; "running" while it runs): a fixed sleep after its
 * last output is not enough on a loaded machine. */
static inline bool wait_in_syscall(pid_t tid, long nr, int timeout_ms)
{
	long long end = ms_now() + timeout_ms;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)tid);
	do {
		FILE *f = fopen(path, "r");
		long got = -2;

		if (f != NULL) {
			if (fscanf(f, "%ld", &got) != 1)
				got = -2;
			fclose(f);
		}
		if (got == nr)
			return true;
		usleep(1000);
	} while (ms_now() < end);
	return false;
}

static inline void touch(const char *path)
{
	int fd = open(path, O_CREAT | O_WRONLY, 0600);

	if (fd >= 0)
		close(fd);
}

/* A program's output on one line ("\n" shown as "|") for a test name:
 * a newline inside a TAP line starts a line that is not TAP (and one
 * starting "ok" would count as a case).  Static buffer: one use per
 * statement. */
static inline const char *one_line(const char *s)
{
	static char buf[512];
	size_t i;

	for (i = 0; s[i] != '\0' && i < sizeof(buf) - 1; i++)
		buf[i] = s[i] == '\n' ? '|' : s[i];
	buf[i] = '\0';
	return buf;
}

#endif

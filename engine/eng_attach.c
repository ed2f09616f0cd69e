/*
 * eng_attach.c - taking hold of a running process.
 *
 * Every thread is seized (PTRACE_SEIZE, so nothing is stopped or
 * signalled by the attach itself), rescanning /proc/pid/task until no
 * new thread shows up, since threads can be created while we seize;
 * after that, new threads arrive as clone events.  Then all are
 * interrupted.  The common failures are diagnosed before trying, so
 * that the message can say why and what to do.
 */
#include "eng_proc_int.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <unistd.h>

#define SEIZE_OPTS (PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC | \
		    PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | \
		    PTRACE_O_TRACESYSGOOD)

/* The value of "Field:" in /proc/pid/status, trimmed. */
int eng_proc_status_field(pid_t pid, const char *field, char *buf,
			  size_t len)
{
	char path[64], line[512];
	size_t fl = strlen(field);
	FILE *f;
	int rc = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (f == NULL)
		return -errno;
	while (fgets(line, sizeof(line), f) != NULL) {
		char *v = line + fl + 1;

		if (strncmp(line, field, fl) != 0 || line[fl] != ':')
			continue;
		v += strspn(v, " \t");
		v[strcspn(v, "\n")] = '\0';
		snprintf(buf, len, "%s", v);
		rc = 0;
		break;
	}
	fclose(f);
	return rc;
}

static void comm_of(pid_t pid, char *buf, size_t len)
{
	if (eng_proc_status_field(pid, "Name", buf, len) < 0)
		snprintf(buf, len, "?");
}

static int read_int_file(const char *path, int *v)
{
	FILE *f = fopen(path, "re");
	int rc;

	if (f == NULL)
		return -errno;
	rc = fscanf(f, "%d", v) == 1 ? 0 : -EINVAL;
	fclose(f);
	return rc;
}

/* Why PTRACE_SEIZE said EPERM, and what to do about it. */
static int perm_error(pid_t pid, const char *comm, struct hunch_err *err)
{
	char uidl[128], tracer[32], tcomm[64];
	unsigned uid = 0;
	int scope;

	/* kill(pid, 0) says EPERM for another user's live process. */
	if ((kill(pid, 0) != 0 && errno == ESRCH) ||
	    (eng_proc_status_field(pid, "State", uidl, sizeof(uidl)) == 0 &&
	     (uidl[0] == 'Z' || uidl[0] == 'X')))
		return hunch_errf(err, -ESRCH, "process %d (%s) exited while "
				  "hunch was attaching", (int)pid, comm);
	if (eng_proc_status_field(pid, "TracerPid", tracer, sizeof(tracer))
	    == 0 && atoi(tracer) != 0) {
		comm_of(atoi(tracer), tcomm, sizeof(tcomm));
		return hunch_errf(err, -EPERM, "cannot attach to process %d "
			"(%s): it is already traced by process %s (%s): "
			"detach that tracer (quit gdb or strace) and try "
			"again", (int)pid, comm, tracer, tcomm);
	}
	if (eng_proc_status_field(pid, "Uid", uidl, sizeof(uidl)) == 0 &&
	    sscanf(uidl, "%u", &uid) == 1 && uid != geteuid() &&
	    geteuid() != 0) {
		struct passwd *pw = getpwuid(uid);

		return hunch_errf(err, -EPERM, "cannot attach to process %d "
			"(%s): it belongs to user %s (uid %u) and hunch runs "
			"as uid %u: run hunch as that user, or as root",
			(int)pid, comm, pw ? pw->pw_name : "?", uid,
			(unsigned)geteuid());
	}
	if (read_int_file("/proc/sys/kernel/yama/ptrace_scope", &scope) == 0 &&
	    scope > 0)
		return hunch_errf(err, -EPERM, "cannot attach to process %d "
			"(%s): kernel.yama.ptrace_scope is %d, which %s",
			(int)pid, comm, scope, scope == 1 ?
			"lets a process trace only its descendants: run "
			"hunch as root (or with CAP_SYS_PTRACE), or run "
			"'sysctl kernel.yama.ptrace_scope=0'" : scope == 2 ?
			"allows tracing only with CAP_SYS_PTRACE: run hunch "
			"as root" : "forbids attaching until reboot: launch "
			"the program under hunch instead");
	return hunch_errf(err, -EPERM, "cannot attach to process %d (%s): "
		"not permitted (a setuid or non-dumpable program, or a "
		"security module): run hunch as root, or launch the program "
		"under hunch", (int)pid, comm);
}

/* The checks we can make before seizing. */
static int precheck(pid_t pid, const char *comm, struct hunch_err *err)
{
	char state[64], tgid[32], exe[64];

	if (pid <= 0)
		return hunch_errf(err, -EINVAL, "%d is not a process id",
				  (int)pid);
	if (pid == getpid())
		return hunch_errf(err, -EINVAL, "pid %d is hunch itself: give "
			"the pid of the program to examine", (int)pid);
	if (kill(pid, 0) != 0 && errno == ESRCH)
		return hunch_errf(err, -ESRCH, "no process %d (has it exited? "
			"check the pid with ps)", (int)pid);
	if (eng_proc_status_field(pid, "Tgid", tgid, sizeof(tgid)) == 0 &&
	    atoi(tgid) != pid)
		return hunch_errf(err, -EINVAL, "%d is a thread of process %s, "
			"not a process: attach to %s", (int)pid, tgid, tgid);
	if (eng_proc_status_field(pid, "State", state, sizeof(state)) == 0 &&
	    state[0] == 'Z')
		return hunch_errf(err, -ESRCH, "process %d (%s) is a zombie: "
			"it has exited and only waits for its parent to reap "
			"it; there is nothing to attach to", (int)pid, comm);
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	if (access(exe, R_OK) == 0 && eng_elf_check(exe, err) < 0) {
		hunch_err_prefix(err, "cannot attach to process %d (%s): ",
				 (int)pid, comm);
		return -ENOEXEC;
	}
	return 0;
}

static int seize(struct eng_proc *p, pid_t tid, const char *comm,
		 struct hunch_err *err)
{
	if (ptrace(PTRACE_SEIZE, tid, 0, (void *)(long)SEIZE_OPTS) == 0)
		return eng_thread_add(p, tid, TS_RUNNING) ? 1 : -ENOMEM;
	if (errno == EPERM && tid == p->pid)
		return perm_error(p->pid, comm, err);
	if (tid == p->pid)
		return hunch_errf(err, -errno, "cannot attach to process %d "
			"(%s): %s", (int)p->pid, comm, strerror(errno));
	return 0;  /* the thread exited meanwhile */
}

/* One pass over /proc/pid/task; returns how many new threads. */
static int seize_pass(struct eng_proc *p, const char *comm,
		      struct hunch_err *err)
{
	char path[64];
	struct dirent *de;
	int n = 0, rc = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)p->pid);
	d = opendir(path);
	if (d == NULL)
		return hunch_errf(err, -ESRCH, "no process %d (it exited while "
				  "hunch attached)", (int)p->pid);
	while (rc >= 0 && (de = readdir(d)) != NULL) {
		pid_t tid = (pid_t)atoi(de->d_name);

		if (tid <= 0 || eng_thread_find(p, tid) != NULL)
			continue;
		rc = seize(p, tid, comm, err);
		n += rc > 0;
	}
	closedir(d);
	return rc < 0 ? rc : n;
}

static int seize_all(struct eng_proc *p, const char *comm,
		     struct hunch_err *err)
{
	int rc = seize(p, p->pid, comm, err);  /* the leader first */

	if (rc < 0)
		return rc;
	do
		rc = seize_pass(p, comm, err);
	while (rc > 0);
	return rc;
}

int eng_attach(pid_t pid, const char *rtlib_path, struct eng_shm *shm,
	       struct eng_proc **out, struct hunch_err *err)
{
	struct eng_proc *p;
	char comm[64];
	int rc;

	*out = NULL;
	comm_of(pid, comm, sizeof(comm));
	if ((rc = precheck(pid, comm, err)) < 0)
		return rc;
	p = eng_proc_new(pid, false);
	if (p == NULL)
		return hunch_errf(err, -ENOMEM, "out of memory");
	rc = seize_all(p, comm, err);
	if (rc == 0)
		rc = eng_stop_all(p, err);
	if (rc == 0) {
		eng_mem_open(p);
		eng_read_auxv(pid, AT_ENTRY, &p->entry);
		rc = eng_solib_init(p, err);
	}
	if (rc == 0 && rtlib_path != NULL)
		rc = eng_inject_rtlib(p, rtlib_path, shm, err);
	if (rc < 0) {
		eng_proc_free(p);  /* detaches: the program runs on */
		return rc;
	}
	*out = p;
	return 0;
}

/*
 * eng_attach.c - taking hold of a running process.
 *
 * Every thread is seized (PTRACE_SEIZE, so nothing is stopped or
 * signalled by the attach itself), rescanning /proc/pid/task until no
 * new thread shows up, since threads can be created while we seize;
 * after that, new threads arrive as clone events.  Then all are
 * interrupted.  The common failures are diagnosed before trying, and a
 * refused seize afterwards, by eng_attach_why.c, so that the message
 * says why and what to do.
 */
#include "eng_proc_int.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
int eng_attach_status_field(pid_t pid, const char *field, char *buf,
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
	if (eng_attach_status_field(pid, "Name", buf, len) < 0)
		snprintf(buf, len, "?");
}

/* The checks we can make before seizing: the refusals of
 * eng_attach_why.c, then the executable's. */
static int precheck(pid_t pid, const char *comm, struct hunch_err *err)
{
	char exe[64];
	int rc = eng_attach_why_precheck(pid, comm, err);

	if (rc < 0)
		return rc;
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	if (access(exe, R_OK) == 0 && eng_launch_elf_check(exe, err) < 0) {
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
		return eng_ptrace_thread_add(p, tid, TS_RUNNING) ? 1 : -ENOMEM;
	if (tid == p->pid)
		return eng_attach_why_refused(p->pid, comm, errno, err);
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
		return eng_attach_why_refused(p->pid, comm, ESRCH, err);
	while (rc >= 0 && (de = readdir(d)) != NULL) {
		pid_t tid = (pid_t)atoi(de->d_name);

		if (tid <= 0 || eng_ptrace_thread_find(p, tid) != NULL)
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
		return hunch_err_set(err, -ENOMEM, "out of memory");
	rc = seize_all(p, comm, err);
	if (rc == 0)
		rc = eng_ptrace_stop_all(p, err);
	if (rc == 0) {
		eng_mem_open(p);
		eng_solib_read_auxv(pid, AT_ENTRY, &p->entry);
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

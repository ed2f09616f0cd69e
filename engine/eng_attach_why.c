/*
 * eng_attach_why.c - why an attach is refused, in words, with what to do.
 *
 * Each reason hunch can tell apart is one enum value with a line of the
 * message table: the reason (what is in the way) and the advice (what the
 * user can do about it).  The message always reads
 *   cannot attach to process PID (COMM): REASON: ADVICE
 * so that a script or a person finds the pid, the cause and the fix in
 * the same places.  The reasons are found from /proc before seizing
 * (no such pid, a thread, a zombie, a kernel thread, another tracer) and,
 * when PTRACE_SEIZE says EPERM, from the owners, capabilities, Yama's
 * ptrace_scope and seccomp.
 */
#include "eng_proc_int.h"

#include <errno.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum eng_attach_why {
	WHY_NOT_PID,
	WHY_SELF,
	WHY_NO_PROCESS,
	WHY_THREAD,
	WHY_ZOMBIE,
	WHY_KERNEL_THREAD,
	WHY_EXITED,
	WHY_TRACED_GDB,
	WHY_TRACED_STRACE,
	WHY_TRACED_HUNCH,
	WHY_TRACED,
	WHY_OTHER_USER,
	WHY_NO_CAP,
	WHY_NO_CAP_CAPS,
	WHY_YAMA_1,
	WHY_YAMA_2,
	WHY_YAMA_3,
	WHY_SECCOMP,
	WHY_ROOT_REFUSED,
	WHY_NOT_PERMITTED,
	WHY_ERRNO,
};

/* The reason and the advice each take at most one %s: the detail given
 * for them (a pid, a user, a tracer).  Extra arguments are ignored by
 * printf, so every line is formatted the same way. */
static const struct {
	int code;
	const char *reason;
	const char *advice;
} why_text[] = {
	[WHY_NOT_PID] = { -EINVAL, "%s is not a process id",
		"give the pid of a running program (ps -e lists them)" },
	[WHY_SELF] = { -EINVAL, "pid %s is hunch itself",
		"give the pid of the program to examine" },
	[WHY_NO_PROCESS] = { -ESRCH, "no process %s (has it exited?)",
		"check the pid with ps" },
	[WHY_THREAD] = { -EINVAL, "it is a thread of process %s, not a "
		"process", "attach to %s" },
	[WHY_ZOMBIE] = { -ESRCH, "it is a zombie: it has exited and only "
		"waits for its parent to reap it",
		"there is nothing to attach to; start the program again "
		"under hunch (hunch run -- PROG)" },
	[WHY_KERNEL_THREAD] = { -EPERM, "it is a kernel thread, which runs "
		"no program of its own and cannot be traced",
		"give the pid of a user program (ps -e lists them; kernel "
		"threads are the [bracketed] names of ps -ef)" },
	[WHY_EXITED] = { -ESRCH, "it exited while hunch was attaching",
		"start it again, then attach" },
	[WHY_TRACED_GDB] = { -EPERM, "it is already traced by process %s",
		"type 'detach' in that gdb (or quit it), then try again" },
	[WHY_TRACED_STRACE] = { -EPERM, "it is already traced by process %s",
		"stop that strace (Ctrl-C in its terminal, or kill -INT %s): "
		"it detaches and the program runs on; then try again" },
	[WHY_TRACED_HUNCH] = { -EPERM, "it is already traced by process %s",
		"end that hunch (q in its dashboard, or kill -TERM %s): it "
		"detaches and the program runs on; then try again" },
	[WHY_TRACED] = { -EPERM, "it is already traced by process %s",
		"detach that tracer (process %s) and try again: a process "
		"has one tracer at a time" },
	[WHY_OTHER_USER] = { -EPERM, "it belongs to %s",
		"run hunch as that user, or as root" },
	[WHY_NO_CAP] = { -EPERM, "it belongs to %s, and hunch runs as root "
		"without CAP_SYS_PTRACE",
		"give hunch that capability (in a container: docker run "
		"--cap-add=SYS_PTRACE), or run hunch as the program's user" },
	[WHY_NO_CAP_CAPS] = { -EPERM, "it holds capabilities hunch lacks, "
		"and hunch runs without CAP_SYS_PTRACE",
		"give hunch that capability (in a container: docker run "
		"--cap-add=SYS_PTRACE), or launch the program under hunch "
		"(hunch run -- PROG)" },
	[WHY_YAMA_1] = { -EPERM, "kernel.yama.ptrace_scope is 1, which lets "
		"a process trace only its own descendants",
		"run 'sysctl kernel.yama.ptrace_scope=0', or run hunch as "
		"root (or with CAP_SYS_PTRACE), or launch the program under "
		"hunch (hunch run -- PROG)" },
	[WHY_YAMA_2] = { -EPERM, "kernel.yama.ptrace_scope is 2, which "
		"allows tracing only with CAP_SYS_PTRACE",
		"run hunch as root, or run 'sysctl "
		"kernel.yama.ptrace_scope=0'" },
	[WHY_YAMA_3] = { -EPERM, "kernel.yama.ptrace_scope is 3, which "
		"forbids attaching until the next boot",
		"launch the program under hunch instead (hunch run -- PROG)" },
	[WHY_SECCOMP] = { -EPERM, "hunch runs under a seccomp filter, which "
		"may forbid ptrace (a container's default profile can)",
		"run the container with --cap-add=SYS_PTRACE or "
		"--security-opt seccomp=unconfined, or launch the program "
		"under hunch (hunch run -- PROG)" },
	[WHY_ROOT_REFUSED] = { -EPERM, "not permitted although hunch runs as "
		"root: the process may hold capabilities hunch lacks, or be "
		"guarded by a security module or a sandbox",
		"launch the program under hunch instead (hunch run -- PROG)" },
	[WHY_NOT_PERMITTED] = { -EPERM, "not permitted: the program is "
		"setuid, setgid or non-dumpable, or a security module forbids "
		"it", "run hunch as root, or launch the program under hunch "
		"(hunch run -- PROG)" },
	[WHY_ERRNO] = { -EPERM, "%s", "check the pid and try again" },
};

/* Fill err with reason `why`; `rd` and `ad` are the details of its reason
 * and advice; `code` replaces the table's when nonzero (an errno). */
static int refuse(struct hunch_err *err, enum eng_attach_why why, pid_t pid,
		  const char *comm, const char *rd, const char *ad, int code)
{
	char head[128], reason[384], advice[384];

	if (comm != NULL && strcmp(comm, "?") != 0)
		snprintf(head, sizeof(head), "process %d (%s)", (int)pid,
			 comm);
	else
		snprintf(head, sizeof(head), "process %d", (int)pid);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
#pragma GCC diagnostic ignored "-Wformat-extra-args"
	snprintf(reason, sizeof(reason), why_text[why].reason, rd ? rd : "");
	snprintf(advice, sizeof(advice), why_text[why].advice, ad ? ad : "");
#pragma GCC diagnostic pop
	return hunch_err_set(err, code ? code : why_text[why].code,
			  "cannot attach to %s: %s: %s", head, reason, advice);
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

/* PF_KTHREAD in the flags of /proc/pid/stat (field 9, after the name). */
static bool is_kernel_thread(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long flags = 0;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (f == NULL)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (p == NULL || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu",
				&flags) != 1)
		return false;
	return (flags & 0x00200000UL) != 0;
}

static bool status_is(pid_t pid, const char *field, const char *states)
{
	char v[64];

	return eng_attach_status_field(pid, field, v, sizeof(v)) == 0 &&
	       v[0] != '\0' && strchr(states, v[0]) != NULL;
}

/* Which tracer holds pid, if any: the table line for its kind. */
static int tracer_check(pid_t pid, const char *comm, struct hunch_err *err)
{
	char tracer[32], tcomm[64], rd[128];
	enum eng_attach_why why = WHY_TRACED;

	if (eng_attach_status_field(pid, "TracerPid", tracer, sizeof(tracer))
	    != 0 || atoi(tracer) == 0)
		return 0;
	if (eng_attach_status_field(atoi(tracer), "Name", tcomm,
				  sizeof(tcomm)) != 0)
		snprintf(tcomm, sizeof(tcomm), "?");
	if (strcmp(tcomm, "gdb") == 0)
		why = WHY_TRACED_GDB;
	else if (strcmp(tcomm, "strace") == 0)
		why = WHY_TRACED_STRACE;
	else if (strcmp(tcomm, "hunch") == 0)
		why = WHY_TRACED_HUNCH;
	snprintf(rd, sizeof(rd), "%s (%s)", tracer, tcomm);
	return refuse(err, why, pid, comm, rd, tracer, 0);
}

int eng_attach_why_precheck(pid_t pid, const char *comm,
			    struct hunch_err *err)
{
	char d[32], tgid[32];

	snprintf(d, sizeof(d), "%d", (int)pid);
	if (pid <= 0)
		return refuse(err, WHY_NOT_PID, pid, NULL, d, NULL, 0);
	if (pid == getpid())
		return refuse(err, WHY_SELF, pid, comm, d, NULL, 0);
	if (kill(pid, 0) != 0 && errno == ESRCH)
		return refuse(err, WHY_NO_PROCESS, pid, NULL, d, NULL, 0);
	if (eng_attach_status_field(pid, "Tgid", tgid, sizeof(tgid)) == 0 &&
	    atoi(tgid) != pid)
		return refuse(err, WHY_THREAD, pid, comm, tgid, tgid, 0);
	if (status_is(pid, "State", "ZX"))
		return refuse(err, WHY_ZOMBIE, pid, comm, NULL, NULL, 0);
	if (is_kernel_thread(pid))
		return refuse(err, WHY_KERNEL_THREAD, pid, comm, NULL, NULL, 0);
	return tracer_check(pid, comm, err);
}

/* A capability set of /proc/pid/status ("CapPrm"), as a mask; all ones
 * when it cannot be read (then nothing is blamed on it). */
static unsigned long long caps_of(pid_t pid, const char *field)
{
	char v[64];

	if (eng_attach_status_field(pid, field, v, sizeof(v)) != 0)
		return ~0ULL;
	return strtoull(v, NULL, 16);
}

static bool have_cap_sys_ptrace(void)
{
	return (caps_of(getpid(), "CapEff") >> 19 & 1) != 0;
}

/* The kernel lets a tracer without CAP_SYS_PTRACE attach only to a
 * process whose permitted capabilities are a subset of its own. */
static bool holds_more_caps(pid_t pid)
{
	unsigned long long mine = caps_of(getpid(), "CapPrm");

	return !have_cap_sys_ptrace() && (caps_of(pid, "CapPrm") & ~mine);
}

/* The owner of pid, as "user NAME (uid N)"; its uid in *uid. */
static bool owner_of(pid_t pid, unsigned *uid, char *buf, size_t len)
{
	char v[128];
	struct passwd *pw;

	if (eng_attach_status_field(pid, "Uid", v, sizeof(v)) != 0 ||
	    sscanf(v, "%u", uid) != 1)
		return false;
	pw = getpwuid(*uid);
	snprintf(buf, len, "user %s (uid %u)", pw ? pw->pw_name : "?", *uid);
	return true;
}

int eng_attach_why_refused(pid_t pid, const char *comm, int errnum,
			   struct hunch_err *err)
{
	char owner[160], rd[256], sc[16];
	unsigned uid = 0, me = (unsigned)geteuid();
	int rc, scope;

	if (errnum == ESRCH)
		return refuse(err, WHY_EXITED, pid, comm, NULL, NULL, 0);
	if (errnum != EPERM)
		return refuse(err, WHY_ERRNO, pid, comm, strerror(errnum),
			      NULL, -errnum);
	if ((kill(pid, 0) != 0 && errno == ESRCH) ||
	    status_is(pid, "State", "ZX"))
		return refuse(err, WHY_EXITED, pid, comm, NULL, NULL, 0);
	if ((rc = tracer_check(pid, comm, err)) < 0)
		return rc;
	if (owner_of(pid, &uid, owner, sizeof(owner)) && uid != me) {
		if (me != 0) {
			struct passwd *pw = getpwuid(me);

			snprintf(rd, sizeof(rd), "%s and hunch runs as uid "
				 "%u (%s)", owner, me, pw ? pw->pw_name : "?");
			return refuse(err, WHY_OTHER_USER, pid, comm, rd,
				      NULL, 0);
		}
		if (!have_cap_sys_ptrace())
			return refuse(err, WHY_NO_CAP, pid, comm, owner,
				      NULL, 0);
	}
	if (holds_more_caps(pid))
		return refuse(err, WHY_NO_CAP_CAPS, pid, comm, NULL, NULL, 0);
	if (read_int_file("/proc/sys/kernel/yama/ptrace_scope", &scope) == 0
	    && scope >= 1 && scope <= 3 && !(scope == 1 && me == 0))
		return refuse(err, scope == 1 ? WHY_YAMA_1 : scope == 2 ?
			      WHY_YAMA_2 : WHY_YAMA_3, pid, comm, NULL, NULL,
			      0);
	if (eng_attach_status_field(getpid(), "Seccomp", sc, sizeof(sc)) == 0 &&
	    atoi(sc) == 2)
		return refuse(err, WHY_SECCOMP, pid, comm, NULL, NULL, 0);
	return refuse(err, me == 0 ? WHY_ROOT_REFUSED : WHY_NOT_PERMITTED,
		      pid, comm, NULL, NULL, 0);
}

/*
 * eng_exec.c - following the program through execve (see eng_proc.h):
 * the fence that keeps hunch from writing into, or calling code of, an
 * image it has not read; the check that a new image is x86-64; holding
 * the new image at its entry point; loading the runtime library there.
 *
 * Why hold at the entry point: there ld.so has loaded and relocated
 * every library and run their constructors, and the program's own code
 * has not started, so no thread holds a lock that dlopen needs (an
 * injection at an arbitrary point, as attach does, can meet malloc's).
 */
#include "eng_proc_int.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int eng_exec_fenced(struct eng_proc *p, const char *what,
		    struct hunch_err *err)
{
	if (!p->exec_fence)
		return 0;
	return hunch_err_set(err, -ESTALE, "process %d replaced its image "
		"(exec): hunch does not %s until it has read the new one",
		(int)p->pid, what);
}

bool eng_exec_image_ok(struct eng_proc *p)
{
	Elf64_Ehdr eh;
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)p->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = pread(fd, &eh, sizeof(eh), 0);
	close(fd);
	return n == (ssize_t)sizeof(eh) &&
	       memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 &&
	       eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_machine == EM_X86_64;
}

void eng_exec_at_entry(struct eng_proc *p)
{
	struct eng_event ev;

	if (!p->exec_follow)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.kind = ENG_EV_EXEC_ENTRY;
	ev.tid = p->pid;
	p->exec_held = true;
	eng_ptrace_queue_event(p, &ev);
}

void eng_exec_follow(struct eng_proc *p, bool on)
{
	p->exec_follow = on;
}

int eng_exec_load_rtlib(struct eng_proc *p, const char *rtlib_path,
			struct eng_shm *shm, struct hunch_err *err)
{
	int rc;

	if (!p->exec_held)
		return hunch_err_set(err, -EAGAIN, "process %d is not held at "
			"the entry point of a new image: the runtime library "
			"is loaded there only", (int)p->pid);
	p->exec_fence = false;
	rc = eng_ptrace_stop_all(p, err);
	return rc < 0 ? rc : eng_inject_rtlib(p, rtlib_path, shm, err);
}

int eng_exec_release(struct eng_proc *p, struct hunch_err *err)
{
	p->exec_fence = false;
	p->exec_held = false;
	return eng_ptrace_resume_all(p, err);
}

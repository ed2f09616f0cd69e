/*
 * eng_inject.c - loading the runtime library into an attached process:
 * an inferior call of dlopen, then of the library's hunchrt_attach with
 * the name of the shared-memory segment.
 *
 * dlopen is found in libc's .dynsym, read from the file (glibc >= 2.34
 * exports dlopen from libc.so.6; older ones from libdl.so.2, which we
 * try next), plus the library's load bias from the module list.  This
 * small reader stays private to this file: process control must not
 * depend on the symbol reader.
 */
#include "eng_proc_int.h"
#include "eng_taskstate.h"
#include "eng_shm.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define RTLD_NOW_VALUE 2
#define VERSYM_HIDDEN 0x8000

static Elf_Scn *find_section(Elf *e, Elf64_Word type)
{
	Elf_Scn *s = NULL;
	GElf_Shdr sh;

	while ((s = elf_nextscn(e, s)) != NULL)
		if (gelf_getshdr(s, &sh) != NULL && sh.sh_type == type)
			return s;
	return NULL;
}

/* Look `name` up in .dynsym; the default version wins over a hidden
 * (compat) one, e.g. dlopen@@GLIBC_2.34 over dlopen@GLIBC_2.2.5. */
static int scan_dynsym(Elf *e, const char *name, uint64_t *value)
{
	Elf_Scn *ds = find_section(e, SHT_DYNSYM);
	Elf_Scn *vs = find_section(e, SHT_GNU_versym);
	Elf_Data *d, *vd = NULL;
	GElf_Shdr sh;
	int rc = -ENOENT;

	if (ds == NULL || gelf_getshdr(ds, &sh) == NULL ||
	    (d = elf_getdata(ds, NULL)) == NULL || sh.sh_entsize == 0)
		return -ENOENT;
	if (vs != NULL)
		vd = elf_getdata(vs, NULL);
	for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
		GElf_Sym sym;
		GElf_Versym ver = 0;
		const char *n;

		if (gelf_getsym(d, (int)i, &sym) == NULL ||
		    sym.st_shndx == SHN_UNDEF || sym.st_value == 0)
			continue;
		n = elf_strptr(e, sh.sh_link, sym.st_name);
		if (n == NULL || strcmp(n, name) != 0)
			continue;
		if (vd != NULL)
			gelf_getversym(vd, (int)i, &ver);
		*value = sym.st_value;
		rc = 0;
		if (!(ver & VERSYM_HIDDEN))
			break;
	}
	return rc;
}

static int dynsym_lookup(const char *path, const char *name, uint64_t *value)
{
	Elf *e;
	int fd, rc;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	e = elf_begin(fd, ELF_C_READ, NULL);
	rc = e != NULL ? scan_dynsym(e, name, value) : -EINVAL;
	elf_end(e);
	close(fd);
	return rc;
}

static bool base_is(const char *path, const char *prefix)
{
	const char *b = strrchr(path, '/');

	b = b ? b + 1 : path;
	return strncmp(b, prefix, strlen(prefix)) == 0;
}

/* Address of a libc (or libdl) function in the target, 0 if none. */
static uint64_t libc_func(struct eng_proc *p, const char *name)
{
	static const char *const libs[] = { "libc.so", "libc-2.", "libdl.so" };

	for (size_t k = 0; k < sizeof(libs) / sizeof(libs[0]); k++)
		for (size_t i = 1; i < p->nmods; i++) {
			const struct eng_module *m = &p->mods[i].pub;
			uint64_t v = 0;

			if (base_is(m->path, libs[k]) &&
			    dynsym_lookup(m->path, name, &v) == 0)
				return m->bias + v;
		}
	return 0;
}

/* A thread that can run code: the leader, unless it already exited
 * (pthread_exit from main leaves a zombie leader). */
static pid_t call_thread(struct eng_proc *p)
{
	for (size_t i = 0; i < p->nth; i++)
		if (p->th[i]->state == TS_STOPPED &&
		    eng_taskstate_letter(p->pid, p->th[i]->tid) != 'Z')
			return p->th[i]->tid;
	return 0;
}

/* Call fn(string) with the string copied onto the thread's stack. */
static int call_str(struct eng_proc *p, pid_t tid, uint64_t fn,
		    uint64_t arg0, bool arg0_first, const char *s,
		    uint64_t extra, uint64_t *ret, struct hunch_err *err)
{
	uint64_t a, args[2];
	int rc = eng_infcall_push(p, tid, s, strlen(s) + 1, &a, err);

	if (rc < 0)
		return rc;
	args[0] = arg0_first ? arg0 : a;
	args[1] = arg0_first ? a : extra;
	return eng_infcall(p, tid, fn, args, 2, ret, err);
}

static int dlopen_error(struct eng_proc *p, pid_t tid, const char *rtlib,
			struct hunch_err *err)
{
	uint64_t fn = libc_func(p, "dlerror"), msg = 0;
	char text[512] = "no reason given";

	if (fn != 0 && eng_infcall(p, tid, fn, NULL, 0, &msg, NULL) == 0 &&
	    msg != 0)
		eng_mem_read_str(p, msg, text, sizeof(text));
	return hunch_err_set(
		err, -ENOEXEC,
		"cannot load the runtime library %s "
		"into process %d: dlopen says: %s (check that the file is "
		"readable by the program's user and built for this system)",
		rtlib, (int)p->pid, text);
}

int eng_inject_rtlib(struct eng_proc *p, const char *rtlib,
		     struct eng_shm *shm, struct hunch_err *err)
{
	const char *name = shm ? eng_shm_name(shm) : NULL;
	uint64_t f_dlopen = libc_func(p, "dlopen");
	uint64_t f_dlsym = libc_func(p, "dlsym");
	uint64_t handle = 0, f_attach = 0, ret = 0;
	pid_t tid = call_thread(p);
	int rc;

	if (name == NULL)
		return hunch_err_set(err, -EINVAL, "attaching with the runtime "
			"library needs a named segment (eng_shm_create with "
			"named=true)");
	if (tid == 0)
		return hunch_err_set(err, -ESRCH, "cannot load the runtime library "
			"into process %d: none of its threads can run code",
			(int)p->pid);
	if ((f_dlopen == 0 || f_dlsym == 0) && p->r_debug != 0)
		return hunch_err_set(err, -EAGAIN, "cannot load the runtime "
			"library into process %d yet: its libc is not loaded "
			"(it is still starting up): attach again in a moment",
			(int)p->pid);
	if (f_dlopen == 0 || f_dlsym == 0)
		return hunch_err_set(err, -ENOENT, "cannot load the runtime "
			"library into process %d: it has no dynamic linker "
			"(a static program): attach without the runtime "
			"library", (int)p->pid);
	if (access(rtlib, R_OK) != 0)
		return hunch_err_set(err, -errno, "cannot load the runtime library "
			"%s: %s (build hunch, or point hunch at libhunchrt.so)",
			rtlib, strerror(errno));
	rc = call_str(p, tid, f_dlopen, 0, false, rtlib, RTLD_NOW_VALUE,
		      &handle, err);
	if (rc == 0 && handle == 0)
		rc = dlopen_error(p, tid, rtlib, err);
	if (rc == 0)
		rc = call_str(p, tid, f_dlsym, handle, true, "hunchrt_attach",
			      0, &f_attach, err);
	if (rc == 0 && f_attach == 0)
		rc = hunch_err_set(err, -ENOENT,
				   "%s has no hunchrt_attach: it is "
				   "not hunch's runtime library",
				   rtlib);
	if (rc == 0)
		rc = call_str(p, tid, f_attach, 0, false, name, 0, &ret, err);
	if (rc == 0 && (int32_t)ret != 0)
		rc = hunch_err_set(err, -EPROTO, "the runtime library %s in process "
			"%d could not map the segment %s (hunchrt_attach "
			"returned %d): is /dev/shm shared with the program "
			"(containers)?", rtlib, (int)p->pid, name, (int)ret);
	if (rc == 0 && (rc = eng_shm_check_ready(shm, err)) != 0) {
		if (rc == -EAGAIN)
			rc = hunch_err_set(err, -EPROTO, "the runtime library %s in "
				"process %d did not answer the handshake", rtlib,
				(int)p->pid);
		else
			hunch_err_prefix(err, "runtime library %s: ", rtlib);
	}
	eng_shm_unlink(shm);  /* both sides have it mapped, or it failed */
	return rc;
}

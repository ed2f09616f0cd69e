/*
 * eng_solib.c - the module list: the executable, then every shared
 * object the dynamic linker has loaded, kept current through r_debug.
 *
 * The executable's DT_DEBUG entry points at the dynamic linker's
 * `struct r_debug` once ld.so has run.  ld.so calls r_brk
 * (_dl_debug_state) before and after every change to its link_map
 * lists; we keep an int3 there and, when r_state says the lists are
 * consistent again, walk them and diff against what we knew.
 */
#include "eng_proc_int.h"
#include "eng_taskstate.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Offsets in glibc's struct r_debug / r_debug_extended / link_map, which
 * are ABI (debuggers rely on them). */
#define RD_VERSION 0
#define RD_MAP     8
#define RD_BRK     16
#define RD_STATE   24
#define RD_NEXT    40     /* r_debug_extended, r_version >= 2 */
#define LM_ADDR    0
#define LM_NAME    8
#define LM_NEXT    24
#define MAX_LMS    4096   /* a corrupt list must not loop us forever */
#define MAX_NS     16

int eng_solib_read_auxv(pid_t pid, uint64_t type, uint64_t *val)
{
	char path[64];
	uint64_t av[2];
	int fd, rc = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (read(fd, av, sizeof(av)) == (ssize_t)sizeof(av) &&
	       av[0] != AT_NULL)
		if (av[0] == type) {
			*val = av[1];
			rc = 0;
			break;
		}
	close(fd);
	return rc;
}

/* Load bias of the executable: where its entry point is, minus where
 * the file says it is (0 for a non-PIE). */
static int exe_bias(struct eng_proc *p, uint64_t *bias)
{
	char path[64];
	Elf64_Ehdr eh;
	uint64_t entry;
	int fd, rc;

	rc = eng_solib_read_auxv(p->pid, AT_ENTRY, &entry);
	if (rc < 0)
		return rc;
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)p->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	rc = pread(fd, &eh, sizeof(eh), 0) == (ssize_t)sizeof(eh) ? 0 : -EIO;
	close(fd);
	if (rc == 0)
		*bias = entry - eh.e_entry;
	return rc;
}

static void mod_free(struct eng_mod_int *m)
{
	free(m->pub.path);
}

void eng_solib_clear(struct eng_proc *p)
{
	for (size_t i = 0; i < p->nmods; i++)
		mod_free(&p->mods[i]);
	p->nmods = 0;
}

static struct eng_mod_int *mod_add(struct eng_proc *p)
{
	if (p->nmods == p->capmods) {
		size_t cap = p->capmods ? p->capmods * 2 : 16;
		struct eng_mod_int *n = realloc(p->mods, cap * sizeof(*n));

		if (n == NULL)
			return NULL;
		p->mods = n;
		p->capmods = cap;
	}
	memset(&p->mods[p->nmods], 0, sizeof(p->mods[0]));
	return &p->mods[p->nmods++];
}

int eng_solib_set_exe(struct eng_proc *p)
{
	char link[64], path[PATH_MAX];
	struct eng_mod_int *m;
	uint64_t bias = 0;
	ssize_t n;
	size_t l;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)p->pid);
	n = readlink(link, path, sizeof(path) - 1);
	if (n < 0)
		return -errno;
	path[n] = '\0';
	l = strlen(path);
	if (l > 10 && strcmp(path + l - 10, " (deleted)") == 0)
		path[l - 10] = '\0';
	exe_bias(p, &bias);
	if (p->nmods == 0 && mod_add(p) == NULL)
		return -ENOMEM;
	m = &p->mods[0];
	free(m->pub.path);
	m->pub.path = strdup(path);
	m->pub.bias = bias;
	m->pub.is_exe = true;
	m->lm = 0;
	return m->pub.path ? 0 : -ENOMEM;
}

/* The r_debug address from the executable's DT_DEBUG, 0 if none. */
static uint64_t find_r_debug(struct eng_proc *p)
{
	uint64_t phdr, phnum, bias = p->nmods ? p->mods[0].pub.bias : 0;
	Elf64_Phdr ph;
	Elf64_Dyn d;

	if (eng_solib_read_auxv(p->pid, AT_PHDR, &phdr) < 0 ||
	    eng_solib_read_auxv(p->pid, AT_PHNUM, &phnum) < 0)
		return 0;
	for (uint64_t i = 0; i < phnum && i < 64; i++) {
		if (eng_mem_read(p, phdr + i * sizeof(ph), &ph, sizeof(ph),
				 NULL) < 0)
			return 0;
		if (ph.p_type != PT_DYNAMIC)
			continue;
		for (uint64_t a = bias + ph.p_vaddr, k = 0; k < 1024;
		     k++, a += sizeof(d)) {
			if (eng_mem_read(p, a, &d, sizeof(d), NULL) < 0 ||
			    d.d_tag == DT_NULL)
				return 0;
			if (d.d_tag == DT_DEBUG)
				return d.d_un.d_ptr;
		}
	}
	return 0;
}

/* An absolute path for a link_map name, which is relative when the
 * program dlopen'ed a relative path. */
static char *abs_name(struct eng_proc *p, const char *name)
{
	char buf[PATH_MAX + 64], real[PATH_MAX];

	if (name[0] == '/')
		return strdup(name);
	snprintf(buf, sizeof(buf), "/proc/%d/cwd/%s", (int)p->pid, name);
	if (realpath(buf, real) == NULL)
		return strdup(name);
	return strdup(real);
}

struct lmrec {
	uint64_t lm, bias;
	char name[1024];
};

/* Append one namespace's list, skipping the executable (empty name) and
 * the vdso (a name without a slash: nothing on disk). */
static size_t walk_ns(struct eng_proc *p, uint64_t lm, struct lmrec *out,
		      size_t n, size_t max)
{
	for (size_t k = 0; lm != 0 && k < MAX_LMS && n < max; k++) {
		uint64_t f[4];

		if (eng_mem_read(p, lm, f, sizeof(f), NULL) < 0)
			break;
		out[n].lm = lm;
		out[n].bias = f[LM_ADDR / 8];
		if (f[LM_NAME / 8] != 0 &&
		    eng_mem_read_str(p, f[LM_NAME / 8], out[n].name,
				 sizeof(out[n].name)) == 0 &&
		    strchr(out[n].name, '/') != NULL)
			n++;
		lm = f[LM_NEXT / 8];
	}
	return n;
}

static size_t walk_all(struct eng_proc *p, struct lmrec *out, size_t max)
{
	uint64_t rd = p->r_debug;
	size_t n = 0;

	for (int ns = 0; rd != 0 && ns < MAX_NS; ns++) {
		int32_t version = 0;
		uint64_t map = 0, next = 0;

		if (eng_mem_read(p, rd + RD_VERSION, &version, 4, NULL) < 0 ||
		    eng_mem_read(p, rd + RD_MAP, &map, 8, NULL) < 0)
			break;
		n = walk_ns(p, map, out, n, max);
		if (version < 2 ||
		    eng_mem_read(p, rd + RD_NEXT, &next, 8, NULL) < 0)
			break;
		rd = next;
	}
	return n;
}

static void queue_lib(struct eng_proc *p, enum eng_event_kind k,
		      const struct eng_module *m)
{
	struct eng_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.kind = k;
	ev.tid = p->pid;
	ev.bias = m->bias;
	snprintf(ev.path, sizeof(ev.path), "%s", m->path);
	eng_ptrace_queue_event(p, &ev);
}

/* Diff the current lists against the module table; with `quiet` (the
 * first walk) nothing is reported. */
static int sync_modules(struct eng_proc *p, bool quiet)
{
	enum { MAXREC = 1024 };
	struct lmrec *rec = malloc(MAXREC * sizeof(*rec));
	size_t n, i, j;

	if (rec == NULL)
		return -ENOMEM;
	n = walk_all(p, rec, MAXREC);
	for (i = 1; i < p->nmods;) {
		for (j = 0; j < n; j++)
			if (rec[j].lm == p->mods[i].lm &&
			    rec[j].bias == p->mods[i].pub.bias)
				break;
		if (j < n) {
			rec[j].lm = 0;  /* known: not new */
			i++;
			continue;
		}
		if (!quiet)
			queue_lib(p, ENG_EV_LIB_UNLOAD, &p->mods[i].pub);
		mod_free(&p->mods[i]);
		memmove(&p->mods[i], &p->mods[i + 1],
			(p->nmods - i - 1) * sizeof(p->mods[0]));
		p->nmods--;
	}
	for (j = 0; j < n; j++) {
		struct eng_mod_int *m;

		if (rec[j].lm == 0 || (m = mod_add(p)) == NULL)
			continue;
		m->lm = rec[j].lm;
		m->pub.bias = rec[j].bias;
		m->pub.path = abs_name(p, rec[j].name);
		if (m->pub.path == NULL) {
			p->nmods--;
			continue;
		}
		if (!quiet)
			queue_lib(p, ENG_EV_LIB_LOAD, &m->pub);
	}
	free(rec);
	return 0;
}

int eng_solib_init(struct eng_proc *p, struct hunch_err *err)
{
	int rc = eng_solib_set_exe(p);

	/* A process's /proc/PID/exe link goes (ENOENT) as it exits, which
	 * is not a file hunch could not read: is it gone or a zombie? */
	if (rc == -ENOENT && (eng_taskstate_letter(p->pid, 0) == 0 ||
			       eng_taskstate_dead(p->pid, 0)))
		return hunch_err_set(err, -ESRCH, "process %d ended while "
				     "hunch attached to it", (int)p->pid);
	if (rc < 0)
		return hunch_err_set(err, rc,
				     "cannot identify the executable of "
				     "process %d: %s",
				     (int)p->pid, strerror(-rc));
	p->r_debug = find_r_debug(p);
	if (p->r_debug == 0) {
		snprintf(p->note, sizeof(p->note), "process %d has no r_debug "
			 "(a static program?): shared libraries are not "
			 "tracked", (int)p->pid);
		return 0;
	}
	if (eng_mem_read(p, p->r_debug + RD_BRK, &p->r_brk, 8, NULL) == 0 &&
	    p->r_brk != 0) {
		rc = eng_bp_insert(p, p->r_brk, BP_RBRK, err);
		if (rc < 0)
			return rc;
	}
	return sync_modules(p, true);
}

int eng_solib_hit(struct eng_proc *p)
{
	int32_t state;

	if (p->r_debug == 0 ||
	    eng_mem_read(p, p->r_debug + RD_STATE, &state, 4, NULL) < 0 ||
	    state != RT_CONSISTENT)
		return 0;
	return sync_modules(p, false);
}

size_t eng_solib_nmodules(const struct eng_proc *p)
{
	return p->nmods;
}

const struct eng_module *eng_solib_module(const struct eng_proc *p, size_t i)
{
	return i < p->nmods ? &p->mods[i].pub : NULL;
}

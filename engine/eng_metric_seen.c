/*
 * eng_metric_seen.c - resource discovery through instrumentation: the
 * sync objects and files the program's sync and I/O functions are
 * called on (DESIGN §3: /SyncObject and /Files fill in live).
 *
 * The ring is made of ordinary variables (one slot per thread each, in
 * the thread's own block): a counter n, the last value, and MSEEN_SLOTS
 * slots.  The snippet at the function's entry is
 *     if (last != $arg0 + 1) {
 *         n += 1;  last = $arg0 + 1;
 *         if ((n & (S-1)) == i) slot_i = last;     for each i
 *     }
 * so each thread keeps its last S *different* first arguments (a loop on
 * one mutex does not push the others out; the common case costs one
 * compare) with no call and no runtime-library change (+1: fd 0 is a
 * real descriptor, 0 means empty).
 * hunch drains the slots of every live thread after each tick and
 * reports what it has not seen before.
 */
#include "eng_metric_int.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eng_proc.h"
#include "eng_sampler.h"

#define MSEEN_MAX_KNOWN 65536

static const char *const class_names[] = {
	[ENG_SEEN_MUTEX] = "Mutex", [ENG_SEEN_CONDVAR] = "CondVar",
	[ENG_SEEN_RWLOCK] = "RWLock", [ENG_SEEN_BARRIER] = "Barrier",
	[ENG_SEEN_SEMAPHORE] = "Semaphore", [ENG_SEEN_FILE] = "File",
};

static const char *const io_names[] = {
	"read", "write", "pread", "pwrite", "pread64", "pwrite64", "readv",
	"writev", "preadv", "pwritev", "fsync", "fdatasync", "send", "recv",
	"sendto", "recvfrom", "sendmsg", "recvmsg", "close", NULL,
};

/* glibc names the same function __pthread_mutex_lock, __libc_write,
 * __write...: compare without the decoration. */
static const char *plain(const char *name)
{
	while (*name == '_')
		name++;
	if (strncmp(name, "libc_", 5) == 0)
		name += 5;
	return name;
}

int eng_metric_seen_class(const char *name)
{
	static const struct { const char *prefix; int cls; } sync[] = {
		{ "pthread_mutex_", ENG_SEEN_MUTEX },
		{ "pthread_spin_", ENG_SEEN_MUTEX },
		{ "pthread_cond_", ENG_SEEN_CONDVAR },
		{ "pthread_rwlock_", ENG_SEEN_RWLOCK },
		{ "pthread_barrier_", ENG_SEEN_BARRIER },
		{ "sem_", ENG_SEEN_SEMAPHORE },
	};
	const char *p = plain(name);

	for (size_t i = 0; i < sizeof sync / sizeof sync[0]; i++)
		if (strncmp(p, sync[i].prefix, strlen(sync[i].prefix)) == 0)
			return strstr(p, "attr") ? -1 : sync[i].cls;
	for (size_t i = 0; io_names[i] != NULL; i++)
		if (strcmp(p, io_names[i]) == 0)
			return ENG_SEEN_FILE;
	return -1;
}

static void watch_free_vars(struct eng_metric *m, struct mwatch *w)
{
	eng_sampler_var_free(m->smp, w->n_id);
	eng_sampler_var_free(m->smp, w->last_id);
	for (int i = 0; i < MSEEN_SLOTS; i++)
		eng_sampler_var_free(m->smp, w->slot_id[i]);
}

static int watch_vars(struct eng_metric *m, struct mwatch *w,
		      struct hunch_err *err)
{
	int rc = eng_sampler_var_alloc(m->smp, ENG_VAR_COUNTER, &w->n_id,
				       &w->n_h, err);

	if (rc == 0) {
		rc = eng_sampler_var_alloc(m->smp, ENG_VAR_COUNTER, &w->last_id,
					   &w->last_h, err);
		if (rc < 0)
			eng_sampler_var_free(m->smp, w->n_id);
	}
	for (int i = 0; rc == 0 && i < MSEEN_SLOTS; i++) {
		rc = eng_sampler_var_alloc(m->smp, ENG_VAR_COUNTER,
					   &w->slot_id[i], &w->slot_h[i], err);
		if (rc < 0) {
			eng_sampler_var_free(m->smp, w->n_id);
			eng_sampler_var_free(m->smp, w->last_id);
			while (i-- > 0)
				eng_sampler_var_free(m->smp, w->slot_id[i]);
		}
	}
	return rc;
}

/* The ring snippet (see the top of this file). */
static int watch_insert(struct eng_metric *m, struct mwatch *w,
			const struct mfunc *fn, const struct x86_point *xp,
			struct hunch_err *err)
{
	struct x86_expr e[6 * MSEEN_SLOTS + 8];
	struct x86_snip top, body[2 + MSEEN_SLOTS], set[MSEEN_SLOTS];
	struct eng_inst_point pt;
	size_t ne = 0;
	struct x86_expr *arg = &e[ne++], *one = &e[ne++], *val = &e[ne++];
	struct x86_expr *mask = &e[ne++], *last = &e[ne++], *chg = &e[ne++];

	*arg = (struct x86_expr){ .kind = X86_EX_ARG, .arg = 0 };
	*one = (struct x86_expr){ .kind = X86_EX_CONST, .v = 1 };
	*val = (struct x86_expr){ .kind = X86_EX_ADD, .l = arg, .r = one };
	*mask = (struct x86_expr){ .kind = X86_EX_CONST, .v = MSEEN_SLOTS - 1 };
	*last = (struct x86_expr){ .kind = X86_EX_VAR, .handle = w->last_h };
	*chg = (struct x86_expr){ .kind = X86_EX_NE, .l = last, .r = val };
	body[0] = (struct x86_snip){ .kind = X86_SN_ADD, .handle = w->n_h,
				     .delta = 1 };
	body[1] = (struct x86_snip){ .kind = X86_SN_SET, .handle = w->last_h,
				     .value = val };
	for (int i = 0; i < MSEEN_SLOTS; i++) {
		struct x86_expr *n = &e[ne++], *and = &e[ne++];
		struct x86_expr *idx = &e[ne++], *eq = &e[ne++];

		*n = (struct x86_expr){ .kind = X86_EX_VAR, .handle = w->n_h };
		*and = (struct x86_expr){ .kind = X86_EX_AND, .l = n,
					  .r = mask };
		*idx = (struct x86_expr){ .kind = X86_EX_CONST, .v = i };
		*eq = (struct x86_expr){ .kind = X86_EX_EQ, .l = and, .r = idx };
		set[i] = (struct x86_snip){ .kind = X86_SN_SET,
					    .handle = w->slot_h[i],
					    .value = last };
		body[2 + i] = (struct x86_snip){ .kind = X86_SN_IF, .cond = eq,
						 .body = &set[i], .nbody = 1 };
	}
	top = (struct x86_snip){ .kind = X86_SN_IF, .cond = chg, .body = body,
				 .nbody = 2 + MSEEN_SLOTS };
	eng_inst_point_from(xp, fn->mod->base, &pt);
	/* Prepended: it reads only $arg0, before any other snippet can
	 * have run. */
	if (eng_inst_add(m->in, &pt, &top, 1, true, &w->req, err) < 0)
		return -EINVAL;
	w->has_req = true;
	return 0;
}

static int node_hold(struct mnode *n, struct mwatch *w)
{
	if (n->nwatch == n->capwatch) {
		size_t cap = n->capwatch ? n->capwatch * 2 : 8;
		struct mwatch **v = realloc(n->watch, cap * sizeof *v);

		if (v == NULL)
			return -ENOMEM;
		n->watch = v;
		n->capwatch = cap;
	}
	n->watch[n->nwatch++] = w;
	w->refs++;
	return 0;
}

static struct mwatch *watch_new(struct eng_metric *m, const struct mfunc *fn,
				const struct x86_func *xf, int cls,
				struct hunch_err *err)
{
	struct mwatch *w = calloc(1, sizeof *w);
	size_t k = 0;

	if (w == NULL)
		return NULL;
	w->f = fn->f;
	w->cls = (enum eng_seen_class)cls;
	while (k < xf->npoints && xf->points[k].kind != X86_PT_ENTRY)
		k++;
	if (k == xf->npoints || watch_vars(m, w, err) < 0) {
		free(w);
		return NULL;
	}
	if (watch_insert(m, w, fn, &xf->points[k], err) < 0) {
		watch_free_vars(m, w);
		free(w);
		return NULL;
	}
	w->next = m->watches;
	m->watches = w;
	return w;
}

int eng_metric_seen_watch(struct eng_metric *m, struct mnode *n,
			  const struct mfunc *fn,
		const struct x86_func *xf, struct hunch_err *err)
{
	int cls = eng_metric_seen_class(fn->f->name);
	struct mwatch *w;

	if (cls < 0 || m->no_discovery)
		return 0;
	for (size_t i = 0; i < n->nwatch; i++)
		if (n->watch[i]->f == fn->f)
			return 0;
	for (w = m->watches; w != NULL && w->f != fn->f; w = w->next)
		;
	if (w == NULL)
		w = watch_new(m, fn, xf, cls, err);
	/* Discovery is a bonus: a function it cannot watch still counts. */
	if (w == NULL)
		return 0;
	return node_hold(n, w) < 0
		       ? hunch_err_set(err, -ENOMEM, "out of memory")
		       : 0;
}

void eng_metric_seen_drop(struct eng_metric *m, struct mnode *n)
{
	for (size_t i = 0; i < n->nwatch; i++) {
		struct mwatch *w = n->watch[i];

		if (--w->refs > 0)
			continue;
		if (w->has_req)
			eng_inst_remove(m->in, w->req);
		for (struct mwatch **pp = &m->watches; *pp; pp = &(*pp)->next)
			if (*pp == w) {
				*pp = w->next;
				break;
			}
		w->next = m->wdead;
		m->wdead = w;
	}
	n->nwatch = 0;
}

void eng_metric_seen_reap(struct eng_metric *m)
{
	while (m->wdead != NULL) {
		struct mwatch *w = m->wdead;

		m->wdead = w->next;
		watch_free_vars(m, w);
		free(w);
	}
}

void eng_metric_seen_free(struct eng_metric *m)
{
	eng_metric_seen_reap(m);
	for (size_t i = 0; i < m->nknown; i++)
		free(m->known[i].name);
	free(m->known);
}

/* ---- draining ---- */

static void name_object(struct eng_metric *m, uint64_t addr, char *buf,
			size_t len)
{
	for (size_t i = 0; i < m->nmods; i++) {
		const struct mmod *mm = &m->mods[i];
		const struct eng_datasym *d;

		if (mm->img == NULL || addr < mm->base)
			continue;
		d = eng_image_data_at(mm->img, addr - mm->base);
		if (d == NULL)
			continue;
		if (addr - mm->base == d->addr)
			snprintf(buf, len, "%s", d->name);
		else
			snprintf(buf, len, "%s+%#" PRIx64, d->name,
				 addr - mm->base - d->addr);
		return;
	}
	/* No data symbol (a stripped file): an object in a module's
	 * segments is named as perf names code there, <module>+0x<offset>,
	 * which stays the same from run to run; the heap keeps the bare
	 * address. */
	for (size_t i = 0; i < m->nmods; i++) {
		const struct mmod *mm = &m->mods[i];

		if (mm->img == NULL || addr < mm->base ||
		    addr - mm->base >= eng_image_span(mm->img))
			continue;
		snprintf(buf, len, "%s+%#" PRIx64, eng_image_name(mm->img),
			 addr - mm->base);
		return;
	}
	snprintf(buf, len, "%#" PRIx64, addr);
}

static void name_file(struct eng_metric *m, uint64_t fd, char *buf,
		      size_t len)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof link, "/proc/%d/fd/%" PRIu64,
		 (int)eng_proc_pid(m->p), fd);
	n = readlink(link, buf, len - 1);
	if (n <= 0) {
		snprintf(buf, len, "fd %" PRIu64, fd);
		return;
	}
	buf[n] = 0;
	eng_metric_sock_name((int)eng_proc_pid(m->p), buf, len);
}

/* New?  Then remember it.  Files are known by descriptor and path (a
 * descriptor is reused for other files). */
static bool remember(struct eng_metric *m, enum eng_seen_class cls,
		     uint64_t v, const char *name)
{
	struct mknown *k;

	for (size_t i = 0; i < m->nknown; i++) {
		k = &m->known[i];
		if (k->cls == cls && k->v == v &&
		    (cls != ENG_SEEN_FILE || strcmp(k->name, name) == 0))
			return false;
	}
	/* The slots are untrusted (the program can scribble on them): a
	 * bounded memory of what was reported. */
	if (m->nknown >= MSEEN_MAX_KNOWN)
		return false;
	if (m->nknown == m->capknown) {
		size_t cap = m->capknown ? m->capknown * 2 : 32;

		k = realloc(m->known, cap * sizeof *k);
		if (k == NULL)
			return false;
		m->known = k;
		m->capknown = cap;
	}
	k = &m->known[m->nknown];
	k->name = strdup(name);
	if (k->name == NULL)
		return false;
	k->cls = cls;
	k->v = v;
	m->nknown++;
	return true;
}

static int drain_slot(struct eng_metric *m, const struct mwatch *w,
		      uint64_t slot, void (*fn)(void *,
						const struct eng_seen *),
		      void *arg)
{
	char name[PATH_MAX];
	uint64_t v = slot - 1;
	struct eng_seen s = { .cls = w->cls, .value = v, .name = name,
			      .class_name = class_names[w->cls] };

	if (slot == 0 || (w->cls == ENG_SEEN_FILE && v > INT_MAX))
		return 0;   /* empty, or not a descriptor (untrusted) */
	if (w->cls == ENG_SEEN_FILE)
		name_file(m, v, name, sizeof name);
	else
		name_object(m, v, name, sizeof name);
	if (!remember(m, w->cls, v, name))
		return 0;
	fn(arg, &s);
	return 1;
}

int eng_metric_seen_poll(struct eng_metric *m,
			 void (*fn)(void *arg, const struct eng_seen *s),
			 void *arg)
{
	const struct eng_sampler_stats *st = eng_sampler_stats(m->smp);
	int found = 0;

	eng_metric_follow_poll(m);   /* new threads' start routines, if any */
	for (const struct mwatch *w = m->watches; w != NULL; w = w->next)
		for (uint32_t t = 0; t <= st->max_index; t++)
			for (int i = 0; i < MSEEN_SLOTS; i++) {
				int64_t v;

				if (eng_sampler_var_thread(m->smp,
						w->slot_id[i], t, &v) == 0)
					found += drain_slot(m, w, (uint64_t)v,
							    fn, arg);
			}
	return found;
}

/*
 * pc_where.c - turning discoveries into where-axis resources.
 *
 * Threads are keyed by tid (kept in the node's tag), not by name: the
 * start function is part of the shown name, but a thread must be found
 * again by its tid when it exits.
 */
#include "pc_where.h"

#include <stdio.h>
#include <string.h>

static pc_res_id add_function(struct pc_restree *t,
			      const struct pc_discovery *d)
{
	pc_res_id code = pc_res_tree_hierarchy(t, "Code");
	pc_res_id mod, file, fn;
	const char *src = d->srcfile ? d->srcfile : PC_UNKNOWN_SRCFILE;

	mod = pc_res_add(t, code, d->module, PC_RES_MODULE);
	file = pc_res_add(t, mod, src, PC_RES_SRCFILE);
	fn = pc_res_add(t, file, d->function, PC_RES_FUNCTION);
	((struct pc_res *)pc_res_get(t, fn))->addr = d->addr;
	return fn;
}

/* A process keeps its pid as its name (its path is /Process/<pid>);
 * a label (its MPI rank) is what the where axis shows of it. */
static pc_res_id add_process(struct pc_restree *t, int pid,
			     const char *label)
{
	char name[32];
	pc_res_id id;
	struct pc_res *r;

	snprintf(name, sizeof(name), "%d", pid);
	id = pc_res_add(t, pc_res_tree_hierarchy(t, "Process"), name,
			PC_RES_PROCESS);
	r = (struct pc_res *)pc_res_get(t, id);
	r->tag = (uint64_t)pid;
	if (label != NULL && label[0] != '\0')
		snprintf(r->label, sizeof(r->label), "%s", label);
	return id;
}

static pc_res_id find_child_by_tag(const struct pc_restree *t,
				   pc_res_id parent, uint64_t tag)
{
	const struct pc_res *p = pc_res_get(t, parent);

	for (size_t i = 0; p != NULL && i < p->nchildren; i++) {
		const struct pc_res *c = pc_res_get(t, p->children[i]);

		if (c->tag == tag && !c->retired)
			return c->id;
	}
	return PC_RES_NONE;
}

pc_res_id pc_where_thread(const struct pc_restree *t, int pid, int tid)
{
	char path[64];
	pc_res_id proc;

	snprintf(path, sizeof(path), "/Process/%d", pid);
	proc = pc_res_find(t, path);
	if (proc == PC_RES_NONE)
		return PC_RES_NONE;
	return find_child_by_tag(t, proc, (uint64_t)tid);
}

static pc_res_id add_thread(struct pc_restree *t,
			    const struct pc_discovery *d)
{
	pc_res_id proc = add_process(t, d->pid, NULL), id;
	char name[512];

	id = find_child_by_tag(t, proc, (uint64_t)d->tid);
	if (id != PC_RES_NONE)
		return id;
	if (d->function != NULL && d->function[0] != '\0')
		snprintf(name, sizeof(name), "%d:%s", d->tid, d->function);
	else if (d->tid == d->pid)   /* a child's first thread, named as
				      * the program's is */
		snprintf(name, sizeof(name), "%d:main", d->tid);
	else
		snprintf(name, sizeof(name), "%d", d->tid);
	id = pc_res_add(t, proc, name, PC_RES_THREAD);
	((struct pc_res *)pc_res_get(t, id))->tag = (uint64_t)d->tid;
	return id;
}

static pc_res_id add_syncobj(struct pc_restree *t,
			     const struct pc_discovery *d)
{
	pc_res_id root = pc_res_tree_hierarchy(t, "SyncObject");
	pc_res_id cls = pc_res_add(t, root, d->sync_class, PC_RES_SYNCCLASS);
	pc_res_id id = pc_res_add(t, cls, d->name, PC_RES_SYNCOBJ);

	((struct pc_res *)pc_res_get(t, id))->addr = d->addr;
	return id;
}

/* Files keep their path as one name under /Files: "/Files//tmp/x" would
 * be confusing, so the leading '/' of an absolute path is dropped. */
static pc_res_id add_file(struct pc_restree *t, const struct pc_discovery *d)
{
	const char *name = d->name[0] == '/' ? d->name + 1 : d->name;

	return pc_res_add(t, pc_res_tree_hierarchy(t, "Files"), name,
			  PC_RES_FILE);
}

static pc_res_id retire(struct pc_restree *t, const struct pc_discovery *d)
{
	pc_res_id id = PC_RES_NONE;
	char path[512];

	if (d->kind == PC_DISC_THREAD) {
		id = pc_where_thread(t, d->pid, d->tid);
	} else if (d->kind == PC_DISC_PROCESS) {
		snprintf(path, sizeof(path), "/Process/%d", d->pid);
		id = pc_res_find(t, path);
		pc_res_set_end(t, id, d->end, d->end_code, d->end_t);
	} else if (d->kind == PC_DISC_FUNCTION && d->function == NULL) {
		/* a whole module went away (dlclose) */
		snprintf(path, sizeof(path), "/Code/%s", d->module);
		id = pc_res_find(t, path);
	} else if (d->kind == PC_DISC_FUNCTION) {
		/* one function renamed (its debug file arrived late) */
		snprintf(path, sizeof(path), "/Code/%s/%s/%s", d->module,
			 d->srcfile ? d->srcfile : PC_UNKNOWN_SRCFILE,
			 d->function);
		id = pc_res_find(t, path);
	}
	pc_res_retire(t, id);
	return id;
}

pc_res_id pc_where_apply(struct pc_restree *t, const struct pc_discovery *d)
{
	if (d->retired)
		return retire(t, d);
	switch (d->kind) {
	case PC_DISC_FUNCTION:
		return add_function(t, d);
	case PC_DISC_PROCESS:
		return add_process(t, d->pid, d->name);
	case PC_DISC_THREAD:
		return add_thread(t, d);
	case PC_DISC_SYNCOBJ:
		return add_syncobj(t, d);
	case PC_DISC_FILE:
		return add_file(t, d);
	}
	return PC_RES_NONE;
}

void pc_where_apply_cb(void *tree, const struct pc_discovery *d)
{
	pc_where_apply(tree, d);
}

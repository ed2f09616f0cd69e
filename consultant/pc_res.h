/*
 * pc_res.h - the where axis: resource hierarchies as one tree.
 *
 * Every resource has a path ("/Code/demo/demo.c/compute") and a stable id:
 * the id is given once, when the path first appears, and never reused, so
 * journals, the dashboard and experiments can refer to resources by id
 * even as threads come and go.  Retired resources (an exited thread, an
 * unloaded library) stay in the tree, marked retired, so that earlier
 * conclusions about them still name something.
 *
 * The roots are the hierarchies: /Code, /Process, /SyncObject, /Files.
 */
#ifndef PC_RES_H
#define PC_RES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef uint32_t pc_res_id;
#define PC_RES_NONE ((pc_res_id)0)

enum pc_res_kind {
	PC_RES_ROOT,        /* the invisible root above the hierarchies */
	PC_RES_HIERARCHY,   /* /Code, /Process, ... */
	PC_RES_MODULE,      /* /Code/<module> */
	PC_RES_SRCFILE,     /* /Code/<module>/<file> */
	PC_RES_FUNCTION,    /* /Code/<module>/<file>/<function> */
	PC_RES_PROCESS,     /* /Process/<pid> */
	PC_RES_THREAD,      /* /Process/<pid>/<thread> */
	PC_RES_SYNCCLASS,   /* /SyncObject/Mutex */
	PC_RES_SYNCOBJ,     /* /SyncObject/Mutex/<name> */
	PC_RES_FILE,        /* /Files/<path> */
};

struct pc_res {
	pc_res_id id;
	pc_res_id parent;
	enum pc_res_kind kind;
	bool retired;
	char *name;          /* last path component, as shown */
	char *path;          /* full path */
	uint64_t addr;       /* function or object address, if any */
	uint64_t tag;        /* tid for threads, pid for processes, ... */
	/* A retired process's end (pc_discovery's end, end_code, end_t) */
	char end;
	int end_code;
	double end_t;
	char label[24];      /* shown instead of name when set: a process's
				MPI rank ("rank 2") */
	pc_res_id *children;
	size_t nchildren, cap_children;
};

struct pc_restree;

struct pc_restree *pc_res_tree_new(void);
void pc_res_tree_free(struct pc_restree *t);

/* Id of the hierarchy roots, created with the tree. */
pc_res_id pc_res_tree_hierarchy(struct pc_restree *t, const char *name);

/* Add `name` under `parent` (or return the existing child of that name,
 * un-retiring it).  Names may contain '/' only for /Files paths. */
pc_res_id pc_res_add(struct pc_restree *t, pc_res_id parent,
		     const char *name, enum pc_res_kind kind);

/* What the where axis shows of a resource: its label, else its name. */
const char *pc_res_shown(const struct pc_res *r);
/* A path as shown: each labelled component replaced by its label
 * ("/Process/4242/4242" of rank 2: "/Process/rank 2/4242"). */
void pc_res_shown_path(const struct pc_restree *t, pc_res_id id, char *buf,
		       size_t len);

/* Look up by full path; PC_RES_NONE if absent. */
pc_res_id pc_res_find(const struct pc_restree *t, const char *path);

const struct pc_res *pc_res_get(const struct pc_restree *t, pc_res_id id);
size_t pc_res_tree_count(const struct pc_restree *t);
/* Forget every resource after the first `count` (ids above count): the
 * replay's checkpoints take a tree back to an earlier time.  Children
 * lists and flags of the ones kept are the caller's to set back. */
void pc_res_tree_truncate(struct pc_restree *t, size_t count);

void pc_res_retire(struct pc_restree *t, pc_res_id id);
/* Record a retired process's end (end 0: nothing to record). */
void pc_res_set_end(struct pc_restree *t, pc_res_id id, char end,
		    int code, double when);

/* Live (not retired) resources of `kind` in the subtree under `id`. */
size_t pc_res_count_kind(const struct pc_restree *t, pc_res_id id,
			 enum pc_res_kind kind);

/* Print the subtree under `id` as paths, one per line (children sorted by
 * name), or indented by depth when `indent` is set. */
void pc_res_print(const struct pc_restree *t, pc_res_id id, bool indent,
		  bool show_retired, FILE *out);

#endif

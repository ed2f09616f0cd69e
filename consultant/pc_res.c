/*
 * pc_res.c - the where axis tree (see pc_res.h).
 *
 * Nodes live in one array indexed by id (id 0 is "none", id 1 the root);
 * a hash table maps full paths to ids so that discovery of a resource that
 * is already known costs one lookup.  Trees of 100,000+ nodes are normal
 * (every function of libLLVM), so nothing here is quadratic.
 */
#include "pc_res.h"
#include "hmap.h"
#include "xmalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pc_restree {
	struct pc_res *nodes;      /* nodes[id]; nodes[0] unused */
	size_t nnodes, cap;
	pc_res_id *slots;          /* open addressing: path hash -> id */
	size_t nslots;             /* power of two */
};

static void slots_insert(struct pc_restree *t, pc_res_id id)
{
	size_t mask = t->nslots - 1;
	size_t i = hmap_hash_str(t->nodes[id].path) & mask;

	while (t->slots[i] != PC_RES_NONE)
		i = (i + 1) & mask;
	t->slots[i] = id;
}

static void slots_grow(struct pc_restree *t)
{
	free(t->slots);
	t->nslots = t->nslots ? t->nslots * 2 : 1024;
	t->slots = calloc(t->nslots, sizeof(*t->slots));
	if (t->slots == NULL)
		abort();
	for (size_t id = 1; id < t->nnodes; id++)
		slots_insert(t, (pc_res_id)id);
}

pc_res_id pc_res_find(const struct pc_restree *t, const char *path)
{
	size_t mask = t->nslots - 1;
	size_t i = hmap_hash_str(path) & mask;

	while (t->slots[i] != PC_RES_NONE) {
		if (strcmp(t->nodes[t->slots[i]].path, path) == 0)
			return t->slots[i];
		i = (i + 1) & mask;
	}
	return PC_RES_NONE;
}

static void add_child(struct pc_res *p, pc_res_id child)
{
	if (p->nchildren == p->cap_children) {
		p->cap_children = p->cap_children ? p->cap_children * 2 : 4;
		p->children = xrealloc(p->children,
				       p->cap_children * sizeof(*p->children));
	}
	p->children[p->nchildren++] = child;
}

static pc_res_id new_node(struct pc_restree *t, pc_res_id parent,
			  const char *name, const char *path,
			  enum pc_res_kind kind)
{
	pc_res_id id = (pc_res_id)t->nnodes;
	struct pc_res *n;

	if (t->nnodes >= t->cap) {
		t->cap = t->cap ? t->cap * 2 : 256;
		t->nodes = xrealloc(t->nodes, t->cap * sizeof(*t->nodes));
	}
	n = &t->nodes[t->nnodes++];
	memset(n, 0, sizeof(*n));
	n->id = id;
	n->parent = parent;
	n->kind = kind;
	n->name = xstrdup(name);
	n->path = xstrdup(path);
	if (parent != PC_RES_NONE)
		add_child(&t->nodes[parent], id);
	if (t->nnodes * 2 > t->nslots)
		slots_grow(t);
	else
		slots_insert(t, id);
	return id;
}

struct pc_restree *pc_res_tree_new(void)
{
	static const char *const hierarchies[] = {
		"Code", "Process", "SyncObject", "Files"
	};
	struct pc_restree *t = calloc(1, sizeof(*t));
	pc_res_id root;

	if (t == NULL)
		abort();
	t->nnodes = 1;  /* id 0 is PC_RES_NONE */
	t->cap = 0;
	slots_grow(t);
	root = new_node(t, PC_RES_NONE, "", "", PC_RES_ROOT);
	for (size_t i = 0; i < sizeof(hierarchies) / sizeof(*hierarchies); i++)
		pc_res_add(t, root, hierarchies[i], PC_RES_HIERARCHY);
	return t;
}

void pc_res_tree_free(struct pc_restree *t)
{
	if (t == NULL)
		return;
	for (size_t id = 1; id < t->nnodes; id++) {
		free(t->nodes[id].name);
		free(t->nodes[id].path);
		free(t->nodes[id].children);
	}
	free(t->nodes);
	free(t->slots);
	free(t);
}

pc_res_id pc_res_tree_hierarchy(struct pc_restree *t, const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "/%s", name);
	return pc_res_find(t, path);
}

pc_res_id pc_res_add(struct pc_restree *t, pc_res_id parent,
		     const char *name, enum pc_res_kind kind)
{
	const char *ppath = parent ? t->nodes[parent].path : "";
	size_t len = strlen(ppath) + strlen(name) + 2;
	char *path = malloc(len);
	pc_res_id id;

	if (path == NULL)
		abort();
	snprintf(path, len, "%s/%s", ppath, name);
	id = pc_res_find(t, path);
	if (id == PC_RES_NONE)
		id = new_node(t, parent, name, path, kind);
	free(path);
	/* Whatever is discovered is alive, and so is everything above it
	 * (a library loaded again after dlclose). */
	for (pc_res_id a = id; a != PC_RES_NONE; a = t->nodes[a].parent) {
		t->nodes[a].retired = false;
		t->nodes[a].end = 0;   /* a process's end with it */
	}
	return id;
}

const struct pc_res *pc_res_get(const struct pc_restree *t, pc_res_id id)
{
	if (id == PC_RES_NONE || id >= t->nnodes)
		return NULL;
	return &t->nodes[id];
}

size_t pc_res_tree_count(const struct pc_restree *t)
{
	return t->nnodes - 1;
}

void pc_res_tree_truncate(struct pc_restree *t, size_t count)
{
	while (t->nnodes > count + 1) {
		struct pc_res *n = &t->nodes[--t->nnodes];

		free(n->name);
		free(n->path);
		free(n->children);
	}
	memset(t->slots, 0, t->nslots * sizeof(*t->slots));
	for (size_t id = 1; id < t->nnodes; id++)
		slots_insert(t, (pc_res_id)id);
}

const char *pc_res_shown(const struct pc_res *r)
{
	return r->label[0] != '\0' ? r->label : r->name;
}

void pc_res_shown_path(const struct pc_restree *t, pc_res_id id, char *buf,
		       size_t len)
{
	const struct pc_res *r = pc_res_get(t, id), *p;
	size_t n;

	if (len == 0)
		return;
	buf[0] = '\0';
	if (r == NULL)
		return;
	p = pc_res_get(t, r->parent);
	if (p == NULL || p->kind == PC_RES_ROOT) {
		snprintf(buf, len, "%s", r->path);
		return;
	}
	pc_res_shown_path(t, r->parent, buf, len);
	n = strlen(buf);
	snprintf(buf + n, len - n, "/%s", pc_res_shown(r));
}

void pc_res_retire(struct pc_restree *t, pc_res_id id)
{
	struct pc_res *n;

	if (id == PC_RES_NONE || id >= t->nnodes)
		return;
	n = &t->nodes[id];
	n->retired = true;
	for (size_t i = 0; i < n->nchildren; i++)
		pc_res_retire(t, n->children[i]);
}

void pc_res_set_end(struct pc_restree *t, pc_res_id id, char end,
		    int code, double when)
{
	if (id == PC_RES_NONE || id >= t->nnodes || end == 0)
		return;
	t->nodes[id].end = end;
	t->nodes[id].end_code = code;
	t->nodes[id].end_t = when;
}

size_t pc_res_count_kind(const struct pc_restree *t, pc_res_id id,
			 enum pc_res_kind kind)
{
	const struct pc_res *n = pc_res_get(t, id);
	size_t count;

	if (n == NULL || n->retired)
		return 0;
	count = n->kind == kind;
	for (size_t i = 0; i < n->nchildren; i++)
		count += pc_res_count_kind(t, n->children[i], kind);
	return count;
}

static int by_name(const void *a, const void *b, void *tree)
{
	const struct pc_restree *t = tree;
	const struct pc_res *x = &t->nodes[*(const pc_res_id *)a];
	const struct pc_res *y = &t->nodes[*(const pc_res_id *)b];

	return strcmp(x->name, y->name);
}

static void print_node(const struct pc_restree *t, pc_res_id id, int depth,
		       bool indent, bool show_retired, FILE *out)
{
	const struct pc_res *n = &t->nodes[id];
	pc_res_id *order;

	if (n->retired && !show_retired)
		return;
	if (n->kind != PC_RES_ROOT) {
		if (indent)
			fprintf(out, "%*s%s%s\n", depth * 2, "", n->name,
				n->retired ? " (gone)" : "");
		else
			fprintf(out, "%s%s\n", n->path,
				n->retired ? " (gone)" : "");
	}
	if (n->nchildren == 0)
		return;
	order = malloc(n->nchildren * sizeof(*order));
	if (order == NULL)
		abort();
	memcpy(order, n->children, n->nchildren * sizeof(*order));
	qsort_r(order, n->nchildren, sizeof(*order), by_name, (void *)t);
	for (size_t i = 0; i < n->nchildren; i++)
		print_node(t, order[i], depth + 1, indent, show_retired, out);
	free(order);
}

void pc_res_print(const struct pc_restree *t, pc_res_id id, bool indent,
		  bool show_retired, FILE *out)
{
	int depth = -1;

	if (id == PC_RES_NONE || id >= t->nnodes)
		return;
	/* Indentation is absolute: a subtree prints where it sits in the
	 * whole tree, so pieces printed one after another line up. */
	for (pc_res_id a = id; a != PC_RES_NONE; a = t->nodes[a].parent)
		depth++;
	print_node(t, id, depth - 1, indent, show_retired, out);
}

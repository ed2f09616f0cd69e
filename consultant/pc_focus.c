/* pc_focus.c - foci (see pc_focus.h). */
#include "pc_focus.h"

#include <stdio.h>
#include <string.h>

void pc_focus_top(const struct pc_restree *t, struct pc_focus *f)
{
	for (int i = 0; i < PC_NHIER; i++)
		f->r[i] = pc_res_find(t, pc_hier_names[i]);
}

bool pc_focus_eq(const struct pc_focus *a, const struct pc_focus *b)
{
	return memcmp(a->r, b->r, sizeof(a->r)) == 0;
}

void pc_focus_paths(const struct pc_restree *t, const struct pc_focus *f,
		    struct pc_src_focus *out)
{
	for (int i = 0; i < PC_NHIER; i++)
		out->path[i] = pc_res_get(t, f->r[i])->path;
}

char *pc_focus_name(const struct pc_restree *t, const struct pc_focus *f,
		    char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int i = 0; i < PC_NHIER && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%c%s", i ? ',' : '<',
				      pc_res_get(t, f->r[i])->path);
	if (n < len)
		snprintf(buf + n, len - n, ">");
	return buf;
}

/*
 * eng_maps.c - /proc/PID/maps, one mapping at a time (see eng_maps.h).
 *
 * The format (proc(5)): "lo-hi perms offset dev inode   path", the path
 * padded to a column and absent for anonymous memory.  Everything after
 * the inode and its padding is the path, spaces and all (a file name may
 * hold them, and a deleted file ends in " (deleted)").
 */
#include "eng_maps.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

int eng_maps_open(struct eng_maps *m, pid_t pid)
{
	char path[64];

	memset(m, 0, sizeof(*m));
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	m->f = fopen(path, "re");
	return m->f == NULL ? -errno : 0;
}

static bool parse(const char *s, struct eng_maps_line *l)
{
	int at = 0;
	size_t n;

	if (sscanf(s, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %*s %" SCNu64
		   " %n", &l->lo, &l->hi, l->perms, &l->off, &l->inode,
		   &at) != 5 || at == 0)
		return false;
	n = strcspn(s + at, "\n");
	if (n >= sizeof(l->path))
		n = sizeof(l->path) - 1;
	memcpy(l->path, s + at, n);
	l->path[n] = '\0';
	return true;
}

bool eng_maps_next(struct eng_maps *m, struct eng_maps_line *l)
{
	if (m->f == NULL)
		return false;
	while (getline(&m->buf, &m->cap, m->f) > 0)
		if (parse(m->buf, l))
			return true;
	return false;
}

void eng_maps_close(struct eng_maps *m)
{
	if (m->f != NULL)
		fclose(m->f);
	free(m->buf);
	memset(m, 0, sizeof(*m));
}

bool eng_maps_find(pid_t pid, uint64_t addr, struct eng_maps_line *out)
{
	struct eng_maps_line l;
	struct eng_maps m;
	bool found = false;

	if (eng_maps_open(&m, pid) < 0)
		return false;
	while (!found && eng_maps_next(&m, &l))
		found = addr >= l.lo && addr < l.hi;
	if (found && out != NULL)
		*out = l;
	eng_maps_close(&m);
	return found;
}

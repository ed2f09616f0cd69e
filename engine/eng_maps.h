/*
 * eng_maps.h - a process's mappings, read from /proc/PID/maps: the one
 * reader every part of hunch uses (code holes for trampolines, the
 * segment a child inherited, the loaded files, the stack holding a
 * pointer), so that each parses the same fields the same way.
 *
 * A line is read whole, however long its path: with a fixed buffer a
 * long path split into two "lines", and the second parsed as garbage.
 */
#ifndef ENG_MAPS_H
#define ENG_MAPS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct eng_maps_line {
	uint64_t lo, hi;     /* [lo, hi) */
	uint64_t off;        /* file offset of lo */
	uint64_t inode;      /* 0 for an anonymous mapping */
	char perms[5];       /* "r-xp" */
	char path[4096];     /* the rest of the line: a file ("/usr/lib/x",
				"/memfd:name (deleted)"), "[heap]", "[stack]",
				or "" */
};

struct eng_maps {
	FILE *f;
	char *buf;
	size_t cap;
};

/* 0, or -errno (the process is gone, or not ours to read). */
int eng_maps_open(struct eng_maps *m, pid_t pid);
/* The next mapping into *l; false at the end.  Lines that do not parse
 * are skipped. */
bool eng_maps_next(struct eng_maps *m, struct eng_maps_line *l);
void eng_maps_close(struct eng_maps *m);

/* The mapping holding addr into *l (may be NULL); false if none or the
 * maps cannot be read. */
bool eng_maps_find(pid_t pid, uint64_t addr, struct eng_maps_line *l);

static inline bool eng_maps_is_code(const struct eng_maps_line *l)
{
	return l->perms[2] == 'x';
}

#endif

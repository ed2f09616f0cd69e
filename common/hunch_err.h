/*
 * hunch_err.h - the error convention used across hunch.
 *
 * Functions return 0 on success or a negative errno-style code on failure.
 * When they take a `struct hunch_err *`, they also leave there a sentence a
 * user can act on: what failed, on what (file, pid, function, JSON path),
 * and what to do about it.  The message never ends with a newline.
 */
#ifndef HUNCH_ERR_H
#define HUNCH_ERR_H

#include <stddef.h>

#define HUNCH_ERR_MAX 1024

struct hunch_err {
	int code;                 /* negative errno-style code, 0 if none */
	char msg[HUNCH_ERR_MAX];  /* human-readable, actionable */
};

/* Fill `e` (which may be NULL) and return `code` (a negative errno). */
int hunch_err_set(struct hunch_err *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Prepend context ("while attaching to pid 42: ") to an existing message. */
void hunch_err_prefix(struct hunch_err *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

void hunch_err_clear(struct hunch_err *e);

#endif

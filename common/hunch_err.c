/* hunch_err.c - building actionable error messages (see hunch_err.h). */
#include "hunch_err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int hunch_err_set(struct hunch_err *e, int code, const char *fmt, ...)
{
	va_list ap;

	if (e == NULL)
		return code;
	e->code = code;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return code;
}

void hunch_err_prefix(struct hunch_err *e, const char *fmt, ...)
{
	char prefix[HUNCH_ERR_MAX];
	size_t plen, mlen;
	va_list ap;

	if (e == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	/* Shift the message right and put the prefix in front, cutting the
	 * end of the message if the two do not fit. */
	plen = strlen(prefix);
	if (plen >= sizeof(e->msg))
		plen = sizeof(e->msg) - 1;
	mlen = strnlen(e->msg, sizeof(e->msg) - 1);
	if (plen + mlen >= sizeof(e->msg))
		mlen = sizeof(e->msg) - 1 - plen;
	memmove(e->msg + plen, e->msg, mlen);
	memcpy(e->msg, prefix, plen);
	e->msg[plen + mlen] = '\0';
}

void hunch_err_clear(struct hunch_err *e)
{
	if (e == NULL)
		return;
	e->code = 0;
	e->msg[0] = '\0';
}

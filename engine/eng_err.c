/* eng_err.c - building actionable error messages (see eng_err.h). */
#include "eng_err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int hunch_errf(struct hunch_err *e, int code, const char *fmt, ...)
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
	char prefix[HUNCH_ERR_MAX], old[HUNCH_ERR_MAX];
	va_list ap;

	if (e == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, e->msg, sizeof(old));
	snprintf(e->msg, sizeof(e->msg), "%s%s", prefix, old);
}

void hunch_err_clear(struct hunch_err *e)
{
	if (e == NULL)
		return;
	e->code = 0;
	e->msg[0] = '\0';
}

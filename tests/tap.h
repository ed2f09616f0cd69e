/*
 * tap.h - a minimal TAP producer for hunch's C tests.
 *
 * Each test program prints "ok N - name" or "not ok N - name" per check
 * and a plan at the end; meson runs them with protocol 'tap', and
 * tests/count-tap.py counts every check as one test case.
 */
#ifndef HUNCH_TAP_H
#define HUNCH_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static int tap_n, tap_failed;

__attribute__((format(printf, 2, 3)))
static inline int tap_ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", cond ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!cond)
		tap_failed++;
	return cond;
}

__attribute__((format(printf, 1, 2)))
static inline void tap_diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

/* Integer equality with both values in the message on failure. */
#define tap_eq(got, want, ...) do {                                      \
	long long tap_g_ = (long long)(got), tap_w_ = (long long)(want); \
	if (!tap_ok(tap_g_ == tap_w_, __VA_ARGS__))                      \
		tap_diag("  got %lld, want %lld", tap_g_, tap_w_);       \
} while (0)

static inline int tap_done(void)
{
	printf("1..%d\n", tap_n);
	fflush(stdout);
	return tap_failed ? 1 : 0;
}

#endif

/*
 * src_live_points.h - `hunch points` over a program file (see
 * src_live_points.c).
 */
#ifndef SRC_LIVE_POINTS_H
#define SRC_LIVE_POINTS_H

#include "hunch_err.h"

enum src_points_mode {
	SRC_POINTS_SUMMARY,   /* function verdicts only */
	SRC_POINTS_ALL,       /* and every point */
	SRC_POINTS_REFUSED,   /* and the refused points */
};

/* Print the report on stdout for every function of `program`, or only
 * the `names` given.  Returns 0; 1 when a named function does not exist
 * (after reporting the others); or a negative error with `err` filled
 * (the file could not be read). */
int src_live_points(const char *program, char *const *names, int nnames,
		    enum src_points_mode mode, struct hunch_err *err);

#endif

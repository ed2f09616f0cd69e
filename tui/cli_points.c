/*
 * cli_points.c - `hunch points`: the instrumentation points of a
 * program's functions and whether each can be patched, and why not.
 *
 *   hunch points [--all|--refused] PROGRAM [FUNCTION...]
 *
 * A diagnostic over one file, with no process; the report itself is
 * consultant/src_live_points.c.  Output, one record a line,
 * stable for grep and tests (arch/x86_64/README.md, "hunch points"):
 *
 *   function NAME +0xADDR size N ok; PLACE
 *   function NAME +0xADDR size N refused: WHY[ (at +0xADDR)]; PLACE
 *     point KIND +0xADDR len N [DETAIL] patch +0xSTART+N [BYTES] ok
 *     point KIND +0xADDR len N [DETAIL] patch +0xSTART+N [BYTES] refused: WHY[ (at +0xADDR)]
 *   summary FILE: N functions, N ok (P%), N refused; N points, N ok
 *   shares FILE: N in place (P%), N relocated (P%), N traps (P%), N none (P%)
 *
 * PLACE is what the engine would do: `in place`, `relocated`, `traps
 * (not relocated: WHY)` or `none (WHY)`.
 *
 * KIND is entry, exit or call; DETAIL is `after-endbr64` (entry), `ret`,
 * `tail`, `tail-cond` or `tail-indirect` with `to TARGET` (exit), `to
 * NAME`, `to +0xADDR` or `indirect` (call).  Addresses are
 * image-relative.
 */
#include "cli.h"

#include <getopt.h>
#include <stdio.h>

#include "src_live_points.h"

static int parse_points_args(int argc, char **argv,
			     enum src_points_mode *mode)
{
	static const struct option longopts[] = {
		{ "all", no_argument, NULL, 'a' },
		{ "refused", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*mode = SRC_POINTS_SUMMARY;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:arh", longopts, NULL)) != -1) {
		if (c == 'a')
			*mode = SRC_POINTS_ALL;
		else if (c == 'r')
			*mode = SRC_POINTS_REFUSED;
		else if (c == 'h')
			return 0;
		else {
			cli_opts_error("hunch points", c, argv, longopts);
			return -1;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "hunch points: name a program file\n");
		return -1;
	}
	return optind;
}

int cli_points(int argc, char **argv)
{
	enum src_points_mode mode;
	struct hunch_err err = { 0 };
	int first = parse_points_args(argc, argv, &mode), rc;

	if (first < 0)
		return HUNCH_EXIT_USAGE;
	if (first == 0)
		return cli_help("points", stdout);
	rc = src_live_points(argv[first], argv + first + 1, argc - first - 1,
			     mode, &err);
	if (rc == 1)
		return HUNCH_EXIT_USAGE;
	if (rc < 0) {
		fprintf(stderr, "hunch: %s\n", err.msg[0] ? err.msg :
			"cannot read the program's points");
		return HUNCH_EXIT_TARGET;
	}
	return HUNCH_EXIT_OK;
}

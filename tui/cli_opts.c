/*
 * cli_opts.c - what every subcommand's parser says about an option it
 * does not take: the option by name, the nearest one it does take, and
 * where the list is (`hunch CMD --help`).
 *
 * getopt's own messages ("unrecognized option") name neither the
 * command nor a way out, and the hand-written parsers said only
 * "unknown option"; the parsers run with opterr = 0 and call this.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* Edit distance (insert, delete, substitute), capped at 9. */
static int distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	int row[64];

	if (la >= 63 || lb >= 63)
		return 9;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		int diag = row[0], up;

		row[0] = (int)i;
		for (size_t j = 1; j <= lb; j++) {
			int best = diag + (a[i - 1] != b[j - 1]);

			up = row[j];
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[lb] > 9 ? 9 : row[lb];
}

/* The long option nearest `arg` (without its dashes and any =value),
 * if near enough to be a slip of the keyboard; else NULL. */
const char *cli_opts_nearest(const char *arg, const struct option *opts)
{
	char name[64];
	const char *best = NULL;
	int bestd = 9;

	while (*arg == '-')
		arg++;
	snprintf(name, sizeof name, "%.*s", (int)strcspn(arg, "="), arg);
	for (; opts->name != NULL; opts++) {
		int d = distance(name, opts->name);

		/* a prefix of a longer name counts as near, too */
		if (strncmp(opts->name, name, strlen(name)) == 0 && *name)
			d = d < 2 ? d : 2;
		if (d < bestd) {
			bestd = d;
			best = opts->name;
		}
	}
	return bestd <= 3 && bestd * 3 <= (int)strlen(name) + 3 ? best : NULL;
}

int cli_opts_unknown(const char *cmd, const char *arg,
		     const struct option *opts)
{
	const char *near = cli_opts_nearest(arg, opts);

	if (near != NULL)
		fprintf(stderr, "%s: unknown option '%s'; did you mean "
			"'--%s'? (%s --help lists them)\n", cmd, arg, near,
			cmd);
	else
		fprintf(stderr, "%s: unknown option '%s' (%s --help lists "
			"them)\n", cmd, arg, cmd);
	return HUNCH_EXIT_USAGE;
}

int cli_opts_error(const char *cmd, int c, char **argv,
		   const struct option *opts)
{
	const char *arg = argv[optind - 1];

	if (c == ':') {
		fprintf(stderr, "%s: option '%s' needs a value (%s --help)\n",
			cmd, arg, cmd);
		return HUNCH_EXIT_USAGE;
	}
	/* an unknown short option: getopt left the letter in optopt */
	if (arg[0] == '-' && arg[1] != '-' && optopt != 0) {
		char s[3] = { '-', (char)optopt, '\0' };

		return cli_opts_unknown(cmd, s, opts);
	}
	return cli_opts_unknown(cmd, arg, opts);
}

/*
 * cli_check.c - `hunch check [FILE...]`: validate hypotheses files
 * without running anything, and the loading that run/attach share
 * (shipped defaults, then the XDG user file, then --hypotheses, then
 * --set assignments).
 */
#include "cli.h"
#include "pc_config_diff.h"
#include "hunch_config.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pc_config.h"

/* The shipped default.json: $HUNCH_HYPOTHESES_DEFAULT, the build tree's
 * copy next to hunch (consultant/default.json), or the installed one. */
const char *cli_check_hypotheses_path(void)
{
	static char path[PATH_MAX];
	char exe[PATH_MAX - 128];
	const char *env = getenv("HUNCH_HYPOTHESES_DEFAULT");
	ssize_t n;

	if (env && env[0])
		return env;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		char *slash;

		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
		snprintf(path, sizeof(path), "%s/consultant/default.json", exe);
		if (access(path, R_OK) == 0)
			return path;
		/* a relocated install (DESTDIR, a copied prefix) */
		snprintf(path, sizeof(path), "%s/%s/hypotheses/default.json",
			 HUNCH_DATADIR_FROM_BINDIR[0] == '/' ? "" : exe,
			 HUNCH_DATADIR_FROM_BINDIR);
		if (access(path, R_OK) == 0)
			return path;
	}
	snprintf(path, sizeof(path), "%s/hypotheses/default.json",
		 HUNCH_DATADIR);
	if (access(path, R_OK) == 0)
		return path;
	fprintf(stderr, "hunch: cannot find the shipped hypotheses "
		"default.json (looked in consultant/ next to hunch and in "
		"%s/hypotheses); reinstall hunch or set "
		"HUNCH_HYPOTHESES_DEFAULT to its path\n", HUNCH_DATADIR);
	return NULL;
}

static void print_diags(const struct pc_diags *ds)
{
	for (size_t i = 0; i < ds->n; i++)
		fprintf(stderr, "%s\n", ds->d[i].msg);
}

int cli_check_load_config(const char *user_file, const char *const *sets,
		    size_t nsets, struct pc_config **out)
{
	const char *def = cli_check_hypotheses_path();
	struct pc_config *c;
	struct pc_diags ds = { 0 };
	struct hunch_err e = { 0 };
	int r;

	*out = NULL;
	if (def == NULL)
		return HUNCH_EXIT_USAGE;
	c = pc_config_new();
	r = pc_config_load_all(c, def, user_file, &ds, &e);
	print_diags(&ds);
	pc_jx_diags_free(&ds);
	for (size_t i = 0; r == 0 && i < nsets; i++) {
		r = pc_tunables_set_str(c, sets[i], &e);
		if (r)
			fprintf(stderr, "hunch: %s\n", e.msg);
	}
	if (r) {
		pc_config_free(c);
		return HUNCH_EXIT_USAGE;
	}
	*out = c;
	return HUNCH_EXIT_OK;
}

static void list_tunables(const struct pc_config *c)
{
	for (size_t i = 0; i < c->ntun; i++) {
		const struct pc_tunable *t = &c->tun[i];

		if (t->type == PC_TUN_BOOL)
			printf("%-22s %-6s (bool)%s\n", t->name,
			       t->value ? "true" : "false",
			       t->developer ? " [developer]" : "");
		else
			printf("%-22s %-8g [%g, %g] %s%s\n", t->name, t->value,
			       t->min, t->max, t->units ? t->units : "",
			       t->developer ? " [developer]" : "");
		printf("    %s\n", t->desc ? t->desc : "");
	}
}

static const struct option check_opts[] = {
	{ "list", no_argument, NULL, 'l' },
	{ "set", required_argument, NULL, 's' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

json_t *cli_check_config_summary(const struct pc_config *c)
{
	struct pc_config *shipped = pc_config_new();
	const char *path = cli_check_hypotheses_path();
	struct hunch_err e = { 0 };
	json_t *j = NULL;

	if (path != NULL &&
	    pc_config_load_file(shipped, path, NULL, &e) == 0)
		j = pc_config_diff_summary(c, shipped);
	pc_config_free(shipped);
	return j;
}

static void print_difference(void *arg, const char *line)
{
	(void)arg;
	printf("  %s\n", line);
}

/* Every file loaded, and how the result differs from the shipped
 * defaults: a user's overlay is used by every run, so say it. */
static void print_loaded(const struct pc_config *c)
{
	struct pc_config *shipped;
	struct hunch_err e = { 0 };
	size_t n;

	printf("loaded:");
	for (size_t i = 0; i < c->nfiles; i++)
		printf("%s %s", i ? "," : "", c->files[i]);
	printf("\n");
	shipped = pc_config_new();
	if (pc_config_load_file(shipped, cli_check_hypotheses_path(), NULL, &e) != 0) {
		pc_config_free(shipped);
		return;
	}
	n = pc_config_diff(c, shipped, NULL, NULL);
	if (n == 0)
		printf("the shipped defaults, unchanged\n");
	else
		printf("differs from the shipped defaults in %zu place%s:\n",
		       n, n == 1 ? "" : "s");
	pc_config_diff(c, shipped, print_difference, NULL);
	pc_config_free(shipped);
}

/* Each FILE is checked on its own over the defaults, so one file's error
 * cannot hide or excuse another's. */
static int check_file(const char *file, const char *const *sets,
		      size_t nsets, bool list)
{
	struct pc_config *c;
	int r = cli_check_load_config(file, sets, nsets, &c);

	if (r != HUNCH_EXIT_OK) {
		fprintf(stderr, "%s: invalid\n", file ? file : "defaults");
		return r;
	}
	printf("%s: ok (%zu hypotheses, %zu metrics, %zu tunables)\n",
	       file ? file : cli_check_hypotheses_path(), c->nhyp, c->nmet,
	       c->ntun);
	print_loaded(c);
	if (list)
		list_tunables(c);
	pc_config_free(c);
	return HUNCH_EXIT_OK;
}

int cli_check(int argc, char **argv)
{
	const char **sets = calloc((size_t)argc + 1, sizeof(char *));
	const char **files = calloc((size_t)argc + 1, sizeof(char *));
	size_t nsets = 0, nfiles = 0;
	bool list = false;
	int status = HUNCH_EXIT_OK;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--list") == 0)
			list = true;
		else if (strcmp(argv[i], "--set") == 0 && i + 1 < argc)
			sets[nsets++] = argv[++i];
		else if (strncmp(argv[i], "--set=", 6) == 0)
			sets[nsets++] = argv[i] + 6;
		else if (strcmp(argv[i], "--help") == 0 ||
			 strcmp(argv[i], "-h") == 0) {
			free(sets);
			free(files);
			return cli_help("check", stdout);
		} else if (argv[i][0] == '-' && argv[i][1]) {
			free(sets);
			free(files);
			return cli_opts_unknown("hunch check", argv[i],
						check_opts);
		} else
			files[nfiles++] = argv[i];
	}
	if (nfiles == 0)
		status = check_file(NULL, sets, nsets, list);
	for (size_t i = 0; i < nfiles; i++)
		if (check_file(files[i], sets, nsets, list) != HUNCH_EXIT_OK)
			status = HUNCH_EXIT_USAGE;
	free(sets);
	free(files);
	return status;
}

/*
 * cli_where.c - `hunch where`: print a program's where axis.
 *
 *   hunch where [--tree] [--hierarchy NAME] [--debuginfod-wait S] PROGRAM
 *   hunch where [--tree] [--hierarchy NAME] [--debuginfod-wait S] --pid PID
 *
 * For a program file: the functions of the executable itself.  For a
 * running process: every loaded module and every thread, read while the
 * process is stopped for a moment; it then runs on as before.  With
 * DEBUGINFOD_URLS set, debug files being fetched are waited for (up to
 * --debuginfod-wait seconds, default 120; after the detach for --pid)
 * so that the functions they name are printed.
 */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pc_where.h"
#include "src_live.h"

struct where_opts {
	bool tree;
	const char *hierarchy;   /* NULL: all */
	long pid;                /* 0: read a file */
	const char *program;
	long dbg_wait_s;         /* debuginfod: longest wait, seconds */
};

static int parse_where(int argc, char **argv, struct where_opts *o)
{
	static const struct option longopts[] = {
		{ "tree", no_argument, NULL, 't' },
		{ "hierarchy", required_argument, NULL, 'H' },
		{ "pid", required_argument, NULL, 'p' },
		{ "debuginfod-wait", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	memset(o, 0, sizeof(*o));
	o->dbg_wait_s = 120;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:tH:p:w:h", longopts, NULL)) !=
	       -1) {
		switch (c) {
		case 'h': return 1;
		case 't': o->tree = true; break;
		case 'H': o->hierarchy = optarg; break;
		case 'p':
			o->pid = strtol(optarg, &end, 10);
			if (*end != '\0' || o->pid <= 0) {
				fprintf(stderr, "hunch where: --pid needs a "
					"process id, got '%s'\n", optarg);
				return -1;
			}
			break;
		case 'w':
			o->dbg_wait_s = strtol(optarg, &end, 10);
			if (*end != '\0' || o->dbg_wait_s < 0 ||
			    o->dbg_wait_s > 86400) {
				fprintf(stderr, "hunch where: --debuginfod-wait "
					"needs seconds (0 to 86400), got "
					"'%s'\n", optarg);
				return -1;
			}
			break;
		default:
			cli_opts_error("hunch where", c, argv, longopts);
			return -1;
		}
	}
	if (o->pid == 0 && optind != argc - 1) {
		fprintf(stderr, "hunch where: name one program file, or a "
			"running process with --pid PID\n");
		return -1;
	}
	if (o->pid == 0)
		o->program = argv[optind];
	return 0;
}

static void print_tree(struct pc_restree *t, const struct where_opts *o)
{
	pc_res_id from = 1;  /* the root */

	if (o->hierarchy != NULL) {
		from = pc_res_tree_hierarchy(t, o->hierarchy);
		if (from == PC_RES_NONE) {
			fprintf(stderr, "hunch where: no hierarchy '%s' "
				"(there are Code, Process, SyncObject, "
				"Files)\n", o->hierarchy);
			return;
		}
	}
	pc_res_print(t, from, o->tree, false, stdout);
}

/* Debug files still coming from debuginfod: wait for them, saying so. */
static void wait_debug(const struct where_opts *o)
{
	char note[1200];
	int rc = src_live_debug_wait((int)o->dbg_wait_s * 1000);

	while (src_live_debug_note(note, sizeof(note)))
		fprintf(stderr, "hunch: %s\n", note);
	if (rc == -ETIMEDOUT)
		fprintf(stderr, "hunch where: debuginfod had not answered "
			"after %ld s; the files still being fetched keep the "
			"names they give themselves (wait longer with "
			"--debuginfod-wait SECONDS)\n", o->dbg_wait_s);
}

int cli_where(int argc, char **argv)
{
	struct where_opts o;
	struct pc_source *src;
	struct pc_restree *tree;
	struct hunch_err err = { 0 };
	int rc;

	if ((rc = parse_where(argc, argv, &o)) < 0)
		return HUNCH_EXIT_USAGE;
	if (rc == 1)
		return cli_help("where", stdout);
	if (o.pid != 0)
		rc = src_live_attach((pid_t)o.pid, NULL, &src, &err);
	else
		rc = src_live_open_file(o.program, &src, &err);
	if (rc < 0) {
		fprintf(stderr, "hunch: %s\n", err.msg);
		return HUNCH_EXIT_TARGET;
	}
	/* the process runs on while debug files arrive */
	if (o.pid != 0 && src_live_detach(src, &err) < 0)
		fprintf(stderr, "hunch: %s\n", err.msg);
	wait_debug(&o);
	tree = pc_res_tree_new();
	src->ops->poll_resources(src, pc_where_apply_cb, tree);
	src->ops->close(src);
	print_tree(tree, &o);
	pc_res_tree_free(tree);
	return HUNCH_EXIT_OK;
}

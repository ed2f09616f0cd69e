/*
 * test_restree.c - the where-axis tree: paths, stable ids, retirement,
 * discoveries of every kind, printing, and scale.
 */
#include <stdlib.h>
#include <string.h>

#include "pc_res.h"
#include "pc_where.h"
#include "tap.h"

static char *print_to_string(struct pc_restree *t, pc_res_id id, bool indent,
			     bool retired)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	pc_res_print(t, id, indent, retired, f);
	fclose(f);
	return buf;
}

static void test_hierarchies(void)
{
	struct pc_restree *t = pc_res_tree_new();
	char *s = print_to_string(t, 1, false, false);

	tap_ok(strcmp(s, "/Code\n/Files\n/Process\n/SyncObject\n") == 0,
	       "a new tree has exactly the four hierarchies");
	tap_eq(pc_res_tree_count(t), 5, "root plus four hierarchies");
	tap_ok(pc_res_find(t, "/Code") == pc_res_tree_hierarchy(t, "Code"),
	       "hierarchy lookup by name and by path agree");
	tap_ok(pc_res_find(t, "/Nope") == PC_RES_NONE, "unknown path");
	free(s);
	pc_res_tree_free(t);
}

static void test_functions(void)
{
	struct pc_restree *t = pc_res_tree_new();
	struct pc_discovery d = {
		.kind = PC_DISC_FUNCTION, .module = "a.out",
		.srcfile = "x.c", .function = "f", .addr = 0x1000,
	};
	pc_res_id f = pc_where_apply(t, &d), f2;
	const struct pc_res *r = pc_res_get(t, f);

	tap_ok(r && strcmp(r->path, "/Code/a.out/x.c/f") == 0,
	       "function path is /Code/module/file/function");
	tap_eq(r->addr, 0x1000, "function keeps its address");
	f2 = pc_where_apply(t, &d);
	tap_eq(f2, f, "discovering the same function again keeps its id");
	d.srcfile = NULL;
	d.function = "g";
	r = pc_res_get(t, pc_where_apply(t, &d));
	tap_ok(strcmp(r->path, "/Code/a.out/<unknown>/g") == 0,
	       "a function without a source file goes under <unknown>");
	tap_eq(pc_res_get(t, pc_res_find(t, "/Code/a.out"))->kind,
	       PC_RES_MODULE, "module node kind");
	pc_res_tree_free(t);
}

static void test_threads(void)
{
	struct pc_restree *t = pc_res_tree_new();
	struct pc_discovery d = {
		.kind = PC_DISC_THREAD, .pid = 42, .tid = 42,
		.function = "main",
	};
	pc_res_id main_id = pc_where_apply(t, &d), w, w2;
	char *s;

	tap_ok(strcmp(pc_res_get(t, main_id)->path, "/Process/42/42:main")
	       == 0, "thread named tid:start function");
	d.tid = 43;
	d.function = "worker";
	w = pc_where_apply(t, &d);
	d.function = "other";
	tap_eq(pc_where_apply(t, &d), w,
	       "a thread is found again by tid, whatever its name");
	tap_eq(pc_where_thread(t, 42, 43), w, "lookup by pid and tid");
	d.retired = true;
	pc_where_apply(t, &d);
	tap_ok(pc_res_get(t, w)->retired, "an exited thread is retired");
	tap_eq(pc_where_thread(t, 42, 43), PC_RES_NONE,
	       "a retired thread is not found by tid");
	s = print_to_string(t, pc_res_tree_hierarchy(t, "Process"), false,
			    false);
	tap_ok(strcmp(s, "/Process\n/Process/42\n/Process/42/42:main\n") == 0,
	       "retired threads are hidden when printing");
	free(s);
	s = print_to_string(t, pc_res_tree_hierarchy(t, "Process"), false,
			    true);
	tap_ok(strstr(s, "/Process/42/43:worker (gone)") != NULL,
	       "and shown as gone on request");
	free(s);
	d.retired = false;
	d.function = NULL;
	w2 = pc_where_apply(t, &d);
	tap_ok(w2 != w, "a reused tid is a new resource with a new id");
	tap_ok(strcmp(pc_res_get(t, w2)->path, "/Process/42/43") == 0,
	       "a thread with no known start function is named by tid");
	pc_res_tree_free(t);
}

static void test_sync_and_files(void)
{
	struct pc_restree *t = pc_res_tree_new();
	struct pc_discovery m = {
		.kind = PC_DISC_SYNCOBJ, .sync_class = "Mutex",
		.name = "demo_lock", .addr = 0x4040,
	};
	struct pc_discovery f = { .kind = PC_DISC_FILE, .name = "/tmp/out" };

	tap_ok(strcmp(pc_res_get(t, pc_where_apply(t, &m))->path,
		      "/SyncObject/Mutex/demo_lock") == 0, "mutex path");
	tap_ok(strcmp(pc_res_get(t, pc_where_apply(t, &f))->path,
		      "/Files/tmp/out") == 0, "file path keeps its path");
	pc_res_tree_free(t);
}

static void test_module_unload(void)
{
	struct pc_restree *t = pc_res_tree_new();
	struct pc_discovery d = {
		.kind = PC_DISC_FUNCTION, .module = "libp.so",
		.srcfile = "p.c", .function = "p",
	};
	pc_res_id fn = pc_where_apply(t, &d);

	d.function = NULL;
	d.retired = true;
	pc_where_apply(t, &d);
	tap_ok(pc_res_get(t, fn)->retired,
	       "unloading a module retires its functions");
	d.function = "p";
	d.retired = false;
	tap_eq(pc_where_apply(t, &d), fn,
	       "reloading the module brings back the same ids");
	tap_ok(!pc_res_get(t, fn)->retired, "and un-retires them");
	pc_res_tree_free(t);
}

/* 100,000 functions: ids stay unique and lookups keep working. */
static void test_scale(void)
{
	struct pc_restree *t = pc_res_tree_new();
	struct pc_discovery d = {
		.kind = PC_DISC_FUNCTION, .module = "big.so", .srcfile = "b.c",
	};
	char name[32];
	int ok = 1;

	for (int i = 0; i < 100000; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		d.function = name;
		pc_where_apply(t, &d);
	}
	for (int i = 0; i < 100000; i += 997) {
		char path[64];

		snprintf(path, sizeof(path), "/Code/big.so/b.c/f%d", i);
		ok &= pc_res_find(t, path) != PC_RES_NONE;
	}
	tap_ok(ok, "100,000 functions are all found by path");
	tap_eq(pc_res_tree_count(t), 5 + 2 + 100000,
	       "exactly one node per function, module and file");
	pc_res_tree_free(t);
}

int main(void)
{
	test_hierarchies();
	test_functions();
	test_threads();
	test_sync_and_files();
	test_module_unload();
	test_scale();
	return tap_done();
}

/*
 * inst_dlopen.c - a library loaded while the program runs becomes
 * instrumentable, and its instrumentation is dropped cleanly when it is
 * dlclose'd: the dlopen target (tests/targets, --wait-file) loads
 * libtgtplugin.so; on the load event its functions get entry and exit
 * counters; it is unloaded; on the unload event eng_inst_drop_range
 * forgets those points without writing into the unmapped bytes; a later
 * remove-all touches nothing there; output and exit are the ground
 * truth.
 */
#include "inst_util.h"
#include "tap.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const plugin_fns[] = { "plugin_compute", "plugin_square",
					  NULL };

int main(int argc, char **argv)
{
	char wf[] = "/tmp/hunch-inst-dlopen-XXXXXX", wf2[64];
	char *av[] = { argv[1], "--wait-file", wf, NULL };
	struct hunch_err err = { 0 };
	struct eng_event ev;
	struct fn_ctr *lc;
	struct tgt t;
	uint64_t lo, hi = 0;
	size_t nl;
	int fd, dropped;

	if (argc != 3 || (fd = mkstemp(wf)) < 0)
		return tap_ok(0, "usage: inst_dlopen PROGRAM EXPECTED"),
		       tap_done();
	close(fd);
	unlink(wf);
	snprintf(wf2, sizeof wf2, "%s.2", wf);
	if (!tap_ok(tgt_launch(&t, argv[1], av) == 0, "launched"))
		return tap_done();
	eng_ptrace_resume_all(t.p, NULL);
	close(open(wf, O_CREAT | O_WRONLY, 0600));
	/* tgt_wait_lib: the load event may arrive in any pump (also one
	 * inside the helpers), which keeps it; a private poll loop here
	 * lost it to tgt_pump under load.  On failure the target is
	 * killed, not left waiting for its file with our stderr open. */
	if (!tap_ok(tgt_wait_lib(&t, ENG_EV_LIB_LOAD, "libtgtplugin", &ev,
				 30000) == 0, "load event")) {
		tgt_fini(&t);
		return tap_done();
	}
	lc = fns_prepare_lib(&t, "libtgtplugin", plugin_fns, &nl);
	tap_eq(nl, 2, "the plugin's functions found");
	tap_ok(fns_instrument(&t, lc, nl, IM_COUNTERS) >= 4,
	       "entry and exit of both instrumented");
	for (size_t i = 0; i < nl; i++)
		if (lc[i].f->addr + lc[i].f->size > hi)
			hi = lc[i].f->addr + lc[i].f->size;
	lo = lc[0].base;
	hi += lc[0].base;
	tap_ok(tgt_wait_line(&t, "plugin_compute(7) = 71", 30000) == 0,
	       "the plugin ran once instrumented");
	close(open(wf2, O_CREAT | O_WRONLY, 0600));
	tap_ok(tgt_wait_lib(&t, ENG_EV_LIB_UNLOAD, "libtgtplugin", &ev,
			    30000) == 0, "unload event");
	dropped = eng_inst_drop_range(t.in, lo, hi, &err);
	tap_ok(dropped >= 4, "%d requests dropped with the library (%s)",
	       dropped, err.msg);
	for (size_t i = 0; i < nl; i++)
		for (size_t k = 0; k < lc[i].nreq; k++)
			tap_eq(eng_inst_state(t.in, lc[i].req[k], NULL),
			       ENG_REQ_FREE, "%s request %zu released",
			       lc[i].f->name, k);
	tap_eq(eng_inst_commit_remove_all(t.in, &err), 0,
	       "remove-all writes nothing where the library was (%s)",
	       err.msg);
	tap_ok(tgt_wait_exit(&t, 10000) == 0 && t.status == 0, "exited 0");
	{
		FILE *f = fopen(argv[2], "re");
		char want[4096] = "";
		size_t n = f ? fread(want, 1, sizeof want - 1, f) : 0;

		want[n] = 0;
		if (f)
			fclose(f);
		tap_ok(strcmp(t.out, want) == 0, "stdout identical");
	}
	unlink(wf);
	unlink(wf2);
	fns_free(lc, nl);
	tgt_fini(&t);
	return tap_done();
}

#include "sim_world.h"
int main(int argc, char **argv)
{
	struct world *w = world_new(NULL, (const char **)(argv + 2));
	src_sim_script(w->sim, "cpu_inclusive", "*", 0, 0.9, 0.05);
	src_sim_script(w->sim, "cpu_inclusive", "<" F_WRITER ",/Process,/SyncObject,/Files>", 0, 0.05, 0);
	world_run(w, argc > 1 ? atof(argv[1]) : 4.0);
	world_dump(w);
	world_free(w);
	return 0;
}

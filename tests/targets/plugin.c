/* plugin.c - libtgtplugin.so, loaded at run time by the dlopen target.
 * plugin_compute(n) = plugin_square(n) + 3 * n + 1; plugin_compute(7) = 71.
 */
#include "targets.h"

TGT_NOINLINE int plugin_square(int n)
{
	return n * n;
}

TGT_NOINLINE int plugin_compute(int n)
{
	return plugin_square(n) + 3 * n + 1;
}

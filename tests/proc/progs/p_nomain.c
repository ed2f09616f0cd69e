/* p_nomain: a program with its own _start and no main, so hunch cannot
 * find main and must stop at the entry point instead. */
#include <unistd.h>

void _start(void)
{
	static const char msg[] = "no main here\n";

	if (write(1, msg, sizeof(msg) - 1) < 0)
		_exit(1);
	_exit(5);
}

/* p_dlopen FILE LIB [FILE2]: once FILE exists, dlopen LIB and call
 * plug_value; once FILE2 exists (if given), dlclose it; exit. */
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	void *h;
	int (*fn)(void);

	if (argc < 3)
		return 2;
	printf("ready\n");
	fflush(stdout);
	while (access(argv[1], F_OK) != 0)
		usleep(2000);
	h = dlopen(argv[2], RTLD_NOW);
	if (h == NULL) {
		printf("dlopen failed: %s\n", dlerror());
		return 1;
	}
	fn = (int (*)(void))dlsym(h, "plug_value");
	printf("value %d\n", fn ? fn() : -1);
	fflush(stdout);
	while (argc > 3 && access(argv[3], F_OK) != 0)
		usleep(2000);
	dlclose(h);
	printf("closed\n");
	return 0;
}

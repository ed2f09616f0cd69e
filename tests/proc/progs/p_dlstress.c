/* p_dlstress LIB: four threads each dlopen and dlclose LIB 200 times,
 * so that the dynamic linker's r_brk is hit while other threads run. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static const char *lib;

static void *churn(void *arg)
{
	long *sum = arg;

	for (int i = 0; i < 200; i++) {
		void *h = dlopen(lib, RTLD_NOW);
		int (*fn)(void) = h ? (int (*)(void))dlsym(h, "plug_value") : 0;

		*sum += fn ? fn() : -1000;
		if (h)
			dlclose(h);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[4];
	long sums[4] = { 0 }, total = 0;

	if (argc < 2)
		return 2;
	lib = argv[1];
	for (int i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, churn, &sums[i]);
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		total += sums[i];
	}
	printf("total %ld\n", total);
	return 0;
}

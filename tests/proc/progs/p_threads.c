/* p_threads FILE: four threads work until FILE exists; then the program
 * prints a checkable total and exits. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define NT 4

static const char *stop_file;

static void *work(void *arg)
{
	long *count = arg;

	/* At least one round each, however late the thread gets a CPU,
	 * so that the output does not depend on scheduling. */
	do {
		(*count)++;
		usleep(2000);
	} while (access(stop_file, F_OK) != 0);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[NT];
	long counts[NT] = { 0 };
	int alive = 0;

	if (argc < 2)
		return 2;
	stop_file = argv[1];
	for (int i = 0; i < NT; i++)
		pthread_create(&th[i], NULL, work, &counts[i]);
	printf("ready\n");
	fflush(stdout);
	for (int i = 0; i < NT; i++) {
		pthread_join(th[i], NULL);
		alive += counts[i] > 0;
	}
	printf("done %d threads worked\n", alive);
	return 0;
}

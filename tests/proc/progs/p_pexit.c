/* p_pexit FILE: main calls pthread_exit while a worker runs on until
 * FILE exists (the leader is then a zombie thread); the worker prints
 * and the process exits 0 when the last thread ends. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static const char *stop_file;

static void *work(void *arg)
{
	(void)arg;
	while (access(stop_file, F_OK) != 0)
		usleep(2000);
	printf("worker done\n");
	fflush(stdout);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th;

	if (argc < 2)
		return 2;
	stop_file = argv[1];
	pthread_create(&th, NULL, work, NULL);
	printf("ready\n");
	fflush(stdout);
	pthread_exit(NULL);
}

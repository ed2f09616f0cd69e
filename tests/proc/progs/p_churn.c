/* p_churn FILE: creates and joins short-lived threads until FILE exists,
 * so that threads appear and exit while hunch stops and resumes. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static void *brief(void *arg)
{
	volatile long *x = arg;

	for (int i = 0; i < 10000; i++)
		(*x)++;
	return NULL;
}

int main(int argc, char **argv)
{
	long rounds = 0, x[4] = { 0 };

	if (argc < 2)
		return 2;
	printf("ready\n");
	fflush(stdout);
	while (access(argv[1], F_OK) != 0) {
		pthread_t th[4];

		for (int i = 0; i < 4; i++)
			pthread_create(&th[i], NULL, brief, &x[i]);
		for (int i = 0; i < 4; i++)
			pthread_join(th[i], NULL);
		rounds++;
	}
	printf("done %s\n", x[0] == rounds * 10000 ? "consistent" : "WRONG");
	return 0;
}

/*
 * cpuspin.c - a target whose CPU use is known thread by thread, driven
 * by lines on stdin (each answered "ok <command>"):
 *   threads  start 3 cs_blocked threads (each waits on a condition
 *            variable until quit: no CPU) and 1 cs_spinner thread (spins
 *            until quit); prints "spinner <tid>"
 *   spin MS  main spins MS milliseconds inside cs_main_spin
 *   quit     stops and joins the threads, exits 0
 * Between commands main blocks in fgets (no CPU).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOI __attribute__((noinline))
#define NBLOCKED 3

static pthread_mutex_t cs_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cs_cv = PTHREAD_COND_INITIALIZER;
static volatile int cs_quit;
static volatile pid_t cs_spinner_tid;
volatile unsigned long cs_sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

NOI void *cs_blocked(void *unused)
{
	(void)unused;
	pthread_mutex_lock(&cs_mu);
	while (!cs_quit)
		pthread_cond_wait(&cs_cv, &cs_mu);
	pthread_mutex_unlock(&cs_mu);
	return NULL;
}

NOI void *cs_spinner(void *unused)
{
	unsigned long x = 1;

	(void)unused;
	cs_spinner_tid = gettid();
	while (!cs_quit)
		x = x * 6364136223846793005ul + 1;
	cs_sink = x;
	return NULL;
}

NOI void cs_main_spin(double ms)
{
	double end = now() + ms / 1e3;
	unsigned long x = 1;

	while (now() < end)
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005ul + 1;
	cs_sink = x;
}

int main(void)
{
	pthread_t th[NBLOCKED + 1];
	int n = 0;
	char line[64];

	while (fgets(line, sizeof line, stdin) != NULL) {
		line[strcspn(line, "\n")] = 0;
		if (strcmp(line, "threads") == 0 && n == 0) {
			for (; n < NBLOCKED; n++)
				pthread_create(&th[n], NULL, cs_blocked, NULL);
			pthread_create(&th[n++], NULL, cs_spinner, NULL);
			while (cs_spinner_tid == 0)
				usleep(1000);
			printf("spinner %d\n", (int)cs_spinner_tid);
		} else if (strncmp(line, "spin ", 5) == 0) {
			cs_main_spin(atof(line + 5));
		} else if (strcmp(line, "quit") == 0) {
			break;
		}
		printf("ok %s\n", line);
		fflush(stdout);
	}
	pthread_mutex_lock(&cs_mu);
	cs_quit = 1;
	pthread_cond_broadcast(&cs_cv);
	pthread_mutex_unlock(&cs_mu);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	return 0;
}

/*
 * mcalls.c - a target with exactly known behaviour for the metric
 * compiler's tests (tests/metric).  It reads one command per line on
 * stdin, runs that phase, and prints "ok <phase>" (plus the facts a test
 * needs, before it).  Every function is noipa so it stays one symbol.
 *
 * Phases and their exact counts:
 *   calls    mc_counted: 1000 calls from main inside mc_calls_phase, and
 *            (k+1)*100 calls from worker k = 0, 1, 2 (1600 in all).  The
 *            workers stay alive (blocked in sem_wait) until `release`;
 *            printed first: "tid K TID" for each worker.
 *   release  the workers return; joined.
 *   sleep    mc_sleep(20) and mc_sleep(30): 50 ms inside mc_sleep (at
 *            least: the machine may oversleep); prints "took US", the
 *            microseconds the two calls took, measured around them.
 *   recurse  mc_recurse(4) twice: 5 nested activations each, each calls
 *            mc_counted once (10 calls inside mc_recurse), the innermost
 *            sleeps 30 ms (60 ms inside outermost activations); then 7
 *            calls of mc_counted outside mc_recurse.  Prints "took US"
 *            for the two mc_recurse calls.
 *   locks    mc_lock_a locked 100 times and mc_lock_b 50 times by main
 *            (pthread_mutex_lock/unlock), then main holds mc_lock_a while
 *            a new thread locks it: main sleeps 40 ms, unlocks, joins.
 *            mc_lock_a: 102 pthread_mutex_lock calls (101 main + 1
 *            thread, whose one call waits ~40 ms); mc_lock_b: 50.
 *            Prints "held US": how long main held mc_lock_a while the
 *            thread existed (the thread's wait is at most that).
 *   open     opens /dev/null twice; prints "fd A B".
 *   write    inside mc_write_phase: write(A, 100 bytes) x10, write(A, 7
 *            bytes) x3 (1021 bytes in 13 calls on A), write(B, 50 bytes)
 *            x5 (250 bytes on B).
 *   inside   mc_inside_phase prints "inside", sleeps 1000 ms in mc_sleep,
 *            then calls mc_counted 10 times (for instrumentation enabled
 *            while the thread is already inside: catchup).
 *   sock     a TCP connection on 127.0.0.1 (listen on an ephemeral port,
 *            connect, accept), 10 bytes written by the client; prints
 *            "sock FD PORT" (the client's descriptor, the server's port).
 *   quit     exits 0.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#define NOI __attribute__((noipa))

pthread_mutex_t mc_lock_a = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t mc_lock_b = PTHREAD_MUTEX_INITIALIZER;
volatile long mc_sink;
static sem_t mc_done, mc_release;
static pthread_t mc_workers[3];
static volatile int mc_tids[3];
static int mc_fd_a = -1, mc_fd_b = -1;

NOI void mc_counted(long x)
{
	mc_sink += x;
}

NOI void *mc_worker(void *arg)
{
	long k = (long)arg;

	mc_tids[k] = (int)syscall(SYS_gettid);
	for (long i = 0; i < (k + 1) * 100; i++)
		mc_counted(i);
	sem_post(&mc_done);
	sem_wait(&mc_release);
	return NULL;
}

NOI void mc_calls_phase(void)
{
	for (long i = 0; i < 1000; i++)
		mc_counted(i);
	for (long k = 0; k < 3; k++)
		pthread_create(&mc_workers[k], NULL, mc_worker, (void *)k);
	for (int k = 0; k < 3; k++)
		sem_wait(&mc_done);
	for (int k = 0; k < 3; k++)
		printf("tid %d %d\n", k, mc_tids[k]);
}

NOI void mc_release_phase(void)
{
	for (int k = 0; k < 3; k++)
		sem_post(&mc_release);
	for (int k = 0; k < 3; k++)
		pthread_join(mc_workers[k], NULL);
}

NOI void mc_sleep(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0)
		;
}

NOI long mc_recurse(int depth)
{
	long r = 0;

	if (depth > 0)
		r = mc_recurse(depth - 1) + 1;
	else
		mc_sleep(30);
	mc_counted(depth);
	return r;
}

static long mc_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000L + ts.tv_nsec / 1000;
}

NOI void mc_sleep_phase(void)
{
	long t0 = mc_us();

	mc_sleep(20);
	mc_sleep(30);
	printf("took %ld\n", mc_us() - t0);
}

NOI void mc_recurse_phase(void)
{
	long t0 = mc_us();

	mc_recurse(4);
	mc_recurse(4);
	printf("took %ld\n", mc_us() - t0);
	for (int i = 0; i < 7; i++)
		mc_counted(i);
}

NOI void *mc_locker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mc_lock_a);
	pthread_mutex_unlock(&mc_lock_a);
	return NULL;
}

NOI void mc_locks_phase(void)
{
	pthread_t t;
	long t0, held;

	for (int i = 0; i < 100; i++) {
		pthread_mutex_lock(&mc_lock_a);
		pthread_mutex_unlock(&mc_lock_a);
	}
	for (int i = 0; i < 50; i++) {
		pthread_mutex_lock(&mc_lock_b);
		pthread_mutex_unlock(&mc_lock_b);
	}
	pthread_mutex_lock(&mc_lock_a);
	t0 = mc_us();
	pthread_create(&t, NULL, mc_locker, NULL);
	mc_sleep(40);
	pthread_mutex_unlock(&mc_lock_a);
	held = mc_us() - t0;
	pthread_join(t, NULL);
	printf("held %ld\n", held);
}

NOI void mc_write_phase(void)
{
	char buf[100];

	memset(buf, 'x', sizeof buf);
	for (int i = 0; i < 10; i++)
		mc_sink += write(mc_fd_a, buf, 100);
	for (int i = 0; i < 3; i++)
		mc_sink += write(mc_fd_a, buf, 7);
	for (int i = 0; i < 5; i++)
		mc_sink += write(mc_fd_b, buf, 50);
}

NOI void mc_inside_phase(void)
{
	printf("inside\n");
	mc_sleep(1000);
	for (int i = 0; i < 10; i++)
		mc_counted(i);
}

NOI void mc_sock_phase(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t al = sizeof a;
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), c, s;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) < 0 ||
	    listen(l, 1) < 0 ||
	    getsockname(l, (struct sockaddr *)&a, &al) < 0)
		return;
	c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof a) < 0)
		return;
	s = accept(l, NULL, NULL);
	mc_sink += write(c, "0123456789", 10);
	printf("sock %d %d\n", c, ntohs(a.sin_port));
	(void)s;
}

NOI int main(void)
{
	char line[64];

	setvbuf(stdout, NULL, _IOLBF, 0);
	sem_init(&mc_done, 0, 0);
	sem_init(&mc_release, 0, 0);
	while (fgets(line, sizeof line, stdin) != NULL) {
		line[strcspn(line, "\n")] = 0;
		if (strcmp(line, "calls") == 0)
			mc_calls_phase();
		else if (strcmp(line, "release") == 0)
			mc_release_phase();
		else if (strcmp(line, "sleep") == 0)
			mc_sleep_phase();
		else if (strcmp(line, "recurse") == 0)
			mc_recurse_phase();
		else if (strcmp(line, "locks") == 0)
			mc_locks_phase();
		else if (strcmp(line, "open") == 0) {
			mc_fd_a = open("/dev/null", O_WRONLY | O_CLOEXEC);
			mc_fd_b = open("/dev/null", O_WRONLY | O_CLOEXEC);
			printf("fd %d %d\n", mc_fd_a, mc_fd_b);
		} else if (strcmp(line, "write") == 0)
			mc_write_phase();
		else if (strcmp(line, "sock") == 0)
			mc_sock_phase();
		else if (strcmp(line, "inside") == 0)
			mc_inside_phase();
		else if (strcmp(line, "quit") == 0)
			break;
		printf("ok %s\n", line);
	}
	return 0;
}

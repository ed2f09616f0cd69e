/*
 * hint_target - known evidence for the hint sampler (tests/hint).
 *
 * usage: hint_target FIFO SECONDS
 *
 * Threads, each with one known behaviour:
 *   spinner  spins forever in hint_spin_inner, called through
 *            hint_spin_outer -> hint_spin_mid -> hint_spin_inner;
 *   locker   blocks in pthread_mutex_lock(&hint_lock), which main holds;
 *   reader   blocks in read() on FIFO (opened read-write, so the open
 *            itself does not wait for a writer);
 *   brief    spins in hint_brief for 0.5 s, then exits;
 *   sock     blocks in recv() on one end of a unix socket pair;
 *   heaplock blocks on a mutex in the heap (no symbol names it: only
 *            discovery can), which main holds too.
 * main holds hint_lock, prints one line
 *   "tids SPINNER LOCKER READER BRIEF SOCK HEAPLOCK fd FD heap ADDR"
 * once every thread runs, then sleeps SECONDS and exits 0.
 * hint_idle is called once before the threads start and never again.
 *
 * Built with -O2 (no frame pointers): the sampler must unwind with CFI.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

pthread_mutex_t hint_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile pid_t tid_spin, tid_lock, tid_read, tid_brief, tid_sock;
static volatile pid_t tid_heap;
static pthread_mutex_t *heap_lock;
static volatile unsigned long sink;
static int fifo_fd = -1, sock_fd[2] = { -1, -1 };

/* Never inlined, and never a tail call (work after each call), so that
 * every level is a frame of its own. */
__attribute__((noinline)) unsigned long hint_spin_inner(unsigned long n)
{
	unsigned long x = n;

	for (;;) {
		x = x * 6364136223846793005ul + 1442695040888963407ul;
		sink = x;
	}
	return x;
}

__attribute__((noinline)) unsigned long hint_spin_mid(unsigned long n)
{
	unsigned long r = hint_spin_inner(n + 1);

	sink = r;
	return r + 1;
}

__attribute__((noinline)) unsigned long hint_spin_outer(unsigned long n)
{
	unsigned long r = hint_spin_mid(n + 1);

	sink = r;
	return r + 1;
}

__attribute__((noinline)) unsigned long hint_idle(unsigned long n)
{
	sink = n * 3;
	return n + 2;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) unsigned long hint_brief(double secs)
{
	double end = now_s() + secs;
	unsigned long x = 1;

	while (now_s() < end)
		for (int i = 0; i < 100000; i++)
			sink = x = x * 6364136223846793005ul + 1;
	return x;
}

static void *spinner(void *arg)
{
	tid_spin = gettid();
	sink = hint_spin_outer((unsigned long)arg);
	return NULL;
}

static void *locker(void *arg)
{
	(void)arg;
	tid_lock = gettid();
	pthread_mutex_lock(&hint_lock);
	pthread_mutex_unlock(&hint_lock);
	return NULL;
}

static void *reader(void *arg)
{
	char c;

	(void)arg;
	tid_read = gettid();
	while (read(fifo_fd, &c, 1) > 0)
		;
	return NULL;
}

static void *brief(void *arg)
{
	(void)arg;
	tid_brief = gettid();
	sink = hint_brief(0.5);
	return NULL;
}

static void *sock(void *arg)
{
	char c;

	(void)arg;
	tid_sock = gettid();
	while (recv(sock_fd[0], &c, 1, 0) > 0)
		;
	return NULL;
}

static void *heaplock(void *arg)
{
	(void)arg;
	tid_heap = gettid();
	pthread_mutex_lock(heap_lock);
	pthread_mutex_unlock(heap_lock);
	return NULL;
}

int main(int argc, char **argv)
{
	void *(*fns[])(void *) = { spinner, locker, reader, brief, sock,
				   heaplock };
	struct timespec ts = { 0, 1000000 };
	pthread_t t;

	if (argc != 3) {
		fprintf(stderr, "usage: hint_target FIFO SECONDS\n");
		return 2;
	}
	fifo_fd = open(argv[1], O_RDWR);
	if (fifo_fd < 0) {
		perror(argv[1]);
		return 1;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sock_fd) < 0) {
		perror("socketpair");
		return 1;
	}
	sink = hint_idle(7);
	heap_lock = malloc(sizeof(*heap_lock));
	if (heap_lock == NULL || pthread_mutex_init(heap_lock, NULL) != 0)
		return 1;
	pthread_mutex_lock(&hint_lock);
	pthread_mutex_lock(heap_lock);
	for (int i = 0; i < 6; i++)
		if (pthread_create(&t, NULL, fns[i], NULL) != 0)
			return 1;
	while (!tid_spin || !tid_lock || !tid_read || !tid_brief || !tid_sock ||
	       !tid_heap)
		nanosleep(&ts, NULL);
	printf("tids %d %d %d %d %d %d fd %d heap %p\n", (int)tid_spin,
	       (int)tid_lock, (int)tid_read, (int)tid_brief, (int)tid_sock,
	       (int)tid_heap, fifo_fd, (void *)heap_lock);
	fflush(stdout);
	ts.tv_sec = atoi(argv[2]);
	ts.tv_nsec = 0;
	nanosleep(&ts, NULL);
	_exit(0);
}

/* pthread_exit.c - threads that end without returning.
 *
 * pe_exiter (thread start) -> pe_level1 -> pe_level2 -> pe_level3 ->
 * pe_level4 calls pthread_exit((void *)42) four frames below the start
 * function.  pe_sleeper pushes the cleanup handler pe_cleanup and blocks
 * in read() on a pipe nobody writes to; main cancels it there.  Both
 * exits unwind the thread's stack (glibc loads libgcc_s.so.1 for that
 * at run time).  main joins both and prints what the joins returned.
 *
 * Before blocking, pe_sleeper tells main through a second pipe that its
 * cleanup handler is in place, so the cancel can never land before it.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "targets.h"

int pe_never_written[2];  /* pe_sleeper blocks reading [0] */
int pe_started[2];        /* pe_sleeper writes one byte to [1] */

TGT_NOINLINE void pe_level4(int depth)
{
	printf("exiter: calling pthread_exit at depth %d\n", depth);
	fflush(stdout);
	pthread_exit((void *)(intptr_t)42);
}

TGT_NOINLINE void pe_level3(int depth) { pe_level4(depth + 1); }
TGT_NOINLINE void pe_level2(int depth) { pe_level3(depth + 1); }
TGT_NOINLINE void pe_level1(int depth) { pe_level2(depth + 1); }

TGT_NOINLINE void *pe_exiter(void *unused)
{
	(void)unused;
	pe_level1(1);
	return NULL;  /* never reached */
}

TGT_NOINLINE void pe_cleanup(void *what)
{
	printf("cleanup: %s\n", (const char *)what);
	fflush(stdout);
}

TGT_NOINLINE void *pe_sleeper(void *unused)
{
	char c = 's';

	(void)unused;
	pthread_cleanup_push(pe_cleanup, "sleeper cancelled in read");
	if (write(pe_started[1], &c, 1) != 1)
		abort();
	while (read(pe_never_written[0], &c, 1) != 0)
		;
	pthread_cleanup_pop(0);
	return NULL;  /* reached only if the pipe is closed: never */
}

TGT_NOINLINE pthread_t pe_start(void *(*fn)(void *))
{
	pthread_t t;

	if (pthread_create(&t, NULL, fn, NULL) != 0) {
		fprintf(stderr, "pthread_exit: pthread_create failed\n");
		exit(1);
	}
	return t;
}

TGT_NOINLINE void pe_report(const char *name, void *result)
{
	if (result == PTHREAD_CANCELED)
		printf("%s: cancelled\n", name);
	else
		printf("%s: returned %ld\n", name, (long)(intptr_t)result);
}

TGT_NOINLINE int main(void)
{
	pthread_t t;
	void *result;
	char c;

	if (pipe(pe_never_written) || pipe(pe_started)) {
		perror("pthread_exit: pipe");
		return 1;
	}
	t = pe_start(pe_exiter);
	pthread_join(t, &result);
	pe_report("exiter", result);

	t = pe_start(pe_sleeper);
	if (read(pe_started[0], &c, 1) != 1)
		return 1;
	pthread_cancel(t);
	pthread_join(t, &result);
	pe_report("sleeper", result);
	printf("pthread_exit: done\n");
	return 0;
}

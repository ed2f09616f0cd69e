/* inst_stale.c - catchup target with a stale return address: each round
 * st_outer calls st_leaf, which leaves its return address (into
 * st_outer) in stack memory that is dead once st_outer returns; then
 * main calls st_block, whose uninitialised buffer covers that memory and
 * which blocks in read(0).  The thread is then inside main and st_block
 * only, yet a stack word that looks like a return address into st_outer
 * sits in a live frame.  Prints "blocked" before each read; a line
 * starting with 'q' ends it ("done").
 *
 * `inst_stale spin`: st_outer_deep leaves the same kind of word in what
 * becomes the skipped red zone of st_work's trampoline, then main calls st_work in a loop (for at most 60 s), which
 * the test instruments with a CPU timer: the thread is then often
 * inside the rtlib's timer call (or the vDSO under it), below a
 * trampoline's frame. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__clang__)
#define NOI __attribute__((noinline))
#else
#define NOI __attribute__((noipa))
#endif

NOI void st_leaf(volatile char *pad)
{
	pad[1] = pad[0];
}

/* The pad puts st_leaf's return address a few hundred bytes below
 * main's frame: inside st_block's buffer, not in a slot st_block's
 * prologue overwrites. */
NOI void st_outer(void)
{
	volatile char pad[256];

	pad[0] = 1;
	st_leaf(pad);
	pad[2] = 2;
}

NOI int st_block(void)
{
	char buf[2048];
	ssize_t n;

	printf("blocked\n");
	fflush(stdout);
	n = read(0, buf + sizeof(buf) - 8, 8);
	return n > 0 && buf[sizeof(buf) - 8] != 'q';
}

/* Its st_leaf return address lands 100-136 bytes below the caller's
 * stack pointer: in the red zone a trampoline at st_work's entry skips
 * (it writes from 136 bytes down), deeper than time()'s vDSO frame. */
NOI void st_outer_deep(void)
{
	volatile char pad[88];

	pad[0] = 1;
	st_leaf(pad);
	pad[2] = 2;
}

NOI long st_work(long x)
{
	return x * 3 + 1;
}

static int spin(void)
{
	time_t end = time(NULL) + 60;
	long x = 1;

	printf("spinning\n");     /* first: printf's frames go deep */
	fflush(stdout);
	st_outer_deep();
	while (time(NULL) < end)
		for (int i = 0; i < 100000; i++)
			x = st_work(x);
	return x == 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "spin") == 0)
		return spin();
	do
		st_outer();
	while (st_block());
	printf("done\n");
	return 0;
}

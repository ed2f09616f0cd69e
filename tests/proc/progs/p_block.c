/* p_block: sits in read() on stdin and echoes each line; add3 is there
 * for inferior calls. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

__attribute__((noinline, used)) long add3(long a, long b, long c)
{
	__asm__ volatile("" ::: "memory");  /* keep it a real function */
	return a + b + c;
}

int main(void)
{
	char buf[256], out[300];
	ssize_t n;

	printf("ready %ld\n", add3(0, 0, 0));
	fflush(stdout);
	while ((n = read(0, buf, sizeof(buf) - 1)) > 0) {
		int k;

		buf[n] = '\0';
		k = snprintf(out, sizeof(out), "got: %s", buf);
		if (write(1, out, (size_t)k) < 0)
			return 1;
	}
	printf("eof\n");
	return 0;
}

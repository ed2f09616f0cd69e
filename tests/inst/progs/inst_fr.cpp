/* inst_fr.cpp - functions whose points are too small for a jmp at -O0
 * (`call; leave; ret`: two bytes before the ret), so hunch relocates
 * them whole (engine/eng_funcreloc.h), with known call counts, and
 * everything that unwinds through their frames:
 *
 *   fr_count      1000 calls (through fr_count_leaf, 1000)
 *   fr_pass1/2    10 calls each; fr_throw (11 calls) throws through both
 *                 (entries 10, exits 0: no frame returns normally)
 *   fr_bt_pass    1 call; backtrace() from fr_bt_leaf must see as many
 *                 frames as without hunch
 *   fr_exit_pass  1 call; pthread_exit(42) from fr_exit_leaf below it
 *   fr_block_pass 1 call; its thread is cancelled in read() below it
 *
 *   fr_asm_pass   2 calls (hand-written, CFI directives): pushes rbx and
 *                 rbp, calls fr_throw; its last pop before the ret
 *                 is a branch target (no room at the exit); the exception thrown through it must
 *                 restore main's rbx and rbp from the copy's CFI (main
 *                 at -O0 addresses its locals through rbp)
 *
 * With argument "spin": main spins inside fr_spin (through
 * fr_spin_loop, printing "spinning" once) until a line arrives on
 * stdin, then calls fr_spin once more and prints "spun".  (hunch
 * relocates fr_spin while main's frame is in its original body.)
 *
 * stdout is deterministic.
 */
#include <execinfo.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define NOI __attribute__((noinline, noipa))

static int pipefd[2];
static volatile int cleaned;

extern "C" {
NOI long fr_count_leaf(long x) { return x + 1; }
NOI long fr_count(long x) { return fr_count_leaf(x); }

NOI int fr_throw(int n)
{
	if (n > 0)
		throw n * 10;
	return n;
}
NOI int fr_pass2(int n) { return fr_throw(n); }
NOI int fr_pass1(int n) { return fr_pass2(n); }

/* long fr_asm_pass(long n): n ? fr_throw(n) (which throws for n > 0)
 * : 0, with rbx and rbp saved and restored, and the `pop %rbx` before
 * its ret a branch target (no room for a jmp at the exit).  The two
 * short je before the call grow by 8 bytes in the copy, more than the
 * 4 between the call's return address and the next CFA change: unwind
 * rows copied at their original offsets would be wrong there. */
long fr_asm_pass(long n);
__asm__(".text\n"
	".globl fr_asm_pass\n.type fr_asm_pass,@function\n"
	"fr_asm_pass:\n"
	"	.cfi_startproc\n"
	"	push %rbx\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	.cfi_offset %rbx, -16\n"
	"	push %rbp\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	.cfi_offset %rbp, -24\n"
	"	sub $8, %rsp\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	mov %rdi, %rbx\n"
	"	mov $0x5eed, %ebp\n"
	"	xor %eax, %eax\n"
	"	test %rdi, %rdi\n"
	"	je 2f\n"
	"	cmp $1000000, %rdi\n"
	"	je 2f\n"
	"	call fr_throw\n"
	"	.cfi_remember_state\n"
	"	add $8, %rsp\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	pop %rbp\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	.cfi_restore %rbp\n"
	"1:	pop %rbx\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	.cfi_restore %rbx\n"
	"	ret\n"
	"	.cfi_restore_state\n"
	"2:	add $8, %rsp\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	pop %rbp\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	.cfi_restore %rbp\n"
	"	jmp 1b\n"
	"	.cfi_endproc\n"
	".size fr_asm_pass,.-fr_asm_pass\n");

NOI int fr_bt_leaf(void)
{
	void *b[64];

	return backtrace(b, 64);
}
NOI int fr_bt_pass(void) { return fr_bt_leaf(); }

NOI void fr_exit_leaf(void) { pthread_exit((void *)42); }
NOI void fr_exit_pass(void) { fr_exit_leaf(); }
NOI void *fr_exiter(void *) { fr_exit_pass(); return NULL; }

NOI long fr_block_read(int fd)
{
	char c;

	return read(fd, &c, 1);
}
NOI long fr_block_pass(int fd) { return fr_block_read(fd); }
}

static volatile int spin_stop;

extern "C" {
NOI long fr_spin_loop(void)
{
	long n = 0;

	printf("spinning\n");
	fflush(stdout);
	while (!spin_stop)
		n++;
	return n > 0;
}
NOI long fr_spin(void) { return fr_spin_loop(); }
}

static void *stdin_reader(void *)
{
	char line[64];

	if (fgets(line, sizeof line, stdin) != NULL)
		spin_stop = 1;
	return NULL;
}

static int spin_main(void)
{
	pthread_t t;

	pthread_create(&t, NULL, stdin_reader, NULL);
	fr_spin();
	pthread_join(t, NULL);
	fr_spin();
	printf("spun\n");
	return 0;
}

static void on_cancel(void *) { cleaned = 1; }

/* Not fr_: its cleanup push is a C++ object with a destructor (an
 * LSDA), which relocation refuses. */
static void *sleeper_thread(void *)
{
	pthread_cleanup_push(on_cancel, NULL);
	fr_block_pass(pipefd[0]);
	pthread_cleanup_pop(0);
	return NULL;
}

int main(int argc, char **argv)
{
	long sum = 0;
	int caught = 0;
	pthread_t t;
	void *ret = NULL;

	if (argc > 1 && argv[1][0] == 's')
		return spin_main();
	for (long i = 0; i < 1000; i++)
		sum += fr_count(i);
	printf("sum %ld\n", sum);
	for (int i = 0; i < 10; i++) {
		try {
			fr_pass1(i + 1);
		} catch (int e) {
			caught += e;
		}
	}
	printf("caught %d\n", caught);
	{
		volatile long before = 7, after = 0;

		after = fr_asm_pass(0);
		try {
			after += fr_asm_pass(5);
		} catch (int e) {
			after += e;
		}
		printf("asm: %ld %ld\n", (long)before, (long)after);
	}
	printf("backtrace depth %d\n", fr_bt_pass());
	pthread_create(&t, NULL, fr_exiter, NULL);
	pthread_join(t, &ret);
	printf("exit value %ld\n", (long)ret);
	if (pipe(pipefd) != 0)
		return 1;
	pthread_create(&t, NULL, sleeper_thread, NULL);
	usleep(100000);
	pthread_cancel(t);
	pthread_join(t, &ret);
	printf("cancelled %d cleanup %d\n", ret == PTHREAD_CANCELED, cleaned);
	fflush(stdout);
	return 0;
}

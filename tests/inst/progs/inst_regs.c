/* inst_regs.c - does instrumentation preserve every register and flag a
 * program can see?  regs_test (assembly) loads all 15 GPRs but %rsp, all
 * of xmm0-15 and CF/ZF/SF/OF with known values, calls rz_leaf (which
 * changes only %rax and not the flags, and touches its red zone), and
 * counts every value that changed.  Prints "bad N" after 100,000 calls
 * (N must be 0 with or without hunch); argv[1] changes the count.
 * It calls clock_gettime exactly once itself, at the end. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

long regs_test(void);
long rz_leaf(long);
long regs_bad;

__asm__(
	".text\n"
	".globl rz_leaf\n.type rz_leaf,@function\n"
	"rz_leaf:\n"
	"	mov %rdi,-8(%rsp)\n"        /* 5 bytes: the entry patch */
	"	mov -8(%rsp),%rax\n"
	"	lea 1(%rax),%rax\n"         /* 4 bytes + ret: the exit patch */
	"	ret\n"
	".size rz_leaf,.-rz_leaf\n"
	".globl regs_test\n.type regs_test,@function\n"
	"regs_test:\n"
	"	push %rbx\n push %rbp\n push %r12\n push %r13\n push %r14\n"
	"	push %r15\n sub $8,%rsp\n"
	"	.irp n,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n"
	"	mov $(0x100+\\n),%eax\n movq %rax,%xmm\\n\n"
	"	.endr\n"
	"	mov $0x1111,%ebx\n mov $0x2222,%ecx\n mov $0x3333,%edx\n"
	"	mov $0x4444,%esi\n mov $0x5555,%edi\n mov $0x6666,%ebp\n"
	"	mov $0x8888,%r8d\n mov $0x9999,%r9d\n mov $0xaaaa,%r10d\n"
	"	mov $0xbbbb,%r11d\n mov $0xcccc,%r12d\n mov $0xdddd,%r13d\n"
	"	mov $0xeeee,%r14d\n mov $0xffff,%r15d\n"
	"	mov $0x7fffffff,%eax\n add $1,%eax\n"   /* OF=1 SF=1 */
	"	stc\n"                                 /* CF=1, ZF=0 */
	"	call rz_leaf\n"
	"	pushfq\n pop %rax\n and $0x8c1,%eax\n"  /* OF SF ZF CF */
	"	cmp $0x881,%eax\n je 1f\n incq regs_bad(%rip)\n1:\n"
	"	cmp $0x1111,%rbx\n je 2f\n incq regs_bad(%rip)\n2:\n"
	"	cmp $0x2222,%rcx\n je 2f\n incq regs_bad(%rip)\n2:\n"
	"	cmp $0x3333,%rdx\n je 2f\n incq regs_bad(%rip)\n2:\n"
	"	cmp $0x4444,%rsi\n je 2f\n incq regs_bad(%rip)\n2:\n"
	"	cmp $0x5555,%rdi\n je 2f\n incq regs_bad(%rip)\n2:\n"
	"	cmp $0x6666,%rbp\n je 2f\n incq regs_bad(%rip)\n2:\n"
	"	cmp $0x8888,%r8\n je 2f\n incq regs_bad(%rip)\n2:\n"
	"	cmp $0x9999,%r9\n je 2f\n incq regs_bad(%rip)\n2:\n"
	"	cmp $0xaaaa,%r10\n je 2f\n incq regs_bad(%rip)\n2:\n"
	"	cmp $0xbbbb,%r11\n je 2f\n incq regs_bad(%rip)\n2:\n"
	"	cmp $0xcccc,%r12\n je 2f\n incq regs_bad(%rip)\n2:\n"
	"	cmp $0xdddd,%r13\n je 2f\n incq regs_bad(%rip)\n2:\n"
	"	cmp $0xeeee,%r14\n je 2f\n incq regs_bad(%rip)\n2:\n"
	"	cmp $0xffff,%r15\n je 2f\n incq regs_bad(%rip)\n2:\n"
	"	.irp n,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n"
	"	movq %xmm\\n,%rax\n cmp $(0x100+\\n),%rax\n je 3f\n"
	"	incq regs_bad(%rip)\n3:\n"
	"	.endr\n"
	"	add $8,%rsp\n pop %r15\n pop %r14\n pop %r13\n pop %r12\n"
	"	pop %rbp\n pop %rbx\n"
	"	mov regs_bad(%rip),%rax\n"
	"	ret\n"
	".size regs_test,.-regs_test\n");

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;

	struct timespec ts;

	for (long i = 0; i < n; i++)
		regs_test();
	clock_gettime(CLOCK_REALTIME, &ts);   /* its one own call */
	printf("bad %ld\n", regs_bad);
	return 0;
}

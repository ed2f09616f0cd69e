# spin32.s - a 32-bit x86 program (no libc, no dynamic linker): spins
# for some 20-60 s (20 x 2^32 loop turns) and exits 0.  hunch cannot
# instrument it; e2e_exec_static follows an exec into it with the
# kernel's measures only.
	.globl _start
	.text
_start:
	mov $20, %edx
1:	xor %ecx, %ecx
2:	dec %ecx
	jnz 2b
	dec %edx
	jnz 1b
	mov $1, %eax
	xor %ebx, %ebx
	int $0x80

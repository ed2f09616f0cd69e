/*
 * pfix.S - hand-made functions with known points, patch areas and
 * verdicts, for test_parse_fixtures.c.  Linked as a non-PIE executable
 * (the absolute jump tables need link-time addresses); never run.
 * Offsets in the comments are from the function's start: the test
 * checks exactly these.
 */
	.text

	.globl main
	.type main, @function
main:					/* 7 bytes: mov $0,%eax; ret... */
	xorl	%eax, %eax		/* +0 2 */
	movl	%eax, %eax		/* +2 2 */
	nop				/* +4 1 */
	nop				/* +5 1 */
	ret				/* +6 1 */
	.size main, .-main

/* Too small: 3 bytes. */
	.globl pf_tiny
	.type pf_tiny, @function
pf_tiny:
	xorl	%eax, %eax		/* +0 2 */
	ret				/* +2 1 */
	.size pf_tiny, .-pf_tiny

/* A loop back to +2: the entry's 5 bytes would cover that target. */
	.globl pf_loop2
	.type pf_loop2, @function
pf_loop2:
	xorl	%eax, %eax		/* +0 2 */
1:	addl	$1, %eax		/* +2 3, target */
	cmpl	$10, %eax		/* +5 3 */
	jne	1b			/* +8 2 */
	ret				/* +10 1 */
	.size pf_loop2, .-pf_loop2

/* gcc's PIC switch: lea/movslq/add/notrack jmp, bound from cmp/ja. */
	.globl pf_pic_switch
	.type pf_pic_switch, @function
pf_pic_switch:
	cmpl	$3, %edi		/* +0 3 */
	ja	.Lpdef			/* +3 2 */
	movl	%edi, %edi		/* +5 2 */
	leaq	.Lptbl(%rip), %rdx	/* +7 7 */
	movslq	(%rdx,%rdi,4), %rax	/* +14 4 */
	addq	%rdx, %rax		/* +18 3 */
	notrack jmp *%rax		/* +21 3 */
.Lp0:	movl	$10, %eax		/* +24 5 */
	ret				/* +29 1 */
.Lp1:	movl	$11, %eax		/* +30 */
	ret
.Lp2:	movl	$12, %eax		/* +36 */
	ret
.Lp3:	movl	$13, %eax		/* +42 */
	ret
.Lpdef:	movl	$-1, %eax		/* +48 */
	ret				/* +53 */
	.size pf_pic_switch, .-pf_pic_switch
	.section .rodata
	.p2align 2
.Lptbl:	.long .Lp0-.Lptbl, .Lp1-.Lptbl, .Lp2-.Lptbl, .Lp3-.Lptbl
	.text

/* gcc -O0's PIC switch: the index spilled, scaled by lea, cltq. */
	.globl pf_o0_switch
	.type pf_o0_switch, @function
pf_o0_switch:
	pushq	%rbp			/* +0 */
	movq	%rsp, %rbp		/* +1 */
	movl	%edi, -20(%rbp)		/* +4 */
	cmpl	$2, -20(%rbp)		/* +7 */
	ja	.Lodef
	movl	-20(%rbp), %eax
	leaq	0(,%rax,4), %rdx
	leaq	.Lotbl(%rip), %rax
	movl	(%rdx,%rax), %eax
	cltq
	leaq	.Lotbl(%rip), %rdx
	addq	%rdx, %rax
	jmp	*%rax
.Lo0:	movl	$1, %eax
	jmp	.Loend
.Lo1:	movl	$2, %eax
	jmp	.Loend
.Lo2:	movl	$3, %eax
	jmp	.Loend
.Lodef:	movl	$0, %eax
.Loend:	popq	%rbp
	ret
	.size pf_o0_switch, .-pf_o0_switch
	.section .rodata
	.p2align 2
.Lotbl:	.long .Lo0-.Lotbl, .Lo1-.Lotbl, .Lo2-.Lotbl
	.text

/* Non-PIE absolute table in .rodata: jmp *tbl(,%rdi,8). */
	.globl pf_abs_switch
	.type pf_abs_switch, @function
pf_abs_switch:
	cmpl	$2, %edi		/* +0 3 */
	ja	.Ladef			/* +3 2 */
	movl	%edi, %edi		/* +5 2 */
	jmp	*.Latbl(,%rdi,8)	/* +7 7 */
.La0:	movl	$20, %eax		/* +14 */
	ret
.La1:	movl	$21, %eax		/* +20 */
	ret
.La2:	movl	$22, %eax		/* +26 */
	ret
.Ladef:	movl	$-1, %eax		/* +32 */
	ret
	.size pf_abs_switch, .-pf_abs_switch
	.section .rodata
	.p2align 3
.Latbl:	.quad .La0, .La1, .La2
	.text

/* Data in code that is a known table: an absolute table inside .text,
 * right after its jump (skipped as data). */
	.globl pf_table_in_text
	.type pf_table_in_text, @function
pf_table_in_text:
	cmpl	$1, %edi		/* +0 3 */
	ja	.Ltdef			/* +3 2 */
	movl	%edi, %edi		/* +5 2 */
	jmp	*.Lttbl(,%rdi,8)	/* +7 7 */
	.byte	0xcc, 0xcc		/* +14 padding */
.Lttbl:	.quad .Lt0, .Lt1		/* +16 16 bytes of data */
.Lt0:	movl	$30, %eax		/* +32 */
	ret
.Lt1:	movl	$31, %eax		/* +38 */
	ret
.Ltdef:	movl	$-1, %eax		/* +44 */
	ret
	.size pf_table_in_text, .-pf_table_in_text

/* Data in code that is not a table: undecodable bytes at +7. */
	.globl pf_data
	.type pf_data, @function
pf_data:
	movl	$1, %eax		/* +0 5 */
	jmp	1f			/* +5 2 */
	.byte	0x06, 0x07, 0x27	/* +7: push %es etc., invalid */
1:	ret				/* +10 */
	.size pf_data, .-pf_data

/* Data that decodes: the bytes swallow the ret that a jump targets. */
	.globl pf_data_hidden
	.type pf_data_hidden, @function
pf_data_hidden:
	movl	$1, %eax		/* +0 5 */
	jmp	1f			/* +5 2 */
	.byte	0x48, 0x8b, 0x05	/* +7: mov disp32(%rip),%rax ... */
	.byte	0x11, 0x22, 0x33	/* ... whose disp eats the ret */
1:	ret				/* +13, target */
	.size pf_data_hidden, .-pf_data_hidden

/* Tail calls: direct, through the GOT, through a loaded pointer,
 * conditional. */
	.globl pf_tail
	.type pf_tail, @function
pf_tail:
	movl	%edi, %eax		/* +0 2 */
	addl	$1, %edi		/* +2 3 */
	jmp	pf_loop2		/* +5 5 */
	.size pf_tail, .-pf_tail

	.globl pf_tail_got
	.type pf_tail_got, @function
pf_tail_got:
	addl	$1, %edi		/* +0 3 */
	jmp	*pf_ptr(%rip)		/* +3 6 */
	.size pf_tail_got, .-pf_tail_got

	.globl pf_tail_ptr
	.type pf_tail_ptr, @function
pf_tail_ptr:
	movq	8(%rdi), %rax		/* +0 4 */
	addq	$16, %rdi		/* +4 4 */
	jmp	*%rax			/* +8 2 */
	.size pf_tail_ptr, .-pf_tail_ptr

	.globl pf_tail_cond
	.type pf_tail_cond, @function
pf_tail_cond:
	testl	%edi, %edi		/* +0 2 */
	movl	$7, %eax		/* +2 5 */
	jne	pf_tail			/* +7 2 (gas relaxes it to rel8) */
	ret				/* +9 */
	.size pf_tail_cond, .-pf_tail_cond

/* ret reached by a jump, followed by padding inside the function. */
	.globl pf_retpad
	.type pf_retpad, @function
pf_retpad:
	xorl	%eax, %eax		/* +0 2 */
	testl	%edi, %edi		/* +2 2 */
	je	1f			/* +4 2 */
	movl	$5, %eax		/* +6 5 */
1:	ret				/* +11 1, target */
	int3				/* +12 */
	int3
	nop
	nop				/* +15 */
	.size pf_retpad, .-pf_retpad

/* endbr64 first: the entry patch starts after it. */
	.globl pf_endbr
	.type pf_endbr, @function
pf_endbr:
	endbr64				/* +0 4 */
	pushq	%rbx			/* +4 1 */
	movl	%edi, %ebx		/* +5 2 */
	call	pf_tiny			/* +7 5 */
	addl	%ebx, %eax		/* +12 2 */
	popq	%rbx			/* +14 1 */
	ret				/* +15 1 */
	.size pf_endbr, .-pf_endbr

/* A call site whose preceding instruction is a branch target. */
	.globl pf_call_target
	.type pf_call_target, @function
pf_call_target:
	subq	$8, %rsp		/* +0 4 */
	testl	%edi, %edi		/* +4 2 */
	je	1f			/* +6 2 */
	nop				/* +8 1 */
1:	movl	%edi, %eax		/* +9 2, target */
	call	*%rsi			/* +11 2 */
	call	pf_tiny			/* +13 5 */
	addq	$8, %rsp		/* +18 4 */
	ret				/* +22 1 */
	.size pf_call_target, .-pf_call_target

/* A table with no bound check: its targets are unknown. */
	.globl pf_unresolved
	.type pf_unresolved, @function
pf_unresolved:
	leaq	.Lutbl(%rip), %rdx	/* +0 7 */
	movslq	(%rdx,%rdi,4), %rax	/* +7 4 */
	addq	%rdx, %rax		/* +11 3 */
	jmp	*%rax			/* +14 2 */
.Lu0:	xorl	%eax, %eax		/* +16 2 */
	ret				/* +18 1 */
.Lu1:	movl	$1, %eax		/* +19 5 */
	ret				/* +24 1 */
	.size pf_unresolved, .-pf_unresolved
	.section .rodata
	.p2align 2
.Lutbl:	.long .Lu0-.Lutbl, .Lu1-.Lutbl
	.text

/* A direct branch into the middle of an instruction. */
	.globl pf_misaligned
	.type pf_misaligned, @function
pf_misaligned:
	movl	$0x90909090, %eax	/* +0 5 */
	jmp	pf_misaligned+2		/* +5 2 */
	.size pf_misaligned, .-pf_misaligned

/* A jump from one function into the middle of another (glibc's
 * assembly shares code this way): the victim's entry must know it. */
	.globl pf_victim
	.type pf_victim, @function
pf_victim:
	xorl	%eax, %eax		/* +0 2 */
	addl	$1, %eax		/* +2 3, target from pf_intruder */
	movl	$3, %ecx		/* +5 5 */
	ret				/* +10 */
	.size pf_victim, .-pf_victim

	.globl pf_intruder
	.type pf_intruder, @function
pf_intruder:
	movl	$7, %eax		/* +0 5 */
	jmp	pf_victim+2		/* +5 2 (gas makes it short) */
	.size pf_intruder, .-pf_intruder

/* A computed goto in non-PIC code: the label's address is an immediate,
 * so the jump through a register has targets inside. */
	.globl pf_cgoto
	.type pf_cgoto, @function
pf_cgoto:
	movl	$.Lcg1, %eax		/* +0 5 */
	jmp	*%rax			/* +5 2 */
	xorl	%eax, %eax		/* +7 2 */
	ret				/* +9 */
.Lcg1:	movl	$1, %eax		/* +10 5, taken */
	ret				/* +15 */
	.size pf_cgoto, .-pf_cgoto

/* gcc's hot/cold splitting: pf_hot's table has entries in pf_hot.cold,
 * which jumps back into the middle of pf_hot.  Each part must know the
 * other's targets; jumps between them are not exits. */
	.globl pf_hot
	.type pf_hot, @function
pf_hot:
	cmpl	$2, %edi		/* +0 3 */
	ja	pf_hot.cold		/* +3 6 (other section: rel32) */
	movl	%edi, %edi		/* +9 2 */
	leaq	.Lhtbl(%rip), %rdx	/* +11 7 */
	movslq	(%rdx,%rdi,4), %rax	/* +18 4 */
	addq	%rdx, %rax		/* +22 3 */
	jmp	*%rax			/* +25 2 */
.Lh0:	movl	$1, %eax		/* +27 5 */
.Lhback: ret				/* +32 1, target from the cold part */
	.size pf_hot, .-pf_hot
	.section .rodata
	.p2align 2
.Lhtbl:	.long .Lh0-.Lhtbl, .Lh1-.Lhtbl, .Lh2-.Lhtbl
	.section .text.unlikely,"ax",@progbits
	.type pf_hot.cold, @function
pf_hot.cold:
.Lh1:	xorl	%eax, %eax		/* +0 2, table entry */
.Lh2:	addl	$5, %eax		/* +2 3, table entry */
	jmp	.Lhback			/* +5 5, back into pf_hot */
	.size pf_hot.cold, .-pf_hot.cold
	.text

/* Too small, but alignment padding that no symbol covers follows its
 * ret: the entry's jump borrows 2 bytes of it (x86_parse_ctx.tail_max). */
	.globl pf_tinypad
	.type pf_tinypad, @function
pf_tinypad:
	xorl	%eax, %eax		/* +0 2 */
	ret				/* +2 1 */
	.size pf_tinypad, .-pf_tinypad
	.fill	13, 1, 0xcc		/* +3..+15 int3 (no .p2align: it would
					   move the whole section) */
/* The same shape with no padding before the next function: refused. */
	.globl pf_tinynext
	.type pf_tinynext, @function
pf_tinynext:
	xorl	%eax, %eax		/* +0 2 */
	ret				/* +2 1 */
	.size pf_tinynext, .-pf_tinynext
	.globl pf_after
	.type pf_after, @function
pf_after:
	movl	$7, %eax		/* +0 5 */
	ret				/* +5 1 */
	.size pf_after, .-pf_after

	.data
	.globl pf_ptr
pf_ptr:	.quad pf_tiny
	.section .note.GNU-stack,"",@progbits

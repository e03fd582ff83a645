/*
 * cpu.S - the two pieces of the loader that must be assembly: the final jump
 * into the kernel (new CR3, GDT, IDT alias, stack) and the early-exception
 * stubs whose addresses the IDT holds until the kernel installs its own.
 * System V ABI (these are called from the loader's own C, not firmware).
 */
	.text

/*
 * void handoff_jump(uint64_t cr3, const void *gdtr, const void *idtr,
 *                   uint64_t stack_top, uint64_t entry, uint64_t info);
 *                   rdi             rsi               rdx
 *                   rcx                  r8              r9
 * Runs after ExitBootServices from the loader's code, which the new tables
 * map read-only and executable at its identity address, so execution
 * continues across the CR3 load.
 */
	.globl handoff_jump
	.type handoff_jump, @function
handoff_jump:
	cli
	mov	%rdx, %r11
	/* CR0.WP: read-only pages bind ring 0 too.  EFER.NXE was set by the
	 * caller when the CPU has NX; without it the tables carry no NX bit */
	mov	%cr0, %rax
	or	$0x10000, %rax
	mov	%rax, %cr0
	mov	%rdi, %cr3
	lgdt	(%rsi)
	lidt	(%r11)
	mov	$0x18, %eax
	mov	%eax, %ds
	mov	%eax, %es
	mov	%eax, %ss
	mov	%eax, %fs
	mov	%eax, %gs
	mov	%rcx, %rsp
	/* the TSS: its interrupt stack table serves #DF, NMI, #PF, #MC
	 * (LTR marks its descriptor busy: the GDT is writable) */
	mov	$0x20, %eax
	ltr	%ax
	/* reload CS with the new GDT's 64-bit code selector */
	pushq	$0x10
	leaq	1f(%rip), %rax
	pushq	%rax
	lretq
1:
	pushq	$0			/* as if called: RSP = 8 mod 16 */
	pushq	%r8			/* the entry, for the RET below */
	mov	%r9, %rdi		/* our protocol: RDI = info */
	mov	%r9, %rsi		/* Linux protocol: RSI = boot_params */
	xor	%eax, %eax
	xor	%ebx, %ebx
	xor	%ecx, %ecx
	xor	%edx, %edx
	xor	%ebp, %ebp
	xor	%r8d, %r8d
	xor	%r9d, %r9d
	xor	%r10d, %r10d
	xor	%r11d, %r11d
	xor	%r12d, %r12d
	xor	%r13d, %r13d
	xor	%r14d, %r14d
	xor	%r15d, %r15d
	cld
	ret				/* to the entry: every other GPR zero */
	.size handoff_jump, . - handoff_jump

/*
 * void cpu_entry_state(void): the CPU state include/PROTOCOL.md ("Entry
 * state") promises a kernel of this loader's protocol, made just before
 * handoff_jump (after ExitBootServices; nothing between uses the FPU):
 *   CR0  MP and NE set, EM, TS and AM clear (x87 and SSE instructions run,
 *        their errors are exceptions); handoff_jump adds WP
 *   CR4  exactly PAE, OSFXSR, OSXMMEXCPT, and MCE if firmware had set it
 *   x87  as after FNINIT; MXCSR 0x1F80 (every exception masked, round to
 *        nearest); XMM0-XMM15 zero
 */
	.globl cpu_entry_state
	.type cpu_entry_state, @function
cpu_entry_state:
	mov	%cr0, %rax
	or	$0x22, %rax		/* MP (1), NE (5) */
	and	$~0x4000c, %rax		/* EM (2), TS (3), AM (18) */
	mov	%rax, %cr0
	mov	%cr4, %rax
	and	$0x40, %rax		/* MCE (6) as firmware left it */
	or	$0x620, %rax		/* PAE (5), OSFXSR (9), OSXMMEXCPT (10) */
	mov	%rax, %cr4
	fninit
	pushq	$0x1f80
	ldmxcsr	(%rsp)
	add	$8, %rsp
	pxor	%xmm0, %xmm0
	pxor	%xmm1, %xmm1
	pxor	%xmm2, %xmm2
	pxor	%xmm3, %xmm3
	pxor	%xmm4, %xmm4
	pxor	%xmm5, %xmm5
	pxor	%xmm6, %xmm6
	pxor	%xmm7, %xmm7
	pxor	%xmm8, %xmm8
	pxor	%xmm9, %xmm9
	pxor	%xmm10, %xmm10
	pxor	%xmm11, %xmm11
	pxor	%xmm12, %xmm12
	pxor	%xmm13, %xmm13
	pxor	%xmm14, %xmm14
	pxor	%xmm15, %xmm15
	ret
	.size cpu_entry_state, . - cpu_entry_state

/*
 * Early-exception stubs.  Each pushes a zero where the CPU pushes no error
 * code, then its vector, so exc_common always sees the same frame:
 *   [rsp] r15 … rax, vector, error, rip, cs, rflags, rsp, ss
 */
.macro EXC_NOERR vec
exc_stub_\vec:
	pushq	$0
	pushq	$\vec
	jmp	exc_common
.endm
.macro EXC_ERR vec
exc_stub_\vec:
	pushq	$\vec
	jmp	exc_common
.endm

	EXC_NOERR 0
	EXC_NOERR 1
	EXC_NOERR 2
	EXC_NOERR 3
	EXC_NOERR 4
	EXC_NOERR 5
	EXC_NOERR 6
	EXC_NOERR 7
	EXC_ERR   8
	EXC_NOERR 9
	EXC_ERR   10
	EXC_ERR   11
	EXC_ERR   12
	EXC_ERR   13
	EXC_ERR   14
	EXC_NOERR 15
	EXC_NOERR 16
	EXC_ERR   17
	EXC_NOERR 18
	EXC_NOERR 19
	EXC_NOERR 20
	EXC_ERR   21
	EXC_NOERR 22
	EXC_NOERR 23
	EXC_NOERR 24
	EXC_NOERR 25
	EXC_NOERR 26
	EXC_NOERR 27
	EXC_NOERR 28
	EXC_ERR   29
	EXC_ERR   30
	EXC_NOERR 31
	/* 32..255: interrupts are off, so only a stray INT n lands here */
	EXC_NOERR 255

exc_common:
	pushq	%rax
	pushq	%rbx
	pushq	%rcx
	pushq	%rdx
	pushq	%rsi
	pushq	%rdi
	pushq	%rbp
	pushq	%r8
	pushq	%r9
	pushq	%r10
	pushq	%r11
	pushq	%r12
	pushq	%r13
	pushq	%r14
	pushq	%r15
	mov	%rsp, %rdi
	and	$-16, %rsp
	cld
	call	exc_report		/* does not return */
2:	cli
	hlt
	jmp	2b

	.section .data.rel.ro, "aw"
	.globl exc_stub_table
	.balign 8
exc_stub_table:
	.irp v, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
	.quad	exc_stub_\v
	.endr
	.quad	exc_stub_255

	.section .note.GNU-stack, "", @progbits

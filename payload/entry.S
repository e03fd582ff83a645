/*
 * payload/entry.S - the test kernel's entry point, its crash site, and the
 * temporary exception handlers used by the IDT write check in main.c.
 * Position independent throughout: only RIP-relative references, so the
 * same code serves the PIE, identity ET_EXEC and higher-half variants.
 */

	.section .entry, "ax", @progbits
	.balign 16

/*
 * _start: RDI = struct kaslr_boot_info * (identity-mapped), RSP = the
 * loader's stack, 16-byte aligned minus 8.  Keeps the OR of the other
 * GPRs in pl_entry_gprs (cpustate.c checks it is zero).  Calls
 * payload_main(info, entry_rsp), which never returns.
 */
	.globl _start
	.type _start, @function
_start:
	/* every GPR but RDI, RSI and RSP must be zero (PROTOCOL.md) */
	orq %rbx, %rax
	orq %rcx, %rax
	orq %rdx, %rax
	orq %rbp, %rax
	orq %r8, %rax
	orq %r9, %rax
	orq %r10, %rax
	orq %r11, %rax
	orq %r12, %rax
	orq %r13, %rax
	orq %r14, %rax
	orq %r15, %rax
	movq %rax, pl_entry_gprs(%rip)
	movq %rsp, %rsi
	andq $-16, %rsp
	call payload_main
1:	cli
	hlt
	jmp 1b
	.size _start, . - _start

	.text

/*
 * payload.crash=ud2 lands here.  The loader's early-exception stubs must
 * report vector 6 with a link-time RIP equal to this symbol's nm value.
 */
	.globl payload_crash_site
	.type payload_crash_site, @function
payload_crash_site:
	ud2
	jmp payload_crash_site
	.size payload_crash_site, . - payload_crash_site

/*
 * uint64_t pl_idt_write_probe(uint64_t addr): stores the byte already at
 * addr back to addr.  Returns 0 if the store completed, 1 if it faulted and
 * pl_pf_entry resumed at pl_idt_write_recover.  Writing the same value keeps
 * the loader's IDT intact even when the alias is (wrongly) writable.
 */
	.globl pl_idt_write_probe
	.type pl_idt_write_probe, @function
pl_idt_write_probe:
	movb (%rdi), %al
	.globl pl_idt_write_site
pl_idt_write_site:
	movb %al, (%rdi)
	xorl %eax, %eax
	ret
pl_idt_write_recover:
	movl $1, %eax
	ret
	.size pl_idt_write_probe, . - pl_idt_write_probe

/*
 * #PF handler of the payload's temporary IDT.  Records CR2 and the error
 * code.  A fault at pl_idt_write_site is expected: count it and resume at
 * pl_idt_write_recover.  Any other #PF: put the loader's IDT back and
 * return to the faulting instruction, so it faults again and the loader's
 * stubs report it with the true RIP and CR2.
 *
 *   stack on entry:  0 error code, 8 RIP, 16 CS, 24 RFLAGS, 32 RSP, 40 SS
 */
	.globl pl_pf_entry
	.type pl_pf_entry, @function
pl_pf_entry:
	pushq %rax
	movq %cr2, %rax
	movq %rax, pl_pf_cr2(%rip)
	movq 8(%rsp), %rax
	movq %rax, pl_pf_err(%rip)
	leaq pl_idt_write_site(%rip), %rax
	cmpq %rax, 16(%rsp)
	jne 1f
	incq pl_pf_count(%rip)
	leaq pl_idt_write_recover(%rip), %rax
	movq %rax, 16(%rsp)
	popq %rax
	addq $8, %rsp
	iretq
1:	lidt pl_loader_idtr(%rip)
	popq %rax
	addq $8, %rsp
	iretq
	.size pl_pf_entry, . - pl_pf_entry

/*
 * void pl_fpu_state(struct cs_fpu *out) (payload/cpustate.c): the x87 and
 * SSE state as the loader left it - XMM0-15 ORed together (+0), FCW (+16),
 * FSW (+18), abridged tag word (+20) and MXCSR (+24) from FXSAVE - then one
 * SSE2 addition, 1.5 + 2.25 (+32), which faults unless CR4.OSFXSR is set
 * and CR0.EM/TS are clear.  Clobbers XMM0-2 (the payload's C uses none).
 */
	.globl pl_fpu_state
	.type pl_fpu_state, @function
pl_fpu_state:
	por	%xmm1, %xmm0
	por	%xmm2, %xmm0
	por	%xmm3, %xmm0
	por	%xmm4, %xmm0
	por	%xmm5, %xmm0
	por	%xmm6, %xmm0
	por	%xmm7, %xmm0
	por	%xmm8, %xmm0
	por	%xmm9, %xmm0
	por	%xmm10, %xmm0
	por	%xmm11, %xmm0
	por	%xmm12, %xmm0
	por	%xmm13, %xmm0
	por	%xmm14, %xmm0
	por	%xmm15, %xmm0
	movdqu	%xmm0, 0(%rdi)
	/* FXSAVE: 512 bytes, 16-byte aligned */
	push	%rbp
	mov	%rsp, %rbp
	sub	$512, %rsp
	and	$-16, %rsp
	fxsave	(%rsp)
	movw	0(%rsp), %ax
	movw	%ax, 16(%rdi)
	movw	2(%rsp), %ax
	movw	%ax, 18(%rdi)
	movb	4(%rsp), %al
	movb	%al, 20(%rdi)
	movl	24(%rsp), %eax
	movl	%eax, 24(%rdi)
	mov	%rbp, %rsp
	pop	%rbp
	movabsq	$0x3ff8000000000000, %rax
	movq	%rax, %xmm1
	movabsq	$0x4002000000000000, %rax
	movq	%rax, %xmm2
	addsd	%xmm2, %xmm1
	movq	%xmm1, 32(%rdi)
	ret
	.size pl_fpu_state, . - pl_fpu_state

/*
 * Every other exception vector of the temporary IDT: restore the loader's
 * IDT and raise #UD here, so the loader reports it at this symbol.
 */
	.globl payload_unexpected_exception
	.type payload_unexpected_exception, @function
payload_unexpected_exception:
	lidt pl_loader_idtr(%rip)
	ud2
	jmp payload_unexpected_exception
	.size payload_unexpected_exception, . - payload_unexpected_exception

	.bss
	.balign 8
	.globl pl_entry_gprs
pl_entry_gprs:
	.quad 0

	.section .note.GNU-stack, "", @progbits

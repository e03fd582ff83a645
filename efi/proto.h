/*
 * proto.h - a boot protocol: how a kind of kernel is recognised, laid out,
 * and handed what it expects at entry.  The generic steps (read, place,
 * page tables, ExitBootServices, jump) call a protocol only through this
 * interface and never ask which one it is.
 *
 *   efi/native.c  this loader's own protocol (include/kaslr_boot.h)
 *   efi/linux.c   Linux's x86-64 boot protocol (boot_params, RSI)
 *
 * Order of calls in one boot:
 *
 *   probe -> load -> [place_kernel] -> prepare -> [page tables, bli]
 *         -> finish (once per memory map fetched for ExitBootServices,
 *            no firmware calls) -> [ExitBootServices] -> after_exit
 *         -> [jump with *ret_arg]
 *   release undoes prepare when the boot fails before the jump.
 */
#ifndef EFI_PROTO_H
#define EFI_PROTO_H

#include "loader.h"
#include "ebs.h"

/* What the generic hand-off built, for the protocol to pass on. */
struct handoff_env {
	uint64_t cr3;           /* page tables the kernel starts with */
	uint64_t stack_top;     /* RSP at entry */
	uint64_t stack_size;
	uint64_t idt_alias;     /* IDTR base (read-only alias) */
	uint64_t idt_phys;      /* the IDT's writable page */
	uint64_t acpi_rsdp;     /* 0 when firmware has none */
	struct kb_framebuffer fb; /* base 0 when there is no GOP */
	uint32_t flags;         /* KB_FLAG_* the hand-off adds (e.g. no NX) */
	uint64_t map_cap;       /* bytes the final EFI map may take, and its */
	uint64_t map_desc_size; /* descriptor size now: what finish will see */
};

struct boot_proto {
	const CHAR16 *name;
	/* 1 if this protocol boots the image at L->image_buf (decompressed) */
	int (*probe)(struct loader *L);
	/* parse L->image_buf into L->elf (or take the probe's parse: see
	 * L->elf_probed) and decide L->layout; logs */
	EFI_STATUS (*load)(struct loader *L);
	/* before ExitBootServices: allocate and fill the hand-off data that
	 * does not depend on the final memory map; logs */
	EFI_STATUS (*prepare)(struct loader *L, const struct handoff_env *env);
	/* on a memory map fetched for ExitBootServices: finish the hand-off
	 * data; pure computation, no firmware, no printing.  Out: the value
	 * the kernel gets in RDI (and RSI). */
	enum ldr_err (*finish)(struct loader *L, const struct handoff_env *env,
			       const struct ebs_map *m, uint64_t *ret_arg);
	/* give back what prepare allocated */
	void (*release)(struct loader *L);
	/* after ExitBootServices, verbose only: describe the final hand-off
	 * data on the serial port (the only voice left); may be NULL */
	void (*after_exit)(const struct loader *L);
	/* 1: the jump leaves the CPU as include/PROTOCOL.md ("Entry state")
	 * says - CR0/CR4, x87 and SSE state, 8259 PIC and local APIC LVT
	 * entries masked; 0: as firmware left them */
	int entry_state;
	/* 1: takes module= files (L->mods, listed in its hand-off data) */
	int modules;
};

extern const struct boot_proto proto_native;
extern const struct boot_proto proto_linux;

/* The first protocol whose probe takes L's kernel (efi/proto.c). */
const struct boot_proto *proto_for(struct loader *L);

#endif

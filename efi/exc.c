/*
 * exc.c - what the early-exception stubs print: vector, error code, RIP,
 * CR2, RSP, both KASLR offsets, and when RIP lies in the kernel the link-time
 * RIP (RIP minus the virtual offset), so a crash decodes against the
 * unrelocated symbol table.  Runs after ExitBootServices on whatever stack
 * the kernel had: serial port only, no firmware, no writes to loader data.
 */
#include "exc.h"
#include "serial.h"

struct exc_frame {
	uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
	uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
	uint64_t vector, error;
	uint64_t rip, cs, rflags, rsp, ss;
};

static struct exc_facts exc_facts;

void exc_set_facts(const struct exc_facts *f)
{
	exc_facts = *f;
	exc_facts.magic = KB_CRASH_FACTS_MAGIC;
}

static void exc_kv(const char *key, uint64_t v)
{
	serial_puts(" ");
	serial_puts(key);
	serial_puts("=");
	serial_hex(v);
}

void exc_report(struct exc_frame *f) __attribute__((noreturn));
void exc_report(struct exc_frame *f)
{
	const struct exc_facts *k = &exc_facts;
	uint64_t cr2;

	__asm__ volatile("mov %%cr2, %0" : "=r"(cr2));
	serial_puts("\nkaslr-loader: early exception vector=");
	if (f->vector == 255)
		serial_puts(">=32");
	else
		serial_dec(f->vector);
	exc_kv("error", f->error);
	exc_kv("rip", f->rip);
	exc_kv("cr2", cr2);
	exc_kv("rsp", f->rsp);
	exc_kv("phys_offset", k->phys_offset);
	exc_kv("virt_offset", k->virt_offset);
	if (f->rip - k->virt_base < k->image_size)
		exc_kv("link_rip", f->rip - k->virt_offset);
	else
		serial_puts(" link_rip=outside-kernel");
	serial_puts("\n");
	for (;;)
		__asm__ volatile("cli; hlt");
}

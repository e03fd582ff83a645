# payload/payload.mk - the test kernels, included by the top Makefile.
# Defines PAYLOAD_DEFAULT (the kernel `make esp` puts on the ESP), the
# per-variant file variables below, PAYLOADS (all of them) and the
# `payloads` target.  Output goes to $(BUILD)/payload/.
#
#   kernel-pie.elf   ET_DYN linked at 0, R_X86_64_RELATIVE only   (default)
#   kernel-exec.elf  ET_EXEC at 16 MiB, virt = phys, --emit-relocs, -mcmodel=large
#   kernel-high.elf  ET_EXEC at 0xffffffff81000000 (LMA 16 MiB), --emit-relocs,
#                    -mcmodel=kernel
#   kernel-small.elf ET_EXEC at 16 MiB, virt = phys, --emit-relocs,
#                    -mcmodel=small (R_X86_64_32/32S: must end by 2 GiB)
#   kernel-shared.elf as kernel-exec.elf, but text and rodata share a page
#                    (payload/shared.lds), which holds the entry point
#   kernel-upper.elf ET_EXEC at 0xffff800001000000 (LMA 16 MiB): upper half,
#                    below the top 2 GiB, --emit-relocs, -mcmodel=large; it
#                    runs identity-mapped
#   *.elf.gz         gzip -9 -n copies of all three
#   kernel-pie.elf.zlib, kernel-high.elf.zlib   zlib (RFC 1950) copies
#   *.elf.xz         xz --check=crc32 --x86 --lzma2 copies (Linux's xz choices)
#   *.elf.lz4        lz4 -l copies (the legacy format, as Linux's)
#   *.elf.zst        zstd copies (checksum and content size, the tool's defaults)
#   kernel-fgk.elf   kernel-high.elf plus 1200 generated functions, one
#                    section each: function-granular KASLR (payload/fgk.mk)

PAYLOAD_DIR  := $(BUILD)/payload
PAYLOAD_VARIANTS := pie exec high small shared upper

PAYLOAD_PIE       := $(PAYLOAD_DIR)/kernel-pie.elf
PAYLOAD_EXEC      := $(PAYLOAD_DIR)/kernel-exec.elf
PAYLOAD_HIGH      := $(PAYLOAD_DIR)/kernel-high.elf
PAYLOAD_SMALL     := $(PAYLOAD_DIR)/kernel-small.elf
PAYLOAD_SHARED    := $(PAYLOAD_DIR)/kernel-shared.elf
PAYLOAD_UPPER     := $(PAYLOAD_DIR)/kernel-upper.elf
PAYLOAD_PIE_GZ    := $(PAYLOAD_PIE).gz
PAYLOAD_EXEC_GZ   := $(PAYLOAD_EXEC).gz
PAYLOAD_HIGH_GZ   := $(PAYLOAD_HIGH).gz
PAYLOAD_PIE_ZLIB  := $(PAYLOAD_PIE).zlib
PAYLOAD_HIGH_ZLIB := $(PAYLOAD_HIGH).zlib
PAYLOAD_PIE_XZ    := $(PAYLOAD_PIE).xz
PAYLOAD_HIGH_LZ4  := $(PAYLOAD_HIGH).lz4
PAYLOAD_EXEC_ZST  := $(PAYLOAD_EXEC).zst
PAYLOAD_DEFAULT   := $(PAYLOAD_PIE)

PAYLOADS += $(PAYLOAD_PIE) $(PAYLOAD_EXEC) $(PAYLOAD_HIGH) $(PAYLOAD_SMALL) \
            $(PAYLOAD_SHARED) $(PAYLOAD_UPPER) \
            $(PAYLOAD_PIE_GZ) $(PAYLOAD_EXEC_GZ) $(PAYLOAD_HIGH_GZ) \
            $(PAYLOAD_PIE_ZLIB) $(PAYLOAD_HIGH_ZLIB) \
            $(PAYLOAD_PIE_XZ) $(PAYLOAD_HIGH_LZ4) $(PAYLOAD_EXEC_ZST)

# link base (lowest p_vaddr) and physical link base (lowest p_paddr)
PAYLOAD_BASE_pie  := 0x0
PAYLOAD_PHYS_pie  := 0x0
PAYLOAD_BASE_exec := 0x1000000
PAYLOAD_PHYS_exec := 0x1000000
PAYLOAD_BASE_high := 0xffffffff81000000
PAYLOAD_PHYS_high := 0x1000000
PAYLOAD_BASE_small := 0x1000000
PAYLOAD_PHYS_small := 0x1000000
PAYLOAD_BASE_shared := 0x1000000
PAYLOAD_PHYS_shared := 0x1000000
PAYLOAD_BASE_upper := 0xffff800001000000
PAYLOAD_PHYS_upper := 0x1000000

PAYLOAD_CFLAGS := -std=gnu11 $(WARN) -O2 -g -ffreestanding -nostdlib \
    -fno-builtin -fno-stack-protector -fno-stack-clash-protection \
    -fcf-protection=none -mno-red-zone -mgeneral-regs-only \
    -fno-asynchronous-unwind-tables -fno-unwind-tables -fno-common \
    -fno-strict-aliasing -Iinclude -Ipayload
PAYLOAD_CFLAGS_pie  := -fpie -fvisibility=hidden -DPAYLOAD_VARIANT_PIE
PAYLOAD_CFLAGS_exec := -fno-pic -mcmodel=large -DPAYLOAD_VARIANT_EXEC
PAYLOAD_CFLAGS_high := -fno-pic -mcmodel=kernel -DPAYLOAD_VARIANT_HIGH
PAYLOAD_CFLAGS_small := -fno-pic -mcmodel=small -DPAYLOAD_VARIANT_SMALL
PAYLOAD_CFLAGS_shared := -fno-pic -mcmodel=large -DPAYLOAD_VARIANT_SHARED
PAYLOAD_CFLAGS_upper := -fno-pic -mcmodel=large -DPAYLOAD_VARIANT_UPPER

PAYLOAD_LDFLAGS := -nostdlib --no-undefined --fatal-warnings \
    -z max-page-size=0x1000 -z common-page-size=0x1000 -z noexecstack
PAYLOAD_LDFLAGS_pie  := -pie --no-dynamic-linker -z text -z norelro \
    -z separate-code --hash-style=sysv -T payload/pie.lds
PAYLOAD_LDFLAGS_exec := --emit-relocs -T payload/exec.lds
PAYLOAD_LDFLAGS_high := --emit-relocs -T payload/exec.lds
PAYLOAD_LDFLAGS_small := --emit-relocs -T payload/exec.lds
PAYLOAD_LDFLAGS_shared := --emit-relocs -T payload/shared.lds
PAYLOAD_LDFLAGS_upper := --emit-relocs -T payload/exec.lds

# the payload checks derivations with the loader's own SHA-256 code
PAYLOAD_CORE := sha256 sha256_x86 entropy tcglog
# the objects of every variant (payload/fgk.mk uses the list too)
PAYLOAD_OBJ_NAMES := main.o serial.o efivars.o leftovers.o cpustate.o tpmlog.o entry.o \
                     $(PAYLOAD_CORE:%=core_%.o)
PAYLOAD_OBJS  = $(addprefix $(PAYLOAD_DIR)/$(1)/,$(PAYLOAD_OBJ_NAMES))

# objects also depend on this file: the flags above are part of them
define PAYLOAD_RULES
DEPS += $(patsubst %.o,%.d,$(call PAYLOAD_OBJS,$(1)))
$(PAYLOAD_DIR)/$(1)/%.o: payload/%.c payload/payload.mk
	@mkdir -p $$(@D)
	$$(CC) $$(PAYLOAD_CFLAGS) $$(PAYLOAD_CFLAGS_$(1)) $$(DEPFLAGS) \
	    -DPAYLOAD_LINK_BASE=$$(PAYLOAD_BASE_$(1)) \
	    -DPAYLOAD_LINK_PHYS=$$(PAYLOAD_PHYS_$(1)) -c $$< -o $$@
$(PAYLOAD_DIR)/$(1)/core_%.o: src/%.c payload/payload.mk
	@mkdir -p $$(@D)
	$$(CC) $$(PAYLOAD_CFLAGS) $$(PAYLOAD_CFLAGS_$(1)) $$(DEPFLAGS) -c $$< -o $$@
$(PAYLOAD_DIR)/$(1)/%.o: payload/%.S payload/payload.mk
	@mkdir -p $$(@D)
	$$(CC) $$(PAYLOAD_CFLAGS) $$(PAYLOAD_CFLAGS_$(1)) $$(DEPFLAGS) -c $$< -o $$@
$(PAYLOAD_DIR)/kernel-$(1).elf: $(call PAYLOAD_OBJS,$(1)) payload/pie.lds \
        payload/exec.lds payload/shared.lds payload/check-elf.sh
	$$(LD) $$(PAYLOAD_LDFLAGS) $$(PAYLOAD_LDFLAGS_$(1)) \
	    --defsym=payload_link_base=$$(PAYLOAD_BASE_$(1)) \
	    --defsym=payload_link_phys=$$(PAYLOAD_PHYS_$(1)) \
	    $(call PAYLOAD_OBJS,$(1)) -o $$@.tmp
	payload/check-elf.sh $(1) $$@.tmp
	mv $$@.tmp $$@
endef
$(foreach v,$(PAYLOAD_VARIANTS),$(eval $(call PAYLOAD_RULES,$(v))))

$(PAYLOAD_DIR)/%.elf.gz: $(PAYLOAD_DIR)/%.elf
	gzip -9 -n -c $< > $@.tmp
	mv $@.tmp $@

$(PAYLOAD_DIR)/%.elf.xz: $(PAYLOAD_DIR)/%.elf
	xz --check=crc32 --x86 --lzma2 -c $< > $@.tmp
	mv $@.tmp $@

$(PAYLOAD_DIR)/%.elf.lz4: $(PAYLOAD_DIR)/%.elf
	lz4 -q -l -9 -c $< > $@.tmp
	mv $@.tmp $@

$(PAYLOAD_DIR)/%.elf.zst: $(PAYLOAD_DIR)/%.elf
	zstd -q -19 -c $< > $@.tmp
	mv $@.tmp $@

DEPS += $(PAYLOAD_DIR)/mkzlib.d
$(PAYLOAD_DIR)/mkzlib: payload/mkzlib.c
	@mkdir -p $(@D)
	$(HOSTCC) $(HOST_BASE_CFLAGS) -O2 $(DEPFLAGS) $< -lz -o $@

$(PAYLOAD_DIR)/%.elf.zlib: $(PAYLOAD_DIR)/%.elf $(PAYLOAD_DIR)/mkzlib
	$(PAYLOAD_DIR)/mkzlib $< $@.tmp
	mv $@.tmp $@

include payload/fgk.mk

payloads: $(PAYLOADS)

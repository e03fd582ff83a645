# kaslr-loader: one Makefile, two builds of the src/ core (host for tests,
# freestanding for the EFI image), the payload kernels, and the test tiers.

CC      ?= gcc
HOSTCC  ?= $(CC)
LD      := ld
OBJCOPY := objcopy
BUILD   := build

# Debian packages every tier needs; `make deps` installs the missing ones.
DEB_PKGS := gnu-efi zlib1g-dev ovmf qemu-system-x86 mtools dosfstools \
            systemd-boot-efi sbsigntool clang gcc make binutils gzip \
            coreutils grep gawk xxd

WARN := -Wall -Wextra -Werror

# ---------------------------------------------------------------- host core
HOST_CFLAGS := -std=c11 $(WARN) -g -O1 -fsanitize=address,undefined \
               -fno-sanitize-recover=undefined -fno-omit-frame-pointer \
               -D_DEFAULT_SOURCE -Iinclude
HOST_LDLIBS := -lz -lm

CORE_SRC  := $(wildcard src/*.c)
HOST_OBJ  := $(patsubst src/%.c,$(BUILD)/host/%.o,$(CORE_SRC))
UNIT_SRC  := $(wildcard test/unit/test_*.c)
UNIT_BIN  := $(patsubst test/unit/%.c,$(BUILD)/host/%,$(UNIT_SRC))

$(BUILD)/host/%.o: src/%.c $(wildcard include/*.h)
	@mkdir -p $(@D)
	$(HOSTCC) $(HOST_CFLAGS) -c $< -o $@

$(BUILD)/host/test_%: test/unit/test_%.c $(HOST_OBJ) $(wildcard test/unit/*.h)
	@mkdir -p $(@D)
	$(HOSTCC) $(HOST_CFLAGS) -Itest/unit $< $(HOST_OBJ) $(HOST_LDLIBS) -o $@

# ---------------------------------------------------------------- EFI image
EFI_INC   := /usr/include/efi
EFI_LIB   := /usr/lib
EFI_CRT0  := $(EFI_LIB)/crt0-efi-x86_64.o
LIBZ_A    := /usr/lib/x86_64-linux-gnu/libz.a
EFI_CFLAGS := -std=gnu11 $(WARN) -O2 -g -ffreestanding -fno-stack-protector \
              -fshort-wchar -mno-red-zone -mno-mmx -mno-sse -mgeneral-regs-only \
              -fpic -fno-strict-aliasing -fno-builtin -DGNU_EFI_USE_MS_ABI \
              -maccumulate-outgoing-args -DLDR_EFI \
              -Iinclude -I$(EFI_INC) -I$(EFI_INC)/x86_64 -I$(EFI_INC)/protocol
EFI_LDFLAGS := -nostdlib --no-undefined -shared -Bsymbolic -znocombreloc \
               -T loader.lds --warn-common --fatal-warnings

EFI_SRC   := $(wildcard efi/*.c)
EFI_ASM   := $(wildcard efi/*.S)
EFI_OBJ   := $(patsubst efi/%.c,$(BUILD)/efi/%.o,$(EFI_SRC)) \
             $(patsubst efi/%.S,$(BUILD)/efi/%.o,$(EFI_ASM)) \
             $(patsubst src/%.c,$(BUILD)/efi/core_%.o,$(CORE_SRC))
LIBGCC    := $(shell $(CC) -print-libgcc-file-name)

$(BUILD)/efi/%.o: efi/%.c $(wildcard efi/*.h include/*.h)
	@mkdir -p $(@D)
	$(CC) $(EFI_CFLAGS) -c $< -o $@
$(BUILD)/efi/%.o: efi/%.S
	@mkdir -p $(@D)
	$(CC) $(EFI_CFLAGS) -c $< -o $@
$(BUILD)/efi/core_%.o: src/%.c $(wildcard include/*.h)
	@mkdir -p $(@D)
	$(CC) $(EFI_CFLAGS) -c $< -o $@

$(BUILD)/loader.so: $(EFI_OBJ) loader.lds
	$(LD) $(EFI_LDFLAGS) $(EFI_CRT0) $(EFI_OBJ) -L$(EFI_LIB) -lefi -lgnuefi \
	      $(LIBZ_A) $(LIBGCC) -o $@

$(BUILD)/BOOTX64.EFI: $(BUILD)/loader.so
	$(OBJCOPY) -j .text -j .reloc -j .data -j .dynamic -j .rela -j .dynsym \
	   -j .dynstr --target=efi-app-x86_64 --subsystem=10 $< $@
	@test/check-image.sh $< $@

.DEFAULT_GOAL := all
.SECONDARY:
.PHONY: all deps unit run esp test clean loader payloads
all: $(BUILD)/BOOTX64.EFI payloads
loader: $(BUILD)/BOOTX64.EFI

-include payload/payload.mk

deps:
	@test/deps.sh $(DEB_PKGS)

unit: $(UNIT_BIN)
	@test/run-unit.sh $(UNIT_BIN)

# ---------------------------------------------------------------- ESP, run
ESP_IMG := $(BUILD)/esp.img
esp: $(ESP_IMG)
$(ESP_IMG): $(BUILD)/BOOTX64.EFI $(PAYLOAD_DEFAULT) test/qemu/mkesp.sh
	test/qemu/mkesp.sh $@ $(BUILD)/BOOTX64.EFI $(PAYLOAD_DEFAULT)

run: deps
	@$(MAKE) --no-print-directory all $(ESP_IMG)
	@test/qemu/boot.sh --show --timeout 120 $(ESP_IMG); rc=$$?; \
	 if [ $$rc -eq 33 ]; then echo "make run: payload PASS"; \
	 else echo "make run: no PASS from the payload (QEMU status $$rc)"; exit 1; fi

test: deps
	@$(MAKE) --no-print-directory all
	@test/run-all.sh

clean:
	rm -rf $(BUILD)

# kaslr-loader: one Makefile, two builds of the src/ core (host for tests,
# freestanding for the EFI image), the payload kernels, and the test tiers.

CC      ?= gcc
HOSTCC  ?= $(CC)
LD      := ld
OBJCOPY := objcopy
BUILD   := build

# Debian packages every tier needs; `make deps` installs the missing ones.
DEB_PKGS := gnu-efi zlib1g-dev liblzma-dev liblz4-dev libzstd-dev lz4 zstd ovmf qemu-system-x86 mtools dosfstools \
            systemd-boot-efi sbsigntool clang libclang-rt-14-dev gcc make binutils gzip \
            coreutils grep gawk fdisk openssl xz-utils util-linux shellcheck

WARN := -Wall -Wextra -Werror

# Every C compile also writes the headers it read into a .d file beside its
# output (x.o -> x.d, or tool -> tool.d); each build adds its .d files to
# DEPS, and the end of this file includes them.  -MP: a deleted header is
# no error.
DEPFLAGS := -MMD -MP
DEPS :=

# ---------------------------------------------------------------- host flags
# Every host build (unit tests, corpus tools, fuzz targets, benchmarks and
# the small generators) starts from HOST_BASE_CFLAGS and adds only what
# differs: its -O level, SAN_CFLAGS, the fuzzer, TEST_INC.
HOST_BASE_CFLAGS := -std=c11 $(WARN) -g -D_DEFAULT_SOURCE -Iinclude
SAN_CFLAGS  := -fsanitize=address,undefined -fno-sanitize-recover=undefined \
               -fno-omit-frame-pointer
# the headers test programs share (test.h, elf_build.h, mmap_fixture.h)
TEST_INC    := -Itest/unit
HOST_LDLIBS := -lz -llzma -llz4 -lzstd -lm

# ---------------------------------------------------------------- host core
HOST_CFLAGS := $(HOST_BASE_CFLAGS) -O1 $(SAN_CFLAGS)

CORE_SRC  := $(wildcard src/*.c)
HOST_OBJ  := $(patsubst src/%.c,$(BUILD)/host/%.o,$(CORE_SRC))
UNIT_SRC  := $(wildcard test/unit/test_*.c)
UNIT_OBJ  := $(patsubst test/unit/%.c,$(BUILD)/host/unit/%.o,$(UNIT_SRC))
UNIT_BIN  := $(patsubst test/unit/%.c,$(BUILD)/host/%,$(UNIT_SRC))
DEPS      += $(HOST_OBJ:.o=.d) $(UNIT_OBJ:.o=.d)

$(BUILD)/host/%.o: src/%.c
	@mkdir -p $(@D)
	$(HOSTCC) $(HOST_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/host/unit/%.o: test/unit/%.c
	@mkdir -p $(@D)
	$(HOSTCC) $(HOST_CFLAGS) $(TEST_INC) $(DEPFLAGS) -c $< -o $@

$(BUILD)/host/test_%: $(BUILD)/host/unit/test_%.o $(HOST_OBJ)
	$(HOSTCC) $(HOST_CFLAGS) $< $(HOST_OBJ) $(HOST_LDLIBS) -o $@

# ---------------------------------------------------------------- corpus tools
# test/corpus/run.sh: mkcorpus writes the malformed kernels, check_corpus
# (linked with the host core) checks each file's first error
CORPUS_TOOLS := $(BUILD)/corpus/mkcorpus $(BUILD)/corpus/check_corpus
DEPS         += $(patsubst $(BUILD)/corpus/%,$(BUILD)/corpus/obj/%.d,$(CORPUS_TOOLS))

$(BUILD)/corpus/obj/%.o: test/corpus/%.c
	@mkdir -p $(@D)
	$(HOSTCC) $(HOST_CFLAGS) $(TEST_INC) $(DEPFLAGS) -c $< -o $@
$(BUILD)/corpus/mkcorpus: $(BUILD)/corpus/obj/mkcorpus.o
	$(HOSTCC) $(HOST_CFLAGS) $< $(HOST_LDLIBS) -o $@
$(BUILD)/corpus/check_corpus: $(BUILD)/corpus/obj/check_corpus.o $(HOST_OBJ)
	$(HOSTCC) $(HOST_CFLAGS) $< $(HOST_OBJ) $(HOST_LDLIBS) -o $@

# test/linux/check-bzimage.sh: the core's bzImage parser on Debian's kernels
$(BUILD)/linux/bzcheck: $(BUILD)/corpus/obj/bzcheck.o $(HOST_OBJ)
	$(HOSTCC) $(HOST_CFLAGS) $< $(HOST_OBJ) $(HOST_LDLIBS) -o $@
$(BUILD)/corpus/obj/bzcheck.o: test/linux/bzcheck.c
	@mkdir -p $(@D)
	$(HOSTCC) $(HOST_CFLAGS) $(TEST_INC) $(DEPFLAGS) -c $< -o $@
DEPS += $(BUILD)/corpus/obj/bzcheck.d

# ---------------------------------------------------------------- EFI image
EFI_INC   := /usr/include/efi
EFI_LIB   := /usr/lib
EFI_CRT0  := $(EFI_LIB)/crt0-efi-x86_64.o
# the decompressors, linked as Debian ships them (efi/zglue.c makes them safe)
LIBDIR_A  := /usr/lib/x86_64-linux-gnu
DECOMP_A  := $(LIBDIR_A)/libz.a $(LIBDIR_A)/liblzma.a $(LIBDIR_A)/liblz4.a \
             $(LIBDIR_A)/libzstd.a
EFI_CFLAGS := -std=gnu11 $(WARN) -O2 -g -ffreestanding -fno-stack-protector \
              -fshort-wchar -mno-red-zone -mno-mmx -mno-sse -mgeneral-regs-only \
              -fpic -fno-strict-aliasing -fno-builtin -DGNU_EFI_USE_MS_ABI \
              -maccumulate-outgoing-args -DLDR_EFI \
              -Iinclude -I$(EFI_INC) -I$(EFI_INC)/x86_64 -I$(EFI_INC)/protocol
# --wrap: every memcpy and memset call goes to efi/libc.c's word-at-a-time
# __wrap_ versions, not to libefi's byte loops
EFI_LDFLAGS := -nostdlib --no-undefined -shared -Bsymbolic -znocombreloc \
               -T loader.lds --warn-common --fatal-warnings \
               --wrap=memcpy --wrap=memset

EFI_SRC   := $(wildcard efi/*.c)
EFI_ASM   := $(wildcard efi/*.S)
EFI_OBJ   := $(patsubst efi/%.c,$(BUILD)/efi/%.o,$(EFI_SRC)) \
             $(patsubst efi/%.S,$(BUILD)/efi/%.o,$(EFI_ASM)) \
             $(patsubst src/%.c,$(BUILD)/efi/core_%.o,$(CORE_SRC))
LIBGCC    := $(shell $(CC) -print-libgcc-file-name)
DEPS      += $(EFI_OBJ:.o=.d)

$(BUILD)/efi/%.o: efi/%.c
	@mkdir -p $(@D)
	$(CC) $(EFI_CFLAGS) $(DEPFLAGS) -c $< -o $@
$(BUILD)/efi/%.o: efi/%.S
	@mkdir -p $(@D)
	$(CC) $(EFI_CFLAGS) $(DEPFLAGS) -c $< -o $@
$(BUILD)/efi/core_%.o: src/%.c
	@mkdir -p $(@D)
	$(CC) $(EFI_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/loader.so: $(EFI_OBJ) loader.lds
	$(LD) $(EFI_LDFLAGS) $(EFI_CRT0) $(EFI_OBJ) -L$(EFI_LIB) -lefi -lgnuefi \
	      $(DECOMP_A) $(LIBGCC) -o $@

$(BUILD)/BOOTX64.EFI: $(BUILD)/loader.so
	$(OBJCOPY) -j .text -j .reloc -j .data -j .dynamic -j .rela -j .dynsym \
	   -j .dynstr --target=efi-app-x86_64 --subsystem=10 $< $@
	@test/check-image.sh $< $@

.DEFAULT_GOAL := all
# Bare .SECONDARY: no intermediate file (the objects the pattern rules make)
# is ever deleted, so the next build only redoes what changed.  Nothing may
# name prerequisites of .SECONDARY: GNU make then keeps only those.
.SECONDARY:
# a recipe that fails leaves no half-written target behind
.DELETE_ON_ERROR:
.PHONY: all deps unit run esp test clean loader payloads install corpus-tools lint
all: $(BUILD)/BOOTX64.EFI payloads
loader: $(BUILD)/BOOTX64.EFI

include payload/payload.mk
include test/fuzz/fuzz.mk
# make bench [BENCH_QUICK=1]: benchmarks (test/bench/bench.mk)
include test/bench/bench.mk

deps:
	@test/deps.sh $(DEB_PKGS)

unit: $(UNIT_BIN)
	@test/run-unit.sh $(UNIT_BIN)

corpus-tools: $(CORPUS_TOOLS)

# shellcheck over every shell script (test/lint.sh)
lint:
	@test/lint.sh

# ---------------------------------------------------------------- ESP, run
ESP_IMG := $(BUILD)/esp.img
esp: $(ESP_IMG)
$(ESP_IMG): $(BUILD)/BOOTX64.EFI $(PAYLOAD_DEFAULT) test/qemu/mkesp.sh
	test/qemu/mkesp.sh $@ $(BUILD)/BOOTX64.EFI $(PAYLOAD_DEFAULT)

# ---------------------------------------------------------------- install
# make install ESP=DIR  copies into the mounted ESP at DIR:
#   the loader  -> $(INSTALL_PATH) (default EFI/BOOT/BOOTX64.EFI; e.g.
#                  EFI/kaslr/kaslr-loader.efi for a systemd-boot entry),
#                  signed with sbsign when SIGN_KEY= and SIGN_CERT= are given;
#   $(KERNEL)   -> kernel.elf beside it (default: the PIE test kernel);
#   $(CONF)     -> kaslr.conf beside it; without CONF= an existing kaslr.conf
#                  is kept, else a commented default is written.
# Plain cp, no chmod: FAT cannot store Unix modes.
INSTALL_PATH ?= EFI/BOOT/BOOTX64.EFI
KERNEL       ?= $(PAYLOAD_DEFAULT)
INSTALL_DIR   = $(ESP)/$(patsubst %/,%,$(dir $(INSTALL_PATH)))
define KASLR_CONF_DEFAULT
# kaslr.conf - options of kaslr-loader (see its README, Options).
# One "key value" per line; '#' starts a comment.  Load options (e.g. a
# systemd-boot entry's "options") override what is set here.
#
# kernel     kernel.elf          (relative to this directory, or \path)
# cmdline    console=ttyS0       (the rest of the line is the command line)
# verbose                        (print addresses and timings: leaks the layout)
# kaslr.min  16M
# kaslr.max  4G
# sha256     <64 hex digits of the kernel file>
endef
export KASLR_CONF_DEFAULT

install: $(BUILD)/BOOTX64.EFI $(KERNEL)
	@[ -n "$(ESP)" ] || { echo "make install: give ESP=DIR, the mounted EFI system partition" >&2; exit 1; }
	@[ -d "$(ESP)" ] || { echo "make install: ESP=$(ESP) is not a directory" >&2; exit 1; }
	@[ -z "$(SIGN_KEY)$(SIGN_CERT)" ] || { [ -n "$(SIGN_KEY)" ] && [ -n "$(SIGN_CERT)" ]; } || \
	 { echo "make install: signing needs both SIGN_KEY= and SIGN_CERT=" >&2; exit 1; }
	mkdir -p "$(INSTALL_DIR)"
	@if [ -n "$(SIGN_KEY)" ]; then \
	   echo "sbsign $(BUILD)/BOOTX64.EFI -> $(ESP)/$(INSTALL_PATH)"; \
	   sbsign --key "$(SIGN_KEY)" --cert "$(SIGN_CERT)" \
	          --output "$(ESP)/$(INSTALL_PATH)" $(BUILD)/BOOTX64.EFI || exit 1; \
	 else cp $(BUILD)/BOOTX64.EFI "$(ESP)/$(INSTALL_PATH)"; fi
	cp "$(KERNEL)" "$(INSTALL_DIR)/kernel.elf"
	@if [ -n "$(CONF)" ]; then cp "$(CONF)" "$(INSTALL_DIR)/kaslr.conf"; \
	 elif [ -e "$(INSTALL_DIR)/kaslr.conf" ]; then echo "keeping $(INSTALL_DIR)/kaslr.conf"; \
	 else printf '%s\n' "$$KASLR_CONF_DEFAULT" >"$(INSTALL_DIR)/kaslr.conf"; fi
	@echo "installed into $(INSTALL_DIR): $(notdir $(INSTALL_PATH)) kernel.elf kaslr.conf"

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

# the header dependencies of every object built so far (see DEPFLAGS)
-include $(wildcard $(DEPS))

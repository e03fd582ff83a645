# kaslr-loader: one Makefile, two builds of the src/ core (host for tests,
# freestanding for the EFI image), the payload kernels, and the test tiers.

CC      ?= gcc
HOSTCC  ?= $(CC)
HOSTCXX ?= g++
LD      := ld
OBJCOPY := objcopy
BUILD   := build

# Debian packages every tier needs; `make deps` installs the missing ones.
DEB_PKGS := gnu-efi zlib1g-dev liblzma-dev liblz4-dev libzstd-dev lz4 zstd ovmf qemu-system-x86 mtools dosfstools \
            systemd-boot-efi systemd sbsigntool clang libclang-rt-14-dev gcc g++ make binutils gzip \
            coreutils grep gawk fdisk openssl xz-utils util-linux shellcheck \
            swtpm swtpm-tools tpm2-tools xxd dpkg busybox-static cpio e2fsprogs python3 shim-unsigned \
            mmdebstrap efitools dpkg-dev debhelper lintian mandoc groff-base groff bc flex bison libelf-dev libssl-dev python3-pexpect \
            cryptsetup-bin clevis-luks clevis-tpm2 jose libtss2-esys-3.0.2-0 libtss2-rc0 libtss2-mu0 libtss2-tcti-device0 libtss2-tcti-swtpm0

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

# include/kaslr_boot.h as a kernel includes it: alone on the include path
# (so it cannot lean on a loader header), freestanding, C99 and C++11,
# pedantic, warnings as errors.  `make unit` builds these objects.
HDR_DIR   := $(BUILD)/host/hdr
HDR_CHECK := $(HDR_DIR)/kaslr_boot_c99.o $(HDR_DIR)/kaslr_boot_cxx11.o
HDR_FLAGS := -pedantic $(WARN) -ffreestanding -I$(HDR_DIR)/include
$(HDR_DIR)/include/kaslr_boot.h: include/kaslr_boot.h
	@mkdir -p $(@D)
	cp $< $@
$(HDR_DIR)/kaslr_boot_c99.o: test/unit/hdr_kaslr_boot.c $(HDR_DIR)/include/kaslr_boot.h
	$(HOSTCC) -std=c99 $(HDR_FLAGS) -c $< -o $@
$(HDR_DIR)/kaslr_boot_cxx11.o: test/unit/hdr_kaslr_boot.c $(HDR_DIR)/include/kaslr_boot.h
	$(HOSTCXX) -x c++ -std=c++11 $(HDR_FLAGS) -c $< -o $@

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
LIBDIR_A  := /usr/lib/$(shell $(CC) -print-multiarch)
DECOMP_A  := $(LIBDIR_A)/libz.a $(LIBDIR_A)/liblzma.a $(LIBDIR_A)/liblz4.a \
             $(LIBDIR_A)/libzstd.a
EFI_CFLAGS := -std=gnu11 $(WARN) -O2 -g -ffreestanding -fno-stack-protector \
              -fshort-wchar -mno-red-zone -mno-mmx -mno-sse -mgeneral-regs-only \
              -fpic -fno-strict-aliasing -fno-builtin -DGNU_EFI_USE_MS_ABI \
              -maccumulate-outgoing-args -DLDR_EFI $(EFI_DEFINES) \
              -ffunction-sections -fdata-sections -fvisibility=hidden \
              -Iinclude -I$(EFI_INC) -I$(EFI_INC)/x86_64 -I$(EFI_INC)/protocol
# nothing is exported (hidden visibility; the libraries' symbols excluded),
# so section garbage collection keeps only what _start reaches
EFI_LDFLAGS := -nostdlib --no-undefined -shared -Bsymbolic -znocombreloc \
               -T loader.lds --warn-common --fatal-warnings --gc-sections --exclude-libs ALL

EFI_SRC   := $(wildcard efi/*.c)
EFI_ASM   := $(wildcard efi/*.S)
EFI_OBJ   := $(patsubst efi/%.c,$(BUILD)/efi/%.o,$(EFI_SRC)) \
             $(patsubst efi/%.S,$(BUILD)/efi/%.o,$(EFI_ASM)) \
             $(patsubst src/%.c,$(BUILD)/efi/core_%.o,$(CORE_SRC))
LIBGCC    := $(shell $(CC) -print-libgcc-file-name)
DEPS      += $(EFI_OBJ:.o=.d)

# The firmware-facing code runs once per boot and is small next to the
# decompressors: it is built for size (-Os after -O2 wins), except the
# copies and the decompressors' glue, which move every byte of the kernel.
EFI_HOT   := libc zglue
$(BUILD)/efi/%.o: efi/%.c
	@mkdir -p $(@D)
	$(CC) $(EFI_CFLAGS) $(if $(filter $(EFI_HOT),$*),,-Os) $(DEPFLAGS) -c $< -o $@
$(BUILD)/efi/%.o: efi/%.S
	@mkdir -p $(@D)
	$(CC) $(EFI_CFLAGS) $(DEPFLAGS) -c $< -o $@
# The same for the core: what walks every byte or relocation of a kernel
# stays -O2 (hashing, relocation, the shuffle, the segment copies), the rest
# (options, policy, memory map, page tables, the decompression driver and
# its per-format backends, which run once per library call...) is built for
# size.  sha256_x86.c is small either way: its work is the CPU's SHA
# instructions.
CORE_HOT  := sha256 reloc linux_reloc fgkaslr elf
$(BUILD)/efi/core_%.o: src/%.c
	@mkdir -p $(@D)
	$(CC) $(EFI_CFLAGS) $(if $(filter $(CORE_HOT),$*),,-Os) $(DEPFLAGS) -c $< -o $@

# gnu-efi's libefi.a defines memcpy and memset as byte loops, in the same
# member as InitializeLib: a copy with those two made weak lets the
# loader's own (efi/libc.c, a word at a time) win; every large copy and
# fill (the kernel image, the decompressors' output) goes through them.
EFI_LIBEFI := $(BUILD)/efi/libefi.a
$(EFI_LIBEFI): $(EFI_LIB)/libefi.a
	@mkdir -p $(@D)
	$(OBJCOPY) --weaken-symbol=memcpy --weaken-symbol=memset $< $@

$(BUILD)/loader.so: $(EFI_OBJ) $(EFI_LIBEFI) loader.lds
	$(LD) $(EFI_LDFLAGS) $(EFI_CRT0) $(EFI_OBJ) $(EFI_LIBEFI) -L$(EFI_LIB) -lgnuefi \
	      $(DECOMP_A) $(LIBGCC) -o $@

# SBAT: efi/sbat.csv.in (the loader's generation), plus a distribution's
# line when SBAT_DISTRO="kaslr-loader.NAME,GEN,Vendor,package,version,URL"
# is given; rewritten only when its text changes
SBAT_VERSION := $(shell sed -n 's/^\#define LDR_VERSION "\(.*\)"/\1/p' efi/bli.h)
SBAT_CSV := $(BUILD)/sbat.csv
$(SBAT_CSV): efi/sbat.csv.in efi/bli.h FORCE
	@mkdir -p $(@D)
	@t=$@.$$$$.tmp; { sed -e '/^#/d' -e 's/@VERSION@/$(SBAT_VERSION)/' $<; \
	   [ -z '$(SBAT_DISTRO)' ] || printf '%s\n' '$(SBAT_DISTRO)'; } >$$t && \
	awk -F, 'NF != 6 || $$2 !~ /^[1-9][0-9]*$$/ {print "sbat: line " NR " wants 6 fields, a generation >= 1: " $$0; e = 1} END {exit e}' $$t || \
	{ rm -f $$t; exit 1; }; \
	if cmp -s $$t $@; then rm -f $$t; else mv $$t $@; fi
FORCE:

# .sbat goes in as the last section, at the page after the image's end
$(BUILD)/BOOTX64.EFI: $(BUILD)/loader.so $(SBAT_CSV)
	$(OBJCOPY) -j .text -j .reloc -j .data -j .bss -j .kpolicy -j .dynamic -j .rela \
	   --strip-all --target=efi-app-x86_64 --subsystem=10 $< $@.nosbat
	$(OBJCOPY) --add-section .sbat=$(SBAT_CSV) --set-section-flags .sbat=data,readonly \
	   --change-section-address .sbat=0x$$(objdump -p $@.nosbat | awk '$$1 == "SizeOfImage" {print $$2}') \
	   $@.nosbat $@
	@rm -f $@.nosbat
	@test/check-image.sh $< $@ $(SBAT_CSV)

# ---------------------------------------------------------------- host tool
# build/tools/kaslr-policy (src/tools/kaslr-policy.c): writes the embedded
# policy before signing; linked with the core's own policy, PE and option
# code, optimised and without sanitizers (it is installed, e.g. by make deb)
TOOL_CORE := policy pe options settings sha256 sha256_x86 err
TOOL_OBJ  := $(TOOL_CORE:%=$(BUILD)/tools/obj/%.o) $(BUILD)/tools/obj/kaslr-policy.o
POLICY_TOOL := $(BUILD)/tools/kaslr-policy
DEPS      += $(TOOL_OBJ:.o=.d)

$(BUILD)/tools/obj/%.o: src/%.c
	@mkdir -p $(@D)
	$(HOSTCC) $(HOST_BASE_CFLAGS) -O2 $(DEPFLAGS) -c $< -o $@
$(BUILD)/tools/obj/%.o: src/tools/%.c
	@mkdir -p $(@D)
	$(HOSTCC) $(HOST_BASE_CFLAGS) -O2 $(DEPFLAGS) -c $< -o $@
$(POLICY_TOOL): $(TOOL_OBJ)
	$(HOSTCC) $(HOST_BASE_CFLAGS) -O2 $(TOOL_OBJ) -o $@

# build/tools/kaslr-pcr (src/tools/kaslr-pcr.c): predicts the next boot's
# PCRs from this boot's event log and the ESP; linked with the whole core
# (the settings, policy, UKI and kernel-format code the loader runs, the
# event log and Authenticode readers) and libcrypto for the PCR banks
PCR_OBJ  := $(patsubst src/%.c,$(BUILD)/tools/obj/%.o,$(CORE_SRC)) $(BUILD)/tools/obj/kaslr-pcr.o
PCR_TOOL := $(BUILD)/tools/kaslr-pcr
DEPS     += $(PCR_OBJ:.o=.d)
$(PCR_TOOL): $(PCR_OBJ)
	$(HOSTCC) $(HOST_BASE_CFLAGS) -O2 $(PCR_OBJ) $(HOST_LDLIBS) -lcrypto -o $@

# build/tools/kaslr-sweep (src/tools/kaslr-sweep.sh): placement sweeps under
# QEMU + OVMF; it finds build/BOOTX64.EFI beside its own directory, and
# in it guest-clock.sh (its time limits), kaslr-esp.sh (its reader of a
# unified kernel image's sections) and report-init.sh (the /init of
# --initramfs-report: test/linux/init.sh, the boot tests' own)
SWEEP_TOOL := $(BUILD)/tools/kaslr-sweep
$(SWEEP_TOOL): src/tools/kaslr-sweep.sh $(BUILD)/tools/guest-clock.sh $(BUILD)/tools/kaslr-esp.sh \
               $(BUILD)/tools/report-init.sh
	install -D -m 0755 $< $@
$(BUILD)/tools/guest-clock.sh: src/tools/guest-clock.sh
	install -D -m 0644 $< $@
$(BUILD)/tools/kaslr-esp.sh: src/tools/kaslr-esp.sh
	install -D -m 0644 $< $@
$(BUILD)/tools/report-init.sh: test/linux/init.sh
	install -D -m 0755 $< $@

.DEFAULT_GOAL := all
# Bare .SECONDARY: no intermediate file (the objects the pattern rules make)
# is ever deleted, so the next build only redoes what changed.  Nothing may
# name prerequisites of .SECONDARY: GNU make then keeps only those.
.SECONDARY:
# a recipe that fails leaves no half-written target behind
.DELETE_ON_ERROR:
.PHONY: all deps unit unit-bins run esp test check clean loader payloads install uninstall corpus-tools lint example FORCE
all: $(BUILD)/BOOTX64.EFI payloads example $(POLICY_TOOL) $(PCR_TOOL) $(SWEEP_TOOL)
loader: $(BUILD)/BOOTX64.EFI

include payload/payload.mk
include test/fuzz/fuzz.mk
# make test-fault: firmware fault injection (test/fault/fault.mk)
include test/fault/fault.mk
# make test-matrix: machines, CPUs and memory layouts (test/matrix/matrix.mk)
include test/matrix/matrix.mk
# make test-kconfig: Linux built in several configurations (test/kconfig/kconfig.mk)
include test/kconfig/kconfig.mk
# make bench [BENCH_QUICK=1]: benchmarks (test/bench/bench.mk)
include test/bench/bench.mk
# make install-hooks, make deb (src/tools/install.mk, debian/)
include src/tools/install.mk
# make test-system: a real Debian system, booted and updated (test/system/system.mk)
include test/system/system.mk

# the worked example of include/PROTOCOL.md, built from the document's text
# (test/example.sh); test/qemu/cases/example.sh boots it
EXAMPLE_ELF := $(BUILD)/example/kernel.elf
example: $(EXAMPLE_ELF)
$(EXAMPLE_ELF): include/PROTOCOL.md include/kaslr_boot.h test/example.sh
	test/example.sh include/PROTOCOL.md $(@D)

deps:
	@test/deps.sh $(DEB_PKGS)

unit: unit-bins
	@test/run-unit.sh $(UNIT_BIN) test/linux/bp-scan-test.sh
unit-bins: $(HDR_CHECK) $(UNIT_BIN)

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
# make install ESP=DIR KERNEL=FILE [INITRD="F ..."] [CMDLINE="..."]
#              [SIGN_KEY=key SIGN_CERT=cert] [INSTALL_PATH=...] [FORCE=1]
# runs src/tools/kaslr-install.sh: the kernel (and initrds) under their own
# names beside the loader, the policy written into the loader (pins, command
# line, ALLOW="key ..."), signed with sbsign when a key is given; a
# systemd-boot entry when the ESP has loader/entries/.  An existing file at
# INSTALL_PATH that is not kaslr-loader is refused unless FORCE=1 (which
# keeps a backup).  KERNEL= is required; TEST_KERNEL=1 installs the test
# kernel instead.  CONF=file is installed as kaslr.conf.  The policy pins
# private copies of the files, the ESP's bytes are checked against them
# before signing, and EFI/kaslr-loader.manifest lists what was written.
# INSTALL_PATH= unset: kaslr-install.sh decides, as for the kernel hooks
# (where the previous install put it; else on the running system's ESP
# EFI/kaslr-loader/kaslr-loader.efi with a Boot#### entry, else
# EFI/BOOT/BOOTX64.EFI).  SHIM=shimx64.efi installs shim at the install
# path (EFI/kaslr-loader/shimx64.efi by default on the running system's
# ESP) and the loader beside it as grubx64.efi.  TRUST=shim (needs SHIM=):
# a kernel boots if its pin matches or shim verifies it (docs/admin-guide.md, set-ups B and C).
ifeq ($(TEST_KERNEL),1)
KERNEL ?= $(PAYLOAD_DEFAULT)
endif

install: $(BUILD)/BOOTX64.EFI $(POLICY_TOOL) $(if $(filter 1,$(TEST_KERNEL)),$(PAYLOAD_DEFAULT))
	@[ -n "$(ESP)" ] || { echo "make install: give ESP=DIR, the mounted EFI system partition" >&2; exit 1; }
	@[ -n "$(KERNEL)" ] || { echo "make install: give KERNEL=FILE, the kernel to boot (TEST_KERNEL=1 installs the test kernel)" >&2; exit 1; }
	@set -- ; \
	 for f in $(INITRD); do set -- "$$@" --initrd "$$f"; done; \
	 for a in $(ALLOW); do set -- "$$@" --allow "$$a"; done; \
	 [ -n "$${CMDLINE+x}" ] && set -- "$$@" --cmdline "$$CMDLINE"; \
	 [ -n "$(SIGN_KEY)$(SIGN_CERT)" ] && set -- "$$@" --sign-key "$(SIGN_KEY)" --sign-cert "$(SIGN_CERT)"; \
	 [ -n "$(CONF)" ] && set -- "$$@" --conf "$(CONF)"; \
	 [ "$(FORCE)" = 1 ] && set -- "$$@" --force; \
	 [ -n "$(SHIM)" ] && set -- "$$@" --shim "$(SHIM)"; \
	 [ -n "$(TRUST)" ] && set -- "$$@" --trust "$(TRUST)"; \
	 [ -n "$(INSTALL_PATH)" ] && set -- "$$@" --install-path "$(INSTALL_PATH)"; \
	 src/tools/kaslr-install.sh --esp "$(ESP)" --loader $(BUILD)/BOOTX64.EFI --tool $(POLICY_TOOL) \
	   $(if $(filter 1,$(REPACK)),--repack src/tools/kaslr-repack.sh) --kernel "$(KERNEL)" \
	   --entry "$(if $(ENTRY),$(ENTRY),auto)" "$$@"

# make uninstall ESP=DIR [INSTALL_PATH=...]: takes away what make install
# (or the kernel hooks) wrote on that ESP, as listed in its manifest
# EFI/kaslr-loader.manifest, puts back a file it had replaced (FORCE=1's
# backup) and deletes the Boot#### entry an install made (BootOrder as
# before); with INSTALL_PATH= only if the loader is installed there
uninstall:
	@[ -n "$(ESP)" ] || { echo "make uninstall: give ESP=DIR, the mounted EFI system partition" >&2; exit 1; }
	@src/tools/kaslr-install.sh --uninstall --esp "$(ESP)" $(if $(INSTALL_PATH),--install-path "$(INSTALL_PATH)")

run: deps
	@$(MAKE) --no-print-directory all $(ESP_IMG)
	@test/qemu/boot.sh --show --timeout 120 $(ESP_IMG); rc=$$?; \
	 if [ $$rc -eq 33 ]; then echo "make run: payload PASS"; \
	 else echo "make run: no PASS from the payload (QEMU status $$rc)"; exit 1; fi

# everything the tiers build is built first, two at a time: the jobs
# test/run-all.sh then runs side by side find it built, and never build
# the same file at once
test: deps
	@$(MAKE) --no-print-directory -j2 all unit-bins corpus-tools fuzz-build fault-build bench-build
	@test/run-all.sh

# make check: the quick loop (test/check.sh): build, unit tests, lint and
# three boots (PIE, higher-half, a Debian kernel), at most 3 minutes on 2
# cores; it prints its own duration.  make test is the complete suite.
check: deps
	@test/check.sh

clean:
	rm -rf $(BUILD)

# the header dependencies of every object built so far (see DEPFLAGS)
-include $(wildcard $(DEPS))

# test/fuzz/fuzz.mk - libFuzzer targets over every parser of untrusted bytes,
# built with clang from src/*.c; included by the top Makefile, and usable on
# its own (make -f test/fuzz/fuzz.mk fuzz-build), which test/fuzz/run.sh does.
#
#   make fuzz-build               $(BUILD)/fuzz/fuzz_{elf,inflate,bzimage,e820,options}
#   make fuzz FUZZ_SECONDS=N      each target N seconds (test/fuzz/run.sh)
#   make fuzz-smoke               each target ~12 s (test/fuzz/run-smoke.sh)

BUILD    ?= build
WARN     ?= -Wall -Wextra -Werror
CORE_SRC ?= $(wildcard src/*.c)
FUZZ_CC  ?= clang
FUZZ_SECONDS ?= 60
FUZZ_CFLAGS := -std=c11 $(WARN) -g -O1 -fsanitize=fuzzer,address,undefined \
               -fno-sanitize-recover=undefined -fno-omit-frame-pointer \
               -D_DEFAULT_SOURCE -Iinclude
FUZZ_TARGETS := elf inflate bzimage e820 options
FUZZ_BIN := $(patsubst %,$(BUILD)/fuzz/fuzz_%,$(FUZZ_TARGETS))

$(BUILD)/fuzz/fuzz_%: test/fuzz/fuzz_%.c $(CORE_SRC) $(wildcard include/*.h)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $< $(CORE_SRC) -lz -llzma -llz4 -lzstd -o $@

$(BUILD)/fuzz/mkseeds: test/fuzz/mkseeds.c test/unit/decomp_fixture.h
	@mkdir -p $(@D)
	$(HOSTCC) -std=c11 $(WARN) -O1 -D_DEFAULT_SOURCE -Iinclude -Itest/unit $< -lz -llzma -llz4 -lzstd -o $@

HOSTCC ?= gcc

.PHONY: fuzz fuzz-build fuzz-smoke
fuzz-build: $(FUZZ_BIN) $(BUILD)/fuzz/mkseeds

fuzz:
	@test/fuzz/run.sh $(FUZZ_SECONDS)

fuzz-smoke:
	@test/fuzz/run-smoke.sh

# test/fuzz/fuzz.mk - libFuzzer targets over every parser of untrusted bytes,
# built with clang from src/*.c; included by the top Makefile, and usable on
# its own (make -f test/fuzz/fuzz.mk fuzz-build), which test/fuzz/run.sh does.
#
#   make fuzz-build               $(BUILD)/fuzz/fuzz_{elf,inflate,e820,options,fgkaslr}
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
FUZZ_TARGETS := elf inflate e820 options fgkaslr
FUZZ_BIN := $(patsubst %,$(BUILD)/fuzz/fuzz_%,$(FUZZ_TARGETS))

$(BUILD)/fuzz/fuzz_%: test/fuzz/fuzz_%.c $(CORE_SRC) $(wildcard include/*.h)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $< $(CORE_SRC) -lz -o $@

# the kernel builder fuzz_fgkaslr shares with the unit tests
$(BUILD)/fuzz/fuzz_fgkaslr: test/unit/fgk_build.h

$(BUILD)/fuzz/mkseeds: test/fuzz/mkseeds.c
	@mkdir -p $(@D)
	$(HOSTCC) -std=c11 $(WARN) -O1 -D_DEFAULT_SOURCE $< -lz -o $@

HOSTCC ?= gcc

.PHONY: fuzz fuzz-build fuzz-smoke
fuzz-build: $(FUZZ_BIN) $(BUILD)/fuzz/mkseeds

fuzz:
	@test/fuzz/run.sh $(FUZZ_SECONDS)

fuzz-smoke:
	@test/fuzz/run-smoke.sh

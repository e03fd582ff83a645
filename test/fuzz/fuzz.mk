# test/fuzz/fuzz.mk - libFuzzer targets over every parser of untrusted bytes,
# built with clang from src/*.c; included by the top Makefile (it uses the
# host flags defined there).  test/fuzz/run.sh runs `make fuzz-build`.
#
#   make fuzz-build               $(BUILD)/fuzz/fuzz_{elf,inflate,e820,options}
#   make fuzz FUZZ_SECONDS=N      each target N seconds (test/fuzz/run.sh)
#   make fuzz-smoke               each target ~12 s (test/fuzz/run-smoke.sh)

FUZZ_CC  ?= clang
FUZZ_SECONDS ?= 60
FUZZ_CFLAGS := $(HOST_BASE_CFLAGS) -O1 -fsanitize=fuzzer $(SAN_CFLAGS)
FUZZ_TARGETS := elf inflate e820 options
FUZZ_BIN := $(patsubst %,$(BUILD)/fuzz/fuzz_%,$(FUZZ_TARGETS))

$(BUILD)/fuzz/fuzz_%: test/fuzz/fuzz_%.c $(CORE_SRC) $(wildcard include/*.h)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $< $(CORE_SRC) -lz -o $@

$(BUILD)/fuzz/mkseeds: test/fuzz/mkseeds.c
	@mkdir -p $(@D)
	$(HOSTCC) $(HOST_BASE_CFLAGS) -O1 $< -lz -o $@

.PHONY: fuzz fuzz-build fuzz-smoke
fuzz-build: $(FUZZ_BIN) $(BUILD)/fuzz/mkseeds

fuzz:
	@test/fuzz/run.sh $(FUZZ_SECONDS)

fuzz-smoke:
	@test/fuzz/run-smoke.sh

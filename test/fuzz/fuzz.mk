# test/fuzz/fuzz.mk - libFuzzer targets over every parser of untrusted bytes,
# built with clang from src/*.c; included by the top Makefile (it uses the
# host flags defined there).  test/fuzz/run.sh runs `make fuzz-build`.
#
#   make fuzz-build               $(BUILD)/fuzz/fuzz_{elf,inflate,bzimage,e820,options,fgkaslr,policy,pe,tcglog,uki,authenticode,pcrlog}
#   make fuzz FUZZ_SECONDS=N      each target N seconds (test/fuzz/run.sh)
#   make fuzz-smoke               each target ~12 s (test/fuzz/run-smoke.sh)

FUZZ_CC  ?= clang
FUZZ_SECONDS ?= 60
FUZZ_CFLAGS := $(HOST_BASE_CFLAGS) -O1 -fsanitize=fuzzer $(SAN_CFLAGS)
FUZZ_TARGETS := elf inflate bzimage e820 options fgkaslr policy pe tcglog uki authenticode pcrlog
FUZZ_BIN := $(patsubst %,$(BUILD)/fuzz/fuzz_%,$(FUZZ_TARGETS))
# the core is compiled once with the fuzzer's instrumentation and linked
# into every target
FUZZ_OBJ := $(patsubst src/%.c,$(BUILD)/fuzz/obj/%.o,$(CORE_SRC))
DEPS     += $(FUZZ_OBJ:.o=.d) $(FUZZ_TARGETS:%=$(BUILD)/fuzz/main/fuzz_%.d) \
            $(BUILD)/fuzz/mkseeds.d

$(BUILD)/fuzz/obj/%.o: src/%.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(DEPFLAGS) -c $< -o $@

# the kernel builder fuzz_fgkaslr shares with the unit tests
$(BUILD)/fuzz/main/fuzz_fgkaslr.o: test/unit/fgk_build.h

$(BUILD)/fuzz/main/%.o: test/fuzz/%.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/fuzz/fuzz_%: $(BUILD)/fuzz/main/fuzz_%.o $(FUZZ_OBJ)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $< $(FUZZ_OBJ) $(HOST_LDLIBS) -o $@

$(BUILD)/fuzz/mkseeds: test/fuzz/mkseeds.c test/unit/decomp_fixture.h
	@mkdir -p $(@D)
	$(HOSTCC) $(HOST_BASE_CFLAGS) -O1 $(TEST_INC) $(DEPFLAGS) $< $(HOST_LDLIBS) -o $@

.PHONY: fuzz fuzz-build fuzz-smoke
fuzz-build: $(FUZZ_BIN) $(BUILD)/fuzz/mkseeds

fuzz:
	@test/fuzz/run.sh $(FUZZ_SECONDS)

fuzz-smoke:
	@test/fuzz/run-smoke.sh

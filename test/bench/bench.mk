# test/bench/bench.mk - `make bench`: the benchmarks of issue 8, included by
# the top Makefile.  The host programs are built from src/*.c with -O2 and
# no sanitizers (what is measured is the code, not ASan); test/bench/run.sh
# runs them and the QEMU boots and writes build/bench/bench.{md,csv} and
# build/bench/slots-2G.svg.
#
#   make bench                   full run (a few minutes: QEMU boots)
#   make bench BENCH_QUICK=1     few samples, no QEMU (test/bench/smoke.sh)

BUILD       ?= build
WARN        ?= -Wall -Wextra -Werror
CORE_SRC    ?= $(wildcard src/*.c)
HOSTCC      ?= gcc
BENCH_DIR   := $(BUILD)/bench
BENCH_CFLAGS := -std=c11 $(WARN) -O2 -DNDEBUG -D_DEFAULT_SOURCE -Iinclude -Itest/unit
BENCH_OBJ   := $(patsubst src/%.c,$(BENCH_DIR)/obj/%.o,$(CORE_SRC))
BENCH_PROGS := $(BENCH_DIR)/bench_pipeline $(BENCH_DIR)/bench_entropy \
               $(BENCH_DIR)/bench_plot $(BENCH_DIR)/bench_fgkaslr

$(BENCH_DIR)/obj/%.o: src/%.c $(wildcard include/*.h)
	@mkdir -p $(@D)
	$(HOSTCC) $(BENCH_CFLAGS) -c $< -o $@

$(BENCH_DIR)/bench_%: test/bench/bench_%.c test/bench/bench.h $(BENCH_OBJ) \
                      test/unit/mmap_fixture.h
	@mkdir -p $(@D)
	$(HOSTCC) $(BENCH_CFLAGS) $< $(BENCH_OBJ) -lz -lm -o $@

# the synthetic kernels come from the unit tests' builder
$(BENCH_DIR)/bench_fgkaslr: test/unit/fgk_build.h

.PHONY: bench bench-build
bench-build: $(BENCH_PROGS)

# the payloads and the loader are benchmarked too: build them first
bench: $(BENCH_PROGS) $(BUILD)/BOOTX64.EFI payloads
	@BUILD=$(BUILD) BENCH_QUICK=$(BENCH_QUICK) test/bench/run.sh
.SECONDARY: $(BENCH_OBJ)

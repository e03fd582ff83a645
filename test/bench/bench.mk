# test/bench/bench.mk - `make bench`: the benchmarks, included by the top
# Makefile.  The host programs are built from src/*.c with -O2 and
# no sanitizers (what is measured is the code, not ASan); test/bench/run.sh
# runs them and the QEMU boots and writes build/bench/bench.{md,csv} and
# build/bench/slots-2G.svg.
#
#   make bench                   full run (a few minutes: QEMU boots)
#   make bench BENCH_QUICK=1     few samples, no QEMU (test/bench/smoke.sh)

# The core's objects are kaslr-pcr's (build/tools/obj: -O2, no
# sanitizers; the core has no run-time assert for -DNDEBUG to remove), not
# a second build of the same files.
BENCH_DIR   := $(BUILD)/bench
BENCH_CFLAGS := $(HOST_BASE_CFLAGS) -O2 -DNDEBUG $(TEST_INC)
BENCH_OBJ   := $(patsubst src/%.c,$(BUILD)/tools/obj/%.o,$(CORE_SRC))
BENCH_PROGS := $(BENCH_DIR)/bench_pipeline $(BENCH_DIR)/bench_entropy $(BENCH_DIR)/bench_sha256 \
               $(BENCH_DIR)/bench_plot $(BENCH_DIR)/bench_fgkaslr
DEPS        += $(patsubst $(BENCH_DIR)/%,$(BENCH_DIR)/main/%.d,$(BENCH_PROGS))

$(BENCH_DIR)/main/%.o: test/bench/%.c
	@mkdir -p $(@D)
	$(HOSTCC) $(BENCH_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(BENCH_DIR)/bench_%: $(BENCH_DIR)/main/bench_%.o $(BENCH_OBJ)
	$(HOSTCC) $(BENCH_CFLAGS) $< $(BENCH_OBJ) $(HOST_LDLIBS) -o $@

# the synthetic kernels come from the unit tests' builder
$(BENCH_DIR)/bench_fgkaslr: test/unit/fgk_build.h

.PHONY: bench bench-build
bench-build: $(BENCH_PROGS) $(BENCH_DIR)/icount.so

# the payloads and the loader are benchmarked too: build them first
bench: $(BENCH_PROGS) $(BENCH_DIR)/icount.so $(BUILD)/BOOTX64.EFI payloads
	@BUILD=$(BUILD) BENCH_QUICK=$(BENCH_QUICK) test/bench/run.sh

# the TCG plugin of the counted boots (test/bench/count.sh): loaded by
# QEMU, so position-independent, its QEMU symbols resolved at load time
$(BENCH_DIR)/icount.so: test/bench/icount.c
	@mkdir -p $(@D)
	$(HOSTCC) $(HOST_BASE_CFLAGS) -O2 -fPIC -shared -fvisibility=hidden $< -o $@

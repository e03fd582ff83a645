# test/fault/fault.mk - the fault injector (test/fault/inject.c and friends),
# a test-only EFI application built with the loader's own gnu-efi flags and
# linker script; included by the top Makefile.
#
#   make fault-build   $(BUILD)/fault/INJECT.EFI
#   make test-fault    every fault case under QEMU + OVMF (test/fault/run.sh)

FAULT_SRC := $(wildcard test/fault/*.c)
# efi/serial.c: the loader's polled UART output, reused for the lines the
# injector writes while the firmware must not be called
FAULT_OBJ := $(patsubst test/fault/%.c,$(BUILD)/fault/%.o,$(FAULT_SRC)) $(BUILD)/efi/serial.o
FAULT_EFI := $(BUILD)/fault/INJECT.EFI

DEPS      += $(patsubst test/fault/%.c,$(BUILD)/fault/%.d,$(FAULT_SRC))

$(BUILD)/fault/%.o: test/fault/%.c
	@mkdir -p $(@D)
	$(CC) $(EFI_CFLAGS) $(DEPFLAGS) -Iefi -c $< -o $@

$(BUILD)/fault/inject.so: $(FAULT_OBJ) loader.lds
	$(LD) $(EFI_LDFLAGS) $(EFI_CRT0) $(FAULT_OBJ) -L$(EFI_LIB) -lefi -lgnuefi \
	      $(LIBGCC) -o $@

$(FAULT_EFI): $(BUILD)/fault/inject.so
	$(OBJCOPY) -j .text -j .reloc -j .data -j .bss -j .dynamic -j .rela \
	   --strip-all --target=efi-app-x86_64 --subsystem=10 $< $@
	@test/check-image.sh $< $@ --no-policy

.PHONY: fault-build test-fault
fault-build: $(FAULT_EFI)

test-fault: $(BUILD)/BOOTX64.EFI $(FAULT_EFI) payloads
	@test/fault/run.sh

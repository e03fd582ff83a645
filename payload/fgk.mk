# payload/fgk.mk - the function-granular KASLR test kernel, included by
# payload/payload.mk.  kernel-fgk.elf is the higher-half payload (main.c's
# checks, built as PAYLOAD_VARIANT_HIGH) plus FGK_FUNCTIONS generated
# functions (payload/fgkgen.c, run at build time into $(FGK_DIR); nothing
# generated is committed) and their checks (payload/fgk_main.c), linked
# with payload/fgk.lds, which leaves .text.* to ld's orphan placement: one
# output section per function.
#
# The function sections are exactly the ones the kernel can account for
# at run time, so that its count of moved functions must equal the
# loader's: the generated file is compiled with -ffunction-sections (the
# FGK_FUNCTIONS functions and the dispatcher fgk_direct), and entry.S's
# .entry is renamed .text._start, so the entry point moves too and the
# loader must enter at its new place.  The other objects keep their code
# in .text, which stays.  payload/check-fgk.sh checks the count.
# entry.S is assembled with payload_main renamed to fgk_payload_main, so
# the fgk checks run first and end in the common ones.

PAYLOAD_FGK   := $(PAYLOAD_DIR)/kernel-fgk.elf
FGK_DIR       := $(PAYLOAD_DIR)/fgk
FGK_FUNCTIONS := 1200
PAYLOADS      += $(PAYLOAD_FGK)

# -fno-toplevel-reorder: functions in source order, so the tables fgkgen
# writes in id order are sorted at link time (gcc reverses them otherwise);
# jump tables stay on (no -fno-jump-tables anywhere in PAYLOAD_CFLAGS)
FGK_CFLAGS = $(PAYLOAD_CFLAGS) $(PAYLOAD_CFLAGS_high) \
    -fno-toplevel-reorder -DPAYLOAD_LINK_BASE=$(PAYLOAD_BASE_high) \
    -DPAYLOAD_LINK_PHYS=$(PAYLOAD_PHYS_high)
FGK_OBJS := $(addprefix $(FGK_DIR)/,$(PAYLOAD_OBJ_NAMES) fgk_main.o fgk_gen.o)
DEPS     += $(FGK_OBJS:.o=.d) $(FGK_DIR)/fgkgen.d

$(FGK_DIR)/fgkgen: payload/fgkgen.c
	@mkdir -p $(@D)
	$(HOSTCC) $(HOST_BASE_CFLAGS) -O2 $(DEPFLAGS) $< -o $@

$(FGK_DIR)/fgk_gen.c $(FGK_DIR)/fgk_links.lds &: $(FGK_DIR)/fgkgen payload/fgk.mk
	$(FGK_DIR)/fgkgen $(FGK_FUNCTIONS) $(FGK_DIR)/fgk_gen.c $(FGK_DIR)/fgk_links.lds

# (no debug information for the generated file: the same code, a fifth
# less of the build's longest compile)
$(FGK_DIR)/fgk_gen.o: $(FGK_DIR)/fgk_gen.c payload/fgk.mk
	$(CC) $(filter-out -g,$(FGK_CFLAGS)) -ffunction-sections $(DEPFLAGS) -c $< -o $@
$(FGK_DIR)/%.o: payload/%.c payload/payload.mk payload/fgk.mk
	@mkdir -p $(@D)
	$(CC) $(FGK_CFLAGS) $(DEPFLAGS) -c $< -o $@
$(FGK_DIR)/core_%.o: src/%.c payload/payload.mk payload/fgk.mk
	@mkdir -p $(@D)
	$(CC) $(FGK_CFLAGS) $(DEPFLAGS) -c $< -o $@
$(FGK_DIR)/entry.o: payload/entry.S payload/payload.mk payload/fgk.mk
	@mkdir -p $(@D)
	$(CC) $(FGK_CFLAGS) $(DEPFLAGS) -MF $(@:.o=.d) -MT $@ -Dpayload_main=fgk_payload_main \
	    -c $< -o $@.tmp
	$(OBJCOPY) --rename-section .entry=.text._start $@.tmp $@
	rm -f $@.tmp

$(PAYLOAD_FGK): $(FGK_OBJS) $(FGK_DIR)/fgk_links.lds payload/fgk.lds \
        payload/check-elf.sh payload/check-fgk.sh
	$(LD) $(PAYLOAD_LDFLAGS) --emit-relocs -T payload/fgk.lds \
	    --defsym=payload_link_base=$(PAYLOAD_BASE_high) \
	    --defsym=payload_link_phys=$(PAYLOAD_PHYS_high) \
	    $(FGK_OBJS) $(FGK_DIR)/fgk_links.lds -o $@.tmp
	payload/check-elf.sh high $@.tmp
	payload/check-fgk.sh $@.tmp $(FGK_FUNCTIONS)
	mv $@.tmp $@

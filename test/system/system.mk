# test/system/system.mk - make test-system: a real Debian 12 system (built
# with mmdebstrap and cached under build/system/) booted through the loader,
# through systemd-boot, plain and under Secure Boot with a TPM, and a kernel
# update inside it; a laptop with Microsoft's keys only, from GRUB through
# shim and MokManager to the loader and back; a LUKS2 volume sealed to the
# loader's PCRs across a kernel update (test/system/run.sh); included by
# the top Makefile.

.PHONY: test-system
test-system: $(BUILD)/BOOTX64.EFI $(POLICY_TOOL) $(DEB_FILE)
	@test/system/run.sh

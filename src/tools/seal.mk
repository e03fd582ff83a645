# src/tools/seal.mk - what the package carries for sealing a disk to the
# next boot's PCRs; included by src/tools/debian/deb.mk, whose
# install-hooks runs SEAL_INSTALL and whose control file takes the
# relations below.
#   $(KL_LIB)/kaslr-pcr       the prediction (build/tools/kaslr-pcr)
#   $(KL_LIB)/kaslr-reseal    binds SEAL='s volumes to it (src/tools/kaslr-reseal.sh),
#                             called by kaslr-loader-update and at boot by
#   kaslr-reseal.service      in $(prefix)/lib/systemd/system, wanted by
#                             multi-user.target (a relative link beside it)
SEAL_FILES    := $(PCR_TOOL) src/tools/kaslr-reseal.sh src/tools/kaslr-reseal.service
# kaslr-pcr's libcrypto; clevis and tpm2-tools only where SEAL= is set
SEAL_DEPENDS  := libssl3
SEAL_SUGGESTS := clevis-luks, clevis-tpm2, clevis-systemd, tpm2-tools, xxd
SEAL_UNITS     = $(DESTDIR)$(prefix)/lib/systemd/system
define SEAL_INSTALL
install -D -m 0755 $(PCR_TOOL) $(DESTDIR)$(KL_LIB)/kaslr-pcr
	$(KL_PATHS) src/tools/kaslr-reseal.sh >$(DESTDIR)$(KL_LIB)/kaslr-reseal
	chmod 0755 $(DESTDIR)$(KL_LIB)/kaslr-reseal
	mkdir -p $(SEAL_UNITS)/multi-user.target.wants
	$(KL_PATHS) src/tools/kaslr-reseal.service >$(SEAL_UNITS)/kaslr-reseal.service
	ln -sf ../kaslr-reseal.service $(SEAL_UNITS)/multi-user.target.wants/kaslr-reseal.service
endef

# src/tools/debian/deb.mk - installing the host side and packaging it;
# included by the top Makefile.
#
#   make install-hooks [DESTDIR=] [prefix=/usr] [sysconfdir=/etc]
#       the unsigned loader image, kaslr-policy, kaslr-repack and
#       guest-clock.sh (kaslr-sweep's clock) in
#       $(prefix)/lib/kaslr-loader/, kaslr-sweep in $(prefix)/bin/,
#       kaslr-loader-install and
#       kaslr-loader-update in $(prefix)/sbin/, the kernel-install plugin,
#       the /etc/kernel/post{inst,rm}.d hooks, the /etc/initramfs/post-update.d
#       hook, /etc/kaslr-loader/install.conf
#       (never replaced when it exists) and the README
#   make deb
#       $(DEB_FILE): the same tree with a DEBIAN/control written here and
#       the maintainer scripts prerm (removal takes kaslr-loader off the
#       ESP) and postrm, built with dpkg-deb (test/install/deb.sh installs
#       and removes it in a root directory of its own).  Depends: what every
#       configuration needs; Recommends: sbsigntool, which SIGN_KEY= needs;
#       Suggests: what REPACK=1 needs, and systemd-boot.

prefix     ?= /usr
sysconfdir ?= /etc
KL_LIB      = $(prefix)/lib/kaslr-loader
DEB_VERSION := $(shell sed -n 's/^\#define LDR_VERSION "\(.*\)"/\1/p' efi/bli.h)
DEB_ROOT    := $(BUILD)/deb/root
DEB_FILE    := $(BUILD)/deb/kaslr-loader_$(DEB_VERSION)_amd64.deb
HOOK_FILES  := src/tools/kaslr-install.sh src/tools/kaslr-repack.sh src/tools/kaslr-sweep.sh \
               src/tools/guest-clock.sh src/tools/kaslr-esp.sh \
               $(wildcard src/tools/hooks/*) src/tools/debian/install.conf README

# the scripts name each other by their installed paths: follow prefix
KL_PATHS = sed -e 's|/usr/sbin/kaslr-loader|$(prefix)/sbin/kaslr-loader|' \
               -e 's|/usr/lib/kaslr-loader|$(KL_LIB)|' \
               -e 's|/etc/kaslr-loader/|$(sysconfdir)/kaslr-loader/|'

.PHONY: install-hooks deb
install-hooks: $(BUILD)/BOOTX64.EFI $(POLICY_TOOL) $(HOOK_FILES)
	install -D -m 0644 $(BUILD)/BOOTX64.EFI $(DESTDIR)$(KL_LIB)/kaslr-loader.efi
	install -D -m 0755 $(POLICY_TOOL) $(DESTDIR)$(KL_LIB)/kaslr-policy
	install -D -m 0755 src/tools/kaslr-repack.sh $(DESTDIR)$(KL_LIB)/kaslr-repack
	install -D -m 0755 src/tools/kaslr-install.sh $(DESTDIR)$(prefix)/sbin/kaslr-loader-install
	mkdir -p $(DESTDIR)$(prefix)/bin
	$(KL_PATHS) src/tools/kaslr-sweep.sh >$(DESTDIR)$(prefix)/bin/kaslr-sweep
	install -D -m 0644 src/tools/guest-clock.sh $(DESTDIR)$(KL_LIB)/guest-clock.sh
	install -D -m 0644 src/tools/kaslr-esp.sh $(DESTDIR)$(KL_LIB)/kaslr-esp.sh
	chmod 0755 $(DESTDIR)$(prefix)/bin/kaslr-sweep
	mkdir -p $(DESTDIR)$(prefix)/lib/kernel/install.d $(DESTDIR)$(sysconfdir)/kernel/postinst.d \
	         $(DESTDIR)$(sysconfdir)/kernel/postrm.d $(DESTDIR)$(sysconfdir)/kaslr-loader \
	         $(DESTDIR)$(sysconfdir)/initramfs/post-update.d
	$(KL_PATHS) src/tools/hooks/kaslr-loader-update.sh >$(DESTDIR)$(prefix)/sbin/kaslr-loader-update
	$(KL_PATHS) src/tools/hooks/95-kaslr-loader.install \
	    >$(DESTDIR)$(prefix)/lib/kernel/install.d/95-kaslr-loader.install
	$(KL_PATHS) src/tools/hooks/zz-kaslr-loader.postinst >$(DESTDIR)$(sysconfdir)/kernel/postinst.d/zz-kaslr-loader
	$(KL_PATHS) src/tools/hooks/zz-kaslr-loader.postrm >$(DESTDIR)$(sysconfdir)/kernel/postrm.d/zz-kaslr-loader
	$(KL_PATHS) src/tools/hooks/kaslr-loader.post-update >$(DESTDIR)$(sysconfdir)/initramfs/post-update.d/kaslr-loader
	chmod 0755 $(DESTDIR)$(prefix)/sbin/kaslr-loader-update \
	    $(DESTDIR)$(prefix)/lib/kernel/install.d/95-kaslr-loader.install \
	    $(DESTDIR)$(sysconfdir)/kernel/postinst.d/zz-kaslr-loader \
	    $(DESTDIR)$(sysconfdir)/kernel/postrm.d/zz-kaslr-loader \
	    $(DESTDIR)$(sysconfdir)/initramfs/post-update.d/kaslr-loader
	[ -e $(DESTDIR)$(sysconfdir)/kaslr-loader/install.conf ] || \
	    install -m 0644 src/tools/debian/install.conf $(DESTDIR)$(sysconfdir)/kaslr-loader/install.conf
	install -D -m 0644 README $(DESTDIR)$(prefix)/share/doc/kaslr-loader/README
	@echo "installed kaslr-loader's host side under $(or $(DESTDIR),/)"

deb: $(DEB_FILE)
DEB_SCRIPTS := src/tools/debian/prerm src/tools/debian/postrm
$(DEB_FILE): $(BUILD)/BOOTX64.EFI $(POLICY_TOOL) $(HOOK_FILES) $(DEB_SCRIPTS) src/tools/debian/deb.mk
	rm -rf $(DEB_ROOT)
	$(MAKE) --no-print-directory install-hooks DESTDIR=$(DEB_ROOT) prefix=/usr sysconfdir=/etc
	mkdir -p $(DEB_ROOT)/DEBIAN
	for f in $(DEB_SCRIPTS); do $(KL_PATHS) $$f >$(DEB_ROOT)/DEBIAN/$${f##*/}; chmod 0755 $(DEB_ROOT)/DEBIAN/$${f##*/}; done
	glibc=$$(objdump -T $(POLICY_TOOL) | sed -n 's/.*GLIBC_\([0-9.]*\).*/\1/p' | sort -V | tail -n 1); \
	printf '%s\n' 'Package: kaslr-loader' 'Version: $(DEB_VERSION)' 'Architecture: amd64' \
	    'Maintainer: kaslr-loader authors <root@localhost>' 'Section: admin' 'Priority: optional' \
	    "Depends: libc6 (>= $$glibc), bash" \
	    'Recommends: sbsigntool' \
	    'Suggests: systemd-boot, binutils, xz-utils' \
	    "Installed-Size: $$(du -sk --exclude=DEBIAN $(DEB_ROOT) | cut -f1)" \
	    'Description: UEFI loader placing the kernel at a random address' \
	    ' kaslr-loader loads an ELF kernel at a random physical (and virtual) address,' \
	    ' with a policy embedded in its signed image for Secure Boot and TPM' \
	    ' measurements.  Kernel hooks keep the EFI system partition up to date.' \
	    ' .' \
	    ' Signing the loader for Secure Boot (SIGN_KEY= in install.conf) needs' \
	    ' sbsigntool; repacking kernels (REPACK=1) needs binutils and xz-utils;' \
	    ' systemd-boot shows an entry for the loader.' \
	    >$(DEB_ROOT)/DEBIAN/control
	cd $(DEB_ROOT) && find etc -type f | sed 's|^|/|' | sort >DEBIAN/conffiles
	dpkg-deb --root-owner-group --build $(DEB_ROOT) $@

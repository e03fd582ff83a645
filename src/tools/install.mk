# src/tools/install.mk - installing the host side, and the Debian packages
# built from it; included by the top Makefile.
#
#   make install-hooks [DESTDIR=] [prefix=/usr] [sysconfdir=/etc]
#       the unsigned loader image, kaslr-policy, kaslr-repack, kaslr-esp.sh
#       (the ESP checks the tools share), kaslr-reseal (SEAL=: sealed
#       volumes bound to the next boot's PCRs), guest-clock.sh (kaslr-sweep's
#       clock) and report-init.sh (test/linux/init.sh, the /init of
#       kaslr-sweep --initramfs-report) in $(prefix)/lib/kaslr-loader/, kaslr-sweep
#       and kaslr-pcr in $(prefix)/bin/, kaslr-loader-install and kaslr-loader-update in
#       $(prefix)/sbin/, the kernel-install plugin, the
#       /etc/kernel/post{inst,rm}.d hooks, the /etc/initramfs/post-update.d
#       hook, kaslr-reseal.service in $(unitdir) (debhelper enables it in
#       the package; by hand: systemctl enable kaslr-reseal.service),
#       /etc/kaslr-loader/install.conf (never replaced when it
#       exists) and the README.  This is the upstream install that
#       debian/rules runs.
#   make deb
#       build/deb/kaslr-loader_VERSION_amd64.deb and kaslr-sweep_VERSION_amd64.deb:
#       debian/ (debhelper) run by dpkg-buildpackage -b in a copy of the
#       source tree (build/deb/kaslr-loader-VERSION/), reusing this tree's
#       build directory (KASLR_LOADER_BUILD), so nothing is compiled twice.
#       test/install/deb.sh runs lintian on them and installs them in a
#       root directory of its own.

prefix     ?= /usr
sysconfdir ?= /etc
# systemd's units: Debian 12 keeps a package's in /lib (dh_installsystemd
# looks there), whatever the prefix
unitdir    ?= /lib/systemd/system
KL_LIB      = $(prefix)/lib/kaslr-loader
DEB_VERSION := $(shell sed -n 's/^\#define LDR_VERSION "\(.*\)"/\1/p' efi/bli.h)
DEB_DIR     := $(BUILD)/deb
DEB_SRC     := $(DEB_DIR)/kaslr-loader-$(DEB_VERSION)
DEB_FILE    := $(DEB_DIR)/kaslr-loader_$(DEB_VERSION)_amd64.deb
HOOK_FILES  := src/tools/kaslr-install.sh src/tools/kaslr-repack.sh src/tools/kaslr-sweep.sh \
               src/tools/guest-clock.sh src/tools/kaslr-esp.sh test/linux/init.sh \
               src/tools/kaslr-reseal.sh src/tools/kaslr-reseal.service \
               $(wildcard src/tools/hooks/*) src/tools/install.conf README

# the scripts name each other by their installed paths: follow prefix
KL_PATHS = sed -e 's|/usr/sbin/kaslr-loader|$(prefix)/sbin/kaslr-loader|' \
               -e 's|/usr/lib/kaslr-loader|$(KL_LIB)|' \
               -e 's|/usr/bin/kaslr-pcr|$(prefix)/bin/kaslr-pcr|' \
               -e 's|/etc/kaslr-loader/|$(sysconfdir)/kaslr-loader/|'

.PHONY: install-hooks deb
install-hooks: $(BUILD)/BOOTX64.EFI $(POLICY_TOOL) $(PCR_TOOL) $(HOOK_FILES)
	install -D -m 0644 $(BUILD)/BOOTX64.EFI $(DESTDIR)$(KL_LIB)/kaslr-loader.efi
	install -D -m 0755 $(POLICY_TOOL) $(DESTDIR)$(KL_LIB)/kaslr-policy
	install -D -m 0755 src/tools/kaslr-repack.sh $(DESTDIR)$(KL_LIB)/kaslr-repack
	install -D -m 0644 src/tools/kaslr-esp.sh $(DESTDIR)$(KL_LIB)/kaslr-esp.sh
	install -D -m 0644 src/tools/guest-clock.sh $(DESTDIR)$(KL_LIB)/guest-clock.sh
	install -D -m 0644 test/linux/init.sh $(DESTDIR)$(KL_LIB)/report-init.sh
	mkdir -p $(DESTDIR)$(prefix)/bin $(DESTDIR)$(prefix)/sbin $(DESTDIR)$(prefix)/lib/kernel/install.d \
	         $(DESTDIR)$(sysconfdir)/kernel/postinst.d $(DESTDIR)$(sysconfdir)/kernel/postrm.d \
	         $(DESTDIR)$(sysconfdir)/kaslr-loader $(DESTDIR)$(sysconfdir)/initramfs/post-update.d \
	         $(DESTDIR)$(unitdir)
	install -m 0755 $(PCR_TOOL) $(DESTDIR)$(prefix)/bin/kaslr-pcr
	$(KL_PATHS) src/tools/kaslr-sweep.sh >$(DESTDIR)$(prefix)/bin/kaslr-sweep
	$(KL_PATHS) src/tools/kaslr-reseal.sh >$(DESTDIR)$(KL_LIB)/kaslr-reseal
	$(KL_PATHS) src/tools/kaslr-reseal.service >$(DESTDIR)$(unitdir)/kaslr-reseal.service
	chmod 0644 $(DESTDIR)$(unitdir)/kaslr-reseal.service
	$(KL_PATHS) src/tools/kaslr-install.sh >$(DESTDIR)$(prefix)/sbin/kaslr-loader-install
	$(KL_PATHS) src/tools/hooks/kaslr-loader-update.sh >$(DESTDIR)$(prefix)/sbin/kaslr-loader-update
	$(KL_PATHS) src/tools/hooks/95-kaslr-loader.install \
	    >$(DESTDIR)$(prefix)/lib/kernel/install.d/95-kaslr-loader.install
	$(KL_PATHS) src/tools/hooks/zz-kaslr-loader.postinst >$(DESTDIR)$(sysconfdir)/kernel/postinst.d/zz-kaslr-loader
	$(KL_PATHS) src/tools/hooks/zz-kaslr-loader.postrm >$(DESTDIR)$(sysconfdir)/kernel/postrm.d/zz-kaslr-loader
	$(KL_PATHS) src/tools/hooks/kaslr-loader.post-update >$(DESTDIR)$(sysconfdir)/initramfs/post-update.d/kaslr-loader
	chmod 0755 $(DESTDIR)$(prefix)/bin/kaslr-sweep $(DESTDIR)$(KL_LIB)/kaslr-reseal \
	    $(DESTDIR)$(prefix)/sbin/kaslr-loader-install $(DESTDIR)$(prefix)/sbin/kaslr-loader-update \
	    $(DESTDIR)$(prefix)/lib/kernel/install.d/95-kaslr-loader.install \
	    $(DESTDIR)$(sysconfdir)/kernel/postinst.d/zz-kaslr-loader \
	    $(DESTDIR)$(sysconfdir)/kernel/postrm.d/zz-kaslr-loader \
	    $(DESTDIR)$(sysconfdir)/initramfs/post-update.d/kaslr-loader
	[ -e $(DESTDIR)$(sysconfdir)/kaslr-loader/install.conf ] || \
	    install -m 0644 src/tools/install.conf $(DESTDIR)$(sysconfdir)/kaslr-loader/install.conf
	install -D -m 0644 README $(DESTDIR)$(prefix)/share/doc/kaslr-loader/README
	@echo "installed kaslr-loader's host side under $(or $(DESTDIR),/)"

# The source tree as a release tarball would hold it (no build/, no VCS,
# no debhelper leftovers), copied with its times so that make in the copy
# finds this build directory up to date; dpkg-buildpackage puts the
# packages beside the copy.
deb: $(DEB_FILE)
$(DEB_FILE): $(BUILD)/BOOTX64.EFI $(POLICY_TOOL) $(PCR_TOOL) $(SWEEP_TOOL) $(HOOK_FILES) $(wildcard debian/* debian/*/* docs/man/*) \
             src/tools/install.mk LICENSE
	@command -v dpkg-buildpackage >/dev/null && command -v dh >/dev/null || \
	  { echo "make deb: dpkg-buildpackage and debhelper missing (make deps)" >&2; exit 1; }
	rm -rf $(DEB_SRC) $(DEB_DIR)/*.deb $(DEB_DIR)/*.changes $(DEB_DIR)/*.buildinfo
	mkdir -p $(DEB_SRC)
	tar -c --exclude-vcs --exclude='./$(BUILD)' --exclude='./build*' --exclude=./debian/tmp \
	    --exclude=./debian/.debhelper --exclude=./debian/kaslr-loader --exclude=./debian/kaslr-sweep \
	    --exclude=./debian/files --exclude='./debian/*.substvars' --exclude='./debian/*.debhelper*' . | \
	  tar -x -C $(DEB_SRC)
	cd $(DEB_SRC) && KASLR_LOADER_BUILD=$(abspath $(BUILD)) dpkg-buildpackage -b -us -uc >../dpkg-buildpackage.log 2>&1 || \
	  { tail -n 20 $(DEB_DIR)/dpkg-buildpackage.log; exit 1; }
	rm -rf $(DEB_SRC)
	@ls $(DEB_DIR)/*.deb

#!/bin/bash
# test/install/deb.sh - `make deb`, installed with dpkg into a root directory
# of this test's own (never the real system), then its kernel hooks run
# against a temporary ESP with the files of the Debian kernel package that
# test/linux/fetch.sh downloads (build/linux/pkg/boot/vmlinuz-*): install,
# a second version through the kernel-install plugin, removals, and finally
# the package purged, leaving nothing behind.
# One "ok NAME" / "FAIL NAME: why" line per check; the last line is
# "deb: N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
SDBOOT=/usr/lib/systemd/boot/efi/systemd-bootx64.efi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. test/tally.sh
finish() { tally_end deb; }
sha() { sha256sum "$1" | cut -d' ' -f1; }

if ! make --no-print-directory deb >"$T/make.log" 2>&1; then
	bad make-deb "$(tail -n 3 "$T/make.log")"; finish
fi
deb=$(find "$B/deb" -maxdepth 1 -name 'kaslr-loader_*_amd64.deb' | head -n 1)
[ -n "$deb" ] || { bad make-deb "no .deb in $B/deb"; finish; }
ok make-deb
if dpkg-deb -f "$deb" Package Version Architecture Depends | grep -q '^Package: kaslr-loader$'; then ok control
else bad control "$(dpkg-deb -f "$deb" 2>&1 | head -n 3)"; fi

# a root of our own: an empty dpkg database; no package there provides the
# dependencies (bash, binutils, ...), which the host has: --force-depends
R=$T/root
mkdir -p "$R/var/lib/dpkg/info" "$R/var/lib/dpkg/updates" "$R/var/lib/dpkg/triggers"
: >"$R/var/lib/dpkg/status"; : >"$R/var/lib/dpkg/available"
if dpkg --root="$R" --force-depends -i "$deb" >"$T/dpkg-i.log" 2>&1 &&
   dpkg --root="$R" -s kaslr-loader 2>/dev/null | grep -q '^Status: install ok installed'; then ok dpkg-install
else bad dpkg-install "$(tail -n 3 "$T/dpkg-i.log")"; finish; fi
missing=0
while read -r f; do
	[ -e "$R/$f" ] || { missing=1; bad dpkg-files "$f not installed"; }
done < <(dpkg-deb -c "$deb" | awk '$1 !~ /^d/ {print $6}' | sed 's|^\./||')
[ "$missing" = 0 ] && ok dpkg-files

# the Debian kernel's files
gz=$(test/linux/fetch.sh 2>"$T/fetch.log") || { bad kernel "fetch.sh: $(tail -n 1 "$T/fetch.log")"; finish; }
vmlinuz=$(find "$B/linux/pkg/boot" -maxdepth 1 -name 'vmlinuz-*' 2>/dev/null | head -n 1)
[ -f "$vmlinuz" ] || { bad kernel "no vmlinuz in $B/linux/pkg/boot"; finish; }
V=${vmlinuz##*/vmlinuz-} V2=${V}-next
BOOT=$T/boot
mkdir -p "$BOOT"
cp "$vmlinuz" "$BOOT/vmlinuz-$V"
printf 'initrd of %s\n' "$V" >"$BOOT/initrd.img-$V"

export KASLR_LOADER_CONF=$T/install.conf KASLR_LOADER_LIB=$R/usr/lib/kaslr-loader \
	KASLR_LOADER_INSTALL=$R/usr/sbin/kaslr-loader-install \
	KASLR_LOADER_UPDATE=$R/usr/sbin/kaslr-loader-update KASLR_LOADER_BOOT=$BOOT \
	KASLR_LOADER_SDBOOT_HOOK=$T/no-systemd-boot-hook
POSTINST=$R/etc/kernel/postinst.d/zz-kaslr-loader
POSTRM=$R/etc/kernel/postrm.d/zz-kaslr-loader
PLUGIN=$R/usr/lib/kernel/install.d/90-kaslr-loader.install
TOOL=$KASLR_LOADER_LIB/kaslr-policy

# 1. the package as installed (no ESP= configured): the hooks leave the ESP alone
E=$T/esp
mkdir -p "$E/EFI/BOOT" "$E/loader/entries"
cp "$SDBOOT" "$E/EFI/BOOT/BOOTX64.EFI"
cp "$R/etc/kaslr-loader/install.conf" "$KASLR_LOADER_CONF"
if "$POSTINST" "$V" "$BOOT/vmlinuz-$V" >"$T/h0.log" 2>&1 && grep -q 'ESP= is not set' "$T/h0.log" &&
   [ "$(find "$E" -type f | wc -l)" = 1 ]; then ok unconfigured
else bad unconfigured "$(cat "$T/h0.log")"; fi

# 2. configured, with a signing key: the postinst hook installs version V
openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 1 -subj /CN=kaslr-loader-hooks \
	-keyout "$T/k.pem" -out "$T/c.pem" >/dev/null 2>&1 || bad key "openssl"
cat >"$KASLR_LOADER_CONF" <<EOF
ESP=$E
INSTALL_PATH=EFI/kaslr/kaslr-loader.efi
CMDLINE="console=ttyS0 root=/dev/vda1 ro"
SIGN_KEY=$T/k.pem
SIGN_CERT=$T/c.pem
EOF
L=$E/EFI/kaslr/kaslr-loader.efi D=$E/EFI/kaslr
pins() { "$TOOL" show "$L" 2>/dev/null | sed -n 's/^\(kernel\|initrd\) *\([^ ]*\) sha256=\([0-9a-f]*\)$/\1 \2 \3/p'; }
if ! "$POSTINST" "$V" "$BOOT/vmlinuz-$V" >"$T/h1.log" 2>&1; then bad postinst "$(tail -n 3 "$T/h1.log")"
else
	ok postinst
	if cmp -s "$D/vmlinuz-$V" "$BOOT/vmlinuz-$V"; then ok postinst-as-shipped
	else bad postinst-as-shipped "$D/vmlinuz-$V is not a copy of $BOOT/vmlinuz-$V"; fi
	want=$(printf 'kernel \\EFI\\kaslr\\vmlinuz-%s %s\ninitrd \\EFI\\kaslr\\initrd.img-%s %s' \
		"$V" "$(sha "$BOOT/vmlinuz-$V")" "$V" "$(sha "$BOOT/initrd.img-$V")")
	if [ "$(pins)" = "$want" ]; then ok postinst-policy
	else bad postinst-policy "$(pins | tr '\n' ' ')"; fi
	if "$TOOL" show "$L" | grep -qx 'cmdline  console=ttyS0 root=/dev/vda1 ro' &&
	   sbverify --cert "$T/c.pem" "$L" >/dev/null 2>&1; then ok postinst-signed
	else bad postinst-signed "$("$TOOL" show "$L" 2>&1 | head -n 2)"; fi
	if [ -f "$E/loader/entries/kaslr-loader.conf" ] && cmp -s "$E/EFI/BOOT/BOOTX64.EFI" "$SDBOOT"; then
		ok postinst-entry
	else bad postinst-entry "no entry, or systemd-boot changed"; fi
fi

# 2b. REPACK=1: the same version as a gzip'd vmlinux (the bytes fetch.sh's
# repack gives), the as-shipped copy gone; then back without it
cp "$KASLR_LOADER_CONF" "$T/install.conf.plain"
echo REPACK=1 >>"$KASLR_LOADER_CONF"
if "$POSTINST" "$V" "$BOOT/vmlinuz-$V" >"$T/h1r.log" 2>&1 && cmp -s "$D/vmlinux-$V.gz" "$gz" &&
   [ ! -e "$D/vmlinuz-$V" ] && pins | grep -q "^kernel .*vmlinux-$V.gz $(sha "$gz")$"; then ok postinst-repack
else bad postinst-repack "$(tail -n 3 "$T/h1r.log"; pins | tr '\n' ' ')"; fi
cp "$T/install.conf.plain" "$KASLR_LOADER_CONF"
if "$POSTINST" "$V" "$BOOT/vmlinuz-$V" >"$T/h1p.log" 2>&1 && [ ! -e "$D/vmlinux-$V.gz" ] &&
   cmp -s "$D/vmlinuz-$V" "$BOOT/vmlinuz-$V"; then ok postinst-unrepack
else bad postinst-unrepack "$(tail -n 3 "$T/h1p.log")"; fi

# 3. a second version through the kernel-install plugin: it alone is pinned
cp "$vmlinuz" "$BOOT/vmlinuz-$V2"
printf 'initrd of %s\n' "$V2" >"$BOOT/initrd.img-$V2"
if "$PLUGIN" add "$V2" "$T/entry-dir" "$BOOT/vmlinuz-$V2" "$BOOT/initrd.img-$V2" >"$T/h2.log" 2>&1 &&
   pins | grep -q "^kernel .*vmlinuz-$V2 " && pins | grep -q "^initrd .*initrd.img-$V2 " &&
   [ ! -e "$D/vmlinuz-$V" ] && [ ! -e "$D/initrd.img-$V" ] && [ -f "$D/vmlinuz-$V2" ]; then
	ok plugin-add
else bad plugin-add "$(tail -n 3 "$T/h2.log"; pins | tr '\n' ' ')"; fi

# 4. removing the pinned version V2 (dpkg removes /boot's files first): back to V
rm -f "$BOOT/vmlinuz-$V2" "$BOOT/initrd.img-$V2"
if "$POSTRM" "$V2" "$BOOT/vmlinuz-$V2" >"$T/h3.log" 2>&1 && [ ! -e "$D/vmlinuz-$V2" ] &&
   pins | grep -q "^kernel .*vmlinuz-$V " && [ -f "$D/vmlinuz-$V" ]; then ok postrm-fallback
else bad postrm-fallback "$(tail -n 3 "$T/h3.log"; pins | tr '\n' ' ')"; fi

# 5. the last kernel removed through the plugin: its files go, one warning
rm -f "$BOOT/vmlinuz-$V" "$BOOT/initrd.img-$V"
if "$PLUGIN" remove "$V" "$T/entry-dir" >"$T/h4.log" 2>&1 && [ ! -e "$D/vmlinuz-$V" ] &&
   [ ! -e "$D/initrd.img-$V" ] && grep -q 'warning: no kernel left' "$T/h4.log"; then ok plugin-remove-last
else bad plugin-remove-last "$(cat "$T/h4.log")"; fi

# 6. with systemd-boot's own hook present the Debian hook leaves it to kernel-install
printf '#!/bin/sh\n' >"$KASLR_LOADER_SDBOOT_HOOK"; chmod +x "$KASLR_LOADER_SDBOOT_HOOK"
before=$(find "$E" -type f -newer "$T/h4.log" | wc -l)
cp "$vmlinuz" "$BOOT/vmlinuz-$V"
if "$POSTINST" "$V" "$BOOT/vmlinuz-$V" >"$T/h5.log" 2>&1 && [ ! -e "$D/vmlinuz-$V" ] &&
   [ "$(find "$E" -type f -newer "$T/h4.log" | wc -l)" = "$before" ]; then ok defers-to-kernel-install
else bad defers-to-kernel-install "$(cat "$T/h5.log")"; fi

# 7. purge: nothing of the package is left in the root
if dpkg --root="$R" -P kaslr-loader >"$T/dpkg-p.log" 2>&1; then
	left=$(find "$R" -mindepth 1 ! -path "$R/var" ! -path "$R/var/lib" ! -path "$R/var/lib/dpkg*" | head -n 5)
	if [ -z "$left" ] && ! dpkg --root="$R" -s kaslr-loader >/dev/null 2>&1; then ok dpkg-purge
	else bad dpkg-purge "left behind: $left"; fi
else bad dpkg-purge "$(tail -n 3 "$T/dpkg-p.log")"; fi
finish

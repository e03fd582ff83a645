#!/bin/bash
# test/install/deb.sh - `make deb` (debian/, debhelper): lintian on both
# packages (any error or warning fails), their control relations; then
# installed with dpkg into roots of this test's own (never the real
# system):
#   - the first install from the package: install.conf alone (ESP= and
#     CMDLINE=) and `kaslr-loader-update install` on a running system's ESP
#     (test/install/fake-efi.sh: efibootmgr, mountpoint, findmnt, lsblk and
#     /sys made up), then `check`; the package removed: the ESP as before,
#     the Boot#### entry the install made deleted, BootOrder as it was;
#     a kernel installed after that: the hook says nothing, status 0;
#     purged: nothing left but a keys/ directory, kept with one line;
#   - the kernel hooks against a temporary ESP with the files of the
#     Debian kernel package that test/linux/fetch.sh downloads
#     (build/linux/pkg/boot/vmlinuz-*): install, a second version through
#     the kernel-install plugin, the same update seen by several hooks done
#     once, the loader's own trouble (no sbsign, no key, a copy that fails)
#     never failing a hook nor kernel-install's next plugin, removals,
#     TRUST=shim, the packages removed (the ESP as it was before) and
#     purged, leaving nothing behind.
# One "ok NAME" / "FAIL NAME: why" line per check; the last line is
# "deb: N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
SDBOOT=/usr/lib/systemd/boot/efi/systemd-bootx64.efi
SDBOOT_PLUGIN=/usr/lib/kernel/install.d/90-loaderentry.install
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. test/tally.sh
. test/install/signed.sh
. test/install/fake-efi.sh
finish() { tally_end deb; }
sha() { sha256sum "$1" | cut -d' ' -f1; }
snap() { (cd "$1" && find . -printf '%y %p\n' | sort && find . -type f -exec sha256sum {} + | sort -k 2); }

if ! make --no-print-directory deb >"$T/make.log" 2>&1; then
	bad make-deb "$(tail -n 3 "$T/make.log")"; finish
fi
deb=$(find "$B/deb" -maxdepth 1 -name 'kaslr-loader_*_amd64.deb' | head -n 1)
sweepdeb=$(find "$B/deb" -maxdepth 1 -name 'kaslr-sweep_*_amd64.deb' | head -n 1)
{ [ -n "$deb" ] && [ -n "$sweepdeb" ]; } || { bad make-deb "no kaslr-loader and kaslr-sweep .deb in $B/deb"; finish; }
ok make-deb
# lintian: no error, no warning (an override only with its reason)
command -v lintian >/dev/null || bad lintian "lintian missing (make deps)"
for d in "$deb" "$sweepdeb"; do
	n=${d##*/}; n=${n%%_*}
	if lintian --fail-on error,warning "$d" >"$T/lintian-$n.log" 2>&1; then ok "lintian-$n"
	else bad "lintian-$n" "$(grep -v 'root privileges' "$T/lintian-$n.log" | tr '\n' '|')"; fi
done
# every override has its reason: a comment just above it
why=''
for o in debian/*.lintian-overrides; do
	[ -f "$o" ] || continue
	why+=$(awk -v f="$o" '/^[[:space:]]*$/ {c = 0; next} /^#/ {c = 1; next} !c {print f ": " $0 " (no comment above it)"}' "$o")
done
if [ -z "$why" ]; then ok lintian-overrides-reasoned
else bad lintian-overrides-reasoned "$why"; fi
if dpkg-deb -f "$deb" Package Version Architecture Depends | grep -q '^Package: kaslr-loader$' &&
   [ "$(dpkg-deb -f "$deb" Version)" = "$(dpkg-parsechangelog -l debian/changelog -S Version)" ] &&
   [ "$(dpkg-deb -f "$deb" Version)" = "$(sed -n 's/^#define LDR_VERSION "\(.*\)"/\1/p' efi/bli.h)" ]; then ok control
else bad control "$(dpkg-deb -f "$deb" 2>&1 | head -n 3)"; fi
# Depends: what every configuration needs, the shared libraries of the
# tools alone (kaslr-policy's C library; kaslr-pcr's libcrypto and the
# decompressors the core links), as dh_shlibdeps finds them; Recommends: efibootmgr (a Boot#### entry on the
# running system) and sbsigntool (SIGN_KEY, TRUST=shim's checks); the
# rest suggested; kaslr-sweep depends on what it runs.  apt resolves it
# from the file.
dep=$(dpkg-deb -f "$deb" Depends) rec=$(dpkg-deb -f "$deb" Recommends) sug=$(dpkg-deb -f "$deb" Suggests)
sdep=$(dpkg-deb -f "$sweepdeb" Depends) srec=$(dpkg-deb -f "$sweepdeb" Recommends)
deps_libs=1
IFS=, read -r -a dl <<<"$dep"
for d in "${dl[@]}"; do
	d=${d# }
	case $d in lib* | zlib1g*) ;; *) deps_libs=0 ;; esac
done
if [[ $deps_libs == 1 && $dep == libc6* && $dep == *libssl3* && $rec == *sbsigntool* && $rec == *efibootmgr* &&
      $sug == *binutils* && $sug == *xz-utils* && $sug == *openssl* && $sug == *kaslr-sweep* &&
      $sdep == *qemu-system-x86* && $sdep == *ovmf* && $sdep == *mtools* && $sdep == *"kaslr-loader (= "* &&
      $srec == *busybox-static* && $srec == *cpio* ]]; then
	ok control-relations
else bad control-relations "Depends: $dep; Recommends: $rec; Suggests: $sug; kaslr-sweep Depends: $sdep Recommends: $srec"; fi
# kaslr-sweep --initramfs-report's /init where the tool looks for it: the
# boot tests' own test/linux/init.sh
if dpkg-deb --fsys-tarfile "$sweepdeb" | tar -xO ./usr/lib/kaslr-loader/report-init.sh 2>/dev/null | cmp -s - test/linux/init.sh &&
   grep -q '/usr/lib/kaslr-loader/report-init.sh' src/tools/kaslr-sweep.sh; then ok sweep-report-init
else bad sweep-report-init "kaslr-sweep's package has no /usr/lib/kaslr-loader/report-init.sh equal to test/linux/init.sh"; fi
if apt-get -s install "./$deb" >"$T/apt.log" 2>&1 && grep -q '^Inst kaslr-loader ' "$T/apt.log"; then ok apt-install
else bad apt-install "$(tail -n 3 "$T/apt.log")"; fi
# the man pages the package ships: every page in docs/man/ but kaslr-sweep's
want=$(find docs/man -name '*.[1-8]' ! -name kaslr-sweep.1 -printf '%f.gz\n' | sort)
have=$(dpkg-deb -c "$deb" | sed -n 's|.*/usr/share/man/man[1-8]/||p' | sed '/^$/d' | sort)
if [ -n "$want" ] && [ "$want" = "$have" ]; then ok man-pages-shipped
else bad man-pages-shipped "docs/man: $(echo "$want" | tr '\n' ' '); the package: $(echo "$have" | tr '\n' ' ')"; fi

# a root of our own: an empty dpkg database; no package there provides the
# dependencies (libc6...), which the host has: --force-depends; the
# maintainer scripts run on the host with DPKG_ROOT set (no shell in $R)
newroot() {
	mkdir -p "$1/var/lib/dpkg/info" "$1/var/lib/dpkg/updates" "$1/var/lib/dpkg/triggers"
	: >"$1/var/lib/dpkg/status"; : >"$1/var/lib/dpkg/available"
}
R=$T/root
newroot "$R"
DPKG=(dpkg --root="$R" --force-depends --force-script-chrootless)
if "${DPKG[@]}" -i "$deb" "$sweepdeb" >"$T/dpkg-i.log" 2>&1 &&
   dpkg --root="$R" -s kaslr-loader 2>/dev/null | grep -q '^Status: install ok installed' &&
   dpkg --root="$R" -s kaslr-sweep 2>/dev/null | grep -q '^Status: install ok installed'; then ok dpkg-install
else bad dpkg-install "$(tail -n 3 "$T/dpkg-i.log")"; finish; fi
missing=0
while read -r f; do
	[ -e "$R/$f" ] || { missing=1; bad dpkg-files "$f not installed"; }
done < <({ dpkg-deb -c "$deb"; dpkg-deb -c "$sweepdeb"; } | awk '$1 !~ /^d/ {print $6}' | sed 's|^\./||')
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

# 0. the first install from the package, on the running system's ESP
first_install() {
	local R0=$T/root0 E0=$T/esp-first F=$T/efi n left
	local D0=(dpkg --root="$R0" --force-depends --force-script-chrootless)
	newroot "$R0"
	mkdir -p "$E0"
	fake_efi "$F" "$E0" || { bad first-setup "fake_efi"; return; }
	"${D0[@]}" -i "$deb" >"$T/d0.log" 2>&1 || { bad first-setup "dpkg -i: $(tail -n 2 "$T/d0.log")"; return; }
	snap "$E0" >"$T/e0.snap"
	cp "$F/nvram/entries" "$T/nvram0.entries"; cp "$F/nvram/order" "$T/nvram0.order"
	# install.conf: what an administrator fills in, nothing else
	printf 'ESP=%s\nCMDLINE="console=ttyS0 root=/dev/vda1 ro"\n' "$E0" >"$T/first.conf"
	# the tools as the package installed them, on the made-up running system
	fe() { env PATH="$F/bin:$PATH" KASLR_LOADER_SYS="$F/sys" KASLR_LOADER_CONF="$T/first.conf" \
		KASLR_LOADER_BOOT="$BOOT" KASLR_LOADER_RELEASE="$V" "$@"; }
	{
		fe DPKG_ROOT="$R0" "$R0/usr/sbin/kaslr-loader-update" install >"$T/first.log" 2>&1
		echo "install $?"
		"$R0/usr/lib/kaslr-loader/kaslr-policy" show "$E0/EFI/kaslr-loader/kaslr-loader.efi" >"$T/first.pins" 2>&1
		echo "BootOrder $(cat "$F/nvram/order")" >"$T/first.nvram"
		fe DPKG_ROOT="$R0" "$R0/usr/sbin/kaslr-loader-update" check >"$T/check.log" 2>&1
		echo "check $?"
		# a kernel newer than the one installed: check says so
		cp "$BOOT/vmlinuz-$V" "$BOOT/vmlinuz-$V2"
		fe DPKG_ROOT="$R0" "$R0/usr/sbin/kaslr-loader-update" check >"$T/check2.log" 2>&1
		echo "check2 $?"
		rm -f "$BOOT/vmlinuz-$V2"
		fe "${D0[@]}" -r kaslr-loader >"$T/d0r.log" 2>&1
		echo "remove $?"
		# a kernel installed with the package removed: the conffile hook stays
		fe "$R0/etc/kernel/postinst.d/zz-kaslr-loader" "$V" "$BOOT/vmlinuz-$V" >"$T/after.log" 2>&1
		echo "after $?"
		mkdir -p "$R0/etc/kaslr-loader/keys" && echo key >"$R0/etc/kaslr-loader/keys/db.key"
		fe "${D0[@]}" -P kaslr-loader >"$T/d0p.log" 2>&1
		echo "purge $?"
	} >"$T/first.st"
	if grep -qx 'install 0' "$T/first.st"; then ok first-install
	else bad first-install "$(tail -n 2 "$T/first.log")"; fi
	n=$(grep -cF -- '--create --disk /dev/vda --part 1 --label kaslr-loader --loader \EFI\kaslr-loader\kaslr-loader.efi' "$F/nvram/calls")
	if [ "$n" = 1 ] && [ "$(sed -n 's/^BootOrder //p' "$T/first.nvram")" = 0002,0000,0001 ] &&
	   grep -q "^kernel *\\\\EFI\\\\kaslr-loader\\\\vmlinuz-$V sha256=$(sha "$BOOT/vmlinuz-$V")$" "$T/first.pins"; then
		ok first-install-default-path
	else bad first-install-default-path "$n creates: $(tr '\n' '|' <"$F/nvram/calls"); $(tr '\n' '|' <"$T/first.pins")"; fi
	if grep -qx 'check 0' "$T/first.st" && [ "$(wc -l <"$T/check.log")" = 1 ]; then ok first-check
	else bad first-check "$(tr '\n' '|' <"$T/check.log")"; fi
	if grep -qx 'check2 1' "$T/first.st" && [ "$(wc -l <"$T/check2.log")" = 1 ] && grep -q "the newest in .* is $V2" "$T/check2.log"; then
		ok first-check-disagrees
	else bad first-check-disagrees "$(tr '\n' '|' <"$T/check2.log")"; fi
	if grep -qx 'remove 0' "$T/first.st" && snap "$E0" | cmp -s - "$T/e0.snap"; then ok first-remove-esp
	else bad first-remove-esp "$(tail -n 2 "$T/d0r.log"; snap "$E0" | diff "$T/e0.snap" - | head -n 4)"; fi
	if cmp -s "$F/nvram/entries" "$T/nvram0.entries" && cmp -s "$F/nvram/order" "$T/nvram0.order" &&
	   grep -qx -- '-b 0002 -B' "$F/nvram/calls"; then ok first-remove-boot-entry
	else bad first-remove-boot-entry "BootOrder $(cat "$F/nvram/order"); entries $(cut -c 1-4 "$F/nvram/entries" | tr '\n' ' ')"; fi
	if grep -qx 'after 0' "$T/first.st" && [ ! -s "$T/after.log" ]; then ok removed-hook-quiet
	else bad removed-hook-quiet "$(grep after "$T/first.st"): $(cat "$T/after.log")"; fi
	# (deb-systemd-helper, enabling kaslr-reseal.service, made /etc/systemd/system
	# and /var/lib/systemd, which every Debian system has: purge leaves them
	# empty; anything in them is residue)
	left=$(cd "$R0" && find . -mindepth 1 ! -path ./var ! -path ./var/lib ! -path './var/lib/dpkg*' ! -path ./etc \
		! -path ./etc/kaslr-loader ! -path './etc/kaslr-loader/keys*' \
		! -path ./etc/systemd ! -path ./etc/systemd/system ! -path ./var/lib/systemd | head -n 5)
	if grep -qx 'purge 0' "$T/first.st" && [ -z "$left" ] && [ -f "$R0/etc/kaslr-loader/keys/db.key" ] &&
	   [ "$(grep -c 'kept .*keys' "$T/d0p.log")" = 1 ]; then ok purge-keeps-keys
	else bad purge-keeps-keys "left: $left; $(tail -n 2 "$T/d0p.log")"; fi
}
first_install
export KASLR_LOADER_CONF=$T/install.conf KASLR_LOADER_LIB=$R/usr/lib/kaslr-loader \
	KASLR_LOADER_INSTALL=$R/usr/sbin/kaslr-loader-install \
	KASLR_LOADER_UPDATE=$R/usr/sbin/kaslr-loader-update KASLR_LOADER_BOOT=$BOOT \
	KASLR_LOADER_STATE=$R/var/lib/kaslr-loader
POSTINST=$R/etc/kernel/postinst.d/zz-kaslr-loader
POSTRM=$R/etc/kernel/postrm.d/zz-kaslr-loader
POSTUPDATE=$R/etc/initramfs/post-update.d/kaslr-loader
PLUGIN=$(find "$R/usr/lib/kernel/install.d" -name '*kaslr-loader.install' | head -n 1)
TOOL=$KASLR_LOADER_LIB/kaslr-policy

# 1. the package as installed (no ESP= configured): the hooks leave the ESP alone
E=$T/esp
mkdir -p "$E/EFI/BOOT" "$E/loader/entries"
cp "$SDBOOT" "$E/EFI/BOOT/BOOTX64.EFI"
snap "$E" >"$T/esp0.snap"
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

# 3b. one kernel update reaches kaslr-loader-update from several hooks
# (with systemd-boot: initramfs-tools' post-update.d and postinst.d both
# run kernel-install): the same inputs onto the ESP the last run left is
# done once, the loader not written again
cp "$L" "$T/loader-v2.efi"
if "$POSTINST" "$V2" "$BOOT/vmlinuz-$V2" >"$T/h2b.log" 2>&1 && grep -q 'nothing to do' "$T/h2b.log" &&
   [ "$(wc -l <"$T/h2b.log")" = 1 ] && [ "$L" -ot "$T/h2b.log" ] && cmp -s "$L" "$T/loader-v2.efi"; then ok once-per-update
else bad once-per-update "$(head -n 3 "$T/h2b.log")"; fi

# an older version (update-initramfs -k all through systemd-boot's hook
# reaches kernel-install for each) does not displace the newest
if "$PLUGIN" add "$V" "$T/entry-dir" "$BOOT/vmlinuz-$V" "$BOOT/initrd.img-$V" >"$T/h2c.log" 2>&1 &&
   grep -q 'older than' "$T/h2c.log" && cmp -s "$L" "$T/loader-v2.efi" && [ ! -e "$D/vmlinuz-$V" ]; then ok older-left-out
else bad older-left-out "$(cat "$T/h2c.log")"; fi

# 3c. the loader's own trouble never fails a hook: with SIGN_KEY set and no
# sbsign on PATH, a key that cannot be read, a copy to the ESP that fails:
# status 0, one line saying what was skipped and how to fix it, V2 still
# pinned with its files, nothing of V3 on the ESP.  Through kernel-install
# (its plugins in the order of their names, stopping at the first that
# fails) systemd-boot's entry plugin still runs.
V3=${V}-third
cp "$vmlinuz" "$BOOT/vmlinuz-$V3"; printf 'initrd of %s\n' "$V3" >"$BOOT/initrd.img-$V3"
NOSB=$T/nosb; mkdir "$NOSB"
# (the first of each name, as PATH would find it; one ln for them all)
declare -A nosb_seen=()
nosb=()
for f in /usr/local/bin/* /usr/local/sbin/* /usr/bin/* /usr/sbin/*; do
	b=${f##*/}
	case $b in sbsign | sbverify) continue ;; esac
	[ -n "${nosb_seen[$b]+x}" ] || { nosb_seen[$b]=1; nosb+=("$f"); }
done
ln -s -t "$NOSB" -- "${nosb[@]}"
# systemd's kernel-install with its own entry plugin and ours, in the
# order kernel-install gives its plugins (file names, sort -V), writing
# systemd-boot's entry into a boot root of this test's own
KI_ROOT=$T/sdboot-root MID=0123456789abcdef0123456789abcdef
{ command -v kernel-install && [ -x "$SDBOOT_PLUGIN" ]; } >/dev/null ||
	bad kernel-install "kernel-install or $SDBOOT_PLUGIN missing (Debian package systemd: make deps)"
mkdir -p "$KI_ROOT/loader/entries" "$KI_ROOT/$MID"
ki_plugins=$(for p in "$SDBOOT_PLUGIN" "$PLUGIN"; do echo "${p##*/} $p"; done | sort -V | cut -d' ' -f2 | tr '\n' ' ')
kernel_install() {
	MACHINE_ID=$MID BOOT_ROOT=$KI_ROOT KERNEL_INSTALL_PLUGINS=$ki_plugins kernel-install "$@" 2>&1 |
		grep -v '^$' # kernel-install's own blank lines
	return "${PIPESTATUS[0]}"
}
still_v2() {
	pins | grep -q "^kernel .*vmlinuz-$V2 $(sha "$BOOT/vmlinuz-$V2")$" && cmp -s "$L" "$T/loader-v2.efi" &&
		[ -f "$D/vmlinuz-$V2" ] && [ -f "$D/initrd.img-$V2" ] && [ -z "$(find "$E" -name "*$V3*" -o -name '*.kaslr-new')" ]
}
trouble() { # NAME WANT LOG: status 0 (checked by the caller), one line matching WANT, V2 kept
	if [ "$(wc -l <"$3")" = 1 ] && grep -q "$2" "$3" && grep -q "kaslr-loader-update add $V3" "$3" && still_v2; then ok "$1"
	else bad "$1" "$(head -n 3 "$3" | tr '\n' ' '; pins | tr '\n' ' ')"; fi
}
if PATH=$NOSB "$POSTINST" "$V3" "$BOOT/vmlinuz-$V3" >"$T/h3a.log" 2>&1; then trouble no-sbsign-postinst 'sbsigntool' "$T/h3a.log"
else bad no-sbsign-postinst "status $?: $(cat "$T/h3a.log")"; fi
if PATH=$NOSB kernel_install add "$V3" "$BOOT/vmlinuz-$V3" "$BOOT/initrd.img-$V3" >"$T/h3b.log" 2>&1; then
	trouble no-sbsign-kernel-install 'sbsigntool' "$T/h3b.log"
else bad no-sbsign-kernel-install "kernel-install failed (status $?): $(cat "$T/h3b.log")"; fi
if [ -f "$KI_ROOT/loader/entries/$MID-$V3.conf" ]; then ok sdboot-entry-plugin-runs
else bad sdboot-entry-plugin-runs "no systemd-boot entry for $V3: kernel-install stopped before 90-loaderentry.install? $(ls "$KI_ROOT/loader/entries")"; fi
cp "$KASLR_LOADER_CONF" "$T/install.conf.signed"
sed -i "s|^SIGN_KEY=.*|SIGN_KEY=$T/absent.pem|" "$KASLR_LOADER_CONF"
if "$POSTINST" "$V3" "$BOOT/vmlinuz-$V3" >"$T/h3c.log" 2>&1; then trouble no-key 'cannot read' "$T/h3c.log"
else bad no-key "status $?: $(cat "$T/h3c.log")"; fi
cp "$T/install.conf.signed" "$KASLR_LOADER_CONF"
# a cp that cannot write into the ESP (as on a full one)
FULL=$T/full; mkdir "$FULL"
# shellcheck disable=SC2016 # the wrapper's own arguments
printf '#!/bin/bash\ncase ${*: -1} in "%s"/*) echo "cp: error writing: No space left on device" >&2; exit 1 ;; esac\nexec /bin/cp "$@"\n' "$E" >"$FULL/cp"
chmod +x "$FULL/cp"
if PATH=$FULL:$PATH "$POSTINST" "$V3" "$BOOT/vmlinuz-$V3" >"$T/h3d.log" 2>&1; then trouble esp-full 'cannot write' "$T/h3d.log"
else bad esp-full "status $?: $(cat "$T/h3d.log")"; fi
rm -f "$BOOT/vmlinuz-$V3" "$BOOT/initrd.img-$V3"

# 3d. update-initramfs rebuilt the pinned version's initrd: the
# post-update.d hook puts it on the ESP and pins it, under another name
# than the one the loader in place pinned (initrd.img-V@HASH: the old
# initrd's bytes never change under the old pin), and the old file goes;
# another version's rebuilt initrd leaves the ESP alone
printf 'initrd of %s, rebuilt\n' "$V2" >"$BOOT/initrd.img-$V2"
if "$POSTUPDATE" "$V2" "$BOOT/initrd.img-$V2" >"$T/h3e.log" 2>&1 &&
   pins | grep -q "^initrd \\\\EFI\\\\kaslr\\\\initrd.img-$V2@$(sha "$BOOT/initrd.img-$V2" | cut -c 1-16) $(sha "$BOOT/initrd.img-$V2")$" &&
   cmp -s "$D/initrd.img-$V2@$(sha "$BOOT/initrd.img-$V2" | cut -c 1-16)" "$BOOT/initrd.img-$V2" && [ ! -e "$D/initrd.img-$V2" ]; then
	ok initramfs-refresh
else bad initramfs-refresh "$(tail -n 2 "$T/h3e.log"; pins | tr '\n' ' ')"; fi
cp "$L" "$T/loader-refreshed.efi"
if "$POSTUPDATE" "$V" "$BOOT/initrd.img-$V" >"$T/h3f.log" 2>&1 && grep -q 'nothing to do' "$T/h3f.log" &&
   cmp -s "$L" "$T/loader-refreshed.efi"; then ok initramfs-other-version
else bad initramfs-other-version "$(cat "$T/h3f.log")"; fi

# 4. removing the pinned version V2 (dpkg removes /boot's files first): back to V
rm -f "$BOOT/vmlinuz-$V2" "$BOOT/initrd.img-$V2"
if "$POSTRM" "$V2" "$BOOT/vmlinuz-$V2" >"$T/h3.log" 2>&1 && [ ! -e "$D/vmlinuz-$V2" ] &&
   pins | grep -q "^kernel .*vmlinuz-$V " && [ -f "$D/vmlinuz-$V" ]; then ok postrm-fallback
else bad postrm-fallback "$(tail -n 3 "$T/h3.log"; pins | tr '\n' ' ')"; fi

# 5. the last kernel removed through the plugin: the ESP keeps it (the
# loader pins it and it still boots), one warning
rm -f "$BOOT/vmlinuz-$V" "$BOOT/initrd.img-$V"
if "$PLUGIN" remove "$V" "$T/entry-dir" >"$T/h4.log" 2>&1 && [ -f "$D/vmlinuz-$V" ] &&
   pins | grep -q "^kernel .*vmlinuz-$V " && grep -q 'warning: no kernel left' "$T/h4.log"; then ok plugin-remove-last
else bad plugin-remove-last "$(cat "$T/h4.log")"; fi

# 6. a version that is not the one on the ESP: nothing done
if "$POSTRM" "$V2" >"$T/h5.log" 2>&1 && grep -q 'nothing to do' "$T/h5.log" && pins | grep -q "^kernel .*vmlinuz-$V "; then
	ok postrm-other
else bad postrm-other "$(cat "$T/h5.log")"; fi

# 6b. TRUST=shim, no key on the machine: Debian's signed kernel in two
# versions (test/install/signed.sh: their vmlinuz extracted with dpkg-deb,
# since dpkg --root would run the packages' maintainer scripts
# chroot-less here, and those run the HOST's /etc/kernel hooks and write
# its /lib/modules) put into a /boot of this test's own; the package's
# postinst.d and postrm.d hooks then run as the kernel's maintainer
# scripts run them.  The loader was installed once, signed, through shim;
# install.conf then holds no key: the hooks copy vmlinuz and initrd,
# rewrite kaslr.conf (both kernels, newest first, each with its initrd)
# and sign nothing (the loader's bytes stay the same).  Which kernels
# shim would start: test/install/hooks.sh.
shim_section() {
	local new old B2=$T/kboot E2=$T/shimesp D2 L2 before c K=$T/signed
	if ! signed_kernels "$K"; then bad shim-fetch "$sk_why"; return; fi
	new=$sk_new old=$sk_old
	ok shim-fetch
	mkdir -p "$B2" "$E2"
	key=$T/snakeoil.key
	openssl rsa -passin pass:snakeoil -in /usr/share/ovmf/PkKek-1-snakeoil.key -out "$key" >/dev/null 2>&1 ||
		{ bad shim-install "cannot decrypt the snakeoil key"; return; }
	# version old installed by the owner, with the key, through shim
	cp "$K/vmlinuz-$old" "$B2/" && printf 'initrd of %s\n' "$old" >"$B2/initrd.img-$old"
	if ! "$KASLR_LOADER_INSTALL" --esp "$E2" --install-path EFI/kaslr-loader/shimx64.efi \
		--loader "$KASLR_LOADER_LIB/kaslr-loader.efi" --tool "$TOOL" --kernel "$B2/vmlinuz-$old" \
		--initrd "$B2/initrd.img-$old" --cmdline "root=/dev/vda ro" --shim /usr/lib/shim/shimx64.efi \
		--trust shim --sign-key "$key" --sign-cert /usr/share/ovmf/PkKek-1-snakeoil.pem >"$T/s0.log" 2>&1; then
		bad shim-install "$(tail -n 2 "$T/s0.log")"; return
	fi
	D2=$E2/EFI/kaslr-loader L2=$D2/grubx64.efi
	if cmp -s "$D2/shimx64.efi" /usr/lib/shim/shimx64.efi && "$TOOL" show "$L2" | grep -q '^trust *pins or shim'; then ok shim-install
	else bad shim-install "no shim at EFI/kaslr-loader/shimx64.efi or no TRUST=shim policy in grubx64.efi"; return; fi
	before=$(sha "$L2")
	printf 'ESP=%s\nINSTALL_PATH=EFI/kaslr-loader/shimx64.efi\nSHIM=/usr/lib/shim/shimx64.efi\nTRUST=shim\nCMDLINE="root=/dev/vda ro"\n' \
		"$E2" >"$T/shim.conf"
	# the apt upgrade: version new's files, then its postinst hook
	cp "$K/vmlinuz-$new" "$B2/" && printf 'initrd of %s\n' "$new" >"$B2/initrd.img-$new"
	if KASLR_LOADER_CONF=$T/shim.conf KASLR_LOADER_BOOT=$B2 KASLR_LOADER_STATE=$T/shimstate \
		"$POSTINST" "$new" "$B2/vmlinuz-$new" >"$T/s1.log" 2>&1; then :; else bad shim-upgrade "hook failed: $(tail -n 2 "$T/s1.log")"; fi
	# the block: both kernels as real lines, newest first, each with its
	# initrd (the loader falls back to the second when shim refuses the first)
	c=$(sed -n '/^# kaslr-loader-update: begin/,/^# kaslr-loader-update: end/p' "$D2/kaslr.conf" 2>/dev/null)
	if [ "$c" = "$(shim_block "$new" "$old")" ] &&
	   [ "$(grep -c '^[[:space:]]*\(kernel\|initrd\)' "$D2/kaslr.conf")" = 4 ] &&
	   cmp -s "$D2/vmlinuz-$new" "$B2/vmlinuz-$new" && cmp -s "$D2/initrd.img-$new" "$B2/initrd.img-$new" &&
	   [ -f "$D2/vmlinuz-$old" ] && [ -f "$D2/initrd.img-$old" ]; then ok shim-upgrade
	else bad shim-upgrade "kaslr.conf: $(tr '\n' '|' <"$D2/kaslr.conf"); $(tail -n 3 "$T/s1.log" | tr '\n' ' ')"; fi
	if [ "$(sha "$L2")" = "$before" ] && ! grep -q 'sbsign\|signed with' "$T/s1.log"; then ok shim-nothing-signed
	else bad shim-nothing-signed "the loader changed: $(cat "$T/s1.log")"; fi
	# an unsigned kernel (the -unsigned package's) is never made the one kaslr.conf names
	cp "$vmlinuz" "$B2/vmlinuz-6.1.0-999-amd64"
	if KASLR_LOADER_CONF=$T/shim.conf KASLR_LOADER_BOOT=$B2 KASLR_LOADER_STATE=$T/shimstate \
		"$POSTINST" 6.1.0-999-amd64 "$B2/vmlinuz-6.1.0-999-amd64" >"$T/s2.log" 2>&1 &&
	   grep -q 'vmlinuz-6.1.0-999-amd64 carries no signature' "$T/s2.log" && grep -qx "kernel vmlinuz-$new" "$D2/kaslr.conf" &&
	   [ ! -e "$D2/vmlinuz-6.1.0-999-amd64" ]; then ok shim-unsigned-left-out
	else bad shim-unsigned-left-out "$(cat "$T/s2.log")"; fi
	rm -f "$B2/vmlinuz-6.1.0-999-amd64"
	# the new version removed again (dpkg removes /boot's files, then postrm.d)
	rm -f "$B2/vmlinuz-$new" "$B2/initrd.img-$new"
	if KASLR_LOADER_CONF=$T/shim.conf KASLR_LOADER_BOOT=$B2 KASLR_LOADER_STATE=$T/shimstate \
		"$POSTRM" "$new" >"$T/s3.log" 2>&1 && grep -qx "kernel vmlinuz-$old" "$D2/kaslr.conf" &&
	   [ ! -e "$D2/vmlinuz-$new" ] && [ "$(sha "$L2")" = "$before" ]; then ok shim-remove
	else bad shim-remove "$(cat "$T/s3.log"; tr '\n' '|' <"$D2/kaslr.conf")"; fi
}
shim_section

# 7. removing the package takes kaslr-loader off the ESP: byte for byte
# as before the first install (systemd-boot's loader, the empty entries
# directory); purge leaves nothing of the package in the root
if "${DPKG[@]}" -r kaslr-sweep kaslr-loader >"$T/dpkg-r.log" 2>&1 && snap "$E" | cmp -s - "$T/esp0.snap"; then ok dpkg-remove-esp
else bad dpkg-remove-esp "$(tail -n 3 "$T/dpkg-r.log"; snap "$E" | diff "$T/esp0.snap" - | head -n 5)"; fi
if "${DPKG[@]}" -P kaslr-sweep kaslr-loader >"$T/dpkg-p.log" 2>&1; then
	# (/etc/systemd/system and /var/lib/systemd left empty, as above)
	left=$(find "$R" -mindepth 1 ! -path "$R/var" ! -path "$R/var/lib" ! -path "$R/var/lib/dpkg*" ! -path "$R/etc" \
		! -path "$R/etc/systemd" ! -path "$R/etc/systemd/system" ! -path "$R/var/lib/systemd" | head -n 5)
	if [ -z "$left" ] && ! dpkg --root="$R" -s kaslr-loader >/dev/null 2>&1; then ok dpkg-purge
	else bad dpkg-purge "left behind: $left"; fi
else bad dpkg-purge "$(tail -n 3 "$T/dpkg-p.log")"; fi
finish

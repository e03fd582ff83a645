#!/bin/bash
# test/install/hooks.sh - the kernel hooks (kaslr-loader-update, installed
# with make install-hooks into a root of this test's own) against what an
# ESP's other writers can leave there, and the hooks' own refusals:
#   hostile   an installed ESP whose manifest lists ../../dev/zero, a fifo,
#             a link to /dev/zero, a 3 GiB file; kaslr.conf, the manifest or
#             the kernel's name a fifo; the loader a link to /dev/zero:
#             `add` ends (a 30 s timeout tells a hang), status 1 and one
#             line, the loader untouched; the postinst hook ends with 0;
#             a link at NAME.kaslr-new is never written through;
#   bounded   a run that hangs in kaslr-loader-install is stopped after
#             KASLR_LOADER_TIMEOUT seconds, with its children, one line;
#   key       a SIGN_KEY its group may read is refused, one line;
#   shim      TRUST=shim without SHIM= is refused, one line; with Debian's
#             signed kernels (test/install/signed.sh) and a newer copy
#             signed with a throwaway key, `add` names the Debian ones
#             (newest first, both as real lines) and says in one line why
#             the other was left out; once that key's certificate is an
#             enrolled MOK (mok-variables or efivarfs) or in db, it is
#             named first; malformed signature lists change nothing;
#             run as systemd runs a package manager (SIGPIPE ignored),
#             reading a certificate that is not the variable's last says
#             nothing (no "Broken pipe" from the pipe that cuts it out);
#             uninstall leaves the ESP empty, the kernels the updates put
#             beside the loader gone too.
#   uki       unified kernel images (random .linux and .initrd, built with
#             test/linux/mkuki.sh): the installer refuses --initrd with one;
#             a UKI for the version in the ESP's EFI/Linux is pinned whole
#             (uki-VERSION.efi, no initrd) by the postinst hook, check
#             agrees, disagrees once it is rebuilt, the initramfs hook
#             pins the rebuilt one; kernel-install's plugin with
#             layout=uki pins KERNEL_IMAGE or the staging area's uki.efi;
#             TRUST=shim names a MOK-signed UKI in EFI/Linux where it is,
#             leaves out an unsigned one, copies one handed over.
#             (hooks.sh uki runs these alone.)
# One "ok NAME" / "FAIL NAME: why" line per check; the last line is
# "hooks: N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
T=$(mktemp -d)
# what the hanging stand-in started, should it survive
trap 'for p in "$T"/*.pid; do [ -f "$p" ] && kill "$(cat "$p")" 2>/dev/null; done; rm -rf "$T"' EXIT
. test/tally.sh
. test/install/signed.sh
finish() { tally_end hooks; }

R=$T/root
make --no-print-directory install-hooks DESTDIR="$R" >"$T/hooks.log" 2>&1 ||
	{ bad setup "make install-hooks: $(tail -n 2 "$T/hooks.log")"; finish; }
export KASLR_LOADER_CONF=$T/install.conf KASLR_LOADER_LIB=$R/usr/lib/kaslr-loader \
	KASLR_LOADER_INSTALL=$R/usr/sbin/kaslr-loader-install KASLR_LOADER_BOOT=$T/boot \
	KASLR_LOADER_STATE=$T/state KASLR_LOADER_SYS=$T/sys
UPDATE=$R/usr/sbin/kaslr-loader-update
POSTINST=$R/etc/kernel/postinst.d/zz-kaslr-loader
export KASLR_LOADER_UPDATE=$UPDATE
TOOL=$KASLR_LOADER_LIB/kaslr-policy
mkdir -p "$T/boot" "$T/sys/firmware/efi"
V1=6.1.0-98-amd64 V2=6.1.0-99-amd64
cp "$B/payload/kernel-pie.elf" "$T/boot/vmlinuz-$V1"
cp "$B/payload/kernel-high.elf" "$T/boot/vmlinuz-$V2"
printf 'initrd of %s\n' "$V1" >"$T/boot/initrd.img-$V1"
printf 'initrd of %s\n' "$V2" >"$T/boot/initrd.img-$V2"
conf() { printf '%s\n' "ESP=$1" INSTALL_PATH=EFI/kaslr/kaslr-loader.efi "${@:2}" >"$KASLR_LOADER_CONF"; }

BASE=$T/base
mkdir "$BASE"
conf "$BASE"
"$UPDATE" add "$V1" >"$T/base.log" 2>&1 || { bad setup "add $V1: $(tail -n 1 "$T/base.log")"; finish; }
L=EFI/kaslr/kaslr-loader.efi D=EFI/kaslr
"$TOOL" show "$BASE/$L" | grep -q "vmlinuz-$V1 sha256=" || { bad setup "$V1 not pinned"; finish; }

# ---- unified kernel images: a UKI as the kernel (built here as
# linuxx64.efi.stub(7) shows, test/linux/mkuki.sh, from random .linux and
# .initrd: the tools pin and copy it, they never boot it)
# mkuki NAME: $T/NAME.efi, a UKI of its own bytes
mkuki() {
	mkdir -p "$T/$1.src"
	head -c 65536 /dev/urandom >"$T/$1.src/linux"
	head -c 4096 /dev/urandom >"$T/$1.src/initrd"
	test/linux/mkuki.sh "$T/$1.efi" --linux "$T/$1.src/linux" --initrd "$T/$1.src/initrd" \
		--cmdline "console=ttyS0 kl.uki=$1" >/dev/null 2>&1
}
# pins LOADER: its policy's "KIND PATH SHA" lines
pins() { "$TOOL" show "$1" 2>/dev/null | sed -n 's/^\(kernel\|initrd\) *\([^ ]*\) sha256=\([0-9a-f]*\)$/\1 \2 \3/p'; }
sha() { sha256sum <"$1" | cut -d' ' -f1; }
uki_checks() {
	local E U2 U3 U4 V3=6.1.0-100-amd64 V4=6.1.0-101-amd64 rc want
	for n in u2 u2b u3 u4; do mkuki "$n" || { bad uki-setup "mkuki.sh $n (systemd-boot-efi's stub)"; return; }; done
	U2=$T/u2.efi U3=$T/u3.efi U4=$T/u4.efi
	# the installer: a UKI takes no --initrd (one line, nothing written)
	E=$T/esp-uki0
	mkdir -p "$E"
	"$KASLR_LOADER_INSTALL" --esp "$E" --loader "$KASLR_LOADER_LIB/kaslr-loader.efi" --tool "$TOOL" \
		--kernel "$U2" --initrd "$T/boot/initrd.img-$V2" >"$T/uki0.log" 2>&1
	rc=$?
	if [ "$rc" = 1 ] && [ "$(wc -l <"$T/uki0.log")" = 1 ] && grep -q 'is a unified kernel image: its initrd is its .initrd section' "$T/uki0.log" &&
	   [ -z "$(find "$E" -type f)" ]; then ok uki-installer-no-initrd
	else bad uki-installer-no-initrd "status $rc: $(head -n 3 "$T/uki0.log" | tr '\n' '|')"; fi

	# a UKI for V2 in the ESP's EFI/Linux (kernel-install's layout=uki,
	# entry token "debian"): the postinst hook's add V2 /boot/vmlinuz-V2
	# pins it whole as uki-V2.efi, no initrd, and V1 goes
	E=$T/esp-uki
	rm -rf "$E" "$T/state"; cp -a "$BASE" "$E"; conf "$E"
	mkdir -p "$E/EFI/Linux" "$E/loader/entries"
	cp "$U2" "$E/EFI/Linux/debian-$V2.efi"
	printf 'title kaslr-loader\nefi /%s\n' "$L" >"$E/loader/entries/kaslr-loader.conf"
	"$POSTINST" "$V2" "$T/boot/vmlinuz-$V2" >"$T/uki1.log" 2>&1
	want="kernel \\$(printf '%s' "$D" | tr / '\134')\\uki-$V2.efi $(sha "$U2")"
	if [ "$(pins "$E/$L")" = "$want" ] && cmp -s "$E/$D/uki-$V2.efi" "$U2" && [ ! -e "$E/$D/vmlinuz-$V1" ] &&
	   [ ! -e "$E/$D/initrd.img-$V2" ] && [ ! -e "$E/$D/vmlinuz-$V2" ]; then ok uki-esp-pinned
	else bad uki-esp-pinned "pins: $(pins "$E/$L" | tr '\n' '|'); $(tr '\n' '|' <"$T/uki1.log")"; fi
	# check agrees; the UKI rebuilt in place: check disagrees, refresh
	# (the initramfs hook) pins the new one, check agrees again
	"$UPDATE" check >"$T/uki2.log" 2>&1
	rc=$?
	if [ "$rc" = 0 ]; then ok uki-check
	else bad uki-check "status $rc: $(tr '\n' '|' <"$T/uki2.log")"; fi
	cp "$T/u2b.efi" "$E/EFI/Linux/debian-$V2.efi"
	"$UPDATE" check >"$T/uki3.log" 2>&1
	rc=$?
	if [ "$rc" = 1 ] && grep -q "the pinned kernel is not $E/EFI/Linux/debian-$V2.efi" "$T/uki3.log"; then ok uki-check-stale
	else bad uki-check-stale "status $rc: $(tr '\n' '|' <"$T/uki3.log")"; fi
	"$R/etc/initramfs/post-update.d/kaslr-loader" "$V2" "$T/boot/initrd.img-$V2" >"$T/uki4.log" 2>&1
	if [ "$(pins "$E/$L" | cut -d' ' -f3)" = "$(sha "$T/u2b.efi")" ] && cmp -s "$E/$D/uki-$V2.efi@"* "$T/u2b.efi" &&
	   "$UPDATE" check >"$T/uki5.log" 2>&1; then ok uki-refresh
	else bad uki-refresh "pins: $(pins "$E/$L" | tr '\n' '|'); $(cat "$T/uki4.log" "$T/uki5.log" 2>/dev/null | tr '\n' '|')"; fi

	# kernel-install's plugin with layout=uki: KERNEL_IMAGE is the UKI
	# (the initrds given are not pinned), or a plugin before it built one
	# into the staging area
	KERNEL_INSTALL_LAYOUT=uki "$R/usr/lib/kernel/install.d/95-kaslr-loader.install" add "$V3" "$T/entry" "$U3" \
		"$T/boot/initrd.img-$V2" >"$T/uki6.log" 2>&1
	want="kernel \\$(printf '%s' "$D" | tr / '\134')\\uki-$V3.efi $(sha "$U3")"
	if [ "$(pins "$E/$L")" = "$want" ] && cmp -s "$E/$D/uki-$V3.efi" "$U3"; then ok uki-kernel-install
	else bad uki-kernel-install "pins: $(pins "$E/$L" | tr '\n' '|'); $(tr '\n' '|' <"$T/uki6.log")"; fi
	mkdir -p "$T/staging"
	cp "$U4" "$T/staging/uki.efi"
	KERNEL_INSTALL_LAYOUT=uki KERNEL_INSTALL_STAGING_AREA=$T/staging \
		"$R/usr/lib/kernel/install.d/95-kaslr-loader.install" add "$V4" "$T/entry" "$T/boot/vmlinuz-$V2" \
		"$T/boot/initrd.img-$V2" >"$T/uki7.log" 2>&1
	want="kernel \\$(printf '%s' "$D" | tr / '\134')\\uki-$V4.efi $(sha "$U4")"
	if [ "$(pins "$E/$L")" = "$want" ] && [ ! -e "$E/$D/uki-$V3.efi" ]; then ok uki-kernel-install-staged
	else bad uki-kernel-install-staged "pins: $(pins "$E/$L" | tr '\n' '|'); $(tr '\n' '|' <"$T/uki7.log")"; fi
	# check with V4's vmlinuz in /boot and its UKI only on the ESP (where
	# kernel-install handed it over from): the pinned copy is the UKI
	cp "$T/boot/vmlinuz-$V2" "$T/boot/vmlinuz-$V4"
	"$UPDATE" check >"$T/uki8.log" 2>&1
	rc=$?
	rm -f "$T/boot/vmlinuz-$V4"
	if [ "$rc" = 0 ]; then ok uki-check-handed-over
	else bad uki-check-handed-over "status $rc: $(tr '\n' '|' <"$T/uki8.log")"; fi

	# TRUST=shim: kaslr.conf names a signed UKI in EFI/Linux where it is
	# (no copy, no initrd line), leaves out an unsigned one, and puts a
	# signed UKI that kernel-install handed over beside the loader
	local K=$T/ukiboot E2=$T/ukishim D2 key=$T/snakeoil.key Va=6.1.0-50-amd64 Vb=6.1.0-51-amd64 Vc=6.1.0-52-amd64
	mkdir -p "$K"
	for v in "$Va" "$Vb"; do cp "$B/payload/kernel-pie.elf" "$K/vmlinuz-$v"; printf 'initrd of %s\n' "$v" >"$K/initrd.img-$v"; done
	openssl rsa -passin pass:snakeoil -in /usr/share/ovmf/PkKek-1-snakeoil.key -out "$key" >/dev/null 2>&1 ||
		{ bad uki-shim-setup "cannot decrypt the snakeoil key"; return; }
	mkdir -p "$E2/EFI/Linux"
	"$KASLR_LOADER_INSTALL" --esp "$E2" --install-path EFI/kaslr-loader/shimx64.efi \
		--loader "$KASLR_LOADER_LIB/kaslr-loader.efi" --tool "$TOOL" --kernel "$U2" \
		--shim /usr/lib/shim/shimx64.efi --trust shim \
		--sign-key "$key" --sign-cert /usr/share/ovmf/PkKek-1-snakeoil.pem >"$T/us0.log" 2>&1 ||
		{ bad uki-shim-setup "$(tail -n 1 "$T/us0.log")"; return; }
	D2=$E2/EFI/kaslr-loader
	conf "$E2" SHIM=/usr/lib/shim/shimx64.efi TRUST=shim
	sed -i 's|^INSTALL_PATH=.*|INSTALL_PATH=EFI/kaslr-loader/shimx64.efi|' "$KASLR_LOADER_CONF"
	ublock() { sed -n '/^# kaslr-loader-update: begin/,/^# kaslr-loader-update: end/p' "$D2/kaslr.conf" 2>/dev/null; }
	# the MOK that signs the UKIs
	{ openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 1 -subj /CN=kaslr-loader-uki \
		-keyout "$T/uk.pem" -out "$T/uc.pem" >/dev/null 2>&1 &&
		sbsign --key "$T/uk.pem" --cert "$T/uc.pem" --output "$E2/EFI/Linux/debian-$Vb.efi" "$U3" >/dev/null 2>&1 &&
		cp "$U4" "$E2/EFI/Linux/debian-$Va.efi" &&
		sbsign --key "$T/uk.pem" --cert "$T/uc.pem" --output "$T/uc.efi" "$T/u2b.efi" >/dev/null 2>&1 &&
		cert-to-efi-sig-list -g 605dab50-e046-4300-abb6-3dd810dd8b23 "$T/uc.pem" "$T/umok.esl" >/dev/null 2>&1; } ||
		{ bad uki-shim-setup "openssl, sbsign, cert-to-efi-sig-list"; return; }
	rm -rf "$T/sys/firmware/efi"; mkdir -p "$T/sys/firmware/efi/mok-variables"
	cp "$T/umok.esl" "$T/sys/firmware/efi/mok-variables/MokListRT"
	KASLR_LOADER_BOOT=$K "$UPDATE" add "$Vb" >"$T/us1.log" 2>&1
	if [ "$(ublock)" = "$(shim_block "kernel \\EFI\\Linux\\debian-$Vb.efi")" ] &&
	   grep -q "EFI/Linux/debian-$Va.efi carries no signature shim could verify: left out" "$T/us1.log" &&
	   [ -z "$(find "$D2" -name 'uki-*' -o -name 'vmlinuz-*')" ]; then ok uki-shim-esp
	else bad uki-shim-esp "$(ublock | tr '\n' '|'); $(tr '\n' '|' <"$T/us1.log")"; fi
	KERNEL_INSTALL_LAYOUT=uki KASLR_LOADER_BOOT=$K "$R/usr/lib/kernel/install.d/95-kaslr-loader.install" \
		add "$Vc" "$T/entry" "$T/uc.efi" >"$T/us2.log" 2>&1
	if [ "$(ublock)" = "$(shim_block "kernel uki-$Vc.efi" "kernel \\EFI\\Linux\\debian-$Vb.efi")" ] &&
	   cmp -s "$D2/uki-$Vc.efi" "$T/uc.efi"; then ok uki-shim-kernel-install
	else bad uki-shim-kernel-install "$(ublock | tr '\n' '|'); $(tr '\n' '|' <"$T/us2.log")"; fi
	rm -rf "$T/sys/firmware/efi"; mkdir -p "$T/sys/firmware/efi"
}
if [ "${1:-}" = uki ]; then uki_checks; finish; fi

# snap DIR: every path, its type and link target, each regular file's
# SHA-256 (but the huge one's); no fifo is opened
snap() {
	(cd "$1" && find . -printf '%y %p %l\n' | sort && find . -type f -size -100M -exec sha256sum {} + | sort -k 2)
}
# hostile NAME PATTERN SETUP...: a copy of the installed ESP, SETUP run in
# it (as "sh -c", $E the ESP), then add V2: it must end with status 1, say
# one line matching PATTERN and leave the ESP as it was
hostile() {
	local name=$1 want=$2 rc n
	shift 2
	E=$T/esp-$name
	rm -rf "$E" "$T/state"
	cp -a "$BASE" "$E"
	conf "$E"
	E=$E sh -c "$*" || { bad "hostile-$name" "setup failed"; return; }
	snap "$E" >"$T/$name.snap"
	timeout 30 "$UPDATE" add "$V2" >"$T/$name.log" 2>&1
	rc=$?
	n=$(wc -l <"$T/$name.log")
	if [ "$rc" = 124 ]; then bad "hostile-$name" "add $V2 still running after 30 s"
	elif [ "$rc" != 1 ] || [ "$n" != 1 ] || ! grep -q "$want" "$T/$name.log"; then
		bad "hostile-$name" "status $rc, $n lines: $(head -n 3 "$T/$name.log" | tr '\n' '|')"
	elif ! snap "$E" | cmp -s - "$T/$name.snap"; then bad "hostile-$name" "the ESP changed: $(snap "$E" | diff "$T/$name.snap" - | head -n 3 | tr '\n' '|')"
	else ok "hostile-$name"; fi
}
# shellcheck disable=SC2016 # expanded by the sh that hostile runs
{
M='"$E/EFI/kaslr-loader.manifest"'
hostile dev-zero 'line [0-9]* is not a manifest entry' "echo 'file ../../../../../../../../dev/zero' >>$M"
hostile fifo 'not a regular file' "mkfifo \"\$E/$D/fifo\" && echo 'file $D/fifo' >>$M"
hostile link-out 'leads out of the ESP' "ln -s /dev/zero \"\$E/$D/zero\" && echo 'file $D/zero' >>$M"
hostile huge 'more than any file' "truncate -s 3G \"\$E/$D/huge\" && echo 'file $D/huge' >>$M"
hostile conf-fifo 'kaslr.conf: not a regular file' "rm \"\$E/$D/kaslr.conf\" && mkfifo \"\$E/$D/kaslr.conf\""
hostile manifest-fifo 'manifest: not a regular file' "rm $M && mkfifo $M"
hostile kernel-fifo "vmlinuz-$V2: not a regular file" "mkfifo \"\$E/$D/vmlinuz-$V2\""
hostile loader-link 'leads out of the ESP' "mv \"\$E/$L\" \"\$E/$L.real\" && ln -s /dev/zero \"\$E/$L\""
# a directory on the way that is a link out of the ESP (the file there real)
hostile dir-link 'leads out of the ESP' "mkdir -p \"\$E.out\" && echo x >\"\$E.out/f\" && ln -s \"\$E.out\" \"\$E/$D/sub\" && echo 'file $D/sub/f' >>$M"
}
# the postinst hook never fails the package manager, nor hangs it
E=$T/esp-hook
rm -rf "$E" "$T/state"; cp -a "$BASE" "$E"; conf "$E"
echo 'file ../../../../../../../../dev/zero' >>"$E/EFI/kaslr-loader.manifest"
timeout 30 "$POSTINST" "$V2" "$T/boot/vmlinuz-$V2" >"$T/hook.log" 2>&1
rc=$?
if [ "$rc" = 0 ] && [ "$(wc -l <"$T/hook.log")" = 1 ]; then ok hostile-hook-status
else bad hostile-hook-status "status $rc: $(head -n 3 "$T/hook.log" | tr '\n' '|')"; fi
# a link at the name the install writes first is removed, not written through
E=$T/esp-through
rm -rf "$E" "$T/state"; cp -a "$BASE" "$E"; conf "$E"
printf 'victim\n' >"$T/victim"
cp "$T/victim" "$T/victim.was"
ln -s "$T/victim" "$E/$D/vmlinuz-$V2.kaslr-new"
timeout 30 "$UPDATE" add "$V2" >"$T/through.log" 2>&1
rc=$?
if ! cmp -s "$T/victim" "$T/victim.was"; then bad write-through-link "the file the link named was written"
elif [ "$rc" = 0 ] && cmp -s "$E/$D/vmlinuz-$V2" "$T/boot/vmlinuz-$V2"; then ok write-through-link
else bad write-through-link "status $rc: $(tail -n 1 "$T/through.log")"; fi

# bounded: kaslr-loader-install hangs (its child too): stopped after 2 s
cat >"$T/hang" <<EOF
#!/bin/bash
echo \$\$ >"$T/hang.pid"
sleep 1000 &
echo \$! >"$T/sleep.pid"
wait
EOF
chmod +x "$T/hang"
rm -rf "$T/state"; conf "$BASE"
KASLR_LOADER_INSTALL=$T/hang KASLR_LOADER_TIMEOUT=2 timeout 60 "$UPDATE" add "$V2" >"$T/hang.log" 2>&1
rc=$?
# a killed process may take a moment to go on a busy host (or linger as
# a zombie until init reaps it): alive = still there and not a zombie
# after 5 s
alive=''
for _ in $(seq 25); do
	alive=''
	for p in hang sleep; do
		[ -f "$T/$p.pid" ] || continue
		st=$(ps -o stat= -p "$(cat "$T/$p.pid")")
		case $st in '' | Z*) ;; *) alive="$alive $p" ;; esac
	done
	[ -z "$alive" ] && break
	sleep 0.2
done
if [ "$rc" = 1 ] && [ "$(wc -l <"$T/hang.log")" = 1 ] && grep -q "stopped after 2 s" "$T/hang.log" && [ -z "$alive" ]; then
	ok bounded
else bad bounded "status $rc,${alive:+ still running:$alive,} $(head -n 2 "$T/hang.log" | tr '\n' '|')"; fi

# a signing key its group may read
openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 1 -subj /CN=kaslr-loader-hooks \
	-keyout "$T/k.pem" -out "$T/c.pem" >/dev/null 2>&1 || bad key "openssl"
chmod 0640 "$T/k.pem"
E=$T/esp-key
rm -rf "$E" "$T/state"; cp -a "$BASE" "$E"
conf "$E" "SIGN_KEY=$T/k.pem" "SIGN_CERT=$T/c.pem"
"$UPDATE" add "$V2" >"$T/key.log" 2>&1
rc=$?
if [ "$rc" = 1 ] && [ "$(wc -l <"$T/key.log")" = 1 ] && grep -q "mode 640" "$T/key.log" && cmp -s "$E/$L" "$BASE/$L"; then ok key-readable
else bad key-readable "status $rc: $(head -n 2 "$T/key.log" | tr '\n' '|')"; fi
chmod 0600 "$T/k.pem"
if "$UPDATE" add "$V2" >"$T/key2.log" 2>&1 && sbverify --cert "$T/c.pem" "$E/$L" >/dev/null 2>&1; then ok key-private
else bad key-private "$(tail -n 1 "$T/key2.log")"; fi

# TRUST=shim without SHIM=
E=$T/esp-noshim
rm -rf "$E" "$T/state"; cp -a "$BASE" "$E"
conf "$E" TRUST=shim
"$UPDATE" add "$V2" >"$T/noshim.log" 2>&1
rc=$?
if [ "$rc" = 1 ] && [ "$(wc -l <"$T/noshim.log")" = 1 ] && grep -q "needs SHIM=" "$T/noshim.log" && cmp -s "$E/$L" "$BASE/$L"; then
	ok shim-without-shim
else bad shim-without-shim "status $rc: $(head -n 2 "$T/noshim.log" | tr '\n' '|')"; fi

# ---- TRUST=shim: which kernels shim would start
shim_choice() {
	local K=$T/kboot E2=$T/shimesp D2 new old bad=6.1.0-999-amd64 key=$T/snakeoil.key c name x509 junk
	if ! signed_kernels "$K"; then bad shim-fetch "$sk_why"; return; fi
	new=$sk_new old=$sk_old
	for v in "$new" "$old" "$bad"; do printf 'initrd of %s\n' "$v" >"$K/initrd.img-$v"; done
	# the newest: Debian's kernel, its signature replaced by a throwaway key's
	{ cp "$K/vmlinuz-$new" "$K/vmlinuz-$bad" && sbattach --remove "$K/vmlinuz-$bad" >/dev/null 2>&1 &&
		sbsign --key "$T/k.pem" --cert "$T/c.pem" --output "$K/vmlinuz-$bad" "$K/vmlinuz-$bad" >/dev/null 2>&1; } ||
		{ bad shim-setup "cannot re-sign vmlinuz-$bad"; return; }
	openssl rsa -passin pass:snakeoil -in /usr/share/ovmf/PkKek-1-snakeoil.key -out "$key" >/dev/null 2>&1 ||
		{ bad shim-setup "cannot decrypt the snakeoil key"; return; }
	mkdir -p "$E2"
	"$KASLR_LOADER_INSTALL" --esp "$E2" --install-path EFI/kaslr-loader/shimx64.efi \
		--loader "$KASLR_LOADER_LIB/kaslr-loader.efi" --tool "$TOOL" --kernel "$K/vmlinuz-$old" \
		--initrd "$K/initrd.img-$old" --shim /usr/lib/shim/shimx64.efi --trust shim \
		--sign-key "$key" --sign-cert /usr/share/ovmf/PkKek-1-snakeoil.pem >"$T/s0.log" 2>&1 ||
		{ bad shim-setup "$(tail -n 1 "$T/s0.log")"; return; }
	D2=$E2/EFI/kaslr-loader
	conf "$E2" SHIM=/usr/lib/shim/shimx64.efi TRUST=shim
	sed -i 's|^INSTALL_PATH=.*|INSTALL_PATH=EFI/kaslr-loader/shimx64.efi|' "$KASLR_LOADER_CONF"
	block() { sed -n '/^# kaslr-loader-update: begin/,/^# kaslr-loader-update: end/p' "$D2/kaslr.conf" 2>/dev/null; }
	# shim's own certificate only (no MOK, no db readable)
	rm -rf "$T/sys/firmware/efi"; mkdir -p "$T/sys/firmware/efi"
	KASLR_LOADER_BOOT=$K "$UPDATE" add "$bad" >"$T/s1.log" 2>&1
	c=$(grep -c "vmlinuz-$bad" "$T/s1.log")
	if [ "$(block)" = "$(shim_block "$new" "$old")" ] && [ "$c" = 1 ] &&
	   grep -q "vmlinuz-$bad: its signature does not verify with shim's certificate" "$T/s1.log" &&
	   [ ! -e "$D2/vmlinuz-$bad" ] && cmp -s "$D2/vmlinuz-$new" "$K/vmlinuz-$new"; then ok shim-vendor-cert
	else bad shim-vendor-cert "$(block | tr '\n' '|'); $(tr '\n' '|' <"$T/s1.log")"; fi
	# that key's certificate enrolled as a MOK, as Linux shows MokListRT,
	# in efivarfs (four bytes of attributes first), and in db; more after
	# it, as in a real db (Microsoft's certificates): a list, then 128 KiB
	# of zeros (more than a pipe holds, so that the reader cutting the
	# certificate out always stops before the writer is done; the zeros
	# end the lists), and SIGPIPE ignored, as under systemd (apt run by a
	# unit): that must say nothing
	cert-to-efi-sig-list -g 605dab50-e046-4300-abb6-3dd810dd8b23 "$T/c.pem" "$T/mok.esl" >/dev/null 2>&1 ||
		{ bad shim-setup "cert-to-efi-sig-list (efitools: make deps)"; return; }
	for where in mok-variables/MokListRT efivars/MokListRT-605dab50-e046-4300-abb6-3dd810dd8b23 \
		efivars/db-d719b2cb-3d3a-4596-a3bc-dad00e67656f; do
		rm -rf "$T/sys/firmware/efi"; mkdir -p "$T/sys/firmware/efi/${where%/*}"
		# a list of hashes first (skipped), then the certificate's
		hash-to-efi-sig-list "$K/vmlinuz-$old" "$T/hash.esl" >/dev/null 2>&1
		case $where in efivars/*) printf '\007\000\000\000' ;; esac >"$T/sys/firmware/efi/$where"
		{ cat "$T/hash.esl" "$T/mok.esl" "$T/hash.esl" && head -c 131072 /dev/zero; } >>"$T/sys/firmware/efi/$where"
		(trap '' PIPE; KASLR_LOADER_BOOT=$K "$UPDATE" add "$bad") >"$T/s2.log" 2>&1
		case $where in mok-*) name=shim-mok-variables ;; efivars/Mok*) name=shim-mok-efivars ;; *) name=shim-db ;; esac
		if [ "$(block)" = "$(shim_block "$bad" "$new")" ] && ! grep -q 'does not verify\|Broken pipe\|write error' "$T/s2.log" &&
		   cmp -s "$D2/vmlinuz-$bad" "$K/vmlinuz-$bad" && cmp -s "$D2/vmlinuz-$new" "$K/vmlinuz-$new"; then ok "$name"
		else bad "$name" "$(block | tr '\n' '|'); $(tr '\n' '|' <"$T/s2.log")"; fi
	done
	# malformed lists (a short one, a size past the end, a zero entry size):
	# read no further, change nothing, end
	x509='\241Y\300\245\344\224\247J\207\265\253\025\\+\360r'
	printf 'garbage' >"$T/junk1"
	printf '%b' "$x509"'\377\377\377\177\000\000\000\000\040\000\000\000' >"$T/junk2"
	printf '%b' "$x509"'\034\000\000\000\000\000\000\000\000\000\000\000' >"$T/junk3"
	for junk in "$T"/junk[123]; do
		rm -rf "$T/sys/firmware/efi"; mkdir -p "$T/sys/firmware/efi/mok-variables"
		cp "$junk" "$T/sys/firmware/efi/mok-variables/MokListRT"
		timeout 60 env KASLR_LOADER_BOOT="$K" "$UPDATE" add "$bad" >"$T/s3.log" 2>&1
		c=$?
		if [ "$c" != 0 ] || [ "$(block)" != "$(shim_block "$new" "$old")" ]; then
			bad shim-malformed-list "${junk##*/}: status $c: $(tr '\n' '|' <"$T/s3.log")"; return
		fi
	done
	ok shim-malformed-list
	# the removal: the kernels the updates put beside the loader go with
	# what the install wrote (the manifest does not list them)
	"$UPDATE" uninstall >"$T/s4.log" 2>&1
	if [ -z "$(find "$E2" -mindepth 1 2>/dev/null)" ] && grep -q "removed .*vmlinuz-$new" "$T/s4.log"; then ok shim-uninstall
	else bad shim-uninstall "left: $(cd "$E2" && find . -type f | tr '\n' ' '); $(tr '\n' '|' <"$T/s4.log")"; fi
}
shim_choice
uki_checks

finish

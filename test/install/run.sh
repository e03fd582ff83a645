#!/bin/bash
# test/install/run.sh - `make install ESP=DIR` on the host: what lands where
# (the kernel under its own name, the policy pinning it), what is kept (a
# user's kaslr.conf, a foreign boot loader), what is refused, sbsign
# signatures checked with sbverify against a throwaway key made here with
# openssl, a writer replacing the ESP copy during a signed install (never
# pinned), make uninstall leaving the ESP as it was (with and without a
# backup), and a new INSTALL_PATH taking the previous copy away.  (The
# Secure Boot table of kaslr.conf(5) is checked against the code's by
# test/doc/tables.sh.)
# One "ok NAME" / "FAIL NAME: why" line per check; the last line is
# "install: N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
LOADER=$B/BOOTX64.EFI
TOOL=$B/tools/kaslr-policy
PIE=$B/payload/kernel-pie.elf
HIGH_GZ=$B/payload/kernel-high.elf.gz
SDBOOT=/usr/lib/systemd/boot/efi/systemd-bootx64.efi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. test/tally.sh

# inst LOG ARGS...: make install, output to LOG; returns make's status
inst() { local log=$1; shift; make --no-print-directory install "$@" >"$log" 2>&1; }
# same FILE A B: byte-identical
same() { cmp -s "$1" "$2"; }
# only comments and blank lines
all_comments() { ! grep -qvE '^[[:space:]]*(#.*)?$' "$1"; }
sha() { sha256sum "$1" | cut -d' ' -f1; }
# the policy line "KIND   PATH sha256=HEX" of a loader
pin_of() { "$TOOL" show "$1" 2>/dev/null | sed -n "s/^$2 *\\([^ ]*\\) sha256=\\([0-9a-f]*\\)\$/\\1 \\2/p"; }

for f in "$LOADER" "$TOOL" "$PIE" "$HIGH_GZ" "$SDBOOT"; do
	[ -f "$f" ] || { echo "FAIL setup: $f missing (run make, make deps)"; echo "install: 0 passed, 1 failed"; exit 1; }
done

# 1. ESP= and KERNEL= are required; ESP must be a directory
E=$T/esp0; mkdir "$E"
if inst "$T/1.log" KERNEL="$PIE"; then bad no-esp "succeeded without ESP="
elif grep -q 'give ESP=DIR' "$T/1.log"; then ok no-esp
else bad no-esp "no helpful message: $(tail -n 1 "$T/1.log")"; fi
if inst "$T/2.log" ESP="$T/absent" KERNEL="$PIE"; then bad esp-missing "succeeded with a missing ESP"
elif grep -q 'is not a directory' "$T/2.log" && [ ! -e "$T/absent" ]; then ok esp-missing
else bad esp-missing "$(tail -n 1 "$T/2.log")"; fi
if inst "$T/2b.log" ESP="$E"; then bad no-kernel "installed without KERNEL= (the test kernel?)"
elif grep -q 'give KERNEL=FILE' "$T/2b.log" && [ -z "$(find "$E" -type f)" ]; then ok no-kernel
else bad no-kernel "$(tail -n 1 "$T/2b.log")"; fi

# 2. TEST_KERNEL=1: \EFI\BOOT\BOOTX64.EFI, the test kernel under its own
#    name, pinned by the loader's policy; a commented kaslr.conf
E=$T/esp1; mkdir "$E"
if ! inst "$T/3.log" ESP="$E" TEST_KERNEL=1; then bad default "make install failed: $(tail -n 3 "$T/3.log")"
else
	d=$E/EFI/BOOT
	if ! same "$d/kernel-pie.elf" "$PIE"; then bad default-kernel "EFI/BOOT/kernel-pie.elf is not $PIE"
	else ok default-kernel; fi
	if [ "$(pin_of "$d/BOOTX64.EFI" kernel)" = "\\EFI\\BOOT\\kernel-pie.elf $(sha "$PIE")" ]; then ok default-policy
	else bad default-policy "$("$TOOL" show "$d/BOOTX64.EFI" 2>&1 | head -n 3)"; fi
	if [ ! -s "$d/kaslr.conf" ]; then bad default-conf "no kaslr.conf"
	elif ! all_comments "$d/kaslr.conf"; then bad default-conf "the default kaslr.conf sets something"
	elif ! grep -q 'man 5 kaslr.conf' "$d/kaslr.conf" || grep -q 'README' "$d/kaslr.conf" ||
		! grep -q 'kernel-pie.elf' "$d/kaslr.conf"; then
		bad default-conf "the default kaslr.conf points nowhere"
	else ok default-conf; fi
	n=$(find "$E" -type f | wc -l)
	if [ "$n" = 4 ] && [ -f "$E/EFI/kaslr-loader.manifest" ]; then ok default-only-four
	else bad default-only-four "$n files installed, want 4 (loader, kernel, kaslr.conf, manifest)"; fi
	if grep -q "kernel .*-> $d/kernel-pie.elf" "$T/3.log" && grep -q "loader .*$d/BOOTX64.EFI (unsigned" "$T/3.log"; then
		ok default-says-where
	else bad default-says-where "$(cat "$T/3.log")"; fi
fi

# 3. reinstall keeps the user's kaslr.conf, re-points its kernel line; CONF= replaces it
printf 'cmdline console=ttyS0 mine\nkernel kernel.elf\n' >"$E/EFI/BOOT/kaslr.conf"
if inst "$T/4.log" ESP="$E" TEST_KERNEL=1 && grep -q 'mine' "$E/EFI/BOOT/kaslr.conf" &&
   grep -q '^kernel kernel-pie.elf$' "$E/EFI/BOOT/kaslr.conf"; then ok keep-conf
else bad keep-conf "$(cat "$E/EFI/BOOT/kaslr.conf")"; fi
printf 'verbose\ncmdline console=ttyS0 given\n' >"$T/given.conf"
if inst "$T/5.log" ESP="$E" TEST_KERNEL=1 CONF="$T/given.conf" && same "$E/EFI/BOOT/kaslr.conf" "$T/given.conf"; then ok conf-given
else bad conf-given "CONF= not installed as kaslr.conf"; fi

# 4. INSTALL_PATH=, KERNEL=, INITRD=, CMDLINE=, ALLOW=: names kept, all pinned
E=$T/esp2; mkdir "$E"
printf 'not really an initrd\n' >"$T/initrd.img-test"
if ! inst "$T/6.log" ESP="$E" INSTALL_PATH=EFI/kaslr/kaslr-loader.efi KERNEL="$HIGH_GZ" \
	INITRD="$T/initrd.img-test" CMDLINE="console=ttyS0 quiet" ALLOW=verbose; then
	bad install-path "make install failed: $(tail -n 3 "$T/6.log")"
else
	d=$E/EFI/kaslr l=$E/EFI/kaslr/kaslr-loader.efi
	if same "$d/kernel-high.elf.gz" "$HIGH_GZ" && same "$d/initrd.img-test" "$T/initrd.img-test" &&
	   [ -f "$d/kaslr.conf" ] && [ ! -e "$E/EFI/BOOT" ] && [ ! -e "$E/loader" ]; then ok install-path
	else bad install-path "$(cd "$E" && find . -type f | tr '\n' ' ')"; fi
	if [ "$(pin_of "$l" kernel)" = "\\EFI\\kaslr\\kernel-high.elf.gz $(sha "$HIGH_GZ")" ] &&
	   [ "$(pin_of "$l" initrd)" = "\\EFI\\kaslr\\initrd.img-test $(sha "$T/initrd.img-test")" ] &&
	   "$TOOL" show "$l" | grep -qx 'cmdline  console=ttyS0 quiet' &&
	   "$TOOL" show "$l" | grep -qx 'allow    verbose'; then ok policy-pins
	else bad policy-pins "$("$TOOL" show "$l" 2>&1)"; fi
fi
if inst "$T/6b.log" ESP="$E" INSTALL_PATH=EFI/kaslr/kaslr-loader.efi KERNEL="$HIGH_GZ" ALLOW=sha256; then
	bad allow-never "ALLOW=sha256 accepted"
elif grep -q 'no policy can allow it' "$T/6b.log"; then ok allow-never
else bad allow-never "$(tail -n 1 "$T/6b.log")"; fi

# 5. a foreign loader at the install path is never replaced without FORCE=1
E=$T/esp3; mkdir -p "$E/EFI/BOOT"
cp "$SDBOOT" "$E/EFI/BOOT/BOOTX64.EFI"
if inst "$T/7.log" ESP="$E" TEST_KERNEL=1; then bad foreign-kept "replaced systemd-boot's BOOTX64.EFI"
elif same "$E/EFI/BOOT/BOOTX64.EFI" "$SDBOOT" && grep -q 'refusing to replace' "$T/7.log" &&
     [ ! -e "$E/EFI/BOOT/kernel-pie.elf" ]; then ok foreign-kept
else bad foreign-kept "$(tail -n 1 "$T/7.log")"; fi
if inst "$T/8.log" ESP="$E" TEST_KERNEL=1 FORCE=1 && same "$E/EFI/BOOT/BOOTX64.EFI.kaslr-backup" "$SDBOOT" &&
   "$TOOL" show "$E/EFI/BOOT/BOOTX64.EFI" >/dev/null; then ok force-backup
else bad force-backup "$(tail -n 2 "$T/8.log")"; fi
if inst "$T/9.log" ESP="$E" TEST_KERNEL=1 && [ "$(find "$E" -name '*.kaslr-backup*' | wc -l)" = 1 ]; then
	ok reinstall-own
else bad reinstall-own "$(tail -n 2 "$T/9.log")"; fi

# 6. systemd-boot on the ESP: its loader untouched, an entry for ours
E=$T/esp4; mkdir -p "$E/EFI/BOOT" "$E/EFI/systemd" "$E/loader/entries"
cp "$SDBOOT" "$E/EFI/BOOT/BOOTX64.EFI"; cp "$SDBOOT" "$E/EFI/systemd/systemd-bootx64.efi"
if inst "$T/10.log" ESP="$E" INSTALL_PATH=EFI/kaslr/kaslr-loader.efi KERNEL="$PIE" &&
   same "$E/EFI/BOOT/BOOTX64.EFI" "$SDBOOT" && same "$E/EFI/systemd/systemd-bootx64.efi" "$SDBOOT" &&
   [ "$(cat "$E/loader/entries/kaslr-loader.conf")" = "$(printf 'title   kaslr-loader\nefi     /EFI/kaslr/kaslr-loader.efi')" ]; then
	ok sdboot-entry
else bad sdboot-entry "$(tail -n 3 "$T/10.log")"; fi

# 7. signing: one of SIGN_KEY/SIGN_CERT alone is refused
E=$T/esp5; mkdir "$E"
if inst "$T/11.log" ESP="$E" TEST_KERNEL=1 SIGN_KEY="$T/k.pem"; then bad sign-half "succeeded with SIGN_KEY= only"
elif grep -q 'both a key and a certificate' "$T/11.log" && [ -z "$(find "$E" -type f)" ]; then ok sign-half
else bad sign-half "$(tail -n 1 "$T/11.log")"; fi

# 8. sign with a throwaway key; sbverify accepts it with that certificate only
if ! openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 1 -subj /CN=kaslr-loader-test \
	-keyout "$T/k.pem" -out "$T/c.pem" >"$T/ssl.log" 2>&1 ||
   ! openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 1 -subj /CN=someone-else \
	-keyout "$T/k2.pem" -out "$T/c2.pem" >>"$T/ssl.log" 2>&1; then
	bad sign "openssl could not make a key: $(tail -n 2 "$T/ssl.log")"
elif ! inst "$T/12.log" ESP="$E" TEST_KERNEL=1 SIGN_KEY="$T/k.pem" SIGN_CERT="$T/c.pem"; then
	bad sign "make install failed: $(tail -n 3 "$T/12.log")"
else
	s=$E/EFI/BOOT/BOOTX64.EFI
	if sbverify --cert "$T/c.pem" "$s" >"$T/v.log" 2>&1; then ok sign-verifies
	else bad sign-verifies "$(tail -n 2 "$T/v.log")"; fi
	if sbverify --cert "$T/c2.pem" "$s" >/dev/null 2>&1; then bad sign-other-cert "verified with the wrong certificate"
	else ok sign-other-cert; fi
	if sbverify --cert "$T/c.pem" "$LOADER" >/dev/null 2>&1; then bad sign-unsigned "the unsigned build verifies"
	else ok sign-unsigned; fi
	if [ "$(sbverify --list "$s" 2>/dev/null | grep -c '^signature [0-9]')" = 1 ]; then ok sign-one-signature
	else bad sign-one-signature "$(sbverify --list "$s" 2>&1 | head -n 3)"; fi
	if [ "$(pin_of "$s" kernel)" = "\\EFI\\BOOT\\kernel-pie.elf $(sha "$PIE")" ]; then ok sign-policy-inside
	else bad sign-policy-inside "$("$TOOL" show "$s" 2>&1 | head -n 3)"; fi
	# the tool refuses to write into a signed image (the signature would break)
	if "$TOOL" write --loader "$s" --out "$T/x.efi" --kernel "/x=$PIE" 2>"$T/w.log"; then bad tool-signed-input "wrote into a signed loader"
	elif grep -q 'is signed' "$T/w.log"; then ok tool-signed-input
	else bad tool-signed-input "$(cat "$T/w.log")"; fi
fi

# 8a. a signing key its group or others may read is refused, one line,
# nothing written; TRUST=shim without SHIM= is refused the same way
if [ -f "$T/k.pem" ]; then
	E=$T/esp-keymode; mkdir "$E"
	cp "$T/k.pem" "$T/k-open.pem"; chmod 0644 "$T/k-open.pem"
	if inst "$T/km.log" ESP="$E" TEST_KERNEL=1 SIGN_KEY="$T/k-open.pem" SIGN_CERT="$T/c.pem"; then
		bad key-mode "installed with a key others may read"
	elif [ "$(grep -c '^kaslr-install:' "$T/km.log")" = 1 ] && grep -q 'mode 644 lets others read it' "$T/km.log" &&
	     [ -z "$(find "$E" -type f)" ]; then ok key-mode
	else bad key-mode "$(tail -n 2 "$T/km.log")"; fi
fi
E=$T/esp-noshim; mkdir "$E"
if inst "$T/ns.log" ESP="$E" TEST_KERNEL=1 TRUST=shim; then bad trust-shim-needs-shim "installed TRUST=shim without SHIM="
elif [ "$(grep -c '^kaslr-install:' "$T/ns.log")" = 1 ] && grep -q 'needs --shim' "$T/ns.log" &&
     [ -z "$(find "$E" -type f)" ]; then ok trust-shim-needs-shim
else bad trust-shim-needs-shim "$(tail -n 2 "$T/ns.log")"; fi

# 8b. a writer on the ESP during a signed install: wrappers for cp, mv and
# install (first on PATH) run the real command and then, whenever the file
# they wrote on the ESP is the kernel (or a temporary of it), replace its
# bytes with the writer's: deterministically, the moment the install closes
# it.  The writer's bytes must never be pinned: the install either aborts
# with one line, the previous loader and its policy untouched, or its
# policy pins the source's hash.
if [ -f "$T/k.pem" ]; then
	E=$T/esp-race; mkdir "$E"
	W=$T/writer; mkdir "$W"
	cat "$PIE" >"$T/evil.elf"; printf 'the writer was here\n' >>"$T/evil.elf"
	for c in cp mv install; do
		cat >"$W/$c" <<EOF
#!/bin/bash
real=\$(PATH=\${PATH#$W:} command -v $c) || exit 127
"\$real" "\$@" || exit
[ -e "$E/.armed" ] || exit 0
for dest in "\${@: -1}" "\${@: -1}/\$(basename -- "\${@: -2:1}")"; do
	case \$dest in "$E"/*kernel-high*) [ -f "\$dest" ] && cat "$T/evil.elf" >"\$dest" && touch "$T/tampered" ;; esac
done
exit 0
EOF
		chmod +x "$W/$c"
	done
	if ! inst "$T/r1.log" ESP="$E" INSTALL_PATH=EFI/kaslr/kaslr-loader.efi KERNEL="$PIE" SIGN_KEY="$T/k.pem" SIGN_CERT="$T/c.pem"; then
		bad race-setup "$(tail -n 2 "$T/r1.log")"
	else
		L=$E/EFI/kaslr/kaslr-loader.efi
		cp "$L" "$T/race-before.efi"
		touch "$E/.armed"
		PATH=$W:$PATH inst "$T/r2.log" ESP="$E" INSTALL_PATH=EFI/kaslr/kaslr-loader.efi KERNEL="$HIGH_GZ" \
			SIGN_KEY="$T/k.pem" SIGN_CERT="$T/c.pem"; rc=$?
		rm -f "$E/.armed"
		evil=$(sha "$T/evil.elf")
		if [ ! -e "$T/tampered" ]; then bad race-writer "the writer never got to replace an ESP copy (wrappers unused?)"
		elif "$TOOL" show "$L" 2>/dev/null | grep -q "sha256=$evil"; then bad race-writer "the policy pins the writer's bytes"
		elif [ "$rc" != 0 ]; then
			if [ "$(grep -c '^kaslr-install:' "$T/r2.log")" = 1 ] && grep -q '^kaslr-install: .*changed' "$T/r2.log" &&
			   same "$L" "$T/race-before.efi" && [ "$(pin_of "$L" kernel)" = "\\EFI\\kaslr\\kernel-pie.elf $(sha "$PIE")" ] &&
			   [ -z "$(find "$E" -name '*kaslr-new*')" ]; then ok race-writer
			else bad race-writer "aborted, but not with one line and the previous loader kept: $(cat "$T/r2.log")"; fi
		elif [ "$(pin_of "$L" kernel)" = "\\EFI\\kaslr\\kernel-high.elf.gz $(sha "$HIGH_GZ")" ]; then ok race-writer
		else bad race-writer "$(pin_of "$L" kernel)"; fi
	fi
fi

# 8c. make uninstall: the ESP byte for byte as before the install (every
# path, its type and every file's SHA-256), without and with a backup
snap() { (cd "$1" && find . -printf '%y %p\n' | sort && find . -type f -exec sha256sum {} + | sort -k 2); }
E=$T/esp-un; mkdir -p "$E/EFI/BOOT" "$E/EFI/Linux" "$E/loader/entries"
cp "$SDBOOT" "$E/EFI/BOOT/BOOTX64.EFI"; printf 'title other\n' >"$E/loader/entries/other.conf"
printf 'not ours\n' >"$E/EFI/Linux/keep.txt"
snap "$E" >"$T/un0.snap"
if inst "$T/u1.log" ESP="$E" INSTALL_PATH=EFI/kaslr/kaslr-loader.efi KERNEL="$PIE" INITRD="$T/initrd.img-test" &&
   [ -f "$E/EFI/kaslr/kernel-pie.elf" ] && [ -f "$E/loader/entries/kaslr-loader.conf" ] &&
   make --no-print-directory uninstall ESP="$E" >"$T/u2.log" 2>&1 && snap "$E" | cmp -s - "$T/un0.snap"; then
	ok uninstall-clean
else bad uninstall-clean "$(tail -n 2 "$T/u1.log" "$T/u2.log"; snap "$E" | diff "$T/un0.snap" - | head -n 5)"; fi
# FORCE=1 over systemd-boot's BOOTX64.EFI, a user's kaslr.conf whose kernel
# line the install rewrites, then a reinstall: uninstall puts both back
printf 'kernel other.elf\ncmdline mine\n' >"$E/EFI/BOOT/kaslr.conf"
snap "$E" >"$T/un1.snap"
if inst "$T/u3.log" ESP="$E" TEST_KERNEL=1 FORCE=1 && inst "$T/u4.log" ESP="$E" TEST_KERNEL=1 &&
   "$TOOL" show "$E/EFI/BOOT/BOOTX64.EFI" >/dev/null 2>&1 && grep -q '^kernel kernel-pie.elf' "$E/EFI/BOOT/kaslr.conf" &&
   make --no-print-directory uninstall ESP="$E" INSTALL_PATH=EFI/BOOT/BOOTX64.EFI >"$T/u5.log" 2>&1 &&
   snap "$E" | cmp -s - "$T/un1.snap"; then ok uninstall-restores-backup
else bad uninstall-restores-backup "$(tail -n 2 "$T/u3.log" "$T/u4.log" "$T/u5.log"; snap "$E" | diff "$T/un1.snap" - | head -n 5)"; fi
# nothing recorded: one line, nothing touched; a manifest naming a path
# outside the ESP is refused
if make --no-print-directory uninstall ESP="$E" >"$T/u6.log" 2>&1; then bad uninstall-nothing "succeeded"
elif grep -q 'nothing to uninstall' "$T/u6.log" && snap "$E" | cmp -s - "$T/un1.snap"; then ok uninstall-nothing
else bad uninstall-nothing "$(cat "$T/u6.log")"; fi
printf 'victim\n' >"$T/victim"
printf 'loader EFI/BOOT/BOOTX64.EFI\nfile ../victim\n' >"$E/EFI/kaslr-loader.manifest"
if make --no-print-directory uninstall ESP="$E" >"$T/u7.log" 2>&1; then bad uninstall-outside "succeeded"
elif [ -f "$T/victim" ] && grep -q 'not a manifest entry' "$T/u7.log"; then ok uninstall-outside
else bad uninstall-outside "$(cat "$T/u7.log")"; fi
rm -f "$E/EFI/kaslr-loader.manifest"

# 8d. installing to another INSTALL_PATH takes the previous copy away:
# one kernel on the ESP, one entry, naming the new path; the kaslr.conf
# the previous install wrote (and the user edited) moves along
E=$T/esp-move; mkdir -p "$E/loader/entries"
snap "$E" >"$T/mv0.snap"
if inst "$T/m1.log" ESP="$E" KERNEL="$PIE" INITRD="$T/initrd.img-test" &&
   echo 'cmdline console=ttyS0 moved-along' >>"$E/EFI/BOOT/kaslr.conf" &&
   inst "$T/m2.log" ESP="$E" INSTALL_PATH=EFI/kaslr/kaslr-loader.efi KERNEL="$PIE" INITRD="$T/initrd.img-test" &&
   grep -q moved-along "$E/EFI/kaslr/kaslr.conf" &&
   [ "$(find "$E" -name kernel-pie.elf | wc -l)" = 1 ] && [ ! -e "$E/EFI/BOOT" ] &&
   [ "$(find "$E/loader/entries" -type f)" = "$E/loader/entries/kaslr-loader.conf" ] &&
   grep -qx 'efi     /EFI/kaslr/kaslr-loader.efi' "$E/loader/entries/kaslr-loader.conf"; then ok new-path-moves
else bad new-path-moves "$(tail -n 3 "$T/m2.log"; find "$E" -type f | tr '\n' ' ')"; fi
if make --no-print-directory uninstall ESP="$E" >"$T/m3.log" 2>&1 && snap "$E" | cmp -s - "$T/mv0.snap"; then ok new-path-uninstall
else bad new-path-uninstall "$(tail -n 2 "$T/m3.log"; snap "$E" | diff "$T/mv0.snap" - | head -n 5)"; fi

# 9b. one default install path for make install and the kernel hooks:
# without INSTALL_PATH= on an ESP that is not the running system's, make
# install puts the loader at EFI/BOOT/BOOTX64.EFI and a kernel update
# through the hooks (install.conf with ESP= alone) leaves it there; on the
# running system's ESP (test/install/fake-efi.sh) it goes to
# EFI/kaslr-loader/kaslr-loader.efi with a Boot#### entry, which the
# hooks keep too; make uninstall deletes that entry and puts BootOrder
# back (an entry made since after it)
HR=$T/hooks-root
make --no-print-directory install-hooks DESTDIR="$HR" >"$T/ih.log" 2>&1 || bad install-hooks "$(tail -n 2 "$T/ih.log")"
mkdir -p "$T/hboot"
cp "$B/payload/kernel-high.elf" "$T/hboot/vmlinuz-6.1.0-99-amd64"
# hook ESP: add 6.1.0-99-amd64 through kaslr-loader-update, install.conf naming ESP alone
hook() {
	printf 'ESP=%s\n' "$1" >"$T/h.conf"
	KASLR_LOADER_CONF=$T/h.conf KASLR_LOADER_LIB=$HR/usr/lib/kaslr-loader KASLR_LOADER_INSTALL=$HR/usr/sbin/kaslr-loader-install \
		KASLR_LOADER_BOOT=$T/hboot KASLR_LOADER_STATE=$T/hstate "$HR/usr/sbin/kaslr-loader-update" add 6.1.0-99-amd64
}
E=$T/esp-default; mkdir "$E"
if inst "$T/dp1.log" ESP="$E" KERNEL="$PIE" && [ -f "$E/EFI/BOOT/BOOTX64.EFI" ] &&
   hook "$E" >"$T/dp2.log" 2>&1 && [ "$(pin_of "$E/EFI/BOOT/BOOTX64.EFI" kernel)" = "\\EFI\\BOOT\\vmlinuz-6.1.0-99-amd64 $(sha "$T/hboot/vmlinuz-6.1.0-99-amd64")" ] &&
   [ ! -e "$E/EFI/kaslr" ] && [ ! -e "$E/EFI/kaslr-loader" ]; then ok default-path-kept-by-hooks
else bad default-path-kept-by-hooks "$(tail -n 1 "$T/dp1.log" "$T/dp2.log" | tr '\n' ' '; find "$E" -type f | tr '\n' ' ')"; fi
. test/install/fake-efi.sh
E=$T/esp-live; mkdir "$E"
fake_efi "$T/efi" "$E" || bad fake-efi "fake_efi failed"
live() { PATH=$T/efi/bin:$PATH KASLR_LOADER_SYS=$T/efi/sys KASLR_LOADER_STATE=$T/lstate "$@"; }
L=$E/EFI/kaslr-loader/kaslr-loader.efi
if live inst "$T/lv1.log" ESP="$E" KERNEL="$PIE" && "$TOOL" show "$L" >/dev/null 2>&1 && [ ! -e "$E/EFI/BOOT" ] &&
   [ "$(cat "$T/efi/nvram/order")" = 0002,0000,0001 ] &&
   grep -qxF '0002 kaslr-loader	\EFI\kaslr-loader\kaslr-loader.efi' "$T/efi/nvram/entries"; then ok default-path-running-esp
else bad default-path-running-esp "$(tail -n 2 "$T/lv1.log" | tr '\n' ' '; cat "$T/efi/nvram/order")"; fi
if live hook "$E" >"$T/lv2.log" 2>&1 && [ "$(pin_of "$L" kernel)" = "\\EFI\\kaslr-loader\\vmlinuz-6.1.0-99-amd64 $(sha "$T/hboot/vmlinuz-6.1.0-99-amd64")" ] &&
   [ "$(grep -c -- --create "$T/efi/nvram/calls")" = 1 ] && [ "$(cat "$T/efi/nvram/order")" = 0002,0000,0001 ]; then ok running-esp-kept-by-hooks
else bad running-esp-kept-by-hooks "$(tail -n 2 "$T/lv2.log" | tr '\n' ' '; tr '\n' '|' <"$T/efi/nvram/calls")"; fi
# someone adds an entry meanwhile (first in BootOrder); uninstall: ours
# deleted, BootOrder as before the install, the new one after it
live efibootmgr --create --disk /dev/vda --part 1 --label other --loader '\EFI\other\other.efi' >/dev/null
if live make --no-print-directory uninstall ESP="$E" >"$T/lv3.log" 2>&1 && [ -z "$(find "$E" -mindepth 1)" ] &&
   ! grep -q '^0002 ' "$T/efi/nvram/entries" && grep -q '^0003 other' "$T/efi/nvram/entries" &&
   [ "$(cat "$T/efi/nvram/order")" = 0000,0001,0003 ] && [ ! -e "$T/lstate/boot-entry" ]; then ok uninstall-boot-entry
else bad uninstall-boot-entry "$(tail -n 2 "$T/lv3.log" | tr '\n' ' '; cat "$T/efi/nvram/order")"; fi
# an entry labelled kaslr-loader that no install made is never deleted
live efibootmgr --create --disk /dev/vda --part 1 --label kaslr-loader --loader '\EFI\mine\kaslr-loader.efi' >/dev/null
if live inst "$T/lv4.log" ESP="$E" KERNEL="$PIE" && live make --no-print-directory uninstall ESP="$E" >"$T/lv5.log" 2>&1 &&
   grep -qF '0004 kaslr-loader	\EFI\mine\kaslr-loader.efi' "$T/efi/nvram/entries" && [ "$(grep -c '^.... kaslr-loader' "$T/efi/nvram/entries")" = 1 ]; then
	ok uninstall-only-its-entry
else bad uninstall-only-its-entry "$(tr '\n' '|' <"$T/efi/nvram/entries")"; fi
# systemd-boot's default entry: `bootctl set-default kaslr-loader.conf`
# is undone by uninstall (LoaderEntryDefault cleared through bootctl);
# a default naming another entry is left alone
E=$T/esp-sdboot; mkdir -p "$E/loader/entries"
fake_efi "$T/efi2" "$E" || bad fake-efi "fake_efi failed"
live2() { PATH=$T/efi2/bin:$PATH KASLR_LOADER_SYS=$T/efi2/sys KASLR_LOADER_STATE=$T/l2state "$@"; }
LED=$T/efi2/sys/firmware/efi/efivars/LoaderEntryDefault-4a67b082-0a4c-41cf-b6c7-440b29bb8c4f
if live2 inst "$T/sd1.log" ESP="$E" KERNEL="$PIE" && [ -f "$E/loader/entries/kaslr-loader.conf" ] &&
   live2 bootctl set-default kaslr-loader.conf && [ -s "$LED" ] &&
   live2 make --no-print-directory uninstall ESP="$E" >"$T/sd2.log" 2>&1 && [ ! -e "$LED" ] &&
   grep -qx 'bootctl set-default ' "$T/efi2/nvram/calls"; then ok uninstall-sdboot-default
else bad uninstall-sdboot-default "$(tail -n 2 "$T/sd1.log" "$T/sd2.log" | tr '\n' ' '; tr '\n' '|' <"$T/efi2/nvram/calls")"; fi
if live2 inst "$T/sd3.log" ESP="$E" KERNEL="$PIE" && live2 bootctl set-default other.conf &&
   live2 make --no-print-directory uninstall ESP="$E" >"$T/sd4.log" 2>&1 && [ -s "$LED" ] &&
   [ "$(grep -c '^bootctl' "$T/efi2/nvram/calls")" = 3 ]; then ok uninstall-sdboot-other-default
else bad uninstall-sdboot-other-default "$(tail -n 2 "$T/sd4.log" | tr '\n' ' '; tr '\n' '|' <"$T/efi2/nvram/calls")"; fi
# the package's tool finds the package's loader and kaslr-policy itself
E=$T/esp-tooldefaults; mkdir "$E"
if "$HR/usr/sbin/kaslr-loader-install" --esp "$E" --kernel "$PIE" >"$T/td.log" 2>&1 &&
   [ "$(pin_of "$E/EFI/BOOT/BOOTX64.EFI" kernel)" = "\\EFI\\BOOT\\kernel-pie.elf $(sha "$PIE")" ]; then ok tool-defaults
else bad tool-defaults "$(tail -n 1 "$T/td.log")"; fi

# 9c. the man pages (docs/man/; test/doc renders them) say what the code
# has: every option of kaslr-loader-install, every command of
# kaslr-loader-update, every variable of install.conf and every key ALLOW
# may hold
miss=''
for o in $(sed -n '/^parse_args() {/,/^}/p' src/tools/kaslr-install.sh | grep -o -- '--[a-z-]*)' | tr -d ')'); do
	grep -q -- "$(printf '%s' "$o" | sed 's/-/\\\\-/g')" docs/man/kaslr-loader-install.8 || miss="$miss $o"
done
for c in $(sed -n 's/.*usage: .me //p' src/tools/hooks/kaslr-loader-update.sh | tr '|"' '\n ' | awk '{print $1}'); do
	grep -q "^\.BI\? $c\b" docs/man/kaslr-loader-update.8 || miss="$miss update:$c"
done
for v in $(grep "^ESP=''" src/tools/hooks/kaslr-loader-update.sh | grep -o '[A-Z_]*=' | tr -d =) \
	$(sed -n '/^SHIM=/p' src/tools/hooks/kaslr-loader-update.sh | grep -o '[A-Z_]*=' | tr -d =); do
	grep -q "$v=" docs/man/kaslr-loader-install.conf.5 || miss="$miss conf:$v"
done
for k in $("$TOOL" rules | grep -o -- '--allow [a-z.0-9]*' | cut -d' ' -f2 | sort -u); do
	grep -qx "\.B $k" docs/man/kaslr-loader-install.conf.5 || miss="$miss allow:$k"
done
if [ -z "$miss" ]; then ok man-pages-complete
else bad man-pages-complete "not in the pages:$miss"; fi

# 10. install.conf suggests no ALLOW= and says what each key ALLOW may
# hold (the code's list: kaslr-policy rules) gives away
IC=src/tools/install.conf
if grep -qE '^#? *ALLOW="?[a-z]' "$IC"; then bad install-conf-allow "install.conf suggests an ALLOW= value"
else
	miss=''
	for k in $("$TOOL" rules | grep -o -- '--allow [a-z.0-9]*' | cut -d' ' -f2 | sort -u); do
		grep -qE "^#   $k +[a-z]" "$IC" || miss="$miss $k"
	done
	if [ -z "$miss" ]; then ok install-conf-allow
	else bad install-conf-allow "install.conf does not say what ALLOW gives away for:$miss"; fi
fi

tally_end install

#!/bin/bash
# test/install/run.sh - `make install ESP=DIR` on the host: what lands where,
# what is kept, what is refused, and sbsign signatures checked with sbverify
# against a throwaway key and certificate made here with openssl.
# One "ok NAME" / "FAIL NAME: why" line per check; the last line is
# "install: N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
LOADER=$B/BOOTX64.EFI
PIE=$B/payload/kernel-pie.elf
HIGH_GZ=$B/payload/kernel-high.elf.gz
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
passed=0 failed=0

ok() { echo "ok $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1: $2"; failed=$((failed + 1)); }
# inst LOG ARGS...: make install, output to LOG; returns make's status
inst() { local log=$1; shift; make --no-print-directory install "$@" >"$log" 2>&1; }
# same FILE A B: byte-identical
same() { cmp -s "$1" "$2"; }
# only comments and blank lines
all_comments() { ! grep -qvE '^[[:space:]]*(#.*)?$' "$1"; }

for f in "$LOADER" "$PIE" "$HIGH_GZ"; do
	[ -f "$f" ] || { echo "FAIL setup: $f missing (run make)"; echo "install: 0 passed, 1 failed"; exit 1; }
done

# 1. ESP= is required, and must be a directory
if inst "$T/1.log"; then bad no-esp "succeeded without ESP="
elif grep -q 'give ESP=DIR' "$T/1.log"; then ok no-esp
else bad no-esp "no helpful message: $(tail -n 1 "$T/1.log")"; fi
if inst "$T/2.log" ESP="$T/absent"; then bad esp-missing "succeeded with a missing ESP"
elif grep -q 'is not a directory' "$T/2.log" && [ ! -e "$T/absent" ]; then ok esp-missing
else bad esp-missing "$(tail -n 1 "$T/2.log")"; fi

# 2. defaults: \EFI\BOOT\BOOTX64.EFI, kernel.elf (the PIE payload), commented kaslr.conf
E=$T/esp1; mkdir "$E"
if ! inst "$T/3.log" ESP="$E"; then bad default "make install failed: $(tail -n 3 "$T/3.log")"
else
	d=$E/EFI/BOOT
	if ! same "$d/BOOTX64.EFI" "$LOADER"; then bad default-loader "EFI/BOOT/BOOTX64.EFI is not $LOADER"
	else ok default-loader; fi
	if ! same "$d/kernel.elf" "$PIE"; then bad default-kernel "EFI/BOOT/kernel.elf is not $PIE"
	else ok default-kernel; fi
	if [ ! -s "$d/kaslr.conf" ]; then bad default-conf "no kaslr.conf"
	elif ! all_comments "$d/kaslr.conf"; then bad default-conf "the default kaslr.conf sets something"
	elif ! grep -q 'README' "$d/kaslr.conf"; then bad default-conf "the default kaslr.conf points nowhere"
	else ok default-conf; fi
	n=$(find "$E" -type f | wc -l)
	if [ "$n" = 3 ]; then ok default-only-three
	else bad default-only-three "$n files installed, want 3"; fi
fi

# 3. reinstall without CONF= keeps the user's kaslr.conf; with CONF= replaces it
echo "cmdline console=ttyS0 mine" >"$E/EFI/BOOT/kaslr.conf"
if inst "$T/4.log" ESP="$E" && grep -q 'mine' "$E/EFI/BOOT/kaslr.conf"; then ok keep-conf
else bad keep-conf "an existing kaslr.conf was overwritten"; fi
printf 'verbose\ncmdline console=ttyS0 given\n' >"$T/given.conf"
if inst "$T/5.log" ESP="$E" CONF="$T/given.conf" && same "$E/EFI/BOOT/kaslr.conf" "$T/given.conf"; then ok conf-given
else bad conf-given "CONF= not installed as kaslr.conf"; fi

# 4. INSTALL_PATH= and KERNEL=: the systemd-boot layout
E=$T/esp2; mkdir "$E"
if ! inst "$T/6.log" ESP="$E" INSTALL_PATH=EFI/kaslr/kaslr-loader.efi KERNEL="$HIGH_GZ"; then
	bad install-path "make install failed: $(tail -n 3 "$T/6.log")"
else
	d=$E/EFI/kaslr
	if same "$d/kaslr-loader.efi" "$LOADER" && same "$d/kernel.elf" "$HIGH_GZ" && [ -f "$d/kaslr.conf" ] &&
	   [ ! -e "$E/EFI/BOOT" ]; then ok install-path
	else bad install-path "$(cd "$E" && find . -type f | tr '\n' ' ')"; fi
fi

# 5. signing: one of SIGN_KEY/SIGN_CERT alone is refused
E=$T/esp3; mkdir "$E"
if inst "$T/7.log" ESP="$E" SIGN_KEY="$T/k.pem"; then bad sign-half "succeeded with SIGN_KEY= only"
elif grep -q 'both SIGN_KEY= and SIGN_CERT=' "$T/7.log" && [ -z "$(find "$E" -type f)" ]; then ok sign-half
else bad sign-half "$(tail -n 1 "$T/7.log")"; fi

# 6. sign with a throwaway key; sbverify accepts it with that certificate only
if ! openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 1 -subj /CN=kaslr-loader-test \
	-keyout "$T/k.pem" -out "$T/c.pem" >"$T/ssl.log" 2>&1 ||
   ! openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 1 -subj /CN=someone-else \
	-keyout "$T/k2.pem" -out "$T/c2.pem" >>"$T/ssl.log" 2>&1; then
	bad sign "openssl could not make a key: $(tail -n 2 "$T/ssl.log")"
elif ! inst "$T/8.log" ESP="$E" SIGN_KEY="$T/k.pem" SIGN_CERT="$T/c.pem"; then
	bad sign "make install failed: $(tail -n 3 "$T/8.log")"
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
	if same "$E/EFI/BOOT/kernel.elf" "$PIE"; then ok sign-kernel-unsigned
	else bad sign-kernel-unsigned "kernel changed"; fi
fi

echo "install: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

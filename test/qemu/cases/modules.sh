# modules - module= files: each at its own random page-aligned address, in
# memory of the module type, overlapping neither the kernel, nor each other,
# nor the hand-off data (the payload checks all of that, and each module's
# bytes against the SHA-256 its string carries, computed in the payload);
# the addresses differ between boots.  A module that is missing, fails its
# :sha256= pin, or has no room in the window is refused with one line and an
# EFI error, back to the shell, before anything is handed over.  Each run
# takes place's options (the refused ones too, before their cause).
# placement: edges
m1=$WORK/$NAME.m1 m2=$WORK/$NAME.m2 big=$WORK/$NAME.big
head -c 5000 /dev/urandom >"$m1"
head -c $((3 * 1024 * 1024 + 123)) /dev/urandom >"$m2"
head -c $((15 * 1024 * 1024)) /dev/zero >"$big"
h1=$(sha256sum "$m1" | cut -d' ' -f1)
h2=$(sha256sum "$m2" | cut -d' ' -f1)
bad=$(printf '%s' "$h1" | tr '0-9a-f' '1-9a-f0')

# the refusals and a good boot through the UEFI shell's load options
place
img=$(shell_esp) || fail "cannot build the shell ESP"
mcopy -i "$img" "$P/kernel-pie.elf" ::/EFI/kaslr/k.elf
mcopy -i "$img" "$m1" ::/EFI/kaslr/m1.bin
mcopy -i "$img" "$m2" ::/EFI/kaslr/m2.bin
mcopy -i "$img" "$big" ::/EFI/kaslr/big.bin
cat >"$WORK/$NAME.nsh" <<NSH
echo "run missing"
fs0:\\EFI\\kaslr\\loader.efi kernel=k.elf $PLACE_OPTS module=none.bin,x
echo "missing returned %lasterror%"
echo "run mismatch"
fs0:\\EFI\\kaslr\\loader.efi kernel=k.elf $PLACE_OPTS module=m1.bin:sha256=$bad,x
echo "mismatch returned %lasterror%"
echo "run too-large"
fs0:\\EFI\\kaslr\\loader.efi kernel=k.elf $PLACE_OPTS kaslr.max=32M module=big.bin
echo "too-large returned %lasterror%"
fs0:\\EFI\\kaslr\\loader.efi kernel=k.elf $PLACE_OPTS module=m1.bin:sha256=$h1,payload.sha256=$h1 module=m2.bin,payload.sha256=$h2 -- via-options
NSH
mcopy -i "$img" "$WORK/$NAME.nsh" ::/startup.nsh
boot_payload "$img" --cpu max --timeout 150
expect_pass
# refused NAME STATUS LINE: the run printed exactly one error line, LINE,
# and returned STATUS
refused() {
	local out
	out=$(clean_log "$LOG" | sed -n "/^run $1\$/,/^$1 returned/p")
	[ "$(printf '%s\n' "$out" | sed -n "s/^$1 returned //p")" = "$2" ] ||
		fail "$1: status '$(printf '%s\n' "$out" | sed -n "s/^$1 returned //p")', want $2"
	[ "$(printf '%s\n' "$out" | grep -c 'kaslr-loader: error: ')" = 1 ] || fail "$1: not one error line"
	printf '%s\n' "$out" | grep -qixF -- "$3" || fail "$1: no line '$3'"
}
refused missing 0xE 'kaslr-loader: error: module \EFI\kaslr\none.bin: no such file on the loader'\''s volume'
refused mismatch 0x1A 'kaslr-loader: error: \EFI\kaslr\m1.bin: refusing to boot: module SHA-256 does not match its :sha256= pin; the file changed or the pin is stale'
refused too-large 0x9 'kaslr-loader: error: module \EFI\kaslr\big.bin: no free range of 15728640 bytes in [0x1000000, 0x2000000) (kaslr.min, kaslr.max): give the machine more memory or widen the window'
[ "$(kv "$LINE" modules)/$(kv "$LINE" verified)" = 2/2 ] ||
	fail "via load options: modules=$(kv "$LINE" modules) verified=$(kv "$LINE" verified), want 2/2"
[ "$(kv "$LINE" cmdline)" = via-options ] || fail "cmdline=$(kv "$LINE" cmdline)"
a0=("$(kv "$LINE" mod0)") a1=("$(kv "$LINE" mod1)")

# kaslr.conf, twice (once at an edge): the same modules elsewhere each time
boots=2
edge && boots=1
for _ in $(seq "$boots"); do
	place
	esp=$(mkesp "$NAME" "$P/kernel-pie.elf" EFI/BOOT/m1.bin="$m1" EFI/BOOT/m2.bin="$m2" \
		EFI/BOOT/kaslr.conf="$(conf "module \\EFI\\BOOT\\m1.bin payload.sha256=$h1" \
			"module m2.bin:sha256=$h2 payload.sha256=$h2" "${PLACE[@]}")")
	boot_payload "$esp" --cpu max
	expect_pass
	[ "$(kv "$LINE" modules)/$(kv "$LINE" verified)" = 2/2 ] ||
		fail "via kaslr.conf: modules=$(kv "$LINE" modules) verified=$(kv "$LINE" verified)"
	clean_log "$LOG" | grep -qxF 'kaslr-loader: loading \EFI\BOOT\kernel.elf (native kernel) and 2 modules' ||
		fail "no loading line naming 2 modules"
	a0+=("$(kv "$LINE" mod0)") a1+=("$(kv "$LINE" mod1)")
done
n0=$(printf '%s\n' "${a0[@]}" | sort -u | wc -l)
n1=$(printf '%s\n' "${a1[@]}" | sort -u | wc -l)
{ [ "$n0" = $((boots + 1)) ] && [ "$n1" = $((boots + 1)) ]; } ||
	fail "module addresses repeat in $((boots + 1)) boots: ${a0[*]} / ${a1[*]}"
ok "m1: ${a0[*]}; m2: ${a1[*]}"

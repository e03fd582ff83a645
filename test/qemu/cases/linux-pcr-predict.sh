# linux-pcr-predict - kaslr-pcr predicts the next boot's PCRs from this
# boot's event log and the ESP as an update leaves it.  Boot A: Debian's
# cloud kernel, the suite's busybox initramfs and a kaslr.conf, with a TPM
# (swtpm); its /init prints the PCRs of every active bank and the event
# log (test/linux/evlog.sh).  Then the ESP is changed as an update changes
# it: another kernel file (the same kernel repacked, under another name),
# a second initrd, a longer command line, a kaslr.conf key (kaslr.min) and
# a rebuilt loader (one with a policy written in, so PCR 5 gains the
# policy's record).  `kaslr-pcr predict` with boot A's log, before boot B,
# must equal what boot B's kernel reads, for every PCR it prints (PCRs
# 0-9 and 11-15, in each bank); the unchanged ESP must predict boot A's
# own values; a record it cannot replay (boot A's log with one firmware
# record's type changed) and a loader on the ESP that is not kaslr-loader
# are errors naming the PCR, with nothing printed.  And without a boot: a
# unified kernel image named in kaslr.conf (test/linux/uki.sh) predicts
# PCR 11 as systemd-measure calculates it, and a command line passed to it
# PCR 12 as its stub measures it (UTF-16 with its NUL).
# placement: no edge - it predicts PCRs, which record files, settings and the command line; kaslr.seed= or kaslr.phys= from place would be one more setting to predict
. test/linux/user.sh
. test/linux/evlog.sh
. test/linux/uki.sh
[ -x "$PCR_TOOL" ] || fail "no $PCR_TOOL (make builds it)"
test/linux/fetch.sh cloud >/dev/null || fail "no Debian cloud kernel: test/linux/fetch.sh cloud failed"
U_DIR=$(test/linux/initramfs.sh cloud) || fail "no initramfs for the cloud kernel"
PCRS='0 1 2 3 4 5 6 7 8 9 11 12 13 14 15'
LIST=$(echo "$PCRS" | tr ' ' ',')
line='console=ttyS0 panic=-1 quiet kl.evlog=1 kl.marker=pcr'

# predict DIR LOG: kaslr-pcr's lines for every bank the kernel showed
predict() {
	local b args=()
	for b in $EV_BANKS; do args+=(--bank "$b"); done
	"$PCR_TOOL" predict --esp "$1" --eventlog "$2" --pcrs "$LIST" "${args[@]}" 2>"$WORK/$NAME.predict.err" ||
		fail "kaslr-pcr predict --esp $1: $(cat "$WORK/$NAME.predict.err")"
}
# vmlinux_gz BZIMAGE OUT: the kernel's vmlinux (and relocations) out of
# the bzImage's LZ4 payload (the setup header's payload_offset and
# _length, less the 4-byte size after it), gzip'd: a kernel file of
# another format the loader boots
vmlinux_gz() {
	local in=$1 sects pm off len
	sects=$(od -An -t u1 -j $((0x1f1)) -N 1 "$in" | tr -d ' ')
	[ "$sects" = 0 ] && sects=4
	pm=$(((sects + 1) * 512))
	off=$(od -An -t u4 -j $((0x248)) -N 4 "$in" | tr -d ' ')
	len=$(od -An -t u4 -j $((0x24c)) -N 4 "$in" | tr -d ' ')
	tail -c +$((pm + off + 1)) "$in" | head -c $((len - 4)) | lz4 -dc | gzip -n -1 >"$2" ||
		fail "cannot repack $in"
}
# the PCRs the last boot's kernel read, in kaslr-pcr's form and order
read_back() {
	local b
	for b in $EV_BANKS; do evlog_read "$b" "$PCRS"; done
}
# same WANT GOT WHAT: the two lists agree, else the PCRs that differ
same() {
	[ "$1" = "$2" ] && return 0
	diff <(echo "$1") <(echo "$2") | sed -n 's/^[<>]/&/p' | head -n 12
	fail "$3"
}

# boot A
A=$WORK/$NAME.espA
rm -rf "$A"
{ mkdir -p "$A/EFI/BOOT" && cp "$LOADER" "$A/EFI/BOOT/BOOTX64.EFI" &&
	cp "$B/linux/cloud/vmlinuz" "$A/EFI/BOOT/vmlinuz" &&
	cp "$U_DIR/initrd.img" "$A/EFI/BOOT/initrd.img"; } || fail "cannot fill $A"
printf '%s\n' 'kernel vmlinuz' 'initrd initrd.img' verbose "cmdline $line" >"$A/EFI/BOOT/kaslr.conf"
evlog_boot "$A"
LOGA=$EVLOG
readA=$(read_back)
same "$readA" "$(predict "$A" "$LOGA")" "the unchanged ESP does not predict boot A's own PCRs (< read, > predicted)"

# the update
Bd=$WORK/$NAME.espB
rm -rf "$Bd"
cp -a "$A" "$Bd" || fail "cp $A"
rm -f "$Bd/EFI/BOOT/vmlinuz"
vmlinux_gz "$B/linux/cloud/vmlinuz" "$Bd/EFI/BOOT/vmlinux-next.gz"
{ mkdir -p "$WORK/$NAME.extra/etc" && echo "update" >"$WORK/$NAME.extra/etc/pcr-update" &&
	(cd "$WORK/$NAME.extra" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) >"$Bd/EFI/BOOT/extra.img"; } ||
	fail "cannot make the second initrd"
lineB="$line kl.update=1"
printf '%s\n' 'kernel vmlinux-next.gz' 'initrd initrd.img' 'initrd extra.img' 'kaslr.min 64M' verbose \
	"cmdline $lineB" >"$Bd/EFI/BOOT/kaslr.conf"
build/tools/kaslr-policy write --loader "$LOADER" --out "$Bd/EFI/BOOT/BOOTX64.EFI" \
	--kernel "\\EFI\\BOOT\\vmlinux-next.gz=$Bd/EFI/BOOT/vmlinux-next.gz" \
	--initrd "\\EFI\\BOOT\\initrd.img=$Bd/EFI/BOOT/initrd.img" --cmdline "$lineB" ||
	fail "kaslr-policy write failed"
want=$(predict "$Bd" "$LOGA")
for n in 4 5 9 12; do
	[ "$(echo "$want" | grep "^$n:sha256=")" != "$(echo "$readA" | grep "^$n:sha256=")" ] ||
		fail "the update left PCR $n's prediction as boot A read it: the change is not seen"
done

# boot B
evlog_boot "$Bd"
[ "$U_CMDLINE" = "$lineB" ] || fail "boot B runs with '$U_CMDLINE', not the updated line"
readB=$(read_back)
printf '%s\n' "$want" >"$WORK/$NAME.predicted"
printf '%s\n' "$readB" >"$WORK/$NAME.read"
same "$readB" "$want" "boot B's PCRs are not the ones predicted before it (< read, > predicted)"

# a record it cannot replay: boot A's first record after the Spec ID event
# made EV_UNUSED (2), a type no firmware writes
bad=$WORK/$NAME.bad.evlog
cp "$LOGA" "$bad" || fail "cp $LOGA"
first=$((32 + $(od -An -t u4 -j 28 -N 4 "$LOGA" | tr -d ' ')))
pcr0=$(od -An -t u4 -j "$first" -N 4 "$LOGA" | tr -d ' ')
printf '\002\000\000\000' | dd of="$bad" bs=1 seek=$((first + 4)) conv=notrunc status=none
if out=$("$PCR_TOOL" predict --esp "$A" --eventlog "$bad" --pcrs "$LIST" 2>&1); then
	fail "a record of an unknown type was replayed: $out"
fi
case $out in *"PCR $pcr0: an event type the prediction does not know"*) ;;
*) fail "the unknown record's error does not name PCR $pcr0: $out" ;; esac
[ "$(echo "$out" | grep -c '^kaslr-pcr: PCR ')" = "$(echo "$out" | wc -l)" ] ||
	fail "values printed beside the error: $out"
# a loader on the ESP that is not kaslr-loader (shim's MokManager in its place)
cp /usr/lib/shim/mmx64.efi "$Bd/EFI/BOOT/BOOTX64.EFI" || fail "cp mmx64.efi"
if out=$("$PCR_TOOL" predict --esp "$Bd" --eventlog "$LOGA" 2>&1); then
	fail "a loader that is not kaslr-loader was predicted: $out"
fi
case $out in *"PCR 4, 5, 9, 12: "*"is not kaslr-loader"*) ;; *) fail "no 'is not kaslr-loader' error for PCRs 4, 5, 9, 12: $out" ;; esac
# a unified kernel image instead, on boot A's log: PCR 11 and PCR 12
uki_build
C=$WORK/$NAME.espC
rm -rf "$C"
cp -a "$A" "$C" || fail "cp $A"
cp "$UKI" "$C/EFI/BOOT/uki.efi" || fail "cp $UKI"
printf '%s\n' 'kernel uki.efi' verbose "cmdline $line" >"$C/EFI/BOOT/kaslr.conf"
got=$("$PCR_TOOL" predict --esp "$C" --eventlog "$LOGA" --pcrs 11,12 2>&1) || fail "UKI: $got"
d=$({ printf '%s' "$line" | iconv -f ASCII -t UTF-16LE; printf '\0\0'; } | sha256sum | cut -d' ' -f1)
want12=$({ head -c 32 /dev/zero; printf '%s' "$d" | xxd -r -p; } | sha256sum | cut -d' ' -f1)
[ "$got" = "$(printf '11:sha256=%s\n12:sha256=%s' "$UKI_PCR11" "$want12")" ] ||
	fail "UKI: predicted '$got'; systemd-measure says PCR 11 is $UKI_PCR11, the stub's line record makes PCR 12 $want12"
ok "PCRs $LIST in banks $(echo "$EV_BANKS" | tr ' ' '+'): boot A's own predicted, boot B's predicted before it (PCR 9 $(echo "$want" | sed -n 's/^9:sha256=\(.\{12\}\).*/\1/p')...); an unknown record and a foreign loader refused; a UKI's PCR 11 as systemd-measure's"

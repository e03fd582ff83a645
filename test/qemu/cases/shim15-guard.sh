# shim15-guard - Secure Boot through a shim 15.x that guards
# ExitBootServices: built with a vendor certificate and without
# DISABLE_EBS_PROTECTION, it powers the machine off ("Bootloader has not
# verified loaded image." ... "halting.") unless its second stage called
# SHIM_LOCK Verify.  Debian bullseye's shim-unsigned 15.8-1~deb11u1 is such
# a shim (bookworm's 16.1, the other shim cases', has no guard); it is
# fetched once with apt from a private bullseye source list into
# build/shim15/ and signed with the snakeoil key as the 16.1 is.  Both
# set-ups where the pins alone admit the kernel must reach the payload:
#   1. `make install SHIM=...` (pins only): every boot;
#   2. TRUST=shim with kaslr.conf naming the pinned kernel.
#   3. a unified kernel image (test/linux/uki.sh, unsigned) the policy
#      pins, through the same shim: it boots to userspace (the whole image
#      went to Verify, as any kernel's file does).
# The test kernel is no PE image and the UKI is unsigned, so shim's Verify
# refuses both; the pins admit them all the same (shim's verdict counts
# only for an unpinned kernel under TRUST=shim), and calling Verify is what
# satisfies the guard.
# placement: random - shim 15's guard does not look at where the kernel lands (linux-sb and uki-boot boot these kernels at the edges)
UKI_CMDLINE='console=ttyS0 panic=-1 kl.marker=shim15'
. test/linux/user.sh
. test/linux/uki.sh
sb_key
S=$B/shim15
deb=shim-unsigned_15.8-1~deb11u1_amd64.deb
mkdir -p "$S" || fail "mkdir $S"
(
	flock 9 || exit 1
	[ -s "$S/usr/lib/shim/shimx64.efi" ] && exit 0
	if [ ! -s "$S/$deb" ]; then
		# bullseye's package lists in a private apt tree: the host's own
		# sources, lists and cache are left alone
		a=$S/apt
		mkdir -p "$a/etc/sources.list.d" "$a/etc/preferences.d" "$a/lists/partial" \
			"$a/cache/archives/partial" || exit 1
		echo 'deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bullseye main' \
			>"$a/etc/sources.list"
		o=(-o "Dir::Etc::SourceList=$PWD/$a/etc/sources.list"
			-o "Dir::Etc::SourceParts=$PWD/$a/etc/sources.list.d"
			-o "Dir::Etc::PreferencesParts=$PWD/$a/etc/preferences.d"
			-o "Dir::State::Lists=$PWD/$a/lists" -o "Dir::State::status=/dev/null"
			-o "Dir::Cache=$PWD/$a/cache" -o APT::Sandbox::User=root)
		apt-get -q "${o[@]}" update >&2 || exit 1
		(cd "$S" && apt-get -q "${o[@]}" download 'shim-unsigned=15.8-1~deb11u1' >&2) || exit 1
	fi
	dpkg-deb -x "$S/$deb" "$S"
) 9>"$S/.lock" || fail "no shim 15.8: apt-get download shim-unsigned=15.8-1~deb11u1 from bullseye failed"
src=$S/usr/lib/shim
# the guard's message, in UTF-16: this shim is one that halts
guard=$(printf 'Bootloader has not verified' | sed 's/./&\\x00/g')
LC_ALL=C grep -aqP "$guard" "$src/shimx64.efi" || fail "$src/shimx64.efi has no ExitBootServices guard"
mkdir -p "$WORK/shim15"
for f in shimx64.efi mmx64.efi; do
	[ "$WORK/shim15/$f" -nt "$src/$f" ] && continue
	sbsign --key "$SB_KEY" --cert "$SB_CERT" --output "$WORK/shim15/$f" "$src/$f" >/dev/null 2>&1 ||
		fail "sbsign $src/$f"
done

# halted CASE: fail when shim 15.8's guard stopped the boot
halted() {
	clean_log "$LOG" | grep -q 'Bootloader has not verified loaded image' &&
		fail "$1: shim 15.8 halted: the loader never called its Verify"
}
# boot T CASE: the payload must run and report PASS with the policy's line
boot15() {
	# the guard sleeps 5 s and powers off: QEMU exits either way
	boot_payload "$(dir_img "$1")" --secureboot --timeout 150
	halted "$2"
	expect_pass
	# shellcheck disable=SC2153 # LINE: set by expect_pass (test/qemu/lib.sh)
	[ "$(kv "$LINE" cmdline)" = "$want" ] || fail "$2: cmdline='$(kv "$LINE" cmdline)', want '$want'"
}
want="console=ttyS0 via=shim15"
T=$WORK/$NAME.esp
place
sb_install "$T" TEST_KERNEL=1 CMDLINE="$want" SHIM="$WORK/shim15/shimx64.efi" ALLOW="$PLACE_ALLOW"
cmp -s "$T/EFI/BOOT/BOOTX64.EFI" "$WORK/shim15/shimx64.efi" || fail "BOOTX64.EFI is not shim 15.8"
printf '%s\n' "${PLACE[@]}" >"$T/EFI/BOOT/kaslr.conf"
boot15 "$T" pins

place
sb_install "$T" TEST_KERNEL=1 CMDLINE="$want" SHIM="$WORK/shim15/shimx64.efi" TRUST=shim ALLOW="$PLACE_ALLOW"
k=$("$B/tools/kaslr-policy" show "$T/EFI/BOOT/grubx64.efi" | sed -n 's/^kernel *\([^ ]*\) sha256=.*/\1/p')
[ -n "$k" ] || fail "no pinned kernel in the policy"
printf '%s\n' "kernel $k" "${PLACE[@]}" >"$T/EFI/BOOT/kaslr.conf"
boot15 "$T" trust-shim

# 3: the pins-only set-up, its loader's policy pinning a UKI instead
uki_build
"$B/tools/kaslr-policy" write --loader "$LOADER" --out "$WORK/$NAME.uki-loader.efi" \
	--kernel "EFI/BOOT/uki.efi=$UKI" --allow verbose --allow kaslr.seed --allow kaslr.phys \
	--allow kaslr.virt >/dev/null || fail "kaslr-policy write"
sbsign --key "$SB_KEY" --cert "$SB_CERT" --output "$T/EFI/BOOT/grubx64.efi" \
	"$WORK/$NAME.uki-loader.efi" >/dev/null 2>&1 || fail "sbsign the loader"
rm -f "$T/EFI/BOOT/kaslr.conf"
place
printf '%s\n' verbose "${PLACE[@]}" >"$T/EFI/BOOT/kaslr.conf"
uki_boot "$(dir_img "$T" EFI/BOOT/uki.efi="$UKI")" --secureboot
halted uki
user_check_common
[ "$U_CMDLINE" = "$UKI_CMDLINE" ] || fail "uki: /proc/cmdline is '$U_CMDLINE', want the .cmdline '$UKI_CMDLINE'"
ok "shim 15.8 with its ExitBootServices guard: pins and TRUST=shim (kaslr.conf: $k) reach the payload, a pinned UKI userspace"

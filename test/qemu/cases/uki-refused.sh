# uki-refused - unified kernel images the loader must not boot, run from
# OVMF's UEFI shell (Secure Boot off), each named by kernel= in the load
# options.  Each run must print exactly one error line - the one for its
# own cause - and return an EFI error, and no kernel may start:
#   a stub version the loader does not know (systemd-stub 254.1, and
#   252.2, whose stub measured a command line passed in differently), a
#   UKI that names no stub version (no .sdmagic, no .sbat), one whose
#   .initrd overlaps its .linux in the loaded image, one whose .cmdline is
#   not ASCII, and a good one whose sha256= pin is wrong.  The refused
#   images are small (stub, a few KiB of sections).  The last run, the
#   real UKI (test/linux/uki.sh), must start its kernel, so the refusals
#   are the images' doing.
# not quiet: a kernel that starts says "Linux version"
# placement: no edge - every run but the control is refused before anything is placed, and the control only shows the image boots (uki-boot checks its placement at both edges)
UKI_CMDLINE='console=ttyS0 panic=-1 kl.marker=uki'
. test/linux/user.sh
. test/linux/uki.sh
uki_build
STUB=/usr/lib/systemd/boot/efi/linuxx64.efi.stub
s=$WORK/$NAME.small
rm -rf "$s"; mkdir -p "$s"
head -c 65536 /dev/urandom >"$s/linux"
head -c 16384 /dev/urandom >"$s/initrd"
small() { # small OUT [mkuki.sh option...]: a small UKI
	local out=$1
	shift
	test/linux/mkuki.sh "$out" --linux "$s/linux" --initrd "$s/initrd" --cmdline "$UKI_CMDLINE" \
		--osrel "$WORK/$NAME.uki.src/os-release" "$@" || fail "mkuki.sh $out"
}
magic() { # magic VERSION OUT: the stub with another version in .sdmagic
	printf '#### LoaderInfo: systemd-stub %s ####\0' "$1" >"$s/magic"
	objcopy --update-section .sdmagic="$s/magic" "$STUB" "$2" || fail "objcopy .sdmagic"
}
magic 254.1 "$s/stub254.efi"
small "$s/u254.efi" --stub "$s/stub254.efi"
magic 252.2 "$s/stub2522.efi"
small "$s/u2522.efi" --stub "$s/stub2522.efi"
objcopy --remove-section .sdmagic --remove-section .sbat "$STUB" "$s/stubnone.efi" || fail "objcopy"
small "$s/unone.efi" --stub "$s/stubnone.efi"
small "$s/good.efi"
# .initrd moved to start 8 KiB before .linux ends in memory (the image then
# ends with .initrd, so both lie inside SizeOfImage)
lin=$(objdump -h "$s/good.efi" | awk '$2 == ".linux" {print $4}')
objcopy --change-section-vma .initrd=$((0x$lin + 65536 - 8192)) "$s/good.efi" "$s/overlap.efi" 2>/dev/null ||
	fail "objcopy --change-section-vma"
printf 'console=ttyS0 caf\xc3\xa9\n' >"$s/cmdline"
objcopy --update-section .cmdline="$s/cmdline" "$s/good.efi" "$s/utf8.efi" || fail "objcopy .cmdline"
good=$(sha256sum "$s/good.efi" | cut -d' ' -f1)
wrong=$(printf '%s' "$good" | tr 0-9a-f 1-9a-f0)

img=$(shell_esp 112) || fail "cannot build the shell ESP"
for f in u254 u2522 unone overlap utf8 good; do
	mcopy -i "$img" "$s/$f.efi" "::/$f.efi" || fail "mcopy $f.efi"
done
mcopy -i "$img" "$UKI" ::/uki.efi || fail "mcopy uki.efi"
L='fs0:\EFI\kaslr\loader.efi'
E='kaslr-loader: error: '
V='UKI of a systemd-stub version whose measurements the loader does not make'
# name|load options|the text its error line must hold
runs=(
	"stub-254|kernel=\\u254.efi|$E\\u254.efi: systemd-stub 254.1: $V"
	"stub-252.2|kernel=\\u2522.efi|$E\\u2522.efi: systemd-stub 252.2: $V"
	"no-version|kernel=\\unone.efi|$E\\unone.efi: UKI names no systemd-stub version (.sdmagic, .sbat)"
	"overlap|kernel=\\overlap.efi|$E\\overlap.efi: UKI sections overlap in memory"
	"not-ascii|kernel=\\utf8.efi|$E\\utf8.efi: its .cmdline: UKI command line not ASCII or over 4095 characters"
	"pin|kernel=\\good.efi sha256=$wrong|$E\\good.efi: refusing to boot: kernel SHA-256 does not match sha256="
)
nsh=$WORK/$NAME.nsh
{
	i=0
	for r in "${runs[@]}"; do
		i=$((i + 1))
		IFS='|' read -r n opt _ <<<"$r"
		echo "echo \"run $i: $n\""
		printf '%s %s\n' "$L" "$opt"
		echo "echo \"run $i returned %lasterror%\""
	done
	echo 'echo "all refusals done"'
	printf '%s kernel=\\uki.efi\n' "$L"
	echo 'echo "the control run returned %lasterror%"'
} >"$nsh"
mcopy -i "$img" "$nsh" ::/startup.nsh
LOG=$WORK/$NAME.log
test/qemu/boot.sh --log "$LOG" --mem 1G --timeout 200 \
	--until 'Linux version|the control run returned' "$img"
rc=$?
[ "$rc" = 0 ] || fail "the shell did not finish (rc=$rc)"
clean_log "$LOG" | grep -q '^all refusals done' || fail "the shell did not reach the control run"
clean_log "$LOG" | sed -n '1,/^all refusals done/p' | grep -qa 'Linux version' &&
	fail "a kernel started during a refused run"
clean_log "$LOG" | sed -n '/^all refusals done/,$p' | grep -qa 'Linux version' ||
	fail "the control run did not start the kernel: $(clean_log "$LOG" | grep -a 'kaslr-loader: error' | tail -n 1)"
i=0 out='' summary='' # run_output (test/qemu/lib.sh) sets both
for r in "${runs[@]}"; do
	i=$((i + 1))
	IFS='|' read -r n _ want <<<"$r"
	run_output "$i" "$n"
	printf '%s\n' "$out" | grep -qF "$want" ||
		fail "run $i ($n): want '$want', got '$(printf '%s\n' "$out" | grep 'kaslr-loader: error: ')'"
done
ok "${summary# }"

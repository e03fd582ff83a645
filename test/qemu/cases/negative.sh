# negative - bad kernels and bad options come back to the firmware: OVMF's
# UEFI shell runs the loader from startup.nsh once per bad kernel
# (test/corpus/NEGATIVE_BOOTS plus a missing file), then once per message a
# newcomer meets (kaslr.conf written key=value, kaslr.conf with a UTF-8 BOM,
# a kernel argument without "--", a short hex value; kaslr.phys= misaligned,
# outside RAM and on memory firmware uses), and prints the status
# each run returned.  Each run must print exactly one error line - the
# message for its own cause, word for word where a newcomer reads it - and
# return an EFI error; the shell must go on to the next, and no payload may
# run.
# placement: no edge - the loader refuses every run before it places anything
cases=$B/corpus/cases
[ -d "$cases" ] || test/corpus/run.sh >/dev/null 2>&1
[ -d "$cases" ] || fail "no malformed-kernel corpus in $cases (test/corpus/run.sh failed)"
img=$(shell_esp) || fail "cannot build the shell ESP"
nsh=$WORK/$NAME.nsh
mmd -i "$img" ::/bad ::/EFI/conf ::/EFI/bom
# loader copies whose kaslr.conf is the subject: key=value on line 2; a BOM
mcopy -i "$img" "$LOADER" ::/EFI/conf/loader.efi
printf '# mine\nkernel=k.elf\n' >"$WORK/$NAME.conf-equals"
mcopy -i "$img" "$WORK/$NAME.conf-equals" ::/EFI/conf/kaslr.conf
mcopy -i "$img" "$LOADER" ::/EFI/bom/loader.efi
printf '\357\273\277kernel \\bad\\none.elf\n' >"$WORK/$NAME.conf-bom"
mcopy -i "$img" "$WORK/$NAME.conf-bom" ::/EFI/bom/kaslr.conf
# a good kernel for the forced placements the loader must refuse
mcopy -i "$img" "$P/kernel-pie.elf" ::/bad/good.elf

names=$(grep -v '^#' test/corpus/NEGATIVE_BOOTS)
# name|shell command line|the exact text its error line must hold
messages=(
	'conf-equals|fs0:\EFI\conf\loader.efi|kaslr-loader: error: \EFI\conf\kaslr.conf line 2: '\''kernel=k.elf'\'': kaslr.conf lines are "key value", not key=value; write e.g. "kernel vmlinuz" (load options are the ones written key=value)'
	'conf-bom|fs0:\EFI\bom\loader.efi|kaslr-loader: error: kernel \bad\none.elf: no such file on the loader'\''s volume'
	'no-dashes|fs0:\EFI\kaslr\loader.efi kernel=\bad\k1 console=ttyS0|kaslr-loader: error: load options: '\''console'\'': unknown loader option; the kernel'\''s own arguments go after "--" (kernel=FILE -- console=ttyS0)'
	'short-hex|fs0:\EFI\kaslr\loader.efi sha256=12ab|kaslr-loader: error: load options: '\''sha256'\'': bad value: expected exactly 64 hex digits (32 bytes)'
	'phys-misaligned|fs0:\EFI\kaslr\loader.efi kernel=\bad\good.elf kaslr.phys=0x20001000|kaslr-loader: error: kaslr.phys=0x20001000: not a usable slot: not a multiple of the kernel'\''s alignment 0x200000'
	'phys-not-ram|fs0:\EFI\kaslr\loader.efi kernel=\bad\good.elf kaslr.phys=8G|kaslr-loader: error: kaslr.phys=0x200000000: not a usable slot: not all RAM at [0x200000000, 0x'
	'phys-firmware|fs0:\EFI\kaslr\loader.efi kernel=\bad\good.elf kaslr.phys=0x7f800000|kaslr-loader: error: kaslr.phys=0x7f800000: not a usable slot: overlaps memory firmware or the loader is using at [0x7F800000, 0x'
)
{
	i=0
	for n in $names missing.elf; do
		i=$((i + 1))
		[ "$n" = missing.elf ] || mcopy -i "$img" "$cases/$n" "::/bad/k$i"
		echo "echo \"run $i: $n\""
		printf '%s\n' "fs0:\\EFI\\kaslr\\loader.efi kernel=\\bad\\k$i verbose"
		echo "echo \"run $i returned %lasterror%\""
	done
	for m in "${messages[@]}"; do
		i=$((i + 1))
		IFS='|' read -r n cmd _ <<<"$m"
		echo "echo \"run $i: $n\""
		printf '%s\n' "$cmd"
		echo "echo \"run $i returned %lasterror%\""
	done
	echo 'echo "all runs done"'
	echo 'reset -s'
} >"$nsh"
runs=$i
mcopy -i "$img" "$nsh" ::/startup.nsh
LOG=$WORK/$NAME.log
test/qemu/boot.sh --log "$LOG" --mem 2G --cpu max --timeout 150 --until 'all runs done' "$img"
rc=$?
[ "$rc" = 0 ] || fail "the shell did not finish all runs (rc=$rc)"
clean_log "$LOG" | grep -qa '^payload:' && fail "a payload ran"

i=0 out='' summary='' # run_output (test/qemu/lib.sh) sets both
for n in $names missing.elf; do
	i=$((i + 1))
	run_output "$i" "$n"
	# the message must be the one for the corpus case's own error
	case $n in
	bz-size-4g.LDR_E_DECOMP_TOO_BIG) printf '%s\n' "$out" | grep -q 'more than [0-9]* bytes (raise kaslr.maxsize=)' || fail "run $i: bzImage bomb not refused at the limit" ;;
	*.LDR_E_DECOMP_TOO_BIG) printf '%s\n' "$out" | grep -q 'exceeds the limit' || fail "run $i: not refused as too big" ;;
	*.LDR_E_BZIMAGE_OUTSIDE) printf '%s\n' "$out" | grep -q 'is not a bootable bzImage: bzImage setup header, setup code or kernel lies outside the file' || fail "run $i: truncated bzImage not named" ;;
	*.LDR_E_BZIMAGE_PAYLOAD) printf '%s\n' "$out" | grep -q 'is not a bootable bzImage: bzImage payload lies outside the kernel image' || fail "run $i: lying payload length not named" ;;
	*.LDR_E_BZIMAGE_SIZE_MISMATCH) printf '%s\n' "$out" | grep -q 'its payload: bzImage payload decompressed to another size than it records' || fail "run $i: lying size word not named" ;;
	*.LDR_E_DECOMP_CHECK) printf '%s\n' "$out" | grep -q 'checksum' || fail "run $i: no checksum message" ;;
	*.LDR_E_DECOMP_MEMORY) printf '%s\n' "$out" | grep -q 'larger window' || fail "run $i: no window message" ;;
	*.LDR_E_UNSUPPORTED_BZIP2) printf '%s\n' "$out" | grep -q 'bzip2 compression is not supported' || fail "run $i: bzip2 not named" ;;
	*.LDR_E_BAD_MAGIC) printf '%s\n' "$out" | grep -q 'bad magic' || fail "run $i: no bad-magic message" ;;
	*.LDR_E_WX_SEGMENT) printf '%s\n' "$out" | grep -q 'program header [0-9] (vaddr 0x[0-9a-fA-F]*): segment is both writable and executable; give writable data and code their own segments (link with -z separate-code' || fail "run $i: no W+X message" ;;
	*.LDR_E_RELOC_TYPE) printf '%s\n' "$out" | grep -q 'relocation type' || fail "run $i: no relocation-type message" ;;
	*.LDR_E_TRUNCATED) printf '%s\n' "$out" | grep -q 'too short' || fail "run $i: no truncation message" ;;
	*.LDR_E_NOT_KERNEL) printf '%s\n' "$out" | grep -qF "kaslr-loader: error: \\bad\\k$i: not an ELF kernel: its first two bytes pass for a zlib header, but what follows does not inflate to an ELF file; kernel= must name an ELF64 x86-64 kernel" || fail "run $i: no not-a-kernel message" ;;
	missing.elf) printf '%s\n' "$out" | grep -qF "kaslr-loader: error: kernel \\bad\\k$i: no such file on the loader's volume" || fail "run $i: no not-found message" ;;
	esac
done
for m in "${messages[@]}"; do
	i=$((i + 1))
	IFS='|' read -r n _ want <<<"$m"
	run_output "$i" "$n"
	printf '%s\n' "$out" | grep -qF -- "$want" || fail "run $i ($n): no line '$want'"
done
ok "$runs runs:$summary"

# negative - bad kernels come back to the firmware: OVMF's UEFI shell runs
# the loader from startup.nsh once per bad kernel (test/corpus/NEGATIVE_BOOTS
# plus a missing file) and prints the status each run returned.  Each run
# must print the loader's error line and return an EFI error, the shell must
# go on to the next, and no payload may run.
cases=$B/corpus/cases
[ -d "$cases" ] || test/corpus/run.sh >/dev/null 2>&1
[ -d "$cases" ] || fail "no malformed-kernel corpus in $cases (test/corpus/run.sh failed)"
img=$(shell_esp) || fail "cannot build the shell ESP"
nsh=$WORK/$NAME.nsh
mmd -i "$img" ::/bad
names=$(grep -v '^#' test/corpus/NEGATIVE_BOOTS)
{
	i=0
	for n in $names missing.elf; do
		i=$((i + 1))
		[ "$n" = missing.elf ] || mcopy -i "$img" "$cases/$n" "::/bad/k$i"
		echo "echo \"run $i: $n\""
		printf '%s\n' "fs0:\\EFI\\kaslr\\loader.efi kernel=\\bad\\k$i verbose"
		echo "echo \"run $i returned %lasterror%\""
	done
	echo 'echo "all runs done"'
	echo 'reset -s'
} >"$nsh"
runs=$i
mcopy -i "$img" "$nsh" ::/startup.nsh
LOG=$WORK/$NAME.log
test/qemu/boot.sh --log "$LOG" --mem 2G --cpu max --timeout 120 --until 'all runs done' "$img"
rc=$?
[ "$rc" = 0 ] || fail "the shell did not finish all runs (rc=$rc)"
clean_log "$LOG" | grep -qa '^payload:' && fail "a payload ran"
i=0 summary=
for n in $names missing.elf; do
	i=$((i + 1))
	# the lines between "run i:" and "run i returned"
	out=$(clean_log "$LOG" | sed -n "/^run $i: /,/^run $i returned/p")
	st=$(printf '%s\n' "$out" | sed -n "s/^run $i returned //p")
	[ -n "$st" ] || fail "run $i ($n): no status"
	[ "$st" != 0x0 ] || fail "run $i ($n): the loader returned success"
	printf '%s\n' "$out" | grep -q 'kaslr-loader: error: ' || fail "run $i ($n): no error line"
	errs=$(printf '%s\n' "$out" | grep -c 'kaslr-loader: error: ')
	[ "$errs" = 1 ] || fail "run $i ($n): $errs error lines, want one"
	# the message must be the one for the corpus case's own error
	case $n in
	*.LDR_E_DECOMP_TOO_BIG) printf '%s\n' "$out" | grep -q 'exceeds the limit' || fail "run $i: not refused as too big" ;;
	*.LDR_E_DECOMP_CHECK) printf '%s\n' "$out" | grep -q 'checksum' || fail "run $i: no checksum message" ;;
	*.LDR_E_DECOMP_MEMORY) printf '%s\n' "$out" | grep -q 'larger window' || fail "run $i: no window message" ;;
	*.LDR_E_UNSUPPORTED_BZIP2) printf '%s\n' "$out" | grep -q 'bzip2 compression is not supported' || fail "run $i: bzip2 not named" ;;
	*.LDR_E_BAD_MAGIC) printf '%s\n' "$out" | grep -q 'bad magic' || fail "run $i: no bad-magic message" ;;
	*.LDR_E_WX_SEGMENT) printf '%s\n' "$out" | grep -q 'program header [0-9] (vaddr 0x[0-9a-fA-F]*): segment is both writable and executable; give writable data and code their own segments (link with -z separate-code' || fail "run $i: no W+X message" ;;
	*.LDR_E_RELOC_TYPE) printf '%s\n' "$out" | grep -q 'relocation type' || fail "run $i: no relocation-type message" ;;
	*.LDR_E_TRUNCATED) printf '%s\n' "$out" | grep -q 'too short' || fail "run $i: no truncation message" ;;
	missing.elf) printf '%s\n' "$out" | grep -q "kernel .*k[0-9]*: no such file on the loader's volume" || fail "run $i: no not-found message" ;;
	esac
	summary="$summary $n=$st"
done
ok "$runs runs:$summary"

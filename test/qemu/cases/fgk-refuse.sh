# fgk-refuse - a kernel that asks for function-granular KASLR (the KASLR
# functions note, added with objcopy) but cannot have it is refused before
# anything is placed, with one error line naming the cause, and an EFI
# error goes back to the UEFI shell, which runs the next (as negative.sh):
#   k1  a PIE (kernel-pie.elf): relocations carry no symbols
#   k2  no function sections (kernel-high.elf, .text.* merged into .text)
#   k3  kernel-fgk.elf naming a table it does not have
#   k4  kernel-fgk.elf with a note of an unknown version
#   k5  k4 under nokaslr: refused all the same (nokaslr never lets a kernel
#       boot that would not boot without it)
# No payload may run.  The lines are compared whole: they are the subject.
# placement: no edge - the loader refuses every kernel before it places anything
hint='link with -ffunction-sections --emit-relocs, .text.* left out of the linker script (include/PROTOCOL.md, function-granular KASLR)'
# note(DESCSZ, DESC): name "KASLR", type 2, the descriptor as printf text
note() {
	printf '\006\000\000\000%b\000\000\000\002\000\000\000KASLR\000\000\000%b' "$1" "$2"
}
v1_none='\001\000\000\000\000\000\000\000'
v2_none='\002\000\000\000\000\000\000\000'
# one table: name ".fgk_nope" (NUL-padded to 32), entsize 16, key at 0, ABS64
nope='\001\000\000\000\001\000\000\000.fgk_nope'
for _ in $(seq 1 23); do nope="$nope\\000"; done
nope="$nope"'\020\000\000\000\000\000\000\000\001\000\000\000\000\000\000\000'
note '\010' "$v1_none" >"$WORK/$NAME.v1"
note '\010' "$v2_none" >"$WORK/$NAME.v2"
note '\070' "$nope" >"$WORK/$NAME.nope"
[ "$(stat -c %s "$WORK/$NAME.nope")" = $((12 + 8 + 56)) ] || fail "the table note is not 76 bytes"
add() { objcopy --add-section .note.kaslr="$2" "$1" "$3" || fail "objcopy $1"; }
swap() {
	objcopy --remove-section .note.kaslr --add-section .note.kaslr="$2" "$1" "$3" ||
		fail "objcopy $1"
}
add "$P/kernel-pie.elf" "$WORK/$NAME.v1" "$WORK/$NAME.k1"
add "$P/kernel-high.elf" "$WORK/$NAME.v1" "$WORK/$NAME.k2"
swap "$P/kernel-fgk.elf" "$WORK/$NAME.nope" "$WORK/$NAME.k3"
swap "$P/kernel-fgk.elf" "$WORK/$NAME.v2" "$WORK/$NAME.k4"
readelf -nW "$WORK/$NAME.k3" | grep -q 'KASLR *0x00000038' || fail "k3 carries no 56-byte KASLR note"

img=$(shell_esp) || fail "cannot build the shell ESP"
mmd -i "$img" ::/bad
for k in 1 2 3 4; do mcopy -i "$img" "$WORK/$NAME.k$k" "::/bad/k$k"; done
nsh=$WORK/$NAME.nsh
{
	for k in 1 2 3 4; do
		echo "echo \"run $k: k$k\""
		printf '%s\n' "fs0:\\EFI\\kaslr\\loader.efi kernel=\\bad\\k$k"
		echo "echo \"run $k returned %lasterror%\""
	done
	echo 'echo "run 5: k5"'
	printf '%s\n' 'fs0:\EFI\kaslr\loader.efi kernel=\bad\k4 nokaslr'
	echo 'echo "run 5 returned %lasterror%"'
	echo 'echo "all runs done"'
	echo 'reset -s'
} >"$nsh"
mcopy -i "$img" "$nsh" ::/startup.nsh
LOG=$WORK/$NAME.log
test/qemu/boot.sh --log "$LOG" --cpu max --timeout 120 --until 'all runs done' "$img"
rc=$?
[ "$rc" = 0 ] || fail "the shell did not finish all runs (rc=$rc)"
clean_log "$LOG" | grep -qa '^payload:' && fail "a payload ran"
e='kaslr-loader: error: '
want=(
	"$e\\bad\\k1 asks for function-granular KASLR but is a PIE (ET_DYN): function-granular KASLR needs an ET_EXEC linked with --emit-relocs; $hint"
	"$e\\bad\\k2 has 0 code sections named .text.*: kernel asks for function-granular KASLR but has fewer than two function sections; $hint"
	"$e\\bad\\k3: table '.fgk_nope': a table named in the function-granular KASLR note is absent or malformed; $hint"
	"$e\\bad\\k4: malformed function-granular KASLR note; $hint"
	"$e\\bad\\k4: malformed function-granular KASLR note; $hint"
)
out='' summary='' # run_output (test/qemu/lib.sh) sets both
for k in 1 2 3 4 5; do
	run_output "$k" "k$k"
	got=$(printf '%s\n' "$out" | grep "^$e")
	[ "$got" = "${want[k - 1]}" ] || fail "run $k: got '$got', want '${want[k - 1]}'"
done
ok "5 refusals:$summary"

# linux-refused - an initrd or command line that cannot be booted stops the loader
# before anything is handed over, with one line naming it: Debian's cloud
# bzImage, run from OVMF's UEFI shell with an initrd whose :sha256= pin is
# wrong, one larger than the whole physical window (kaslr.max=), one that
# does not exist, and (the command line's fault) more memmap= ranges than
# the loader keeps out.  Each run must print exactly one error line - the
# one for its own cause - and return an EFI error, and the kernel must not
# start; the last run, the same kernel with a small pinned initrd in the
# same window, must start it (so the refusals are the inputs' doing).
# Every run takes place's options.
# placement: random - the refusals come before the kernel is placed; the control run checks only that it starts
test/linux/fetch.sh cloud >/dev/null || fail "no Debian cloud kernel: test/linux/fetch.sh cloud failed"
bz=$B/linux/cloud/vmlinuz
img=$(shell_esp 112) || fail "cannot build the shell ESP"
small=$WORK/$NAME.small big=$WORK/$NAME.big
printf 'a small initrd\n' >"$small"
# 66 MiB: more than the 64 MiB between kaslr.min (16M) and kaslr.max=80M
head -c $((66 << 20)) /dev/zero >"$big"
good=$(sha256sum "$small" | cut -d' ' -f1)
wrong=$(printf '%s' "$good" | tr 0-9a-f 1-9a-f0)
for f in "$bz:vmlinuz" "$small:small.img" "$big:big.img"; do
	mcopy -i "$img" "${f%:*}" "::/${f##*:}" || fail "mcopy ${f%:*}"
done
rm -f "$big"
place
L="fs0:\\EFI\\kaslr\\loader.efi kernel=\\vmlinuz kaslr.max=80M $PLACE_OPTS"
# nine memmap=nn$ss ranges: one more than the loader can keep out
many=$(for i in 1 2 3 4 5 6 7 8 9; do printf 'memmap=1M$%dM ' $((100 + i)); done)
# name|initrd option|the text its error line must hold
runs=(
	"pin|initrd=\\small.img:sha256=$wrong|kaslr-loader: error: \\small.img: refusing to boot: initrd SHA-256 does not match its :sha256= pin"
	"too-big|initrd=\\big.img|kaslr-loader: error: initrd: no free range of $((66 << 20)) bytes in [0x1000000, 0x5000000) (kaslr.min, kaslr.max)"
	"missing|initrd=\\none.img|kaslr-loader: error: initrd \\none.img: no such file on the loader's volume"
	"memmap|initrd=\\small.img -- $many|kaslr-loader: error: the kernel command line has more than 8 memmap= ranges that keep memory out"
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
	printf '%s %s -- console=ttyS0 panic=-1 no_timer_check\n' "$L" "initrd=\\small.img:sha256=$good"
	echo 'echo "the control run returned %lasterror%"'
} >"$nsh"
mcopy -i "$img" "$nsh" ::/startup.nsh
LOG=$WORK/$NAME.log
test/qemu/boot.sh --log "$LOG" --mem 1G --cpu max --timeout 200 \
	--until 'Linux version|the control run returned' "$img"
rc=$?
[ "$rc" = 0 ] || fail "the shell did not finish (rc=$rc)"
clean_log "$LOG" | grep -q '^all refusals done' || fail "the shell did not reach the control run"
# the kernel may start only after every refusal, in the control run
clean_log "$LOG" | sed -n '1,/^all refusals done/p' | grep -qa 'Linux version' &&
	fail "the kernel started during a refused run"
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

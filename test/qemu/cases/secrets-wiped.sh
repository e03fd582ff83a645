# secrets-wiped - payload.scan=secrets: the test kernel tries every
# 8-byte-aligned 32-byte window of the loader image and of all
# loader-reclaimable memory as the entropy pool's output, deriving the
# kernel seed from it as the loader does.  A match means the loader left
# the secret behind (anyone reading that RAM could recompute the seeds).
# Then every 8-byte word of the loader's image and of every page the final
# EFI map gives the loader (LoaderCode, LoaderData, its reclaimable type)
# against the physical and the virtual base, outside what holds them by
# design (the kernel, its hand-off structure and maps, its stack, the
# crash-report facts): the loader's own state, the function-granular
# core's memory and copies of the memory map are wiped before the jump.
# Once with the native protocol, placed (kaslr.phys=) at a value that
# stands as a word in the kernel file itself, so that the file's bytes, if
# left in memory, would read as this boot's base; once with kaslr.seed=
# (whose placement seed is public, but whose pool output is not).
# placement: no edge - it places the kernel itself: at a word of the kernel file (kaslr.phys=), with its own kaslr.seed=
at=$(od -An -v -t x8 -w8 "$P/kernel-pie.elf" | gawk '{v = strtonum("0x" $1)}
	v >= 32 * 2^20 && v < 512 * 2^20 && v % (2 * 2^20) == 0 {printf "0x%x\n", v; exit}')
[ -n "$at" ] || fail "no 2 MiB-aligned word between 32 and 512 MiB in kernel-pie.elf"
for v in pie high; do
	extra="kaslr.phys $at"
	[ "$v" = high ] && extra='kaslr.seed 00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff'
	esp=$(mkesp "$NAME-$v" "$P/kernel-$v.elf" \
		EFI/BOOT/kaslr.conf="$(conf 'cmdline payload.scan=secrets' ${extra:+"$extra"})")
	boot_payload "$esp" --cpu max --timeout 120
	expect_pass
	[ "$v" = high ] || [ "$(($(kv "$LINE" phys)))" = "$((at))" ] || fail "pie: phys=$(kv "$LINE" phys), forced $at"
	n=$(kv "$LINE" scanned)
	[ "${n:-0}" -gt 10000 ] || fail "$v: only ${n:-0} windows scanned"
	w=$(kv "$LINE" layout_words)
	[ "${w:-0}" -gt 100000 ] || fail "$v: only ${w:-0} words compared with the bases"
done
ok "pie at $at; scanned=$n windows, no pool output found; $w words, no base outside the hand-off"

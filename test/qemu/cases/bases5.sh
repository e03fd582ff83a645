# bases5 - five boots of the PIE payload: at least four distinct physical bases
# placement: no edge - its subject is the loader's own draw: five boots on its entropy, at least four bases
esp=$(mkesp "$NAME" "$P/kernel-pie.elf")
seen=()
for _ in 1 2 3 4 5; do
	boot_payload "$esp" --cpu max
	expect_pass
	seen+=("$(kv "$LINE" phys)")
done
n=$(printf '%s\n' "${seen[@]}" | sort -u | wc -l)
[ "$n" -ge 4 ] || fail "only $n distinct bases in 5 boots: ${seen[*]}"
ok "$n distinct: ${seen[*]}"

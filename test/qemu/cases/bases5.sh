# bases5 - five boots of the PIE payload: at least three distinct physical
# bases.  Uniform draws over the 229 slots of 512 MiB give fewer than three
# about once in 800,000 runs (fewer than four: once in 2,100, too often to
# fail make test by chance)
# placement: no edge - its subject is the loader's own draw: five boots on its entropy, at least three bases
esp=$(mkesp "$NAME" "$P/kernel-pie.elf")
seen=()
for _ in 1 2 3 4 5; do
	boot_payload "$esp" --cpu max
	expect_pass
	seen+=("$(kv "$LINE" phys)")
done
n=$(printf '%s\n' "${seen[@]}" | sort -u | wc -l)
[ "$n" -ge 3 ] || fail "only $n distinct bases in 5 boots: ${seen[*]}"
ok "$n distinct: ${seen[*]}"

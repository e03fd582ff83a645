# linux-tpm-settings - what decides the layout is measured: Debian's cloud
# kernel with its initrd and a TPM 2.0 (swtpm, a fresh one each boot), the
# PCRs 0-15 read by the running kernel from /sys/class/tpm/tpm0/pcr-sha256.
# The same kaslr.conf twice gives the same sixteen values (nothing random
# is measured); adding kaslr.seed, kaslr.min or nokaslr changes PCR 5
# (the settings record) and leaves PCR 9 (the files) and PCR 12 (the
# command line) as they were.  Every boot must still run where the loader
# put it.
# placement: no edge - its subject is what PCR 5 measures, of which kaslr.seed= and kaslr.phys= are part
. test/linux/user.sh
want='console=ttyS0 panic=-1 quiet no_timer_check kl.marker=tpm'
seed=5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed
declare -A P
boot() { # boot NAME [kaslr.conf line...]: the PCRs into P[NAME]
	local name=$1 tpm=$WORK/$NAME.tpm.$1
	shift
	rm -rf "$tpm"
	user_boot cloud "$want" "$@" -- --tpm "$tpm" --cpu max
	user_check_common
	[ -n "$U_PCRS" ] || fail "boot '$name': the kernel found no TPM PCRs"
	P[$name]=$U_PCRS
}
pcr() { # pcr NAME N: PCR N of boot NAME
	printf '%s\n' "${P[$1]}" | tr ' ' '\n' | sed -n "s/^$2=//p"
}
boot base
boot again
[ "${P[base]}" = "${P[again]}" ] || fail "the same settings gave other PCRs: '${P[base]}' then '${P[again]}'"
boot seed "kaslr.seed $seed"
boot min 'kaslr.min 64M'
boot nokaslr nokaslr
for b in seed min nokaslr; do
	[ "$(pcr "$b" 5)" != "$(pcr base 5)" ] || fail "'$b' left PCR 5 as it was: the setting is not measured"
	[ "$(pcr "$b" 9)" = "$(pcr base 9)" ] || fail "'$b' changed PCR 9 (the files did not change)"
	[ "$(pcr "$b" 12)" = "$(pcr base 12)" ] || fail "'$b' changed PCR 12 (the command line did not change)"
done
ok "PCRs 0-15 equal over two boots; PCR 5 $(pcr base 5 | cut -c1-12)... changed by kaslr.seed, kaslr.min, nokaslr"

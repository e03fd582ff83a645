#!/bin/bash
# run.sh SECONDS - build the libFuzzer targets and run each for SECONDS
# (one after the other; FUZZ_PARALLEL=1 runs them all at once), each on its
# own corpus $BUILD/fuzz/corpus-<t> seeded from the payload builds, the
# malformed-kernel corpus, test/fuzz/regress/<t> and generated seeds.
# Prints per target the executions and coverage, and as its last line
#   fuzz: N passed, N failed
# A target that crashes (or fails to build) counts as failed; crash inputs
# are kept as $BUILD/fuzz/crash-<t>-*, logs as $BUILD/fuzz/log-<t>.txt.
set -u
cd "$(dirname "$0")/../.." || exit 1
S=${1:-60}
B=${BUILD:-build}
F=$B/fuzz
read -r -a TARGETS <<<"${FUZZ_TARGETS:-elf inflate bzimage e820 options fgkaslr policy pe tcglog uki authenticode pcrlog}"
mkdir -p "$F"
# one run at a time per build directory (corpora, logs and seeds are shared)
exec 9>"$F/.lock"
if ! flock -n 9; then
	echo "fuzz: waiting for another fuzz run in $F to finish"
	flock 9
fi

max_len() {
	case $1 in
	elf) echo 131072 ;;   # the payload ELFs fit whole
	inflate) echo 8192 ;;
	bzimage) echo 65536 ;; # the corpus's synthetic bzImages fit whole
	e820) echo 16384 ;;
	options) echo 40000 ;; # past OPT_TEXT_MAX in UCS-2
	fgkaslr) echo 8192 ;;  # recipes; whole ELF files go to fuzz_elf
	policy) echo 9000 ;;   # past the 8 KiB section
	pe) echo 400000 ;;     # the loader image fits whole
	tcglog) echo 16384 ;;
	uki) echo 262144 ;;    # a UKI on Debian's stub with small sections fits whole
	authenticode) echo 400000 ;; # the loader image fits whole
	pcrlog) echo 16384 ;;
	esac
}

# the seed directories of a target, one a line
seeds() {
	case $1 in
	elf) printf '%s\n' "$B/payload" "$F/corpus-cases" ;;
	inflate) printf '%s\n' "$F/seeds/inflate" "$B/payload" "$F/corpus-cases" ;;
	bzimage) printf '%s\n' "$F/corpus-cases" ;;
	policy | pe | tcglog | uki) printf '%s\n' "$F/seeds/$1" ;;
	authenticode) printf '%s\n' "$F/seeds/pe" "$F/seeds/uki" ;;
	pcrlog) printf '%s\n' "$F/seeds/pcrlog" "$F/seeds/tcglog" ;;
	*) printf '%s\n' "$F/seeds/$1" ;;
	esac
}

if ! make --no-print-directory BUILD="$B" fuzz-build >"$F/build.txt" 2>&1; then
	tail -n 30 "$F/build.txt"
	echo "fuzz: 0 passed, 1 failed"
	exit 1
fi
rm -rf "$F/seeds" "$F/corpus-cases"
"$F/mkseeds" "$F/seeds" test/fixtures/*.mmap
# policy and PE seeds: the loader image itself, and policy sections the
# host tool writes into it (empty, one kernel, kernel + initrds + cmdline)
mkdir -p "$F/seeds/policy" "$F/seeds/pe"
if make --no-print-directory BUILD="$B" loader "$B/tools/kaslr-policy" payloads >>"$F/build.txt" 2>&1; then
	cp "$B/BOOTX64.EFI" "$F/seeds/pe/loader.efi"
	objcopy -O binary -j .kpolicy "$B/BOOTX64.EFI" "$F/seeds/policy/empty"
	"$B/tools/kaslr-policy" write --loader "$B/BOOTX64.EFI" --out "$F/seeds/pe/policy.efi" \
		--kernel "/EFI/BOOT/k.elf=$B/payload/kernel-pie.elf" &&
		objcopy -O binary -j .kpolicy "$F/seeds/pe/policy.efi" "$F/seeds/policy/kernel"
	"$B/tools/kaslr-policy" write --loader "$B/BOOTX64.EFI" --out "$F/seeds/pe/full.efi" \
		--kernel "/EFI/kaslr/vmlinux.gz=$B/payload/kernel-pie.elf" \
		--initrd "/EFI/kaslr/initrd.img=$B/payload/kernel-high.elf" \
		--initrd "/efi/kaslr/ucode.img=$B/payload/kernel-exec.elf" \
		--cmdline "console=ttyS0 root=/dev/vda1 ro" --allow verbose --allow kaslr.min &&
		objcopy -O binary -j .kpolicy "$F/seeds/pe/full.efi" "$F/seeds/policy/full"
else
	echo "warning: no loader image for the policy and PE seeds"
fi
# UKI seeds: small unified kernel images on Debian's stub (test/linux/mkuki.sh),
# with every section the stub knows, and with only .linux
mkdir -p "$F/seeds/uki"
u=$F/seeds/uki.src
mkdir -p "$u"
head -c 4096 /dev/urandom >"$u/linux"
head -c 2048 /dev/urandom >"$u/initrd"
printf 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nNAME=Debian\n' >"$u/osrel"
printf '{"sha256":[]}\n' >"$u/pcrsig"
printf -- '-----BEGIN PUBLIC KEY-----\n-----END PUBLIC KEY-----\n' >"$u/pcrpkey"
head -c 512 /dev/urandom >"$u/splash"
head -c 256 /dev/urandom >"$u/dtb"
if ! { test/linux/mkuki.sh "$F/seeds/uki/all.efi" --linux "$u/linux" --initrd "$u/initrd" \
	--cmdline "console=ttyS0 quiet" --osrel "$u/osrel" --pcrsig "$u/pcrsig" \
	--pcrpkey "$u/pcrpkey" --splash "$u/splash" --dtb "$u/dtb" &&
	test/linux/mkuki.sh "$F/seeds/uki/linux.efi" --linux "$u/linux"; } >>"$F/build.txt" 2>&1; then
	echo "warning: no UKI seeds (test/linux/mkuki.sh failed)"
fi
rm -rf "$F"/seeds/uki/*.d "$u"
# the malformed-kernel corpus (test/corpus/mkcorpus) as seeds
if make --no-print-directory BUILD="$B" payloads "$B/corpus/mkcorpus" >>"$F/build.txt" 2>&1 &&
   "$B/corpus/mkcorpus" "$F/corpus-cases" "$B/payload/kernel-pie.elf" "$B/payload/kernel-exec.elf" >/dev/null; then
	rm -f "$F"/corpus-cases/*-bomb-*  # large; the seeds have small bombs
else
	echo "warning: no malformed-kernel corpus for the seeds"
	mkdir -p "$F/corpus-cases"
fi

run_one() {
	local t=$1 d dirs=()
	mkdir -p "$F/corpus-$t"
	while read -r d; do
		[ -d "$d" ] && dirs+=("$d")
	done < <(echo "test/fuzz/regress/$t"; seeds "$t")
	"$F/fuzz_$t" -max_total_time="$S" -print_final_stats=1 -max_len="$(max_len "$t")" \
		-timeout=20 -rss_limit_mb=3072 -artifact_prefix="$F/crash-$t-" \
		"$F/corpus-$t" "${dirs[@]}" >"$F/log-$t.txt" 2>&1
	echo $? >"$F/rc-$t"
}

if [ "${FUZZ_PARALLEL:-0}" = 1 ]; then
	for t in "${TARGETS[@]}"; do run_one "$t" & done
	wait
else
	for t in "${TARGETS[@]}"; do run_one "$t"; done
fi

p=0 f=0
for t in "${TARGETS[@]}"; do
	rc=$(cat "$F/rc-$t" 2>/dev/null || echo 1)
	log=$F/log-$t.txt
	execs=$(grep -a 'stat::number_of_executed_units' "$log" | awk '{print $NF}' | tail -n 1)
	speed=$(grep -a 'stat::average_exec_per_sec' "$log" | awk '{print $NF}' | tail -n 1)
	last=$(grep -aE '^#[0-9]+' "$log" | tail -n 1)
	cov=$(printf '%s\n' "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
	ft=$(printf '%s\n' "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
	corp=$(printf '%s\n' "$last" | sed -n 's/.* corp: \([0-9]*\).*/\1/p')
	if [ "$rc" -eq 0 ]; then
		p=$((p + 1)); st=ok
	else
		f=$((f + 1)); st="FAILED (rc=$rc)"
		grep -aE 'ERROR|SUMMARY|runtime error|^    #[0-9] ' "$log" | head -n 12
		for a in "$F"/crash-"$t"-*; do
			[ -e "$a" ] && echo "  artefact: $a"
		done
	fi
	echo "fuzz_$t: $st execs=${execs:-0} exec/s=${speed:-0} cov=${cov:-0} ft=${ft:-0} corpus=${corp:-0} (${S}s)"
done
echo "fuzz: $p passed, $f failed"
[ "$f" -eq 0 ]

#!/bin/bash
# kaslr-sweep - boot a kernel under QEMU + OVMF through kaslr-loader at many
# placements and at the edges of where it can be placed, judge each boot by
# its serial console, and print a command that reproduces each failure.
#
#   kaslr-sweep --kernel FILE [--initrd FILE]... [--module FILE[,STRING]]...
#               [--cmdline STR] [--runs N] [--edges [--only EDGE]]
#               [--mem SIZE[,SIZE...]] [--cpu MODEL] [--jobs J] --pass REGEX
#               [--fail REGEX] [--timeout S] [--junit FILE] [--seed HEX]
#
# For each memory size: --runs boots with fresh seeds (kaslr.seed=, each the
# SHA-256 of the one before, the first --seed or random), then with --edges
# one boot at each edge, forced with kaslr.phys= / kaslr.virt= (the other
# axis drawn from the boot's seed):
#   phys-lowest   the lowest physical slot
#   phys-highest  the highest physical slot
#   phys-above4g  the first slot at or above 4 GiB (only where the memory
#                 size puts RAM there: q35 keeps 2 GiB below 4 GiB from
#                 2816 MiB of RAM on)
#   virt-lowest   the lowest virtual slot
#   virt-highest  the highest virtual slot
# --only EDGE boots just that edge (what a reproduce line uses).
#
# A boot fails when --fail matches the serial console, when the loader
# refuses (a "kaslr-loader: error:" line), when QEMU ends without --pass
# matching, or after --timeout seconds (default 120; not counting the time
# the guest's CPU waited for a host CPU, so that a busy host makes boots
# slow, not failed; four times that by the wall clock in any case); it
# passes when --pass matches first.  Exit status: 0 all passed, 1 a boot failed, 2 bad
# arguments (one line on stderr).
#
# The loader: $KASLR_SWEEP_LOADER, else BOOTX64.EFI beside this tool's
# directory (build/ in the source tree), else the packaged one.  OVMF:
# Debian's (package ovmf).  Needs qemu-system-x86, mtools, ovmf.
set -u
LC_ALL=C
export LC_ALL
me=kaslr-sweep
usage() { echo "$me: $*" >&2; exit 2; }

kernel='' initrds=() modules=() cmdline='' runs=3 edges=0 only='' mems=512M cpu=max
jobs=$(nproc 2>/dev/null || echo 1) pass='' failre='' timeout=120 junit='' seed=''
need() { [ $# -ge 2 ] || usage "$1 needs a value"; }
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) need "$@"; kernel=$2; shift ;;
	--initrd) need "$@"; initrds+=("$2"); shift ;;
	--module) need "$@"; modules+=("$2"); shift ;;
	--cmdline) need "$@"; cmdline=$2; shift ;;
	--runs) need "$@"; runs=$2; shift ;;
	--edges) edges=1 ;;
	--only) need "$@"; only=$2; shift ;;
	--mem) need "$@"; mems=$2; shift ;;
	--cpu) need "$@"; cpu=$2; shift ;;
	--jobs) need "$@"; jobs=$2; shift ;;
	--pass) need "$@"; pass=$2; shift ;;
	--fail) need "$@"; failre=$2; shift ;;
	--timeout) need "$@"; timeout=$2; shift ;;
	--junit) need "$@"; junit=$2; shift ;;
	--seed) need "$@"; seed=$2; shift ;;
	-h|--help) sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//'; exit 0 ;;
	*) usage "unknown argument '$1' (--help lists them)" ;;
	esac
	shift
done

# ------------------------------------------------------------ arguments
[ -n "$kernel" ] || usage "--kernel FILE is required"
{ [ -f "$kernel" ] && [ -r "$kernel" ]; } || usage "--kernel $kernel: no such readable file"
for f in "${initrds[@]}"; do
	{ [ -f "$f" ] && [ -r "$f" ]; } || usage "--initrd $f: no such readable file"
done
for m in "${modules[@]}"; do
	f=${m%%,*}
	{ [ -f "$f" ] && [ -r "$f" ]; } || usage "--module $f: no such readable file"
done
[ "${#initrds[@]}" -le 8 ] || usage "--initrd: at most 8 (the loader takes no more)"
[ "${#modules[@]}" -le 16 ] || usage "--module: at most 16 (the loader takes no more)"
[ -n "$pass" ] || usage "--pass REGEX is required"
# grep -E answers 2 for a pattern it cannot compile
check_re() {
	local msg
	msg=$(grep -E -- "$2" </dev/null 2>&1 >/dev/null)
	[ $? -ne 2 ] || usage "$1 '$2' is not a valid extended regular expression: ${msg#grep: }"
}
check_re --pass "$pass"
[ -z "$failre" ] || check_re --fail "$failre"
[[ $runs =~ ^[0-9]+$ ]] || usage "--runs '$runs' is not a number"
runs=$((10#$runs))
[ "$runs" -gt 0 ] || [ "$edges" = 1 ] || usage "--runs 0 without --edges boots nothing"
[[ $jobs =~ ^[1-9][0-9]*$ ]] || usage "--jobs '$jobs' is not a positive number"
[[ $timeout =~ ^[1-9][0-9]*$ ]] || usage "--timeout '$timeout' is not a positive number of seconds"
[ -z "$seed" ] || [[ $seed =~ ^[0-9a-fA-F]{64}$ ]] || usage "--seed needs exactly 64 hex digits"
all_edges="phys-lowest phys-highest phys-above4g virt-lowest virt-highest"
if [ -n "$only" ]; then
	[ "$edges" = 1 ] || usage "--only needs --edges"
	[[ " $all_edges " == *" $only "* ]] || usage "--only '$only': one of $all_edges"
fi
IFS=, read -r -a memlist <<<"$mems"
[ "${#memlist[@]}" -gt 0 ] || usage "--mem needs at least one size"
for m in "${memlist[@]}"; do
	[[ $m =~ ^[1-9][0-9]*[MG]$ ]] || usage "--mem '$m': sizes look like 512M or 4G"
done
[ "${#cmdline}" -lt 4096 ] || usage "--cmdline: at most 4095 bytes"
case $cmdline in *$'\n'*) usage "--cmdline: one line" ;; esac

# ------------------------------------------------------------ tools
here=$(cd "$(dirname "$0")" && pwd)
# guest_us: beside this tool (build/tools/), else the packaged one
clock=$here/guest-clock.sh
[ -f "$clock" ] || clock=/usr/lib/kaslr-loader/guest-clock.sh
# shellcheck source=src/tools/guest-clock.sh
. "$clock" || usage "$clock missing (reinstall kaslr-loader)"
loader=${KASLR_SWEEP_LOADER:-}
for l in "$here/../BOOTX64.EFI" /usr/lib/kaslr-loader/kaslr-loader.efi; do
	[ -n "$loader" ] || { [ -f "$l" ] && loader=$l; }
done
{ [ -n "$loader" ] && [ -f "$loader" ]; } || usage "no kaslr-loader image (build it with make, or set KASLR_SWEEP_LOADER)"
code='' vars_src=''
for d in /usr/share/OVMF /usr/share/ovmf; do
	if [ -z "$code" ] && [ -f "$d/OVMF_CODE_4M.fd" ] && [ -f "$d/OVMF_VARS_4M.fd" ]; then
		code=$d/OVMF_CODE_4M.fd vars_src=$d/OVMF_VARS_4M.fd
	fi
done
[ -n "$code" ] || usage "no OVMF firmware (/usr/share/OVMF/OVMF_CODE_4M.fd; install the ovmf package)"
for c in qemu-system-x86_64 mformat mcopy mmd sha256sum; do
	command -v "$c" >/dev/null || usage "$c missing (packages qemu-system-x86, mtools, coreutils)"
done

work=$(mktemp -d "${TMPDIR:-/tmp}/kaslr-sweep.XXXXXX") || exit 2
cleanup() {
	local p
	for p in $(jobs -p); do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ------------------------------------------------------------ the ESP
# The files once; each boot gets a copy with its own kaslr.conf.
base_img=$work/esp.img
mformat -i "$base_img" -C -T 262144 -h 64 -s 32 -v ESP :: >/dev/null ||
	{ echo "$me: cannot make the ESP image (mformat)" >&2; exit 2; }
mmd -i "$base_img" ::/EFI ::/EFI/BOOT
mcopy -i "$base_img" "$loader" ::/EFI/BOOT/BOOTX64.EFI
mcopy -i "$base_img" "$kernel" ::/EFI/BOOT/kernel || { echo "$me: the files do not fit the ESP" >&2; exit 2; }
conf_files=''
i=0
for f in "${initrds[@]}"; do
	mcopy -i "$base_img" "$f" "::/EFI/BOOT/initrd$i" || { echo "$me: the files do not fit the ESP" >&2; exit 2; }
	conf_files+="initrd initrd$i"$'\n'
	i=$((i + 1))
done
i=0
for m in "${modules[@]}"; do
	f=${m%%,*} s=''
	[ "$f" = "$m" ] || s=${m#*,}
	mcopy -i "$base_img" "$f" "::/EFI/BOOT/module$i" || { echo "$me: the files do not fit the ESP" >&2; exit 2; }
	conf_files+="module module$i${s:+ $s}"$'\n'
	i=$((i + 1))
done

# ------------------------------------------------------------ the boots
# q35 keeps all RAM below 4 GiB up to 2816 MiB, and 2 GiB there above that
mem_mib() { local m=$1; case $m in *G) echo $((${m%G} * 1024)) ;; *M) echo "${m%M}" ;; esac; }
has_above4g() { [ "$(mem_mib "$1")" -ge 2816 ]; }
next_seed() { printf '%s' "$1" | sha256sum | cut -c1-64; }

seed=${seed:-$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')}
seed=$(printf '%s' "$seed" | tr 'A-F' 'a-f')
# boot list: index|memory|kind|edge|seed
boots=()
s=$seed
for m in "${memlist[@]}"; do
	for ((r = 1; r <= runs; r++)); do
		boots+=("$m|random|-|$s")
		s=$(next_seed "$s")
	done
	[ "$edges" = 1 ] || continue
	for e in $all_edges; do
		[ -z "$only" ] || [ "$e" = "$only" ] || continue
		[ "$e" != phys-above4g ] || has_above4g "$m" || continue
		boots+=("$m|edge|$e|$s")
		s=$(next_seed "$s")
	done
done

# the serial log without the firmware's terminal escapes and CRs
clean() { sed -e 's/\x1b\[[0-9;?=]*[A-Za-z]//g' -e 's/\x1b[()][0-9A-Za-z]//g' -e 's/\r//g' "$1"; }

# one_boot N: boot boots[N]; writes $work/N.res "outcome phys voffset secs why"
one_boot() {
	local n=$1 mem kind edge bseed img log conf t0 pid rc='' why='' out phys voff line
	IFS='|' read -r mem kind edge bseed <<<"${boots[$n]}"
	img=$work/$n.img log=$work/$n.log conf=$work/$n.conf
	cp --sparse=always "$base_img" "$img"
	cp "$vars_src" "$work/$n.vars"
	{
		echo 'kernel kernel'
		printf '%s' "$conf_files"
		echo 'verbose'
		echo "kaslr.seed $bseed"
		case $edge in
		phys-lowest) echo 'kaslr.phys lowest' ;;
		phys-highest) echo 'kaslr.phys highest' ;;
		phys-above4g) echo 'kaslr.phys above4g' ;;
		virt-lowest) echo 'kaslr.virt lowest' ;;
		virt-highest) echo 'kaslr.virt highest' ;;
		esac
		[ -z "$cmdline" ] || echo "cmdline $cmdline"
	} >"$conf"
	mcopy -i "$img" "$conf" ::/EFI/BOOT/kaslr.conf
	: >"$log"
	t0=$(date +%s.%N)
	qemu-system-x86_64 -machine q35 -m "$mem" -cpu "$cpu" -smp 1 \
		-drive "if=pflash,format=raw,unit=0,readonly=on,file=$code" \
		-drive "if=pflash,format=raw,unit=1,file=$work/$n.vars" \
		-drive "format=raw,file=$img,if=ide,index=0" \
		-nic none -display none -no-reboot -monitor none \
		-device isa-debug-exit,iobase=0xf4,iosize=0x04 -device virtio-rng-pci \
		-serial "file:$log" 2>"$work/$n.qemu" &
	pid=$!
	local deadline=$((SECONDS + 4 * timeout)) alive now_us t0_us=${EPOCHREALTIME//[!0-9]/}
	while :; do
		# QEMU gone: the clock stands, the log is judged below
		now_us=$(($(guest_us "$pid" || echo "$t0_us") - t0_us))
		# whether QEMU still runs, then the log: a line written just
		# before it exited is judged
		alive=1
		kill -0 "$pid" 2>/dev/null || alive=0
		out=$(clean "$log")
		if [ -n "$failre" ] && grep -Eq -- "$failre" <<<"$out"; then rc=fail why="--fail matched"
		elif grep -q 'kaslr-loader: error:' <<<"$out"; then rc=fail why="the loader refused"
		elif grep -Eq -- "$pass" <<<"$out"; then rc=pass
		elif [ "$alive" = 0 ]; then rc=fail why="QEMU ended without a --pass match"
		elif [ "$now_us" -ge $((timeout * 1000000)) ] || [ "$SECONDS" -ge "$deadline" ]; then rc=fail why="timeout after ${timeout} s"
		fi
		[ -z "$rc" ] || break
		sleep 0.3
	done
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	line=$(clean "$log" | grep -a 'kaslr-loader: placement: ' | tail -n 1)
	phys=$(sed -n 's/.*placement: phys \(0x[0-9A-Fa-f]*\).*/\1/p' <<<"$line" | tr 'A-F' 'a-f' | sed 's/^0X/0x/')
	voff=$(sed -n 's/.*virt 0x[0-9A-Fa-f]* offset \(0x[0-9A-Fa-f]*\).*/\1/p' <<<"$line" | tr 'A-F' 'a-f')
	printf '%s %s %s %s %s\n' "$rc" "${phys:--}" "${voff:--}" \
		"$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')" "$why" \
		>"$work/$n.res"
	rm -f "$img" "$work/$n.vars"
}

nb=${#boots[@]}
running=0
for ((n = 0; n < nb; n++)); do
	if [ "$running" -ge "$jobs" ]; then
		wait -n
		running=$((running - 1))
	fi
	one_boot "$n" &
	running=$((running + 1))
done
wait

# ------------------------------------------------------------ report
q() { printf '%q' "$1"; }
reproduce() { # reproduce N: the command that boots boots[N] again
	local mem kind edge bseed c
	IFS='|' read -r mem kind edge bseed <<<"${boots[$1]}"
	c="kaslr-sweep --kernel $(q "$kernel")"
	for f in "${initrds[@]}"; do c+=" --initrd $(q "$f")"; done
	for m in "${modules[@]}"; do c+=" --module $(q "$m")"; done
	[ -z "$cmdline" ] || c+=" --cmdline $(q "$cmdline")"
	if [ "$kind" = edge ]; then c+=" --runs 0 --edges --only $edge"; else c+=" --runs 1"; fi
	c+=" --mem $mem --cpu $(q "$cpu") --pass $(q "$pass")"
	[ -z "$failre" ] || c+=" --fail $(q "$failre")"
	c+=" --timeout $timeout --seed $bseed"
	printf '%s\n' "$c"
}
xml() { sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g' -e 's/"/\&quot;/g' | tr -d '\000-\010\013\014\016-\037'; }

printf '%-4s %-6s %-7s %-64s %-18s %-18s %-7s %s\n' run memory kind 'seed or edge' \
	'physical base' 'virtual offset' outcome seconds
failed=0 total_s=0
for ((n = 0; n < nb; n++)); do
	IFS='|' read -r mem kind edge bseed <<<"${boots[$n]}"
	read -r rc phys voff secs why <"$work/$n.res" 2>/dev/null || { rc=fail phys=- voff=- secs=0 why="no result"; }
	what=$bseed
	[ "$kind" = random ] || what=$edge
	printf '%-4s %-6s %-7s %-64s %-18s %-18s %-7s %s\n' "$((n + 1))" "$mem" "$kind" "$what" \
		"$phys" "$voff" "$rc" "$secs"
	if [ "$rc" != pass ]; then
		failed=$((failed + 1))
		echo "  why: $why"
		echo "  reproduce: $(reproduce "$n")"
	fi
	total_s=$(awk -v a="$total_s" -v b="$secs" 'BEGIN { printf "%.1f", a + b }')
done
echo "$me: $nb boot(s), $((nb - failed)) passed, $failed failed (seed $seed)"

if [ -n "$junit" ]; then
	{
		echo '<?xml version="1.0" encoding="UTF-8"?>'
		printf '<testsuite name="kaslr-sweep" tests="%d" failures="%d" errors="0" time="%s">\n' \
			"$nb" "$failed" "$total_s"
		for ((n = 0; n < nb; n++)); do
			IFS='|' read -r mem kind edge bseed <<<"${boots[$n]}"
			read -r rc phys voff secs why <"$work/$n.res" 2>/dev/null || { rc=fail phys=- voff=- secs=0 why="no result"; }
			what=$bseed
			[ "$kind" = random ] || what=$edge
			printf '  <testcase classname="kaslr-sweep.%s" name="%s %s phys=%s voffset=%s" time="%s">\n' \
				"$mem" "$((n + 1))" "$what" "$phys" "$voff" "$secs"
			if [ "$rc" != pass ]; then
				printf '    <failure message="%s">' "$(printf '%s' "$why" | xml)"
				{ clean "$work/$n.log" | tail -n 30; echo "reproduce: $(reproduce "$n")"; } | xml
				echo '</failure>'
			fi
			printf '    <system-out>'
			clean "$work/$n.log" | grep -a 'kaslr-loader: placement: \|linux-init: REPORT\|^payload: ' | xml
			echo '</system-out>'
			echo '  </testcase>'
		done
		echo '</testsuite>'
	} >"$junit" || { echo "$me: cannot write $junit" >&2; exit 2; }
fi
[ "$failed" = 0 ]

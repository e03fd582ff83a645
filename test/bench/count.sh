#!/bin/bash
# count.sh [KIND...] - the counted boot benchmark of `make bench`: guest
# instructions (QEMU's TCG plugin build/bench/icount.so, from
# test/bench/icount.c, under -icount shift=0,sleep=off) from QEMU's start
# until a busybox initramfs powers the machine off from userspace, for a
# stock Debian bzImage (KIND: generic = xz, cloud = LZ4; default both)
# booted two ways on the same VM (q35, OVMF, 1 GiB, -cpu max, one vCPU), the
# same file, initrd and command line:
#   loader    BOOTX64.EFI = this loader, kaslr.conf naming the bzImage
#   stub      BOOTX64.EFI = systemd-bootx64.efi, a Type #1 entry: the
#             kernel's own EFI stub and decompressor
# each without a TPM, then with one (swtpm) and the kernel pinned in
# kaslr.conf (sha256) so that both paths hash it: the firmware measures the
# PE image it starts for the stub, the loader checks the pin and measures
# the file (COUNT_MODES="notpm tpm": which of the two).  COUNT_RUNS=N
# (default 2) boots of each; their spread is
# reported (the counts are deterministic to well under 1%, not exactly:
# disk and TPM I/O complete in host time).  The loader's own steps come
# from its marks (LOG_MARK in efi/log.h), as the plugin saw them.
# Output: CSV rows "section,item,metric,value" on stdout (test/bench/bench.h);
# never fails on a number: a boot that did not finish becomes a row.
set -u
export LC_ALL=C
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
RUNS=${COUNT_RUNS:-2}
W=$B/bench/count
PLUGIN=$B/bench/icount.so
SDBOOT=/usr/lib/systemd/boot/efi/systemd-bootx64.efi
CMDLINE="console=ttyS0 panic=-1"
mkdir -p "$W"

csvf() { printf '%s' "$1" | tr ',"' ';;'; }
row() { printf '%s,%s,%s,%s\n' "$1" "$(csvf "$2")" "$(csvf "$3")" "$(csvf "$4")"; }
note() { echo "count: $*" >&2; }

if [ ! -f "$PLUGIN" ] || [ ! -f "$SDBOOT" ] || [ ! -f "$B/BOOTX64.EFI" ]; then
	row count all result "n/a (needs $PLUGIN, $B/BOOTX64.EFI and $SDBOOT: make bench)"
	exit 0
fi

# the initramfs: busybox and an /init that says so and powers off
initrd=$W/initrd.img
if [ ! -s "$initrd" ] || [ "$0" -nt "$initrd" ]; then
	t=$W/initrd.tree
	rm -rf "$t" && mkdir -p "$t/bin" || exit 1
	cp /usr/bin/busybox "$t/bin/busybox" || exit 1
	printf '#!/bin/busybox sh\necho "bench-init: userspace, powering off"\n/bin/busybox poweroff -f\n' >"$t/init"
	chmod 755 "$t/init"
	# fixed times and order: the same bytes on every run
	find "$t" -exec touch -h -d @0 {} +
	(cd "$t" && find . | sort | cpio -o -H newc -R 0:0 --quiet) | gzip -n -9 >"$initrd.part" &&
		mv "$initrd.part" "$initrd"
	rm -rf "$t"
fi

# esp KIND VMLINUZ TPM: the two ESP images of one configuration
esp() {
	local d=$W/$1-$3 v=$2 pin=''
	mkdir -p "$d"
	[ "$3" = tpm ] && pin="sha256 $(sha256sum "$v" | cut -d' ' -f1)"$'\n'
	printf 'kernel vmlinuz\ninitrd initrd.img\ncmdline %s\n%s' "$CMDLINE" "$pin" >"$d/kaslr.conf"
	test/qemu/mkesp.sh "$d/loader.img" "$B/BOOTX64.EFI" - EFI/BOOT/vmlinuz="$v" \
		EFI/BOOT/initrd.img="$initrd" EFI/BOOT/kaslr.conf="$d/kaslr.conf" || return 1
	printf 'default bench.conf\ntimeout 0\n' >"$d/loader.conf"
	printf 'title bench\nlinux /vmlinuz\ninitrd /initrd.img\noptions %s\n' "$CMDLINE" >"$d/bench.conf"
	test/qemu/mkesp.sh "$d/stub.img" "$SDBOOT" - loader/loader.conf="$d/loader.conf" \
		loader/entries/bench.conf="$d/bench.conf" vmlinuz="$v" initrd.img="$initrd"
}

# one ESP TPM OUT: boots once; OUT gets the plugin's lines; prints the total
one() {
	local img=$1 tpm=$2 out=$3 log=${3%.count}.log args=()
	[ "$tpm" = tpm ] && args+=(--tpm "${out%.count}.tpm")
	rm -f "$out"
	test/qemu/boot.sh --log "$log" --mem 1G --cpu max --timeout 900 --icount 0 \
		--qemu -plugin --qemu "$PLUGIN,out=$out" "${args[@]}" "$img" >/dev/null 2>&1
	if ! tr -d '\r' <"$log" | grep -q 'bench-init: userspace'; then
		echo "no poweroff from userspace (see $log)"
		return 1
	fi
	awk '$1 == "total" {print $2}' "$out"
}

# the loader's steps from a run's marks, in the order they ran: "NAME|INSNS"
# (each mark ends the step named for its id; LOG_MARK ids, efi/log.h)
STEP_NAMES="firmware until efi_main|options and policy|entropy|read the kernel file (and hash)|decompress (a native kernel)|parse and lay out|place, copy, relocate|modules (native protocol)|page tables, hand-off data (Linux: initrds)|exit boot services|decode the bzImage payload"
steps() {
	awk -v names="$STEP_NAMES" '
	BEGIN { split(names, nm, "|") }
	$1 == "mark" { print nm[$2] "|" $3 - prev; prev = $3 }
	$1 == "total" { print "kernel and userspace until poweroff|" $2 - prev }' "$1"
}

M() { awk -v v="$1" 'BEGIN {printf "%.1f", v / 1e6}'; }

for kind in "${@:-generic cloud}"; do
	for k in $kind; do
		case $k in
		generic) v=$B/linux/vmlinuz label=xz ;;
		cloud) v=$B/linux/cloud/vmlinuz label=lz4 ;;
		*) row count "$k" result "error: unknown kind"; continue ;;
		esac
		if ! BUILD=$B test/linux/fetch.sh "$k" >/dev/null 2>&1 || [ ! -s "$v" ]; then
			row count "$label" result "n/a (test/linux/fetch.sh $k failed)"
			continue
		fi
		for tpm in ${COUNT_MODES:-notpm tpm}; do
			cfg="$label $([ "$tpm" = tpm ] && echo "TPM + pinned" || echo "no TPM")"
			if ! esp "$k" "$v" "$tpm" >/dev/null 2>&1; then
				row count "$cfg" result "error: could not build the ESPs"
				continue
			fi
			d=$W/$k-$tpm
			declare -A tot=()
			fail=0
			for r in $(seq "$RUNS"); do
				for path in loader stub; do
					note "$cfg: $path run $r"
					if ! t=$(one "$d/$path.img" "$tpm" "$d/$path-$r.count"); then
						row count "$cfg: $path" result "error: $t"
						fail=1
						continue
					fi
					tot[$path]="${tot[$path]:-} $t"
				done
			done
			[ "$fail" = 0 ] || continue
			for path in loader stub; do
				# shellcheck disable=SC2086  # a list of numbers
				read -r mean spread < <(printf '%s\n' ${tot[$path]} | awk '
					{ s += $1; if (NR == 1 || $1 < lo) lo = $1; if ($1 > hi) hi = $1 }
					END { printf "%.0f %.3f\n", s / NR, (hi - lo) * 100 / lo }')
				name=$([ $path = loader ] && echo "kaslr-loader" || echo "systemd-boot + EFI stub")
				row count "$cfg: $name" "M instructions" "$(M "$mean")"
				row count "$cfg: $name" "spread of $RUNS runs %" "$spread"
				# the kernel proper's share (the plugin's upper-half count)
				hi=$(awk '$1 == "high" {print $2}' "$d/$path-1.count")
				[ -n "$hi" ] && row count "$cfg: $name" "M instructions in the kernel (upper half; run 1)" "$(M "$hi")"
				eval "mean_$path=$mean"
			done
			# shellcheck disable=SC2154  # set by the eval above
			row count "$cfg: loader / stub" ratio "$(awk -v a="$mean_loader" -v b="$mean_stub" 'BEGIN {printf "%.3f", a / b}')"
			steps "$d/loader-1.count" | while IFS='|' read -r name n; do
				row count-steps "$cfg: $name" "M instructions" "$(M "$n")"
			done
			unset tot
		done
	done
done
exit 0

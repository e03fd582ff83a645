#!/bin/bash
# kaslr-sweep - boot a kernel under QEMU + OVMF through kaslr-loader at many
# placements and at the edges of where it can be placed, judge each boot by
# its serial console, and print a command that reproduces each failure.
# Usage and every option with its default: kaslr-sweep --help (usage()
# below); the manual page: docs/man/kaslr-sweep.1.
#
# Exit status: 0 every boot passed; 1 a boot failed; 2 bad arguments (one
# line on stderr); 3 this machine cannot run the sweep (no qemu, OVMF,
# mtools, busybox or cpio, no loader image, /dev/kvm not usable with
# --accel kvm, the files too big for the ESP image, the JUnit file not
# writable): one line on stderr, so that CI tells a broken runner from a
# broken kernel.
set -u
shopt -s extglob
LC_ALL=C
export LC_ALL
me=kaslr-sweep
usage() { echo "$me: $*" >&2; exit 2; }
broken() { echo "$me: $*" >&2; exit 3; }

kvm_usable() { [ -r /dev/kvm ] && [ -w /dev/kvm ]; }
default_accel() { if kvm_usable; then echo kvm; else echo tcg; fi; }

help() {
	cat <<HELP
Usage: $me --kernel FILE --pass REGEX [option]...
Boot FILE through kaslr-loader under QEMU + OVMF at recorded random
placements and at the edges of where it can go; each boot passes when
--pass matches its serial console first.

  --kernel FILE       the kernel (ELF, compressed ELF, a Linux bzImage, or a
                      unified kernel image: its .initrd goes first, its
                      .cmdline is the command line unless --cmdline
                      replaces it); required
  --initrd FILE       a Linux initrd, repeatable, at most 8, in order
                      (default: none)
  --initramfs-report  add, as the last initrd, a busybox initramfs whose
                      /init prints the running Linux kernel's own view
                      ("linux-init: REPORT text=<_text> code=<Kernel code>
                      ...") and powers off; the rows then show it beside
                      the loader's choice, and a boot where the two differ
                      fails.  Sets --pass '^linux-init: REPORT ', --fail
                      'Kernel panic|^linux-init: FAIL' and --cmdline
                      'console=ttyS0 panic=-1 quiet no_timer_check' (under
                      emulation on a busy host Linux's timer probe can
                      panic) unless given, or the kernel is a unified
                      kernel image (its .cmdline then); with a unified
                      kernel image, a boot whose kernel ran with another
                      command line fails (default: off)
  --module FILE[,STRING]
                      a module for this loader's own protocol, repeatable,
                      at most 16 (default: none)
  --cmdline STR       the kernel's command line; a unified kernel image's
                      .cmdline is replaced (the sweep boots without
                      Secure Boot, where systemd-stub takes one too)
                      (default: empty; a UKI's .cmdline)
  --runs N            boots at random placements per memory size, each
                      with its own recorded seed (default: 3)
  --edges             also one boot per edge and memory size: phys-lowest,
                      phys-highest, phys-above4g (with RAM above 4 GiB),
                      virt-lowest, virt-highest (default: off)
  --only EDGE         with --edges, boot only that edge (default: all)
  --mem SIZE[,SIZE...]
                      guest memory sizes, e.g. 512M,4G (default: 512M)
  --cpu MODEL         QEMU CPU model (default: max)
  --accel kvm|tcg     QEMU accelerator (default: kvm when /dev/kvm is
                      usable, else tcg; here: $(default_accel))
  --qemu-arg ARG      one more QEMU argument, as is, repeatable (e.g.
                      --qemu-arg -device --qemu-arg virtio-net-pci);
                      default: none
  --tpm12             attach a TPM 1.2 to every boot (swtpm, a state of
                      its own per boot): Debian's OVMF then finds a TPM at
                      once, where without one it polls for 1.5 s of every
                      boot; the loader measures through TCG2 only and takes
                      its no-TPM path, the kernel sees a TPM 1.2
                      (default: off)
  --jobs J            boots at a time (default: the number of CPUs, here
                      $(nproc 2>/dev/null || echo 1))
  --pass REGEX        extended regular expression a passing boot's serial
                      console matches; required (unless --initramfs-report).
                      A last line without its newline (a prompt) is
                      matched once it has stood for a second
  --fail REGEX        a boot whose console matches it fails (default: none;
                      a "kaslr-loader: error:" line always fails)
  --timeout S         seconds a boot may take, not counting the time
                      QEMU's threads waited for a host CPU; four times that by
                      the wall clock in any case (default: 120)
  --junit FILE        write a JUnit XML report, one testcase per boot
                      (default: none)
  --seed HEX          64 hex digits: the first random boot's kaslr.seed=,
                      each next one the SHA-256 of the one before (default:
                      drawn from /dev/urandom, printed at the end)
  -h, --help          this text

Environment: KASLR_SWEEP_LOADER (the loader image; default BOOTX64.EFI
beside the tool's directory, else /usr/lib/kaslr-loader/kaslr-loader.efi),
KASLR_SWEEP_OVMF (the directory of OVMF_CODE_4M.fd and OVMF_VARS_4M.fd;
default /usr/share/OVMF), TMPDIR.
Exit status: 0 all passed, 1 a boot failed, 2 bad arguments, 3 this
machine cannot run the sweep (a tool, OVMF or the loader missing, the files
too big for the ESP image, the JUnit file not writable).
HELP
}

kernel='' initrds=() modules=() cmdline='' runs=3 edges=0 only='' mems=512M cpu=max
jobs=$(nproc 2>/dev/null || echo 1) pass='' failre='' timeout=120 junit='' seed=''
accel='' qemu_args=() report=0 tpm12=0 cmdline_set=0 pass_set=0 fail_set=0
# the arguments as given, for the reproduce lines
need() { [ $# -ge 2 ] || usage "$1 needs a value"; }
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) need "$@"; kernel=$2; shift ;;
	--initrd) need "$@"; initrds+=("$2"); shift ;;
	--initramfs-report) report=1 ;;
	--module) need "$@"; modules+=("$2"); shift ;;
	--cmdline) need "$@"; cmdline=$2 cmdline_set=1; shift ;;
	--runs) need "$@"; runs=$2; shift ;;
	--edges) edges=1 ;;
	--only) need "$@"; only=$2; shift ;;
	--mem) need "$@"; mems=$2; shift ;;
	--cpu) need "$@"; cpu=$2; shift ;;
	--accel) need "$@"; accel=$2; shift ;;
	--qemu-arg) need "$@"; qemu_args+=("$2"); shift ;;
	--tpm12) tpm12=1 ;;
	--jobs) need "$@"; jobs=$2; shift ;;
	--pass) need "$@"; pass=$2 pass_set=1; shift ;;
	--fail) need "$@"; failre=$2 fail_set=1; shift ;;
	--timeout) need "$@"; timeout=$2; shift ;;
	--junit) need "$@"; junit=$2; shift ;;
	--seed) need "$@"; seed=$2; shift ;;
	-h|--help) help; exit 0 ;;
	*) usage "unknown argument '$1' (--help lists them)" ;;
	esac
	shift
done
if [ "$report" = 1 ]; then
	[ "$pass_set" = 1 ] || pass='^linux-init: REPORT '
	[ "$fail_set" = 1 ] || failre='Kernel panic|^linux-init: FAIL'
fi

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
[ $((${#initrds[@]} + report)) -le 8 ] ||
	usage "--initrd: at most 8 (the loader takes no more; --initramfs-report is one)"
[ "${#modules[@]}" -le 16 ] || usage "--module: at most 16 (the loader takes no more)"
[ -n "$pass" ] || usage "--pass REGEX is required (or --initramfs-report)"
case ${accel:=$(default_accel)} in kvm | tcg) ;; *) usage "--accel '$accel': kvm or tcg" ;; esac
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
# from here on, what is missing is this machine's fault: status 3
# (through symbolic links: a link to build/tools/kaslr-sweep finds build/)
here=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
# guest_clock: beside this tool (build/tools/), else the packaged one
clock=$here/guest-clock.sh
[ -f "$clock" ] || clock=/usr/lib/kaslr-loader/guest-clock.sh
# shellcheck source=src/tools/guest-clock.sh
. "$clock" 2>/dev/null || broken "$clock missing (reinstall kaslr-sweep)"
loader=${KASLR_SWEEP_LOADER:-}
for l in "$here/../BOOTX64.EFI" /usr/lib/kaslr-loader/kaslr-loader.efi; do
	[ -n "$loader" ] || { [ -f "$l" ] && loader=$l; }
done
{ [ -n "$loader" ] && [ -f "$loader" ]; } ||
	broken "no kaslr-loader image${KASLR_SWEEP_LOADER:+ at $KASLR_SWEEP_LOADER} (build it with make, or set KASLR_SWEEP_LOADER)"
ovmf=${KASLR_SWEEP_OVMF:-/usr/share/OVMF}
code=$ovmf/OVMF_CODE_4M.fd vars_src=$ovmf/OVMF_VARS_4M.fd
{ [ -f "$code" ] && [ -f "$vars_src" ]; } ||
	broken "no OVMF firmware: $code and $vars_src (install the ovmf package, or set KASLR_SWEEP_OVMF)"
for c in qemu-system-x86_64:qemu-system-x86 mformat:mtools mcopy:mtools mmd:mtools sha256sum:coreutils; do
	command -v "${c%%:*}" >/dev/null || broken "${c%%:*} missing (package ${c#*:})"
done
[ "$tpm12" = 0 ] || command -v swtpm >/dev/null || broken "swtpm missing, which --tpm12 needs (package swtpm)"
if [ "$report" = 1 ]; then
	for c in busybox:busybox-static cpio:cpio gzip:gzip; do
		command -v "${c%%:*}" >/dev/null || broken "${c%%:*} missing, which --initramfs-report needs (package ${c#*:})"
	done
	# the suite's /init (test/linux/init.sh): beside this tool, else the packaged one
	rinit=$here/report-init.sh
	[ -f "$rinit" ] || rinit=/usr/lib/kaslr-loader/report-init.sh
	[ -f "$rinit" ] || broken "$rinit missing, which --initramfs-report needs (reinstall kaslr-sweep)"
fi
# the reader of PE sections (kaslr-loader's, which kaslr-sweep depends on):
# beside this tool, else the packaged one
esplib=$here/kaslr-esp.sh
[ -f "$esplib" ] || esplib=/usr/lib/kaslr-loader/kaslr-esp.sh
# shellcheck source=src/tools/kaslr-esp.sh
. "$esplib" 2>/dev/null || broken "$esplib missing (reinstall kaslr-loader)"
# a unified kernel image: the loader boots its .linux with its .initrd
# first and, without Secure Boot, the line passed in instead of .cmdline;
# want_cmdline: the line its kernel must run with
uki=0 want_cmdline=''
if is_uki "$kernel"; then
	uki=1
	if [ "$cmdline_set" = 1 ] && [ -n "$cmdline" ]; then want_cmdline=$cmdline
	else want_cmdline=$(uki_cmdline "$kernel"); fi
	want_cmdline=$(printf '%s' "$want_cmdline" | sed 's/[[:space:]]*$//')
	echo "$me: $kernel is a unified kernel image: its .linux booted with its .initrd first${initrds[0]:+, then the --initrd files}, command line: ${want_cmdline:-none}"
elif [ "$report" = 1 ] && [ "$cmdline_set" = 0 ]; then
	# no_timer_check: under TCG on a busy host the IO-APIC timer probe
	# can miss its ticks, and Linux panics ("IO-APIC + timer doesn't work!")
	cmdline='console=ttyS0 panic=-1 quiet no_timer_check'
fi
[ "$accel" = tcg ] || kvm_usable || broken "--accel kvm: /dev/kvm is not usable here (--accel tcg emulates)"
if [ -n "$junit" ]; then
	# before the boots, not after them
	{ : >>"$junit"; } 2>/dev/null || broken "cannot write the JUnit file $junit"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/kaslr-sweep.XXXXXX") || broken "cannot make a directory in ${TMPDIR:-/tmp}"
cleanup() {
	local p
	for p in $(jobs -p); do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --initramfs-report: busybox and the /init, a gzip'd newc cpio
if [ "$report" = 1 ]; then
	t=$work/initramfs
	{ mkdir -p "$t/bin" "$t/proc" "$t/sys" "$t/dev" "$t/newroot" "$t/lib/modules" "$t/data" &&
		cp "$(command -v busybox)" "$t/bin/busybox" && cp "$rinit" "$t/init" && chmod 755 "$t/init"; } ||
		broken "cannot build the initramfs in $work"
	(cd "$t" && find . | sort | cpio -o -H newc --quiet) | gzip -9 >"$work/report-initrd.img" ||
		broken "cpio or gzip failed on the initramfs"
	initrds+=("$work/report-initrd.img")
fi

# ------------------------------------------------------------ the ESP
# The files once; each boot gets a copy with its own kaslr.conf.  The image
# holds them with room to spare (64 MiB at least); FAT32 takes no file of
# 4 GiB or more, and an image beyond 2 GiB is not what a sweep is for.
files=("$loader" "$kernel" "${initrds[@]}")
for m in "${modules[@]}"; do files+=("${m%%,*}"); done
need_b=0 big=''
for f in "${files[@]}"; do
	n=$(stat -L -c %s "$f") || broken "cannot stat $f"
	need_b=$((need_b + n))
	[ "$n" -lt $((4 << 30)) ] || big=$f
done
esp_mib=$(((need_b >> 20) + (need_b >> 23) + 16))
[ "$esp_mib" -ge 64 ] || esp_mib=64
[ -z "$big" ] || broken "$big: too big for the ESP image (FAT32 takes files below 4 GiB)"
[ "$esp_mib" -le 2048 ] || broken "the files ($((need_b >> 20)) MiB) are too big for the ESP image (at most 2048 MiB)"
base_img=$work/esp.img
mformat -i "$base_img" -C -T $((esp_mib * 2048)) -h 64 -s 32 -v ESP :: >/dev/null ||
	broken "cannot make the ESP image (mformat, $esp_mib MiB in $work)"
put() { mcopy -i "$base_img" "$1" "$2" || broken "cannot copy $1 into the $esp_mib MiB ESP image (disk full?)"; }
mmd -i "$base_img" ::/EFI ::/EFI/BOOT || broken "mmd failed on the ESP image"
put "$loader" ::/EFI/BOOT/BOOTX64.EFI
put "$kernel" ::/EFI/BOOT/kernel
conf_files=''
i=0
for f in "${initrds[@]}"; do
	put "$f" "::/EFI/BOOT/initrd$i"
	conf_files+="initrd initrd$i"$'\n'
	i=$((i + 1))
done
i=0
for m in "${modules[@]}"; do
	f=${m%%,*} s=''
	[ "$f" = "$m" ] || s=${m#*,}
	put "$f" "::/EFI/BOOT/module$i"
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
# see LINE: one line of a boot's log, cleaned as clean cleans, against
# --fail, the loader's error lines and --pass (seen_fail, seen_err,
# seen_pass of one_boot)
see() {
	local l=$1
	l=${l//$'\e['*([0-9;?=])[A-Za-z]/} l=${l//$'\e'[()][0-9A-Za-z]/} l=${l//$'\r'/}
	[ -z "$failre" ] || [[ ! $l =~ $failre ]] || seen_fail=1
	[[ $l != *'kaslr-loader: error:'* ]] || seen_err=1
	[[ ! $l =~ $pass ]] || seen_pass=1
}

# hex: a number as 0x and lower-case hex digits, "-" for nothing
hex() { if [ -n "$1" ]; then printf '0x%x' "$(($1))"; else echo -; fi; }

# one_boot N: boot boots[N]; writes $work/N.res
# "outcome phys voffset kernel-phys kernel-voffset secs why" and, when the
# loader placed the kernel at its one possible physical address, the reason
# it gave in $work/N.fixed
one_boot() {
	local n=$1 mem kind edge bseed img log conf t0 pid rc='' why='' phys voff line
	local virt kphys='' kvoff='' text fixed kline
	IFS='|' read -r mem kind edge bseed <<<"${boots[$n]}"
	img=$work/$n.img log=$work/$n.log conf=$work/$n.conf
	cp --sparse=always "$base_img" "$img"
	# the variable store of a boot that passed, once there is one: OVMF
	# on a fresh store first writes its boot variables, about a
	# CPU-second of flash writes under TCG
	if [ -f "$work/vars.booted" ]; then cp "$work/vars.booted" "$work/$n.vars"
	else cp "$vars_src" "$work/$n.vars"; fi
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
	local tpm=() swtpm_pid=''
	if [ "$tpm12" = 1 ]; then
		mkdir -p "$work/$n.tpm"
		swtpm socket --tpmstate "dir=$work/$n.tpm" --ctrl "type=unixio,path=$work/$n.tpm/ctrl.sock" \
			--terminate 2>/dev/null &
		swtpm_pid=$!
		for _ in {1..100}; do [ -S "$work/$n.tpm/ctrl.sock" ] && break; sleep 0.02; done
		tpm=(-chardev "socket,id=chrtpm,path=$work/$n.tpm/ctrl.sock"
			-tpmdev "emulator,id=tpm0,chardev=chrtpm" -device "tpm-tis,tpmdev=tpm0")
	fi
	t0=$(date +%s.%N)
	qemu-system-x86_64 -machine q35 -accel "$accel" -m "$mem" -cpu "$cpu" -smp 1 \
		-drive "if=pflash,format=raw,unit=0,readonly=on,file=$code" \
		-drive "if=pflash,format=raw,unit=1,file=$work/$n.vars" \
		-drive "format=raw,file=$img,if=ide,index=0" \
		-nic none -display none -no-reboot -monitor none \
		-device isa-debug-exit,iobase=0xf4,iosize=0x04 -device virtio-rng-pci \
		-serial "file:$log" "${tpm[@]}" "${qemu_args[@]}" 2>"$work/$n.qemu" &
	pid=$!
	local deadline=$((SECONDS + 4 * timeout)) alive now_us t0_us=${EPOCHREALTIME//[!0-9]/}
	local logfd tickfd part='' part_us=0 l seen_fail=0 seen_err=0 seen_pass=0
	# each look costs no process: the clock is read in this shell, the log
	# from a descriptor of its own as it grows (only the new lines, cleaned
	# here), the pause is a read that times out on a FIFO nobody writes
	exec {logfd}<"$log"
	mkfifo "$work/$n.tick" && exec {tickfd}<>"$work/$n.tick"
	while :; do
		# QEMU gone: the clock stands, the log is judged below
		guest_clock "$pid" && now_us=$((GUEST_US - t0_us))
		# whether QEMU still runs, then the log: a line written just
		# before it exited is judged
		alive=1
		kill -0 "$pid" 2>/dev/null || alive=0
		# the new lines
		while IFS= read -r -u "$logfd" l; do
			see "$part$l"
			part=''
		done
		# (read leaves the unfinished line in l) The unfinished last line
		# is judged once it can no longer grow, or once it has stood for a
		# second of guest time, as a prompt does: a line still being
		# written may match --pass by its first words, and a boot stopped
		# then leaves it cut short in the log, the JUnit file and the
		# kernel's own view.
		[ -z "$l" ] || part+=$l part_us=${now_us:-0}
		if [ -n "$part" ] && { [ "$alive" = 0 ] || [ $((${now_us:-0} - part_us)) -ge 1000000 ]; }; then
			see "$part"
		fi
		if [ "$seen_fail" = 1 ]; then rc=fail why="--fail matched"
		elif [ "$seen_err" = 1 ]; then rc=fail why="the loader refused"
		elif [ "$seen_pass" = 1 ]; then rc=pass
		elif [ "$alive" = 0 ]; then
			rc=fail why="QEMU ended without a --pass match"
			# QEMU's own complaint, if it had one (an option it refused)
			[ ! -s "$work/$n.qemu" ] || why+=": $(head -n 1 "$work/$n.qemu")"
		elif [ "${now_us:-0}" -ge $((timeout * 1000000)) ] || [ "$SECONDS" -ge "$deadline" ]; then rc=fail why="timeout after ${timeout} s"
		fi
		[ -z "$rc" ] || break
		read -r -t 0.3 -u "$tickfd"
	done
	exec {logfd}<&- {tickfd}<&-
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	[ -z "$swtpm_pid" ] || { kill "$swtpm_pid"; wait "$swtpm_pid"; rm -rf "$work/$n.tpm"; } 2>/dev/null
	line=$(clean "$log" | grep -a 'kaslr-loader: placement: ' | tail -n 1)
	phys=$(sed -n 's/.*placement: phys \(0x[0-9A-Fa-f]*\).*/\1/p' <<<"$line")
	virt=$(sed -n 's/.* virt \(0x[0-9A-Fa-f]*\) offset .*/\1/p' <<<"$line")
	voff=$(sed -n 's/.*virt 0x[0-9A-Fa-f]* offset \(0x[0-9A-Fa-f]*\).*/\1/p' <<<"$line")
	# "(fixed: <why>)" after the physical base: the kernel has one address
	# (a bzImage that is not relocatable), nothing about it was drawn at
	# random and no edge moved it
	fixed=$(sed -n 's/.*placement: phys 0x[0-9A-Fa-f]* [^(]*(fixed: \([^)]*\)), virt .*/\1/p' <<<"$line")
	[ -z "$fixed" ] || printf '%s\n' "$fixed" >"$work/$n.fixed"
	# the running kernel's own view (--initramfs-report's /init): where
	# "Kernel code" starts, and _text less the link address (the loader's
	# virtual base less its offset)
	line=$(clean "$log" | grep -a '^linux-init: REPORT ' | tail -n 1)
	if [ -n "$line" ]; then
		kphys=$(sed -n 's/.* code=\(0x[0-9a-f]*\).*/\1/p' <<<"$line")
		text=$(sed -n 's/.* text=\(0x[0-9a-f]*\).*/\1/p' <<<"$line")
		[ -z "$text" ] || [ -z "$virt" ] || kvoff=$((text - (virt - voff)))
	fi
	if [ "$report" = 1 ] && [ "$rc" = pass ] &&
		{ [ -z "$kphys" ] || [ -z "$kvoff" ] || [ $((kphys)) != $((phys)) ] || [ $((kvoff)) != $((voff)) ]; }; then
		rc=fail why="the kernel reports Kernel code at $(hex "$kphys") and offset $(hex "$kvoff"), the loader chose $(hex "$phys") and $(hex "$voff")"
	fi
	# a UKI's kernel runs with its .cmdline, or the line that replaced it
	if [ "$uki" = 1 ] && [ "$report" = 1 ] && [ "$rc" = pass ]; then
		kline=$(sed -n 's/.* cmdline=//p' <<<"$line" | sed 's/[[:space:]]*$//')
		[ "$kline" = "$want_cmdline" ] ||
			rc=fail why="the kernel ran with the command line '$kline', want '$want_cmdline'"
	fi
	printf '%s %s %s %s %s %s %s\n' "$rc" "$(hex "$phys")" "$(hex "$voff")" "$(hex "$kphys")" "$(hex "$kvoff")" \
		"$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')" "$why" \
		>"$work/$n.res"
	if [ "$rc" = pass ] && [ ! -f "$work/vars.booted" ]; then
		cp "$work/$n.vars" "$work/vars.$n" && mv "$work/vars.$n" "$work/vars.booted"
	fi
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
# the tool as it was run: by its name when that is what PATH finds (the
# installed one), else by the path it was started by, which works from
# the directory the sweep ran in (build/tools/kaslr-sweep in a source tree)
self=$(q "$0")
if p=$(command -v kaslr-sweep 2>/dev/null) && [ "$p" -ef "$0" ]; then self=kaslr-sweep; fi
# the environment that chose the loader and the firmware, as set
envs=''
[ -z "${KASLR_SWEEP_LOADER:-}" ] || envs+="KASLR_SWEEP_LOADER=$(q "$KASLR_SWEEP_LOADER") "
[ -z "${KASLR_SWEEP_OVMF:-}" ] || envs+="KASLR_SWEEP_OVMF=$(q "$KASLR_SWEEP_OVMF") "
reproduce() { # reproduce N: the command that boots boots[N] again
	local mem kind edge bseed c i a
	IFS='|' read -r mem kind edge bseed <<<"${boots[$1]}"
	c="$envs$self --kernel $(q "$kernel")"
	# the initrds given (--initramfs-report's own is the last, made anew)
	for ((i = 0; i < ${#initrds[@]} - report; i++)); do c+=" --initrd $(q "${initrds[i]}")"; done
	[ "$report" = 0 ] || c+=" --initramfs-report"
	for m in "${modules[@]}"; do c+=" --module $(q "$m")"; done
	[ -z "$cmdline" ] || c+=" --cmdline $(q "$cmdline")"
	if [ "$kind" = edge ]; then c+=" --runs 0 --edges --only $edge"; else c+=" --runs 1"; fi
	c+=" --mem $mem --cpu $(q "$cpu") --accel $accel"
	[ "$tpm12" = 0 ] || c+=" --tpm12"
	for a in "${qemu_args[@]}"; do c+=" --qemu-arg $(q "$a")"; done
	c+=" --pass $(q "$pass")"
	[ -z "$failre" ] || c+=" --fail $(q "$failre")"
	c+=" --timeout $timeout --seed $bseed"
	printf '%s\n' "$c"
}
xml() { sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g' -e 's/"/\&quot;/g' | tr -d '\000-\010\013\014\016-\037'; }

# result N: rc phys voff kphys kvoff secs why of boots[N], and fixed: the
# loader's reason when it put the kernel at its one address, else empty
result() {
	read -r rc phys voff kphys kvoff secs why <"$work/$1.res" 2>/dev/null ||
		{ rc=fail phys=- voff=- kphys=- kvoff=- secs=0 why="no result"; }
	fixed=$(cat "$work/$1.fixed" 2>/dev/null)
}
# the loader's choice (its verbose placement: line), then the kernel's
# own view where it reports one (--initramfs-report)
printf '%-4s %-6s %-7s %-64s %-18s %-18s %-18s %-18s %-7s %s\n' run memory kind 'seed or edge' \
	'physical base' 'virtual offset' 'kernel phys' 'kernel voffset' outcome seconds
failed=0 total_s=0 nfixed=0 whyfixed=''
for ((n = 0; n < nb; n++)); do
	IFS='|' read -r mem kind edge bseed <<<"${boots[$n]}"
	result "$n"
	what=$bseed
	[ "$kind" = random ] || what=$edge
	# a kernel placed at its one address: neither random nor at the edge
	# asked for (the seed or edge column says what was asked)
	if [ -n "$fixed" ]; then
		kind=fixed nfixed=$((nfixed + 1))
		[[ ", $whyfixed, " == *", $fixed, "* ]] || whyfixed+="${whyfixed:+, }$fixed"
	fi
	printf '%-4s %-6s %-7s %-64s %-18s %-18s %-18s %-18s %-7s %s\n' "$((n + 1))" "$mem" "$kind" "$what" \
		"$phys" "$voff" "$kphys" "$kvoff" "$rc" "$secs"
	if [ "$rc" != pass ]; then
		failed=$((failed + 1))
		echo "  why: $why"
		echo "  reproduce: $(reproduce "$n")"
	fi
	total_s=$(awk -v a="$total_s" -v b="$secs" 'BEGIN { printf "%.1f", a + b }')
done
# the seed places nothing in a fixed boot: the line says so
echo "$me: $nb boot(s), $((nb - failed)) passed, $failed failed (seed $seed)${whyfixed:+; $nfixed at a fixed address, not random ($whyfixed)}"

if [ -n "$junit" ]; then
	{
		echo '<?xml version="1.0" encoding="UTF-8"?>'
		printf '<testsuite name="kaslr-sweep" tests="%d" failures="%d" errors="0" time="%s">\n' \
			"$nb" "$failed" "$total_s"
		for ((n = 0; n < nb; n++)); do
			IFS='|' read -r mem kind edge bseed <<<"${boots[$n]}"
			result "$n"
			what=$bseed
			[ "$kind" = random ] || what=$edge
			# a fixed boot: "fixed" in its name, the loader's reason in
			# the property placement (for the others: random or edge)
			place=$kind
			[ -z "$fixed" ] || place="fixed: $fixed"
			printf '  <testcase classname="kaslr-sweep.%s" name="%s %s%s phys=%s voffset=%s" time="%s">\n' \
				"$mem" "$((n + 1))" "$what" "${fixed:+ fixed}" "$phys" "$voff" "$secs"
			printf '    <properties><property name="placement" value="%s"/>' "$(printf '%s' "$place" | xml)"
			[ "$kphys$kvoff" = -- ] ||
				printf '<property name="kernel-phys" value="%s"/><property name="kernel-voffset" value="%s"/>' \
					"$kphys" "$kvoff"
			echo '</properties>'
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
	} >"$junit" || broken "cannot write the JUnit file $junit"
fi
[ "$failed" = 0 ]

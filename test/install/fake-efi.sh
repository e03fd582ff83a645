# test/install/fake-efi.sh - sourced by run.sh and deb.sh: a running UEFI
# system's ESP, made up.  fake_efi DIR ESP writes into DIR/bin stand-ins
# for efibootmgr (Boot#### entries and BootOrder kept in DIR/nvram/, every
# call logged in DIR/nvram/calls), and for mountpoint, findmnt and lsblk,
# which say that ESP is mounted from /dev/vda1, an EFI system partition
# (any other path goes to the real tools); and DIR/sys, a /sys with
# firmware/efi and class/block/vda1/partition.  Put DIR/bin first on PATH
# and KASLR_LOADER_SYS=DIR/sys.  The firmware holds Boot0000 "debian" and
# Boot0001 "UEFI Shell", BootOrder 0000,0001.  A bootctl stand-in takes
# `set-default ENTRY` (systemd-boot's LoaderEntryDefault in
# DIR/sys/firmware/efi/efivars, 4 bytes of attributes then UTF-16LE, as
# efivarfs shows it; "" deletes it), logged in DIR/nvram/calls too.
# shellcheck shell=bash

fake_efi() {
	local d=$1 esp=$2 c real body
	mkdir -p "$d/bin" "$d/nvram" "$d/sys/firmware/efi/efivars" "$d/sys/class/block/vda1"
	echo 1 >"$d/sys/class/block/vda1/partition"
	printf '0000 debian\t\\EFI\\debian\\shimx64.efi\n0001 UEFI Shell\t\\EFI\\tools\\shell.efi\n' >"$d/nvram/entries"
	echo 0000,0001 >"$d/nvram/order"
	: >"$d/nvram/calls"
	for c in mountpoint findmnt lsblk; do
		real=$(command -v "$c") || return 1
		case $c in
		mountpoint) body="[ \"\${*: -1}\" = '$esp' ] && exit 0" ;;
		findmnt) body="[ \"\${*: -1}\" = '$esp' ] && { echo /dev/vda1; exit 0; }" ;;
		lsblk) body="if [ \"\${*: -1}\" = /dev/vda1 ]; then case \$* in *PARTTYPE*) echo c12a7328-f81f-11d2-ba4b-00a0c93ec93b ;; *PKNAME*) echo vda ;; esac; exit 0; fi" ;;
		esac
		printf '#!/bin/bash\n%s\nexec %s "$@"\n' "$body" "$real" >"$d/bin/$c"
		chmod +x "$d/bin/$c"
	done
	cat >"$d/bin/efibootmgr" <<EOS
#!/bin/bash
# efibootmgr's options as kaslr-loader-install uses them, on a file NVRAM
S=$d/nvram
EOS
	cat >>"$d/bin/efibootmgr" <<'EOS'
echo "$*" >>"$S/calls"
v=0 create=0 del=0 num='' label='' loader='' order=''
while [ $# -gt 0 ]; do
	case $1 in
	-v) v=1 ;;
	-c | --create) create=1 ;;
	-d | --disk | -p | --part) shift ;;
	-L | --label) label=$2; shift ;;
	-l | --loader) loader=$2; shift ;;
	-b | --bootnum) num=$2; shift ;;
	-B | --delete-bootnum) del=1 ;;
	-o | --bootorder) order=$2; shift ;;
	*) echo "efibootmgr: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
if [ "$create" = 1 ]; then
	n=$(cut -c 1-4 "$S/entries" | sort | tail -n 1)
	n=$(printf '%04X' $((16#${n:-0} + 1)))
	printf '%s %s\t%s\n' "$n" "$label" "$loader" >>"$S/entries"
	o=$(cat "$S/order")
	echo "$n${o:+,$o}" >"$S/order"
fi
if [ "$del" = 1 ]; then
	grep -q "^$num " "$S/entries" || { echo "efibootmgr: Boot$num not found" >&2; exit 1; }
	sed -i "/^$num /d" "$S/entries"
	tr ',' '\n' <"$S/order" | grep -vx "$num" | paste -sd, >"$S/order.new"; mv "$S/order.new" "$S/order"
fi
if [ -n "$order" ]; then
	for n in ${order//,/ }; do grep -q "^$n " "$S/entries" || { echo "efibootmgr: Boot$n does not exist" >&2; exit 1; }; done
	echo "$order" >"$S/order"
fi
echo "BootCurrent: 0000"
echo "BootOrder: $(cat "$S/order")"
while IFS=$'\t' read -r nl p; do
	if [ "$v" = 1 ]; then printf 'Boot%s* %s\tHD(1,GPT,0a1b2c3d-0000-0000-0000-000000000001,0x800,0x100000)/File(%s)\n' "${nl%% *}" "${nl#* }" "$p"
	else printf 'Boot%s* %s\n' "${nl%% *}" "${nl#* }"; fi
done <"$S/entries"
EOS
	chmod +x "$d/bin/efibootmgr"
	cat >"$d/bin/bootctl" <<EOS
#!/bin/bash
# bootctl set-default on a file efivarfs
S=$d/nvram V=$d/sys/firmware/efi/efivars/LoaderEntryDefault-4a67b082-0a4c-41cf-b6c7-440b29bb8c4f
EOS
	cat >>"$d/bin/bootctl" <<'EOS'
echo "bootctl $*" >>"$S/calls"
[ "${1:-}" = set-default ] && [ $# = 2 ] || { echo "bootctl: only set-default ENTRY here" >&2; exit 2; }
if [ -z "$2" ]; then rm -f "$V"
else { printf '\006\000\000\000'; printf '%s\0' "$2" | iconv -f UTF-8 -t UTF-16LE; } >"$V"; fi
EOS
	chmod +x "$d/bin/bootctl"
}

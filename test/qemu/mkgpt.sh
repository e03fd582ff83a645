#!/bin/sh
# mkgpt.sh DISK FAT PARTUUID - wrap a FAT image (mkesp.sh output) into a GPT
# disk as its one partition: type EFI System, partition GUID PARTUUID,
# starting at LBA 2048.  Firmware then gives the volume a HD() device-path
# node, which is where LoaderDevicePartUUID comes from.  Needs sfdisk.
set -e
disk=$1 fat=$2 uuid=$3
command -v sfdisk >/dev/null || PATH=$PATH:/usr/sbin:/sbin
sectors=$(( $(stat -c %s "$fat") / 512 ))
rm -f "$disk"
# 2048 sectors in front, 2048 behind (backup GPT needs 33)
truncate -s $(( (sectors + 4096) * 512 )) "$disk"
printf 'label: gpt\nunit: sectors\nfirst-lba: 2048\nstart=2048, size=%d, type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B, uuid=%s, name="ESP"\n' \
	"$sectors" "$uuid" | sfdisk -q "$disk" >/dev/null
# (2048 sectors are 1 MiB: one block of 1 MiB at a time, not 512 bytes)
dd if="$fat" of="$disk" bs=1M seek=1 conv=notrunc,sparse status=none

#!/bin/bash
# tpm-pcrs.sh DIR PCR... - the SHA-256 PCR values of the TPM whose state
# boot.sh --tpm DIR saved after a boot: swtpm restarted on that state
# (volatile state included, so the PCRs are as the boot left them) and
# read with tpm2_pcrread.  Prints "N HEX" (lower case) per PCR.
set -u
dir=$1
shift
for c in swtpm tpm2_pcrread; do
	command -v "$c" >/dev/null || { echo "tpm-pcrs.sh: $c missing (run make deps)" >&2; exit 2; }
done
[ -f "$dir/tpm2-00.volatilestate" ] || { echo "tpm-pcrs.sh: no saved TPM state in $dir" >&2; exit 2; }
sock=$dir/cmd.sock
rm -f "$sock" "$sock.ctrl"
swtpm socket --tpm2 --tpmstate "dir=$dir" --server "type=unixio,path=$sock" \
	--ctrl "type=unixio,path=$sock.ctrl" --flags not-need-init --log "file=$dir/swtpm-read.log" &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null' EXIT
for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
list=$(IFS=,; echo "$*")
tpm2_pcrread -T "swtpm:path=$sock" "sha256:$list" 2>"$dir/pcrread.err" |
	sed -n 's/^ *\([0-9]*\) *: 0x\([0-9A-Fa-f]*\)$/\1 \2/p' | tr 'A-F' 'a-f'

#!/bin/bash
# test/install/reseal.sh - kaslr-reseal (SEAL=, installed with make
# install-hooks into a root of this test's own) with the real clevis,
# cryptsetup and tpm2-tools against a software TPM (swtpm, its own state
# and socket under a temporary directory) and a LUKS2 volume in a file.
# A boot is the TPM reset (swtpm_ioctl -i, tpm2_startup) and PCRs 4 and 5
# extended with that boot's digests; kaslr-pcr is a stand-in printing the
# next boot's values the test chose (its own predictions are tested by
# make test's linux-pcr-predict and unit tests):
#   status       a binding clevis made for this boot's PCRs matches them
#                (kaslr-reseal's PolicyPCR digest against the TPM's)
#   update       another next boot: a second binding, one line, the first
#                kept; the same run again changes nothing, says nothing
#   new-unseals  booted into the predicted PCRs, the TPM unseals the new
#                binding (clevis luks pass), not the old one
#   passphrase   a boot no binding matches: nothing added or removed,
#                one line
#   proved       the boot that the new binding matches: the old one goes,
#                one line; the new one stays and unseals
#   predict-fail a prediction that fails: every binding kept, one line
#                naming the reason, status 0
#   no-clevis    SEAL= without clevis: one line, status 0; SEAL= unset:
#                nothing at all
#   hook         kaslr-loader-update add of a new kernel with SEAL=: the
#                next boot bound; the postinst hook with a prediction that
#                fails: status 0, the ESP updated, one line from
#                kaslr-reseal
# One "ok NAME" / "FAIL NAME: why" line per check; the last line is
# "reseal: N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
T=$(mktemp -d)
trap '[ -f "$T/swtpm.pid" ] && kill "$(cat "$T/swtpm.pid")" 2>/dev/null; rm -rf "$T"' EXIT
. test/tally.sh
finish() { tally_end reseal; }

for c in swtpm swtpm_ioctl tpm2_pcrextend clevis cryptsetup jose xxd; do
	command -v "$c" >/dev/null || { bad setup "$c missing (make deps)"; finish; }
done
R=$T/root
make --no-print-directory install-hooks DESTDIR="$R" >"$T/install.log" 2>&1 ||
	{ bad setup "make install-hooks: $(tail -n 2 "$T/install.log")"; finish; }
RESEAL=$R/usr/lib/kaslr-loader/kaslr-reseal

# the TPM
mkdir "$T/tpm"
swtpm socket --tpm2 --server "type=unixio,path=$T/tpm.sock" --ctrl "type=unixio,path=$T/tpm.sock.ctrl" \
	--tpmstate "dir=$T/tpm" --flags not-need-init,startup-clear --daemon --pid "file=$T/swtpm.pid" \
	--log "file=$T/swtpm.log" || { bad setup "swtpm did not start"; finish; }
export TPM2TOOLS_TCTI="swtpm:path=$T/tpm.sock"
for _ in $(seq 50); do tpm2_pcrread sha256:0 >/dev/null 2>&1 && break; sleep 0.1; done
# boot NAME: the TPM reset, PCRs 4 and 5 extended with NAME's digests
digest() { printf '%s' "$1" | sha256sum | cut -c1-64; }
boot() {
	swtpm_ioctl --unix "$T/tpm.sock.ctrl" -i >/dev/null && tpm2_startup -c >/dev/null 2>&1 &&
		tpm2_pcrextend "4:sha256=$(digest "loader $1")" "5:sha256=$(digest "settings $1")"
}
# predict NAME: the stand-in kaslr-pcr prints the values boot NAME leaves
predict() {
	local i
	rm -f "$T/next/fail"
	mkdir -p "$T/next"
	for i in 4 5; do
		case $i in 4) w=loader ;; 5) w=settings ;; esac
		printf '%064d%s' 0 "$(digest "$w $1")" | xxd -r -p | sha256sum | cut -c1-64 >"$T/next/$i"
	done
}
cat >"$T/kaslr-pcr" <<'EOF'
#!/bin/bash
# a stand-in for kaslr-pcr predict --pcrs LIST --format tpm2 --output FILE:
# the values in $FAKE_NEXT/ID (hex), or $FAKE_NEXT/fail's text and status 1
out='' pcrs=''
while [ $# -gt 0 ]; do case $1 in --output) out=$2; shift ;; --pcrs) pcrs=$2; shift ;; esac; shift; done
[ -f "$FAKE_NEXT/fail" ] && { cat "$FAKE_NEXT/fail" >&2; exit 1; }
for i in ${pcrs//,/ }; do cat "$FAKE_NEXT/$i"; done | xxd -r -p >"$out"
EOF
chmod +x "$T/kaslr-pcr"
export KASLR_LOADER_PCR=$T/kaslr-pcr FAKE_NEXT=$T/next KASLR_LOADER_CONF=$T/install.conf

# the volume: a passphrase in slot 0, clevis's tpm2 pin bound to this
# boot's PCRs 4,5 in slot 1
V=$T/luks.img
truncate -s 20M "$V"
printf 'pass' | cryptsetup luksFormat --type luks2 --pbkdf pbkdf2 --pbkdf-force-iterations 1000 \
	--batch-mode --key-file=- "$V" >"$T/fmt.log" 2>&1 || { bad setup "luksFormat: $(tail -n 1 "$T/fmt.log")"; finish; }
boot a || { bad setup "boot a"; finish; }
printf 'pass' | clevis luks bind -y -d "$V" -k - tpm2 '{"pcr_bank":"sha256","pcr_ids":"4,5"}' >"$T/bind.log" 2>&1 ||
	{ bad setup "clevis luks bind: $(tail -n 1 "$T/bind.log")"; finish; }
printf '%s\n' "ESP=$T/esp" "SEAL=$V" >"$KASLR_LOADER_CONF"
mkdir -p "$T/esp"
# the key slots with a clevis tpm2 binding
# (luksDump's token list: clevis luks list takes seconds a call)
slots() {
	cryptsetup luksDump "$V" 2>/dev/null | sed -n '/^Tokens:/,/^[^[:space:]]/s/^[[:space:]]*Keyslot:[[:space:]]*\([0-9]*\)$/\1/p' |
		sort -n | tr '\n' ' '
}
# unseals SLOT: the TPM gives that binding's key now
unseals() { clevis luks pass -d "$V" -s "$1" >/dev/null 2>&1; }
# reseal LOG [ARGS]: kaslr-reseal, its status and stderr
reseal() { local l=$1; shift; "$RESEAL" "$@" >"$T/$l.out" 2>"$T/$l.log"; echo $? >"$T/$l.rc"; }
lines() { grep -c . "$T/$1.log"; }

predict a
reseal status status
if grep -q ': key slots matching this boot: 1; the next boot: 1$' "$T/status.out" && [ "$(cat "$T/status.rc")" = 0 ]; then ok status
else bad status "$(cat "$T/status.out" "$T/status.log" | tr '\n' '|')"; fi

predict b
reseal update update
if [ "$(cat "$T/update.rc")" = 0 ] && [ "$(slots)" = "1 2 " ] && [ "$(lines update)" = 1 ] &&
	grep -q "bound key slot 2 to the next boot's PCRs sha256:4,5 (slot 1, this boot's, stays" "$T/update.log"; then ok update
else bad update "status $(cat "$T/update.rc"), slots $(slots): $(tr '\n' '|' <"$T/update.log")"; fi
reseal again update
if [ "$(cat "$T/again.rc")" = 0 ] && [ "$(slots)" = "1 2 " ] && [ "$(lines again)" = 0 ]; then ok update-again
else bad update-again "status $(cat "$T/again.rc"), slots $(slots): $(tr '\n' '|' <"$T/again.log")"; fi

# a boot nobody predicted (an ESP changed from outside): unlocked with
# the passphrase; kaslr-reseal changes nothing
boot x
reseal pass update
if [ "$(cat "$T/pass.rc")" = 0 ] && [ "$(slots)" = "1 2 " ] && [ "$(lines pass)" = 1 ] &&
	grep -q 'no binding to PCRs sha256:4,5 matches this boot' "$T/pass.log" && ! unseals 1 && ! unseals 2; then ok passphrase
else bad passphrase "status $(cat "$T/pass.rc"), slots $(slots): $(tr '\n' '|' <"$T/pass.log")"; fi

# the boot that was predicted: the new binding unseals, the old one
# does not and goes
boot b
if unseals 2 && ! unseals 1; then ok new-unseals
else bad new-unseals "slot 2 $(unseals 2 && echo unseals || echo 'does not unseal'), slot 1 $(unseals 1 && echo unseals || echo 'does not unseal')"; fi
reseal proved update
if [ "$(cat "$T/proved.rc")" = 0 ] && [ "$(slots)" = "2 " ] && [ "$(lines proved)" = 1 ] &&
	grep -q 'removed key slot 1, bound to PCRs sha256:4,5 that are neither' "$T/proved.log" && unseals 2; then ok proved
else bad proved "status $(cat "$T/proved.rc"), slots $(slots): $(tr '\n' '|' <"$T/proved.log")"; fi

# a prediction that fails: one line with the reason, nothing changes
printf '%s\n' 'kaslr-pcr: PCR 5: an event it does not know' 'kaslr-pcr: second line' >"$T/next/fail"
reseal fail update
if [ "$(cat "$T/fail.rc")" = 0 ] && [ "$(slots)" = "2 " ] && [ "$(lines fail)" = 1 ] &&
	grep -q "the next boot's PCRs sha256:4,5 cannot be predicted, the bindings are kept as they are .*PCR 5: an event it does not know" "$T/fail.log"; then
	ok predict-fail
else bad predict-fail "status $(cat "$T/fail.rc"), slots $(slots): $(tr '\n' '|' <"$T/fail.log")"; fi
rm -f "$T/next/fail"

# SEAL= without clevis on PATH; SEAL= unset
mkdir "$T/bin"
for c in cryptsetup jose tpm2_pcrread xxd sha256sum mktemp rm cat sed grep; do ln -s "$(command -v "$c")" "$T/bin/$c"; done
PATH=$T/bin reseal noclevis update
printf '%s\n' "ESP=$T/esp" >"$T/unset.conf"
KASLR_LOADER_CONF=$T/unset.conf reseal unset update
if [ "$(cat "$T/noclevis.rc")" = 0 ] && [ "$(lines noclevis)" = 1 ] && grep -q 'clevis is missing' "$T/noclevis.log" &&
	[ "$(cat "$T/unset.rc")" = 0 ] && [ "$(lines unset)" = 0 ] && [ "$(slots)" = "2 " ]; then ok no-clevis
else bad no-clevis "$(cat "$T/noclevis.log" "$T/unset.log" | tr '\n' '|')"; fi

# ---- through the kernel hooks: kaslr-loader-update add with SEAL=
export KASLR_LOADER_LIB=$R/usr/lib/kaslr-loader KASLR_LOADER_INSTALL=$R/usr/sbin/kaslr-loader-install \
	KASLR_LOADER_BOOT=$T/boot KASLR_LOADER_STATE=$T/state KASLR_LOADER_SYS=$T/sys \
	KASLR_LOADER_UPDATE=$R/usr/sbin/kaslr-loader-update
mkdir -p "$T/boot" "$T/sys/firmware/efi"
V1=6.1.0-98-amd64 V2=6.1.0-99-amd64 V3=6.1.0-100-amd64
cp "$B/payload/kernel-pie.elf" "$T/boot/vmlinuz-$V1"
cp "$B/payload/kernel-high.elf" "$T/boot/vmlinuz-$V2"
cp "$B/payload/kernel-pie.elf" "$T/boot/vmlinuz-$V3"
printf '%s\n' "ESP=$T/esp" INSTALL_PATH=EFI/kaslr/kaslr-loader.efi >"$KASLR_LOADER_CONF"
"$KASLR_LOADER_UPDATE" add "$V1" >"$T/v1.log" 2>&1 || { bad hook "add $V1 (no SEAL=): $(tail -n 1 "$T/v1.log")"; finish; }
echo "SEAL=$V" >>"$KASLR_LOADER_CONF"
predict c
"$KASLR_LOADER_UPDATE" add "$V2" >"$T/v2.log" 2>&1
rc=$?
pins() { "$R/usr/lib/kaslr-loader/kaslr-policy" show "$T/esp/EFI/kaslr/kaslr-loader.efi" 2>/dev/null | grep -q "vmlinuz-$1 sha256="; }
if [ "$rc" = 0 ] && pins "$V2" && [ "$(slots)" = "1 2 " ] && [ "$(grep -c '^kaslr-reseal: ' "$T/v2.log")" = 1 ] &&
	grep -q "^kaslr-reseal: .*bound key slot 1 to the next boot's PCRs sha256:4,5 (slot 2, this boot's" "$T/v2.log"; then ok hook
else bad hook "status $rc, slots $(slots): $(tr '\n' '|' <"$T/v2.log")"; fi
printf '%s\n' 'kaslr-pcr: PCR 4: cannot read the loader' >"$T/next/fail"
"$R/etc/kernel/postinst.d/zz-kaslr-loader" "$V3" "$T/boot/vmlinuz-$V3" >"$T/v3.log" 2>&1
rc=$?
if [ "$rc" = 0 ] && [ "$(slots)" = "1 2 " ] && [ "$(grep -c '^kaslr-reseal: ' "$T/v3.log")" = 1 ] &&
	grep -q "^kaslr-reseal: .*cannot be predicted, the bindings are kept as they are .*PCR 4: cannot read the loader" "$T/v3.log" &&
	pins "$V3"; then
	ok hook-predict-fail
else bad hook-predict-fail "status $rc, slots $(slots): $(tr '\n' '|' <"$T/v3.log")"; fi

finish

#!/bin/bash
# kaslr-reseal - keeps the LUKS2 volumes that install.conf's SEAL= names
# unlocking with the TPM across updates (installed as
# /usr/lib/kaslr-loader/kaslr-reseal; kaslr-pcr(1) RESEALING,
# docs/admin-guide.md section 8).
#
#   kaslr-reseal [update]   after the ESP changed (kaslr-loader-update runs
#                           it after add, refresh, remove and install) and
#                           at every boot (kaslr-reseal.service)
#   kaslr-reseal status     which key slots match this boot and the next,
#                           changing nothing
#
# For each device of SEAL= and each PCR selection (pcr_bank, pcr_ids) its
# clevis tpm2 bindings use: C, the TPM2 PolicyPCR digest of the PCRs as
# they are now (tpm2_pcrread), and N, that of the next boot's as
# kaslr-pcr predicts them from this boot's event log and the ESP.  A
# binding's own policy is its sealed object's authPolicy (jwk_pub in its
# token's protected header).  Then, only when a binding matches C (this
# boot was unlocked by it, the boot is proved, and its key is at hand):
#   - a binding for N is added in a new key slot, its key taken from the
#     one that matches C (clevis luks pass | clevis luks bind -k -), when
#     none matches N yet;
#   - a binding that matches neither C nor N goes: one made for an earlier
#     prediction never proved, or the one before an update once the boot
#     after it has proved the new one.  One that matches C never goes.
# A boot that no binding matches (unlocked with the passphrase: an ESP
# changed from outside, a prediction that was wrong) changes nothing, so a
# changed ESP never gets a binding of its own.  A prediction that fails
# keeps every binding and says so in one line.  Every message is one line
# on stderr; the status is always 0, so that no package operation fails
# because of it.
#
# Configuration: /etc/kaslr-loader/install.conf: ESP= (the ESP kaslr-pcr
# reads), SEAL= (LUKS2 devices, separated by blanks).  The environment may
# point elsewhere (the tests do): KASLR_LOADER_CONF, KASLR_LOADER_PCR
# (kaslr-pcr), KASLR_RESEAL_EVENTLOG (the event log); tpm2-tools' and
# clevis's own (TPM2TOOLS_TCTI); DPKG_ROOT prefixes the defaults.
set -u
me=kaslr-reseal
root=${DPKG_ROOT:-}
conf=${KASLR_LOADER_CONF:-$root/etc/kaslr-loader/install.conf}
pcrtool=${KASLR_LOADER_PCR:-$root/usr/bin/kaslr-pcr}
say() { echo "$me: $*" >&2; }
cmd=${1:-update}
case $cmd in update | status) ;; *) say "usage: $me [update|status]"; exit 0 ;; esac

ESP='' SEAL=''
if [ -f "$conf" ]; then
	# shellcheck source=/dev/null
	. "$conf" 2>/dev/null || { say "cannot read $conf: nothing resealed"; exit 0; }
fi
[ -n "$SEAL" ] || exit 0
if [ -z "$ESP" ]; then
	say "SEAL= is set but ESP= is not (the ESP kaslr-pcr reads): nothing resealed"
	exit 0
fi
for c in clevis cryptsetup jose tpm2_pcrread xxd sha256sum; do
	command -v "$c" >/dev/null || {
		say "SEAL= is set but $c is missing (apt install clevis-luks clevis-tpm2 tpm2-tools xxd): nothing resealed"
		exit 0
	}
done
[ -x "$pcrtool" ] || { say "$pcrtool missing (reinstall kaslr-loader): nothing resealed"; exit 0; }
work=$(mktemp -d) || { say "mktemp failed: nothing resealed"; exit 0; }
trap 'rm -rf "$work"' EXIT

# the TPM algorithm number of a bank, for the PCR selection
alg_of() {
	case $1 in sha1) echo 0004 ;; sha256) echo 000b ;; sha384) echo 000c ;; sha512) echo 000d ;; *) return 1 ;; esac
}
# policy BANK IDS FILE: the PolicyPCR digest (SHA-256 session, from an
# empty policy) of the PCR values in FILE (binary, ascending PCR order, as
# tpm2_pcrread -o writes):
#   SHA256(0^32 || TPM_CC_PolicyPCR || TPML_PCR_SELECTION || SHA256(values))
# the selection one bank, its 3-byte bitmap PCR 0 first
policy() {
	local alg bits=0 id sel vd
	alg=$(alg_of "$1") || return 1
	for id in ${2//,/ }; do bits=$((bits | (1 << id))); done
	sel=$(printf '00000001%s03%02x%02x%02x' "$alg" $((bits & 255)) $(((bits >> 8) & 255)) $(((bits >> 16) & 255)))
	vd=$(sha256sum <"$3" | cut -c1-64)
	printf '%064d0000017f%s%s' 0 "$sel" "$vd" | xxd -r -p | sha256sum | cut -c1-64
}
# the clevis tpm2 bindings of DEV with PCRs, one line each:
# SLOT HASH BANK IDS AUTHPOLICY
bindings() {
	local dev=$1 t tok slots s hdr pub h b i ap
	# the token ids luksDump lists ("Tokens:", then "  ID: TYPE" lines)
	for t in $(cryptsetup luksDump "$dev" 2>/dev/null |
		sed -n '/^Tokens:/,/^[^[:space:]]/s/^  \([0-9]\{1,2\}\): clevis$/\1/p'); do
		tok=$(cryptsetup token export --token-id "$t" "$dev" 2>/dev/null) || continue
		[ "$(printf '%s' "$tok" | jose fmt -j- -Og type -Su- 2>/dev/null)" = clevis ] || continue
		hdr=$(printf '%s' "$tok" | jose fmt -j- -Og jwe -Og protected -Su- 2>/dev/null |
			jose b64 dec -i- 2>/dev/null) || continue
		[ "$(printf '%s' "$hdr" | jose fmt -j- -Og clevis -Og pin -Su- 2>/dev/null)" = tpm2 ] || continue
		i=$(printf '%s' "$hdr" | jose fmt -j- -Og clevis -Og tpm2 -Og pcr_ids -Su- 2>/dev/null) || continue
		h=$(printf '%s' "$hdr" | jose fmt -j- -Og clevis -Og tpm2 -Og hash -Su- 2>/dev/null) || h=sha256
		b=$(printf '%s' "$hdr" | jose fmt -j- -Og clevis -Og tpm2 -Og pcr_bank -Su- 2>/dev/null) || b=sha256
		pub=$(printf '%s' "$hdr" | jose fmt -j- -Og clevis -Og tpm2 -Og jwk_pub -Su- 2>/dev/null) || continue
		# TPM2B_PUBLIC: its size, type, nameAlg, objectAttributes (10
		# bytes), then authPolicy: a 2-byte size and the digest
		ap=$(printf '%s' "$pub" | jose b64 dec -i- 2>/dev/null | xxd -p -s 12 -l 32 | tr -d '\n')
		slots=$(printf '%s' "$tok" | jose fmt -j- -Og keyslots -o- 2>/dev/null | tr -dc '0-9,' | tr ',' ' ')
		for s in $slots; do echo "$s $h $b ${i// /} $ap"; done
	done
}

one_device() {
	local dev=$1 sel bank ids hash c n cur next slot h b i ap keep key cfg out why
	if ! cryptsetup isLuks --type luks2 "$dev" 2>/dev/null; then
		say "$dev (SEAL=) is not a LUKS2 device: left alone"
		return
	fi
	bindings "$dev" >"$work/bindings"
	if [ ! -s "$work/bindings" ]; then
		say "$dev (SEAL=) has no clevis tpm2 binding to PCRs: bind one first (docs/admin-guide.md, section 8)"
		return
	fi
	# each PCR selection the bindings use, on its own (HASH/BANK/IDS: one word)
	# shellcheck disable=SC2013
	for sel in $(awk '{print $2 "/" $3 "/" $4}' "$work/bindings" | sort -u); do
		hash=${sel%%/*} bank=${sel#*/} bank=${bank%%/*} ids=${sel##*/}
		if [ "$hash" != sha256 ] || ! alg_of "$bank" >/dev/null; then
			say "$dev: bindings with hash $hash, bank $bank are left as they are (sha256 policies over the sha1, sha256, sha384 or sha512 bank are resealed)"
			continue
		fi
		if ! tpm2_pcrread -Q "$bank:$ids" -o "$work/cur" 2>"$work/err"; then
			say "$dev: cannot read PCRs $bank:$ids ($(grep . "$work/err" | tail -n 1)): bindings left as they are"
			continue
		fi
		cur=$(policy "$bank" "$ids" "$work/cur")
		next=
		if "$pcrtool" predict --esp "$ESP" ${KASLR_RESEAL_EVENTLOG:+--eventlog "$KASLR_RESEAL_EVENTLOG"} \
			--pcrs "$ids" --bank "$bank" --format tpm2 --output "$work/next" 2>"$work/err"; then
			next=$(policy "$bank" "$ids" "$work/next")
		fi
		why=$(sed 's/^kaslr-pcr: //' "$work/err" | grep . | head -n 3 | tr '\n' ' ')
		c='' n=''
		while read -r slot h b i ap; do
			[ "$h/$b/$i" = "$sel" ] || continue
			[ "$ap" = "$cur" ] && c="$c $slot"
			[ -n "$next" ] && [ "$ap" = "$next" ] && n="$n $slot"
		done <"$work/bindings"
		if [ "$cmd" = status ]; then
			echo "$dev: PCRs $bank:$ids: key slots matching this boot:${c:- none}; the next boot:${n:- none}"
			[ -n "$next" ] || echo "$dev: the next boot's PCRs $bank:$ids cannot be predicted: ${why% }"
			continue
		fi
		if [ -z "$c" ]; then
			# unlocked with the passphrase: nothing here is proved
			say "$dev: no binding to PCRs $bank:$ids matches this boot (unlocked with the passphrase?): bindings left as they are, none added"
			continue
		fi
		if [ -z "$next" ]; then
			say "$dev: the next boot's PCRs $bank:$ids cannot be predicted, the bindings are kept as they are (the next boot may ask for the passphrase): ${why% }"
			continue
		fi
		if [ -z "$n" ]; then
			key=${c# } key=${key%% *}
			# pcr_digest: the predicted values themselves, base64url
			cfg=$(printf '{"hash":"%s","pcr_bank":"%s","pcr_ids":"%s","pcr_digest":"%s"}' "$hash" "$bank" "$ids" \
				"$(jose b64 enc -I "$work/next" 2>/dev/null)")
			if ! out=$(clevis luks pass -d "$dev" -s "$key" 2>"$work/err" |
				clevis luks bind -y -d "$dev" -k - tpm2 "$cfg" 2>&1); then
				say "$dev: binding the next boot's PCRs $bank:$ids failed ($(printf '%s\n' "$out" "$(cat "$work/err")" | grep . | tail -n 1)): the bindings are kept as they are (the next boot may ask for the passphrase)"
				continue
			fi
			bindings "$dev" >"$work/bindings"
			n=$(awk -v s="$sel" -v p="$next" '$2 "/" $3 "/" $4 == s && $5 == p {printf " %s", $1}' "$work/bindings")
			if [ -z "$n" ]; then
				say "$dev: clevis luks bind succeeded but no binding matches the next boot's PCRs $bank:$ids: the bindings are kept as they are"
				continue
			fi
			say "$dev: bound key slot${n} to the next boot's PCRs $bank:$ids (slot$c, this boot's, stays until a boot proves the new one)"
		fi
		# what matches neither this boot nor the next goes
		keep="$c $n "
		while read -r slot h b i ap; do
			[ "$h/$b/$i" = "$sel" ] || continue
			case $keep in *" $slot "*) continue ;; esac
			# nothing on stdin: cryptsetup would read a passphrase from it
			if clevis luks unbind -d "$dev" -s "$slot" -f </dev/null >"$work/err" 2>&1; then
				say "$dev: removed key slot $slot, bound to PCRs $bank:$ids that are neither this boot's nor the next's"
			else
				say "$dev: removing key slot $slot failed ($(grep . "$work/err" | tail -n 1)): left"
			fi
		done <"$work/bindings"
	done
}

for dev in $SEAL; do one_device "$dev"; done
exit 0

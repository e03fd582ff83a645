#!/bin/bash
# kaslr-loader-update - keeps the ESP in step with the installed kernels;
# run by the kernel hooks beside it (installed as /usr/sbin/kaslr-loader-update).
#
#   kaslr-loader-update add VERSION [IMAGE [INITRD...]]
#       IMAGE (default /boot/vmlinuz-VERSION, copied as it is) and its
#       initrds (default /boot/initrd.img-VERSION when it exists) go to the
#       ESP through kaslr-loader-install: the policy pins them, the loader is
#       re-signed when a key is configured, the systemd-boot entry written;
#       the files of the version installed before are removed from the ESP.
#       The same inputs onto an ESP left as the last run left it is done
#       once: the hooks of one kernel update call it several times.  A
#       version older than the one on the ESP, whose kernel is still in
#       /boot, is left out (update-initramfs -k all, through systemd-boot's
#       hook, reaches it for every version): the ESP carries the newest.
#   kaslr-loader-update refresh VERSION [INITRD]
#       as add, with IMAGE /boot/vmlinuz-VERSION, when VERSION is the kernel
#       the loader pins (its initrd was rebuilt); otherwise nothing.
#   kaslr-loader-update remove VERSION
#       when VERSION is the kernel the loader pins, installs the newest
#       kernel left in /boot instead (with none left, the ESP keeps it).
#   kaslr-loader-update uninstall
#       takes kaslr-loader off the ESP (kaslr-loader-install --uninstall),
#       as the package's removal does: the files its manifest lists, the
#       kernels and initrds TRUST=shim updates put beside the loader (the
#       ones kaslr.conf's marked block names), the Boot#### entry an
#       install made (BootOrder as it was before).
#   kaslr-loader-update install
#       the first install: the running kernel (uname -r) with the settings
#       of install.conf, the package's own loader and tools; as add, but
#       ESP= must be set and nothing is left out as older.
#   kaslr-loader-update check
#       whether the ESP, the boot entry (Boot#### or systemd-boot's), the
#       policy and the installed kernels agree with each other and with
#       install.conf: status 0, or one line per disagreement and status 1.
#
# When the loader's own step fails (no sbsign, no key, the ESP full, a file
# that will not copy, an ESP whose manifest or files are not what an
# install leaves) nothing on the ESP changes, the kernel it booted keeps
# booting, and ONE line on stderr says what was skipped and how to fix it;
# the status is then 1, which the hooks never pass on.  Every run is
# bounded: after KASLR_LOADER_TIMEOUT seconds (default 300) it is stopped
# with one line (status 1), so that nothing on the ESP or in a tool can
# hold the package manager's lock for ever; an install changes the ESP in
# one step (kaslr-loader-install), so the loader boots what it booted
# before or the new kernel.  Whatever is read from the ESP passes the
# checks of kaslr-esp.sh (regular files inside the ESP, of bounded size).
#
# INSTALL_PATH unset (the default): kaslr-loader-install decides where the
# loader goes the first time (kaslr-install.sh says how), and every later
# run keeps it where the ESP's manifest says it is.
#
# With TRUST=shim (and SHIM=, shim at INSTALL_PATH and the loader beside it
# as grubx64.efi) the loader on the ESP already trusts what shim verifies:
# add, refresh and remove then sign nothing and rewrite no policy.  They
# copy the newest two kernels in /boot whose signature shim would accept
# and their initrds beside the loader (as they are: Debian signs vmlinuz
# for shim) and name both in kaslr.conf, newest first, each `kernel` line
# followed by its `initrd` line: the loader boots the first one shim
# accepts and falls back to the next.  Other kernels the hook copied go.
# A kernel's signature is checked with sbverify against the certificates
# shim trusts: its own (the .vendor_cert section of SHIM), the enrolled
# MOKs (MokListRT, as Linux shows it under /sys/firmware/efi) and db when
# it can be read; a kernel none of them verifies is left out with one line
# (shim would refuse it), and the ESP keeps what boots.  (shim_sync below.)
#
# Configuration: /etc/kaslr-loader/install.conf (shell variables ESP,
# INSTALL_PATH, CMDLINE, ALLOW, SIGN_KEY, SIGN_CERT, REPACK=1 to repack
# bzImages as gzip'd ELF, SHIM, TRUST, SEAL: after add, refresh, remove
# and install, kaslr-reseal binds the volumes SEAL names to the next
# boot's PCRs, bounded by twice KASLR_LOADER_TIMEOUT).  Without ESP= it does
# nothing: the package is installed but not set up.  The environment may
# point elsewhere (the tests do): KASLR_LOADER_CONF, KASLR_LOADER_LIB
# (loader image, kaslr-policy, kaslr-repack, kaslr-esp.sh),
# KASLR_LOADER_INSTALL, KASLR_LOADER_BOOT (/boot), KASLR_LOADER_STATE
# (/var/lib/kaslr-loader, where the last run's fingerprint is kept),
# KASLR_LOADER_SYS (/sys: firmware/efi/efivars, firmware/efi/mok-variables),
# KASLR_LOADER_RELEASE (uname -r), KASLR_LOADER_TIMEOUT; DPKG_ROOT
# prefixes the defaults.
set -u
me=kaslr-loader-update
root=${DPKG_ROOT:-}
conf=${KASLR_LOADER_CONF:-$root/etc/kaslr-loader/install.conf}
lib=${KASLR_LOADER_LIB:-$root/usr/lib/kaslr-loader}
installer=${KASLR_LOADER_INSTALL:-$root/usr/sbin/kaslr-loader-install}
boot=${KASLR_LOADER_BOOT:-$root/boot}
state=${KASLR_LOADER_STATE:-$root/var/lib/kaslr-loader}
fw=${KASLR_LOADER_SYS:-/sys}/firmware/efi
limit=${KASLR_LOADER_TIMEOUT:-300}
manifest=EFI/kaslr-loader.manifest # kaslr-loader-install's, on the ESP
die() { echo "$me: $*" >&2; exit 1; }

# the whole run, bounded: the same script under timeout (its process
# group is stopped, whatever it waits for); stopping this one stops it too
if [ -z "${KASLR_LOADER_BOUNDED:-}" ]; then
	case $limit in '' | *[!0-9]*) die "KASLR_LOADER_TIMEOUT=$limit: give whole seconds" ;; esac
	# bash's own "Terminated" notice for a stopped child is left out: the
	# line below says what happened
	KASLR_LOADER_BOUNDED=1 timeout -k 5 "$limit" "$BASH" "$0" "$@" 2> >(grep -vx 'Terminated' >&2) &
	pid=$!
	trap 'kill -TERM -- "-$pid" "$pid" 2>/dev/null; exit 130' INT TERM HUP
	wait "$pid"
	st=$?
	if [ "$st" = 124 ] || [ "$st" = 137 ]; then
		echo "$me: $* stopped after $limit s (something on the ESP or a tool never finished): the loader boots what it booted before, or the new kernel if it was in place; run it again: $me $*" >&2
		st=1
	fi
	# SEAL=: whatever a command that may change the ESP did, the sealed
	# volumes are bound to the next boot's PCRs as well.  kaslr-reseal
	# (nothing without SEAL=) finds what is still to do, says what it did
	# or why not in one line and never fails; it runs after the ESP's run
	# and under a bound of its own (the TPM and clevis take their time
	# where the machine is slow)
	case ${1:-} in
	add | refresh | remove | install)
		if [ -x "$lib/kaslr-reseal" ]; then
			timeout -k 5 "$((2 * limit))" "$lib/kaslr-reseal" update
			[ $? != 124 ] || echo "$me: kaslr-reseal stopped after $((2 * limit)) s: the sealed volumes keep the bindings they have; run it again: $lib/kaslr-reseal" >&2
		fi
		;;
	esac
	exit "$st"
fi

[ $# -ge 1 ] || die "usage: $me add VERSION [IMAGE [INITRD...]] | refresh VERSION [INITRD] | remove VERSION | uninstall | install | check"
cmd=$1
shift
case $cmd in add | refresh | remove) [ $# -ge 1 ] || die "$cmd needs a VERSION" ;; esac
ver=${1:-}
[ $# -gt 0 ] && shift

ESP='' INSTALL_PATH='' CMDLINE='' ALLOW='' SIGN_KEY='' SIGN_CERT='' REPACK=''
SHIM='' TRUST=''
if [ -f "$conf" ]; then
	# shellcheck source=/dev/null
	. "$conf" || die "cannot read $conf"
fi
if [ -z "$ESP" ]; then
	case $cmd in
	install | check) die "ESP= is not set in $conf: set it (the mounted EFI system partition, e.g. ESP=/boot/efi), then run: $me $cmd" ;;
	esac
	echo "$me: ESP= is not set in $conf: the ESP is left alone"
	exit 0
fi
# the checks of whatever is read from the ESP (shared with kaslr-loader-install)
# shellcheck source=src/tools/kaslr-esp.sh
. "$lib/kaslr-esp.sh" 2>/dev/null || die "$lib/kaslr-esp.sh missing (reinstall kaslr-loader): the ESP left as it was"
esp_use "$ESP" || die "ESP=$ESP (in $conf) is not a directory: the ESP left alone"
if [ -n "$SIGN_KEY" ] && ! key_private "$SIGN_KEY"; then
	die "$esp_why; nothing done (the loader boots what it booted before), then run: $me $cmd${ver:+ $ver}"
fi
if [ "$TRUST" = shim ] && [ -z "$SHIM" ]; then
	die "TRUST=shim in $conf needs SHIM= (shim's file): started without shim the loader verifies no signature and refuses every kernel it does not pin; nothing done"
fi
tool=$lib/kaslr-policy
work=$(mktemp -d) || die "mktemp"
trap 'rm -rf "$work"' EXIT

# the loader's path on the ESP: INSTALL_PATH's (beside shim as grubx64.efi
# with SHIM=), else where the manifest says it is; nothing before the
# first install
loader_rel() {
	if [ -z "$INSTALL_PATH" ]; then
		esp_manifest 2>/dev/null && printf '%s' "$m_loader"
	elif [ -n "$SHIM" ]; then
		printf '%s/grubx64.efi' "$(dirname "$INSTALL_PATH")" | sed 's|^\./||'
	else
		printf '%s' "$INSTALL_PATH"
	fi
}
# the name of the kernel file the loader on the ESP pins, or nothing
pinned_kernel() {
	esp_pins "$tool" "$(loader_rel)" | sed -n 's|^kernel .*/\([^/ ]*\) [0-9a-f]*$|\1|p'
}
# the version of a kernel file's name on the ESP (vmlinuz-V, vmlinux-V.gz,
# either with kaslr-loader-install's @HASH when the name was taken), or nothing
name_version() {
	local k=${1%@[0-9a-f]*}
	case $k in
	vmlinuz-*) echo "${k#vmlinuz-}" ;;
	vmlinux-*.gz) k=${k#vmlinux-}; echo "${k%.gz}" ;;
	uki-*.efi) k=${k#uki-}; echo "${k%.efi}" ;;
	esac
}
# ---- unified kernel images
# uki_on_esp VERSION: the ESP path of a unified kernel image for VERSION in
# EFI/Linux, where kernel-install's layout=uki and systemd-boot keep them:
# VERSION.efi or NAME-VERSION.efi (NAME the entry token), either with
# kernel-install's +TRIES boot counter; the first one that may be read
uki_on_esp() {
	local f rel
	for f in "$ESP/EFI/Linux/$1.efi" "$ESP/EFI/Linux/"*"-$1.efi" \
		"$ESP/EFI/Linux/$1+"*.efi "$ESP/EFI/Linux/"*"-$1+"*.efi; do
		{ [ -e "$f" ] || [ -L "$f" ]; } || continue
		rel=${f#"$ESP"/}
		esp_file "$rel" && is_uki "$f" && { printf '%s' "$rel"; return 0; }
	done
	return 1
}
# kernel_of VERSION [IMAGE]: the kernel to install for VERSION, in k_file
# (k_uki=1: a unified kernel image): IMAGE when it is a UKI, else the UKI
# for VERSION on the ESP, else IMAGE (default /boot/vmlinuz-VERSION)
kernel_of() {
	local rel
	k_uki=1
	if [ -n "${2:-}" ] && is_uki "$2"; then k_file=$2
	elif rel=$(uki_on_esp "$1"); then k_file=$ESP/$rel
	else k_uki=0 k_file=${2:-$boot/vmlinuz-$1}; fi
}
# the version of the kernel the loader pins, or nothing
pinned_version() { name_version "$(pinned_kernel)"; }
# what the ESP holds now: the manifest and every file it lists (a
# manifest that is no manifest, and a file that may not be read, as such)
esp_state() {
	local i
	if ! esp_manifest; then echo "$esp_why"; return 0; fi
	esp_sha "$manifest"
	for i in "${!m_kind[@]}"; do
		case ${m_kind[$i]} in
		file) esp_sha "${m_a[$i]}" ;;
		backup) esp_sha "${m_a[$i]}"; esp_sha "${m_b[$i]}" ;;
		esac
	done
}
# fingerprint VERSION FILE...: an install's inputs and the ESP it left
fingerprint() {
	local v=$1
	shift
	{
		echo "$v"
		for f in "$@" "$conf" "$lib/kaslr-loader.efi" "$tool" "$installer" ${SIGN_KEY:+"$SIGN_KEY" "$SIGN_CERT"}; do
			{ sha256sum <"$f"; } 2>/dev/null || echo "$f missing"
		done
		esp_state
	} | sha256sum | cut -d' ' -f1
}

# run_installer WHAT ARGS...: kaslr-loader-install; its output when it
# worked, else one line naming WHAT and the reason
run_installer() {
	local what=$1 why
	shift
	if "$installer" "$@" >"$work/install.log" 2>&1; then
		cat "$work/install.log"
		return 0
	fi
	why=$(grep -v '^$' "$work/install.log" | tail -n 1)
	why=${why#kaslr-install: }
	echo "$me: $what skipped, the ESP left as it was (the loader boots what it booted before): ${why:-kaslr-loader-install failed}; fix that, then run: $me $cmd${ver:+ $ver}" >&2
	return 1
}

install_version() { # VERSION IMAGE [INITRD...]
	local v=$1 image=$2 args=() a f fp
	shift 2
	[ -f "$image" ] || die "kernel $image: no such file: nothing installed"
	fp=$(fingerprint "$v" "$image" "$@")
	if [ "$(cat "$state/stamp" 2>/dev/null)" = "$fp" ]; then
		echo "$me: $v is on $ESP already, as configured: nothing to do"
		return 0
	fi
	for f in "$@"; do args+=(--initrd "$f"); done
	# a UKI goes to the ESP as uki-VERSION.efi (the name says its version)
	if is_uki "$image"; then
		ln -sf "$(realpath -e -- "$image")" "$work/uki-$v.efi" || die "cannot stage $image"
		image=$work/uki-$v.efi
	fi
	[ -n "$CMDLINE" ] && args+=(--cmdline "$CMDLINE")
	for a in $ALLOW; do args+=(--allow "$a"); done
	[ -n "$SIGN_KEY" ] && args+=(--sign-key "$SIGN_KEY" --sign-cert "$SIGN_CERT")
	[ "$REPACK" = 1 ] && args+=(--repack "$lib/kaslr-repack")
	[ -n "$SHIM" ] && args+=(--shim "$SHIM")
	[ -n "$TRUST" ] && args+=(--trust "$TRUST")
	[ -n "$INSTALL_PATH" ] && args+=(--install-path "$INSTALL_PATH")
	run_installer "installing kernel $v" --esp "$ESP" --state "$state" \
		--loader "$lib/kaslr-loader.efi" --tool "$tool" --kernel "$image" "${args[@]}" || return 1
	# the next call with the same inputs finds this and does nothing
	mkdir -p "$state" 2>/dev/null && fingerprint "$v" "$image" "$@" >"$state/stamp" 2>/dev/null
	return 0
}

# ---- TRUST=shim: kernels the distribution signed, no key on the machine
# a PE image with a certificate table (Debian's signed vmlinuz has one)
shim_signed_pe() {
	local pe n
	pe=$(od -An -t u4 -j 60 -N 4 "$1" 2>/dev/null | tr -d ' ')
	[ -n "$pe" ] && [ "$(od -An -c -j "$pe" -N 2 "$1" 2>/dev/null | tr -d ' ')" = PE ] || return 1
	# PE32+: the certificate table's size, data directory 4
	n=$(od -An -t u4 -j $((pe + 24 + 112 + 4 * 8 + 4)) -N 4 "$1" 2>/dev/null | tr -d ' ')
	[ -n "$n" ] && [ "$n" -gt 0 ]
}
# esl_certs FILE SKIP NAME: the X.509 certificates of the
# EFI_SIGNATURE_LIST array in FILE (after SKIP bytes: efivarfs puts the
# variable's attributes first) as $work/certs/NAME-N.pem.  The lists are
# firmware data: every size is checked against what is left of the file
# before it is used, and at most 64 lists and 64 certificates are read.
esl_certs() {
	local f=$1 off=$2 name=$3 len t lsize hsize ssize e lists=0 n=0
	len=$(stat -L -c %s -- "$f" 2>/dev/null) || return 0
	[ "$len" -le $((1 << 20)) ] || return 0
	while [ "$off" -le "$len" ] && [ $((len - off)) -ge 28 ] && [ "$lists" -lt 64 ]; do
		lists=$((lists + 1))
		t=$(od -An -v -t x1 -j "$off" -N 16 "$f" | tr -d ' \n')
		read -r lsize hsize ssize < <(od -An -v -t u4 -j $((off + 16)) -N 12 "$f")
		# the list inside what is left, its header and entries inside the list
		[ "$lsize" -ge 28 ] && [ "$lsize" -le $((len - off)) ] && [ "$hsize" -le $((lsize - 28)) ] &&
			[ "$ssize" -gt 16 ] && [ $(((lsize - 28 - hsize) % ssize)) = 0 ] || return 0
		if [ "$t" = a159c0a5e494a74a87b5ab155c2bf072 ]; then # EFI_CERT_X509_GUID
			for ((e = off + 28 + hsize; e < off + lsize && n < 64; e += ssize)); do
				# the owner's GUID, then the DER certificate (tail's
				# complaint when head stops reading is left out: under
				# systemd, which ignores SIGPIPE, it says "write error")
				tail -c +$((e + 17)) "$f" 2>/dev/null | head -c $((ssize - 16)) >"$work/cert.der"
				openssl x509 -inform DER -in "$work/cert.der" -out "$work/certs/$name-$n.pem" 2>/dev/null
				n=$((n + 1))
			done
		fi
		off=$((off + lsize))
	done
}
# efivar_copy FILE: FILE, an efivarfs variable, read once from its start
# into $work/efivar (efivarfs cannot seek: tail -c +N and od -j on the
# variable itself fail); at most 1 MiB, as esl_certs reads
efivar_copy() {
	[ -r "$1" ] && head -c $((1 << 20)) -- "$1" >"$work/efivar" 2>/dev/null
}
# shim_certs: the certificates shim checks a kernel against, into
# $work/certs: shim's own (its .vendor_cert section: four u32, the
# authorized list's size, the deauthorized list's size, and their offsets
# in the section; the authorized one a DER certificate, or a signature
# list in a shim built with a vendor db), the MOKs and db
shim_certs() {
	local v=$work/vendor.bin asize aoff len f
	[ -d "$work/certs" ] && return 0
	mkdir "$work/certs" || return 1
	if objcopy -O binary -j .vendor_cert "$SHIM" "$v" 2>/dev/null && [ -s "$v" ]; then
		len=$(stat -c %s "$v")
		read -r asize _ aoff _ < <(od -An -v -t u4 -N 16 "$v")
		if [ "$len" -ge 16 ] && [ "${asize:-0}" -gt 0 ] && [ "$aoff" -le "$len" ] && [ "$asize" -le $((len - aoff)) ]; then
			tail -c +$((aoff + 1)) "$v" 2>/dev/null | head -c "$asize" >"$work/vendor.der"
			openssl x509 -inform DER -in "$work/vendor.der" -out "$work/certs/shim.pem" 2>/dev/null ||
				esl_certs "$work/vendor.der" 0 shim
		fi
	fi
	# MokListRT (MokListRT1... when it is long): mok-variables holds the
	# list as it is, efivarfs after four bytes of attributes
	for f in "$fw"/mok-variables/MokListRT "$fw"/mok-variables/MokListRT[0-9]*; do
		[ -f "$f" ] && esl_certs "$f" 0 "mok-${f##*/}"
	done
	if ! ls "$work"/certs/mok-* >/dev/null 2>&1; then
		for f in "$fw"/efivars/MokListRT-605dab50-e046-4300-abb6-3dd810dd8b23 \
			"$fw"/efivars/MokListRT[0-9]*-605dab50-e046-4300-abb6-3dd810dd8b23; do
			efivar_copy "$f" && esl_certs "$work/efivar" 4 "mok-${f##*/}"
		done
	fi
	efivar_copy "$fw/efivars/db-d719b2cb-3d3a-4596-a3bc-dad00e67656f" && esl_certs "$work/efivar" 4 db
	return 0
}
# shim_trusts FILE: one of the certificates shim trusts verifies FILE's signature
shim_trusts() {
	local c
	shim_certs || return 1
	for c in "$work"/certs/*.pem; do
		[ -f "$c" ] && sbverify --cert "$c" "$1" >/dev/null 2>&1 && return 0
	done
	return 1
}
# the kernel versions in /boot (and that of add's UKI, shim_add_uki), newest
# first, leaving out $1
shim_add_uki=''
shim_versions() {
	{
		find "$boot" -maxdepth 1 -name 'vmlinuz-*' -printf '%f\n' 2>/dev/null | sed 's/^vmlinuz-//'
		[ -z "$shim_add_uki" ] || echo "$ver"
	} | grep -vxF -e "${1:-}" | sort -urV
}
# shim_kernel VERSION: what kaslr.conf names for VERSION under TRUST=shim:
# c_file (the file shim must accept), c_name (kaslr.conf's kernel line),
# c_put (1: c_file is copied beside the loader as c_name), c_initrd (its
# initrd in /boot, or nothing).  A unified kernel image for VERSION in the
# ESP's EFI/Linux is named where it is; else the UKI given to add (or the
# copy an earlier add left beside the loader, uki-VERSION.efi); else
# /boot/vmlinuz-VERSION and its initrd, copied beside the loader.
shim_kernel() {
	local v=$1 rel
	c_put=0 c_initrd=''
	if rel=$(uki_on_esp "$v"); then
		c_file=$ESP/$rel c_name=\\$(printf '%s' "$rel" | tr / '\134')
	elif [ -n "$shim_add_uki" ] && [ "$v" = "$ver" ]; then
		c_file=$shim_add_uki c_name=uki-$v.efi c_put=1
	elif esp_file "$shim_dr/uki-$v.efi" && is_uki "$ESP/$shim_dr/uki-$v.efi"; then
		c_file=$ESP/$shim_dr/uki-$v.efi c_name=uki-$v.efi
	else
		c_file=$boot/vmlinuz-$v c_name=vmlinuz-$v c_put=1
		[ -f "$boot/initrd.img-$v" ] && c_initrd=initrd.img-$v
	fi
}
# shim_put SRC REL: SRC at REL on the ESP unless REL holds those bytes
# (REL.kaslr-new renamed: the file is whole or not there)
shim_put() {
	local t=$ESP/$2.kaslr-new
	esp_same "$1" "$2" && return 0
	[ "$esp_why" = "$2: missing" ] || [ -z "$esp_why" ] || { echo "$esp_why"; return 1; }
	rm -f "$t"
	{ cp "$1" "$t" && cmp -s "$1" "$t" && mv -f "$t" "$ESP/$2"; } 2>/dev/null ||
		{ rm -f "$t"; echo "cannot write $ESP/$2 (ESP full or read-only?)"; return 1; }
	echo "$me: copied  $1 -> $ESP/$2"
}
# shim_fail WHY: one line and status 1; kaslr.conf is as it was
shim_fail() {
	echo "$me: TRUST=shim: kernel ${ver:-} not put on $ESP: $1: kaslr.conf left as it was, the loader boots what it booted before; fix that, then run: $me $cmd${ver:+ $ver}" >&2
	exit 1
}
# shim_sync [GONE]: the newest two kernels in /boot but GONE that shim
# would start, beside the loader, each with its initrd, named in
# kaslr.conf newest first.  The files are written and flushed before
# kaslr.conf names them, kaslr.conf is renamed into place and flushed
# before other kernels go.  Status 2: no loader on the ESP yet.
shim_sync() {
	local gone=${1:-} lr d dr new='' prev='' v kc kr f k keep st out names keeps
	lr=$(loader_rel)
	st=2
	if [ -n "$lr" ]; then esp_file "$lr"; st=$?; fi
	[ "$st" = 2 ] && return 2 # not installed yet: a signed install first
	[ "$st" = 0 ] || shim_fail "$esp_why"
	command -v sbverify >/dev/null || shim_fail "sbverify missing (apt install sbsigntool): no kernel's signature can be checked"
	{ command -v openssl && command -v objcopy; } >/dev/null || shim_fail "openssl or objcopy missing (apt install openssl binutils): shim's certificates cannot be read"
	dr=$(dirname "$lr")
	d=$ESP/$dr
	shim_dr=${dr#.}
	shim_dr=${shim_dr#/}
	for v in $(shim_versions "$gone"); do
		shim_kernel "$v"
		[ -f "$c_file" ] || continue
		if ! shim_signed_pe "$c_file"; then
			echo "$me: $c_file carries no signature shim could verify: left out (TRUST=shim boots kernels the distribution signed)" >&2
			continue
		fi
		if ! shim_trusts "$c_file"; then
			echo "$me: $c_file: its signature does not verify with shim's certificate, an enrolled MOK or db (shim would refuse it): left out" >&2
			continue
		fi
		if [ -z "$new" ]; then new=$v; elif [ -z "$prev" ]; then prev=$v; break; fi
	done
	if [ -z "$new" ]; then
		echo "$me: warning: no kernel in $boot that shim would start: kaslr.conf on $ESP left as it is" >&2
		return 0
	fi
	names=() keeps=()
	for v in $new $prev; do
		shim_kernel "$v"
		names+=("kernel $c_name") keeps+=("$c_name")
		if [ "$c_put" = 1 ]; then
			out=$(shim_put "$c_file" "$shim_dr${shim_dr:+/}$c_name") || shim_fail "$out"
			[ -z "$out" ] || echo "$out"
		fi
		if [ -n "$c_initrd" ]; then
			names+=("initrd $c_initrd") keeps+=("$c_initrd")
			out=$(shim_put "$boot/$c_initrd" "$shim_dr${shim_dr:+/}$c_initrd") || shim_fail "$out"
			[ -z "$out" ] || echo "$out"
		fi
	done
	esp_flush || shim_fail "sync -f $ESP failed"
	kr=${dr#.}/kaslr.conf
	kr=${kr#/}
	kc=$ESP/$kr
	esp_file "$kr" "$ESP_TEXT_MAX"
	st=$?
	[ "$st" = 1 ] && shim_fail "$esp_why"
	{
		[ "$st" = 0 ] && sed -e '/^# kaslr-loader-update: begin/,/^# kaslr-loader-update: end/d' \
			-e '/^[[:space:]]*\(kernel\|initrd\)[[:space:]]/d' "$kc"
		echo "# kaslr-loader-update: begin (TRUST=shim: rewritten on every kernel update)"
		echo "# The newest kernels shim would start, each followed by its initrd (a"
		echo "# unified kernel image carries its own): the loader boots the first one"
		echo "# shim accepts, else the next."
		printf '%s\n' "${names[@]}"
		echo "# kaslr-loader-update: end"
	} >"$work/kaslr.conf"
	if ! esp_same "$work/kaslr.conf" "$kr"; then
		rm -f "$kc.kaslr-new"
		{ cp "$work/kaslr.conf" "$kc.kaslr-new" && mv -f "$kc.kaslr-new" "$kc"; } 2>/dev/null ||
			{ rm -f "$kc.kaslr-new"; shim_fail "cannot write $kc"; }
		esp_flush || shim_fail "sync -f $ESP failed"
	fi
	echo "$me: config  $kc: kernel ${keeps[0]}${prev:+, then $(printf '%s\n' "${names[@]}" | sed -n 's/^kernel //p' | tail -n 1)}"
	# the other kernels the hook copied (the policy's own pins stay)
	for f in "$d"/vmlinuz-* "$d"/initrd.img-* "$d"/uki-*.efi; do
		[ -f "$f" ] || continue
		keep=0
		for k in "${keeps[@]}"; do [ "${f##*/}" = "$k" ] && keep=1; done
		esp_pins "$tool" "$lr" | grep -q "^[a-z]* $dr/${f##*/} " && keep=1
		[ "$keep" = 1 ] || { rm -f "$f" && echo "$me: removed $f"; }
	done
	esp_flush
	return 0
}
# shim_unput: the kernels and initrds shim_sync put beside the loader go
# (those kaslr.conf's marked block names, plain names of the loader's
# directory that the manifest does not list: the hooks wrote them, not an
# install, so the installer's uninstall does not know them); before the
# installer takes the rest, kaslr.conf among it.  Whatever cannot go is
# said, one line each, and left (the directory then stays).
shim_unput() {
	local dr kr n f i listed
	esp_manifest 2>/dev/null && [ -n "$m_loader" ] || return 0
	dr=$(dirname "$m_loader")
	kr=${dr#.}/kaslr.conf
	kr=${kr#/}
	esp_file "$kr" "$ESP_TEXT_MAX" || return 0
	while read -r n; do
		case $n in vmlinuz-* | initrd.img-*) ;; *) continue ;; esac
		case $n in */* | *\\*) continue ;; esac
		f=$dr/$n
		f=${f#./}
		listed=0
		for ((i = 0; i < ${#m_a[@]}; i++)); do [ "${m_a[$i]}" = "$f" ] && listed=1; done
		[ "$listed" = 0 ] || continue
		esp_file "$f"
		case $? in
		0) if rm -f "$ESP/$f"; then echo "$me: removed $ESP/$f"; else echo "$me: cannot remove $ESP/$f" >&2; fi ;;
		1) echo "$me: $esp_why: left alone" >&2 ;;
		esac
	done < <(sed -n '/^# kaslr-loader-update: begin/,/^# kaslr-loader-update: end/s/^[[:space:]]*\(kernel\|initrd\)[[:space:]]\{1,\}\([^[:space:]]*\).*/\2/p' "$ESP/$kr")
	esp_flush
	return 0
}
# ---- check: does what is on the ESP agree with itself, the boot entry,
# install.conf and /boot?  One line per disagreement.
disagree=0
nope() { echo "$me: check: $*"; disagree=1; }
# the newest kernel version in /boot (that shim would start, with TRUST=shim)
newest_kernel() {
	local v
	for v in $(shim_versions); do
		if [ "$TRUST" = shim ]; then
			shim_kernel "$v"
			{ shim_signed_pe "$c_file" && shim_trusts "$c_file"; } || continue
		fi
		echo "$v"
		return 0
	done
}
# check_file KIND REL SHA: REL on the ESP holds the bytes SHA names
check_file() {
	local f
	f=$(esp_sha "$2")
	case $f in
	"$3 $2") ;;
	[0-9a-f]*" $2") nope "$1 $2: the ESP's bytes are not the ones the policy pins" ;;
	*) nope "$1: $f" ;;
	esac
}
check() {
	local lr pol k p h v pv want have kr ip e first
	if ! esp_manifest; then nope "$esp_why"; exit 1; fi
	if [ -z "$m_loader" ]; then nope "kaslr-loader is not installed on $ESP (no $manifest): run $me install"; exit 1; fi
	lr=$(loader_rel)
	[ "$lr" = "$m_loader" ] || nope "INSTALL_PATH in $conf puts the loader at $lr, the ESP has it at $m_loader"
	lr=$m_loader ip=$m_installpath
	if ! pol=$(esp_show "$tool" "$lr" 2>/dev/null); then nope "$ESP/$lr: ${esp_why:-not kaslr-loader with a policy}"; exit 1; fi
	# the loader: signed with install.conf's key, its pins on the ESP
	if [ -n "$SIGN_CERT" ] && ! sbverify --cert "$SIGN_CERT" "$ESP/$lr" >/dev/null 2>&1; then
		nope "$ESP/$lr is not signed with $SIGN_CERT"
	fi
	while read -r k p h; do check_file "$k" "$p" "$h"; done < <(esp_pins "$tool" "$lr")
	# the policy's settings against install.conf's
	want="pins"
	[ "$TRUST" = shim ] && want="pins or shim"
	# (kaslr-policy show explains "pins or shim" in parentheses)
	have=$(printf '%s\n' "$pol" | sed -n 's/^trust *//p' | sed 's/ (.*//')
	[ "$have" = "$want" ] || nope "the policy trusts $have, install.conf says TRUST=${TRUST:-pins}"
	have=$(printf '%s\n' "$pol" | sed -n 's/^cmdline  //p')
	[ "$have" = "$CMDLINE" ] || nope "the policy's command line is '$have', install.conf's CMDLINE '$CMDLINE'"
	have=$(printf '%s\n' "$pol" | sed -n 's/^allow *//p' | tr ' ' '\n' | sed '/^$/d' | sort | tr '\n' ' ')
	want=$(printf '%s\n' "$ALLOW" | tr ' ' '\n' | sed '/^$/d' | sort | tr '\n' ' ')
	[ "$have" = "$want" ] || nope "the policy allows '${have% }', install.conf's ALLOW is '${want% }'"
	# the kernel: the newest in /boot, as it is there (or its UKI)
	shim_dr=$(dirname "$lr")
	shim_dr=${shim_dr#.}
	shim_dr=${shim_dr#/}
	v=$(newest_kernel)
	if [ -z "$v" ]; then
		nope "no kernel in $boot${TRUST:+ that shim would start}"
	elif [ "$TRUST" = shim ]; then
		kr=$(dirname "$lr")/
		kr=${kr#./}
		esp_file "${kr}kaslr.conf" "$ESP_TEXT_MAX" &&
			first=$(sed -n 's/^[[:space:]]*kernel[[:space:]]\{1,\}\([^#[:space:]]*\).*/\1/p' "$ESP/${kr}kaslr.conf" | head -n 1)
		shim_kernel "$v"
		if [ "${first:-}" != "$c_name" ]; then
			nope "kaslr.conf names ${first:-no kernel} first, the newest kernel shim would start is $c_name: run $me add $v"
		elif [ "$c_put" = 1 ] && ! esp_same "$c_file" "${kr}$c_name"; then
			nope "$ESP/${kr}$c_name is not $c_file"
		fi
	else
		pv=$(pinned_version)
		if [ "$pv" != "$v" ]; then
			nope "the loader pins kernel ${pv:-$(pinned_kernel)}, the newest in $boot is $v: run $me add $v"
		else
			kernel_of "$v"
			# a UKI kernel-install handed over from elsewhere: only its
			# copy on the ESP is left to compare (its pin, above)
			case $(pinned_kernel) in uki-*) [ "$k_uki" = 1 ] || k_file='' ;; esac
			if [ -n "$k_file" ] && { [ "$REPACK" != 1 ] || [ "$k_uki" = 1 ]; }; then
				h=$(esp_pins "$tool" "$lr" | sed -n 's/^kernel [^ ]* //p')
				[ "$h" = "$(sha256sum <"$k_file" | cut -d' ' -f1)" ] || nope "the pinned kernel is not $k_file"
			fi
			h=$(esp_pins "$tool" "$lr" | sed -n 's/^initrd [^ ]* //p' | head -n 1)
			if [ "$k_uki" = 0 ] && [ -f "$boot/initrd.img-$v" ] && [ "$h" != "$(sha256sum <"$boot/initrd.img-$v" | cut -d' ' -f1)" ]; then
				nope "the pinned initrd is not $boot/initrd.img-$v: run $me refresh $v"
			fi
		fi
	fi
	# what starts it: systemd-boot's entry, the Boot#### entry an install
	# made, or the fallback path
	e=loader/entries/kaslr-loader.conf
	if esp_file "$e" "$ESP_TEXT_MAX"; then
		grep -qx "efi  *//*$ip" "$ESP/$e" || nope "$ESP/$e does not start /$ip"
	elif record_read "$state"; then
		boot_is "$rec_num" "$rec_path" || nope "Boot$rec_num, which the install made, no longer starts $rec_path (efibootmgr -v)"
	else
		case $ip in
		[Ee][Ff][Ii]/[Bb][Oo][Oo][Tt]/[Bb][Oo][Oo][Tt][Xx]64.[Ee][Ff][Ii]) ;;
		*) nope "nothing starts /$ip: no systemd-boot entry, no Boot#### entry made by an install (run $me install on the running system)" ;;
		esac
	fi
	[ "$disagree" = 0 ] || exit 1
	echo "$me: check: the ESP ($ESP/$ip), what starts it, the policy and kernel $v agree"
	exit 0
}

if [ "$TRUST" = shim ]; then
	case $cmd in

	add | refresh)
		# add's unified kernel image (kernel-install's layout=uki)
		[ "$cmd" = add ] && [ -n "${1:-}" ] && is_uki "$1" && shim_add_uki=$1
		shim_sync
		[ $? = 2 ] || exit 0 ;;
	remove) shim_sync "$ver"; [ $? = 2 ] || exit 0 ;;
	esac
fi

case $cmd in
add)
	pv=$(pinned_version)
	if [ -n "$pv" ] && [ "$pv" != "$ver" ] && { [ -f "$boot/vmlinuz-$pv" ] || uki_on_esp "$pv" >/dev/null; } &&
	   [ "$(printf '%s\n' "$ver" "$pv" | sort -V | tail -n 1)" = "$pv" ]; then
		echo "$me: $ver is older than $pv, the kernel on $ESP: left as it is (kaslr-loader-install puts any kernel there)"
		exit 0
	fi
	kernel_of "$ver" "${1:-}"
	[ $# -gt 0 ] && shift
	initrds=("$@")
	if [ "$k_uki" = 1 ]; then
		[ $# = 0 ] || echo "$me: $k_file is a unified kernel image: the initrds given are left out (its .initrd is inside)"
		initrds=()
	elif [ ${#initrds[@]} -eq 0 ] && [ -f "$boot/initrd.img-$ver" ]; then
		initrds=("$boot/initrd.img-$ver")
	fi
	install_version "$ver" "$k_file" "${initrds[@]}" || exit 1
	;;
refresh)
	if [ "$(pinned_version)" != "$ver" ]; then
		echo "$me: $ver is not the kernel on $ESP: nothing to do"
		exit 0
	fi
	# a UKI carries its initrd: the one on the ESP, rebuilt or not
	case $(pinned_kernel) in
	uki-*)
		if rel=$(uki_on_esp "$ver"); then install_version "$ver" "$ESP/$rel" || exit 1
		else echo "$me: the kernel on $ESP is a unified kernel image: its initrd is inside it; rebuild the image, then run: $me add $ver IMAGE"; fi
		exit 0 ;;
	esac
	initrd=${1:-$boot/initrd.img-$ver}
	set --
	[ -f "$initrd" ] && set -- "$initrd"
	install_version "$ver" "$boot/vmlinuz-$ver" "$@" || exit 1
	;;
remove)
	pinned=$(pinned_kernel)
	if [ "$(name_version "$pinned")" != "$ver" ]; then
		echo "$me: $ver is not the kernel on $ESP: nothing to do"
		exit 0
	fi
	next=$(find "$boot" -maxdepth 1 -name 'vmlinuz-*' ! -name "vmlinuz-$ver" -printf '%f\n' |
		sed 's/^vmlinuz-//' | sort -V | tail -n 1)
	if [ -z "$next" ]; then
		echo "$me: warning: no kernel left in $boot: the ESP keeps $pinned, which the loader pins (kaslr-loader-update uninstall takes kaslr-loader off the ESP)" >&2
		exit 0
	fi
	kernel_of "$next"
	set --
	[ "$k_uki" = 0 ] && [ -f "$boot/initrd.img-$next" ] && set -- "$boot/initrd.img-$next"
	install_version "$next" "$k_file" "$@" || exit 1
	;;
uninstall)
	esp_file "$manifest" "$ESP_TEXT_MAX"
	if [ $? = 2 ]; then
		echo "$me: nothing of kaslr-loader recorded on $ESP: left alone"
		exit 0
	fi
	shim_unput
	run_installer "uninstalling from $ESP" --uninstall --esp "$ESP" --state "$state" || exit 1
	rm -f "$state/stamp"
	;;
install)
	release=${KASLR_LOADER_RELEASE:-$(uname -r)}
	kernel_of "$release"
	[ -f "$k_file" ] || die "$k_file: no such file (the running kernel's; installed from elsewhere? use $me add VERSION): nothing installed"
	set --
	[ "$k_uki" = 0 ] && [ -f "$boot/initrd.img-$release" ] && set -- "$boot/initrd.img-$release"
	install_version "$release" "$k_file" "$@" || exit 1
	# TRUST=shim: kaslr.conf names the kernels shim would start
	if [ "$TRUST" = shim ]; then shim_sync || exit 1; fi
	echo "$me: installed kernel $release on $ESP; $me check says whether all agree"
	;;
check) check ;;
*) die "unknown command $cmd (add, refresh, remove, uninstall, install or check)" ;;
esac
exit 0

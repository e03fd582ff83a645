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
#       as the package's removal does.
#
# When the loader's own step fails (no sbsign, no key, the ESP full, a file
# that will not copy) nothing on the ESP changes, the kernel it booted
# keeps booting, and ONE line on stderr says what was skipped and how to
# fix it; the status is then 1, which the hooks never pass on.
#
# With TRUST=shim (and SHIM=, shim at INSTALL_PATH and the loader beside it
# as grubx64.efi) the loader on the ESP already trusts what shim verifies:
# add, refresh and remove then sign nothing and rewrite no policy.  They
# copy the newest kernel in /boot and its initrd beside the loader (as
# they are: Debian signs vmlinuz for shim) and name them in kaslr.conf,
# the kernel before it kept beside them as a documented fallback there;
# other kernels the hook copied go.  A kernel without a PE signature is
# not made the one kaslr.conf names (shim would refuse it): one line says
# so and the ESP keeps what boots.  (shim_sync below.)
#
# Configuration: /etc/kaslr-loader/install.conf (shell variables ESP,
# INSTALL_PATH, CMDLINE, ALLOW, SIGN_KEY, SIGN_CERT, REPACK=1 to repack
# bzImages as gzip'd ELF, SHIM, TRUST).  Without ESP= it does
# nothing: the package is installed but not set up.  The environment may
# point elsewhere (the tests do): KASLR_LOADER_CONF, KASLR_LOADER_LIB
# (loader image, kaslr-policy, kaslr-repack), KASLR_LOADER_INSTALL,
# KASLR_LOADER_BOOT (/boot), KASLR_LOADER_STATE (/var/lib/kaslr-loader,
# where the last run's fingerprint is kept); DPKG_ROOT prefixes the defaults.
set -u
me=kaslr-loader-update
root=${DPKG_ROOT:-}
conf=${KASLR_LOADER_CONF:-$root/etc/kaslr-loader/install.conf}
lib=${KASLR_LOADER_LIB:-$root/usr/lib/kaslr-loader}
installer=${KASLR_LOADER_INSTALL:-$root/usr/sbin/kaslr-loader-install}
boot=${KASLR_LOADER_BOOT:-$root/boot}
state=${KASLR_LOADER_STATE:-$root/var/lib/kaslr-loader}
manifest=EFI/kaslr-loader.manifest # kaslr-loader-install's, on the ESP
die() { echo "$me: $*" >&2; exit 1; }
[ $# -ge 1 ] || die "usage: $me add VERSION [IMAGE [INITRD...]] | refresh VERSION [INITRD] | remove VERSION | uninstall"
cmd=$1
shift
case $cmd in add | refresh | remove) [ $# -ge 1 ] || die "$cmd needs a VERSION" ;; esac
ver=${1:-}
[ $# -gt 0 ] && shift

ESP='' INSTALL_PATH=EFI/kaslr/kaslr-loader.efi CMDLINE='' ALLOW='' SIGN_KEY='' SIGN_CERT='' REPACK=''
SHIM='' TRUST=''
if [ -f "$conf" ]; then
	# shellcheck source=/dev/null
	. "$conf" || die "cannot read $conf"
fi
if [ -z "$ESP" ]; then
	echo "$me: ESP= is not set in $conf: the ESP is left alone"
	exit 0
fi
tool=$lib/kaslr-policy
work=$(mktemp -d) || die "mktemp"
trap 'rm -rf "$work"; [ -z "${SEAL:-}" ] || "$lib/kaslr-reseal" update' EXIT # SEAL=: the next boot's PCRs (kaslr-reseal)

# the loader's path on the ESP: beside shim as grubx64.efi with SHIM=
loader_rel() {
	if [ -n "$SHIM" ]; then
		printf '%s/grubx64.efi' "$(dirname "$INSTALL_PATH")" | sed 's|^\./||'
	else
		printf '%s' "$INSTALL_PATH"
	fi
}
# the name of the kernel file the loader on the ESP pins, or nothing
pinned_kernel() {
	"$tool" show "$ESP/$(loader_rel)" 2>/dev/null | sed -n 's/^kernel *[^ ]*\\\([^\\ ]*\) sha256=.*/\1/p'
}
# the version of the kernel the loader pins, or nothing
pinned_version() {
	local k
	k=$(pinned_kernel)
	case $k in vmlinuz-*) echo "${k#vmlinuz-}" ;; vmlinux-*.gz) k=${k#vmlinux-}; echo "${k%.gz}" ;; esac
}
# what the ESP holds now: the manifest and every file it lists
esp_state() {
	local m=$ESP/$manifest k a _
	[ -f "$m" ] || return 0
	sha256sum <"$m"
	while read -r k a _; do
		case $k in file | backup) { sha256sum <"$ESP/$a"; } 2>/dev/null || echo "$a missing" ;; esac
	done <"$m"
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
	[ -n "$CMDLINE" ] && args+=(--cmdline "$CMDLINE")
	for a in $ALLOW; do args+=(--allow "$a"); done
	[ -n "$SIGN_KEY" ] && args+=(--sign-key "$SIGN_KEY" --sign-cert "$SIGN_CERT")
	[ "$REPACK" = 1 ] && args+=(--repack "$lib/kaslr-repack")
	[ -n "$SHIM" ] && args+=(--shim "$SHIM")
	[ -n "$TRUST" ] && args+=(--trust "$TRUST")
	run_installer "installing kernel $v" --esp "$ESP" --install-path "$INSTALL_PATH" \
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
# the kernel versions in /boot, newest first, leaving out $1
shim_versions() {
	find "$boot" -maxdepth 1 -name 'vmlinuz-*' ! -name "vmlinuz-${1:-}" -printf '%f\n' 2>/dev/null |
		sed 's/^vmlinuz-//' | sort -rV
}
# put SRC at DIR/NAME unless it holds those bytes (atomically: a rename)
shim_put() {
	[ -f "$2/$3" ] && cmp -s "$1" "$2/$3" && return 0
	{ cp "$1" "$2/$3.kaslr-new" && mv -f "$2/$3.kaslr-new" "$2/$3"; } ||
		{ rm -f "$2/$3.kaslr-new"; return 1; }
	echo "$me: copied  $1 -> $2/$3"
}
# shim_sync [GONE]: the newest signed kernel in /boot but GONE, and the one
# before it, beside the loader; kaslr.conf names the newest
shim_sync() {
	local gone=${1:-} d new='' prev='' v kc f keep
	d=$ESP/$(dirname "$(loader_rel)")
	[ -f "$ESP/$(loader_rel)" ] || return 2 # not installed yet: a signed install first
	for v in $(shim_versions "$gone"); do
		if ! shim_signed_pe "$boot/vmlinuz-$v"; then
			echo "$me: $boot/vmlinuz-$v carries no signature shim could verify: left out (TRUST=shim boots kernels the distribution signed)" >&2
			continue
		fi
		if [ -z "$new" ]; then new=$v; elif [ -z "$prev" ]; then prev=$v; break; fi
	done
	if [ -z "$new" ]; then
		echo "$me: warning: no signed kernel left in $boot: kaslr.conf on $ESP left as it is" >&2
		return 0
	fi
	for v in $new $prev; do
		shim_put "$boot/vmlinuz-$v" "$d" "vmlinuz-$v" || return 1
		if [ -f "$boot/initrd.img-$v" ]; then shim_put "$boot/initrd.img-$v" "$d" "initrd.img-$v" || return 1; fi
	done
	kc=$d/kaslr.conf
	{
		[ -f "$kc" ] && sed -e '/^# kaslr-loader-update: begin/,/^# kaslr-loader-update: end/d' \
			-e '/^[[:space:]]*\(kernel\|initrd\)[[:space:]]/d' "$kc"
		echo "# kaslr-loader-update: begin (TRUST=shim: rewritten on every kernel update)"
		echo "# The newest kernel; shim verifies its signature, the initrd is measured (PCR 9)."
		echo "kernel vmlinuz-$new"
		[ -f "$d/initrd.img-$new" ] && echo "initrd initrd.img-$new"
		if [ -n "$prev" ]; then
			echo "# Fallback: the kernel before it, whose files stay beside the loader."
			echo "# To boot it, put these lines in place of the ones above:"
			echo "# kernel vmlinuz-$prev"
			[ -f "$d/initrd.img-$prev" ] && echo "# initrd initrd.img-$prev"
		fi
		echo "# kaslr-loader-update: end"
	} >"$kc.kaslr-new" && mv -f "$kc.kaslr-new" "$kc" || return 1
	echo "$me: config  $kc: kernel vmlinuz-$new${prev:+ (fallback vmlinuz-$prev)}"
	# the other kernels the hook copied (the policy's own pins stay)
	for f in "$d"/vmlinuz-* "$d"/initrd.img-*; do
		[ -f "$f" ] || continue
		keep=0
		case ${f##*/} in vmlinuz-"$new" | vmlinuz-"$prev" | initrd.img-"$new" | initrd.img-"$prev") keep=1 ;; esac
		[ -n "$prev" ] || case ${f##*/} in vmlinuz-"$new" | initrd.img-"$new") keep=1 ;; esac
		"$tool" show "$ESP/$(loader_rel)" 2>/dev/null | grep -qF "\\${f##*/} sha256=" && keep=1
		[ "$keep" = 1 ] || { rm -f "$f" && echo "$me: removed $f"; }
	done
	return 0
}
# one line and status 1 when the copy failed; nothing else changes
shim_run() {
	local st=0
	shim_sync "$@" || st=$?
	case $st in
	0) exit 0 ;;
	2) return 0 ;; # no loader on the ESP yet: the signed install below
	esac
	echo "$me: copying kernel ${ver:-} to $ESP failed (ESP full or read-only?): kaslr.conf left as it was, the loader boots what it booted before; fix that, then run: $me $cmd${ver:+ $ver}" >&2
	exit 1
}
if [ "$TRUST" = shim ]; then
	case $cmd in
	add | refresh) shim_run ;;
	remove) shim_run "$ver" ;;
	esac
fi

case $cmd in
add)
	pv=$(pinned_version)
	if [ -n "$pv" ] && [ "$pv" != "$ver" ] && [ -f "$boot/vmlinuz-$pv" ] &&
	   [ "$(printf '%s\n' "$ver" "$pv" | sort -V | tail -n 1)" = "$pv" ]; then
		echo "$me: $ver is older than $pv, the kernel on $ESP: left as it is (kaslr-loader-install puts any kernel there)"
		exit 0
	fi
	image=${1:-$boot/vmlinuz-$ver}
	[ $# -gt 0 ] && shift
	initrds=("$@")
	[ ${#initrds[@]} -eq 0 ] && [ -f "$boot/initrd.img-$ver" ] && initrds=("$boot/initrd.img-$ver")
	install_version "$ver" "$image" "${initrds[@]}" || exit 1
	;;
refresh)
	case $(pinned_kernel) in
	"vmlinuz-$ver" | "vmlinux-$ver.gz") ;;
	*) echo "$me: $ver is not the kernel on $ESP: nothing to do"; exit 0 ;;
	esac
	initrd=${1:-$boot/initrd.img-$ver}
	set --
	[ -f "$initrd" ] && set -- "$initrd"
	install_version "$ver" "$boot/vmlinuz-$ver" "$@" || exit 1
	;;
remove)
	pinned=$(pinned_kernel)
	case $pinned in
	"vmlinuz-$ver" | "vmlinux-$ver.gz") ;;
	*) echo "$me: $ver is not the kernel on $ESP: nothing to do"; exit 0 ;;
	esac
	next=$(find "$boot" -maxdepth 1 -name 'vmlinuz-*' ! -name "vmlinuz-$ver" -printf '%f\n' |
		sed 's/^vmlinuz-//' | sort -V | tail -n 1)
	if [ -z "$next" ]; then
		echo "$me: warning: no kernel left in $boot: the ESP keeps $pinned, which the loader pins (kaslr-loader-update uninstall takes kaslr-loader off the ESP)" >&2
		exit 0
	fi
	set --
	[ -f "$boot/initrd.img-$next" ] && set -- "$boot/initrd.img-$next"
	install_version "$next" "$boot/vmlinuz-$next" "$@" || exit 1
	;;
uninstall)
	if [ ! -f "$ESP/$manifest" ]; then
		echo "$me: nothing of kaslr-loader recorded on $ESP: left alone"
		exit 0
	fi
	run_installer "uninstalling from $ESP" --uninstall --esp "$ESP" || exit 1
	rm -f "$state/stamp"
	;;
*) die "unknown command $cmd (add, refresh, remove or uninstall)" ;;
esac
exit 0

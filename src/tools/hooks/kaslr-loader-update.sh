#!/bin/bash
# kaslr-loader-update - keeps the ESP in step with the installed kernels;
# run by the kernel hooks beside it (installed as /usr/sbin/kaslr-loader-update).
#
#   kaslr-loader-update add VERSION [IMAGE [INITRD...]]
#       IMAGE (default /boot/vmlinuz-VERSION, copied as it is) and its
#       initrds (default /boot/initrd.img-VERSION when it exists) go to the
#       ESP through kaslr-loader-install: the policy pins them, the loader is
#       re-signed when a key is configured, the systemd-boot entry written;
#       the files of other versions are removed from the install directory.
#   kaslr-loader-update remove VERSION
#       removes VERSION's files from the ESP; when it was the kernel the
#       policy pins, installs the newest kernel left in /boot.
#
# Configuration: /etc/kaslr-loader/install.conf (shell variables ESP,
# INSTALL_PATH, CMDLINE, ALLOW, SIGN_KEY, SIGN_CERT, REPACK=1 to repack
# bzImages as gzip'd ELF).  Without ESP= it does
# nothing: the package is installed but not set up.  The environment may
# point elsewhere (the tests do): KASLR_LOADER_CONF, KASLR_LOADER_LIB
# (loader image, kaslr-policy, kaslr-repack), KASLR_LOADER_INSTALL,
# KASLR_LOADER_BOOT (/boot).
set -u
me=kaslr-loader-update
conf=${KASLR_LOADER_CONF:-/etc/kaslr-loader/install.conf}
lib=${KASLR_LOADER_LIB:-/usr/lib/kaslr-loader}
installer=${KASLR_LOADER_INSTALL:-/usr/sbin/kaslr-loader-install}
boot=${KASLR_LOADER_BOOT:-/boot}
die() { echo "$me: $*" >&2; exit 1; }
[ $# -ge 2 ] || die "usage: $me add VERSION [IMAGE [INITRD...]] | remove VERSION"
cmd=$1 ver=$2
shift 2

ESP='' INSTALL_PATH=EFI/kaslr/kaslr-loader.efi CMDLINE='' ALLOW='' SIGN_KEY='' SIGN_CERT='' REPACK=''
if [ -f "$conf" ]; then
	# shellcheck source=/dev/null
	. "$conf" || die "cannot read $conf"
fi
if [ -z "$ESP" ]; then
	echo "$me: ESP= is not set in $conf: the ESP is left alone"
	exit 0
fi
dir=$ESP/$(dirname "$INSTALL_PATH")
tool=$lib/kaslr-policy

# the name kaslr-loader-install gives a version's kernel on the ESP
esp_kernel() { if [ "$REPACK" = 1 ]; then echo "vmlinux-$1.gz"; else echo "vmlinuz-$1"; fi; }

install_version() { # VERSION IMAGE [INITRD...]
	local v=$1 image=$2 args=() a f
	shift 2
	[ -f "$image" ] || die "kernel $image: no such file"
	for f in "$@"; do args+=(--initrd "$f"); done
	[ -n "$CMDLINE" ] && args+=(--cmdline "$CMDLINE")
	for a in $ALLOW; do args+=(--allow "$a"); done
	[ -n "$SIGN_KEY" ] && args+=(--sign-key "$SIGN_KEY" --sign-cert "$SIGN_CERT")
	[ "$REPACK" = 1 ] && args+=(--repack "$lib/kaslr-repack")
	"$installer" --esp "$ESP" --install-path "$INSTALL_PATH" --loader "$lib/kaslr-loader.efi" \
		--tool "$tool" --kernel "$image" "${args[@]}" ||
		die "installing $v failed"
	# other versions' files go: the policy pins only this one
	for f in "$dir"/vmlinuz-* "$dir"/vmlinux-*.gz "$dir"/initrd.img-*; do
		[ -e "$f" ] || continue
		case ${f##*/} in "$(esp_kernel "$v")" | "initrd.img-$v") continue ;; esac
		rm -f "$f" && echo "$me: removed $f"
	done
}

case $cmd in
add)
	image=${1:-$boot/vmlinuz-$ver}
	[ $# -gt 0 ] && shift
	initrds=("$@")
	[ ${#initrds[@]} -eq 0 ] && [ -f "$boot/initrd.img-$ver" ] && initrds=("$boot/initrd.img-$ver")
	install_version "$ver" "$image" "${initrds[@]}"
	;;
remove)
	pinned=$("$tool" show "$ESP/$INSTALL_PATH" 2>/dev/null | sed -n 's/^kernel *[^ ]*\\\([^\\ ]*\) sha256=.*/\1/p')
	rm -f "$dir/vmlinuz-$ver" "$dir/vmlinux-$ver.gz" "$dir/initrd.img-$ver"
	echo "$me: removed $ver from $dir"
	if [ "$pinned" = "vmlinuz-$ver" ] || [ "$pinned" = "vmlinux-$ver.gz" ]; then
		next=$(find "$boot" -maxdepth 1 -name 'vmlinuz-*' ! -name "vmlinuz-$ver" -printf '%f\n' |
			sed 's/^vmlinuz-//' | sort -V | tail -n 1)
		if [ -z "$next" ]; then
			echo "$me: warning: no kernel left in $boot; the loader on the ESP pins a removed kernel" >&2
			exit 0
		fi
		set --
		[ -f "$boot/initrd.img-$next" ] && set -- "$boot/initrd.img-$next"
		install_version "$next" "$boot/vmlinuz-$next" "$@"
	fi
	;;
*) die "unknown command $cmd (add or remove)" ;;
esac

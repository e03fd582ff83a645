# test/install/signed.sh - sourced by deb.sh and hooks.sh: Debian's kernel
# as Debian signs it for shim, in two versions: the one test/linux/fetch.sh
# signed downloads and the version before it (apt-get download, its
# vmlinuz extracted with dpkg-deb once, both cached under
# build/linux/signed-prev/, never committed).
# shellcheck shell=bash

# signed_kernels DIR: DIR/vmlinuz-NEW and DIR/vmlinuz-OLD; sets sk_new,
# sk_old; on failure returns 1 with sk_why
# shellcheck disable=SC2034 # sk_why: read by the scripts that source this
signed_kernels() {
	local d=$1 newdeb olddeb c=${B:-build}/linux/signed-prev p
	sk_new='' sk_old='' sk_why=''
	newdeb=$(test/linux/fetch.sh signed >/dev/null 2>&1; find "${B:-build}/linux/signed" -maxdepth 1 -name 'linux-image-6.1.0-*-amd64_*.deb' | head -n 1)
	[ -f "$newdeb" ] || { sk_why="no signed kernel package (test/linux/fetch.sh signed)"; return 1; }
	sk_new=$(dpkg-deb -f "$newdeb" Package)
	sk_new=${sk_new#linux-image-}
	sk_old=$(apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-amd64$' | cut -d' ' -f1 |
		sed 's/^linux-image-//' | sort -V | grep -B1 -x "$sk_new" | head -n 1)
	if [ -z "$sk_old" ] || [ "$sk_old" = "$sk_new" ]; then sk_why="no version before $sk_new in apt-cache"; return 1; fi
	mkdir -p "$c" "$d"
	olddeb=$(find "$c" -maxdepth 1 -name "linux-image-${sk_old}_*.deb" | head -n 1)
	if [ ! -f "$olddeb" ]; then
		(cd "$c" && apt-get download "linux-image-$sk_old" >/dev/null 2>&1)
		olddeb=$(find "$c" -maxdepth 1 -name "linux-image-${sk_old}_*.deb" | head -n 1)
	fi
	[ -f "$olddeb" ] || { sk_why="apt-get download linux-image-$sk_old failed"; return 1; }
	for p in "$sk_new:$newdeb" "$sk_old:$olddeb"; do
		if [ ! -s "$c/vmlinuz-${p%%:*}" ]; then
			{ dpkg-deb --fsys-tarfile "${p#*:}" | tar -x -O "./boot/vmlinuz-${p%%:*}" >"$c/vmlinuz-${p%%:*}.tmp" &&
				mv "$c/vmlinuz-${p%%:*}.tmp" "$c/vmlinuz-${p%%:*}"; } || { sk_why="cannot unpack ${p#*:}"; return 1; }
		fi
		cp "$c/vmlinuz-${p%%:*}" "$d/" || { sk_why="cannot copy vmlinuz-${p%%:*}"; return 1; }
	done
}

# shim_block NEW [PREV]: the block kaslr-loader-update writes into
# kaslr.conf under TRUST=shim (each kernel with an initrd here; a NEW or
# PREV of the form "kernel PATH" is a unified kernel image's line, alone)
shim_block() {
	local v
	echo '# kaslr-loader-update: begin (TRUST=shim: rewritten on every kernel update)'
	echo '# The newest kernels shim would start, each followed by its initrd (a'
	echo '# unified kernel image carries its own): the loader boots the first one'
	echo '# shim accepts, else the next.'
	for v in "$@"; do
		case $v in
		'kernel '*) printf '%s\n' "$v" ;;
		*) printf 'kernel vmlinuz-%s\ninitrd initrd.img-%s\n' "$v" "$v" ;;
		esac
	done
	echo '# kaslr-loader-update: end'
}

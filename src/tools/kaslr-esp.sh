# kaslr-esp.sh - sourced by kaslr-install.sh and kaslr-loader-update.sh
# (installed as /usr/lib/kaslr-loader/kaslr-esp.sh): the one check every
# path read from the EFI system partition or from its manifest passes, the
# manifest's reader, the flush that orders the writes of an install, the
# check of the signing key's mode, and the record of the Boot#### entry an
# install made.
#
# The ESP is not trusted: another system on the machine, or anyone with
# the disk, can write it.  A path read there must be relative to the ESP
# without '..', resolve inside it (no symbolic link out of it), be a
# regular file (not a device or fifo, which never end or never open) and
# be at most ESP_MAX bytes (ESP_TEXT_MAX for the manifest, kaslr.conf and
# an entry), so that reading the ESP always ends.
# shellcheck shell=bash

# a kernel, an initrd, a loader or shim are far below 1 GiB
ESP_MAX=$((1 << 30))
ESP_TEXT_MAX=$((1 << 20))
ESP_MANIFEST=EFI/kaslr-loader.manifest

# esp_use DIR: the ESP the functions below check against (esp, esp_real)
esp_use() {
	esp=$1
	esp_real=$(realpath -e -- "$1" 2>/dev/null) && [ -d "$esp_real" ]
}

# esp_rel_ok REL: a path relative to the ESP, no '..', plain characters
esp_rel_ok() {
	case $1 in '' | /* | *..* | *//* | */ | *[!A-Za-z0-9._+~@/-]*) return 1 ;; esac
	return 0
}

# esp_inside REL: REL resolves inside the ESP (links followed).  With no
# symbolic link among its components (and no '.' one) it does by
# construction, esp_rel_ok having refused '..'; only then is realpath
# asked, which an update would otherwise start hundreds of times
esp_inside() {
	local r p=$esp rest=$1 part
	esp_rel_ok "$1" || return 1
	case /$1/ in */./*) rest='' p='' ;; esac
	while [ -n "$rest" ]; do
		part=${rest%%/*}
		p=$p/$part
		[ -L "$p" ] && { p=; break; }
		[ "$part" = "$rest" ] && break
		rest=${rest#*/}
	done
	[ -n "$p" ] && return 0
	r=$(realpath -m -- "$esp/$1" 2>/dev/null) || return 1
	case $r in "$esp_real"/*) return 0 ;; esac
	return 1
}

# esp_file REL [MAX]: 0 when REL may be read (a regular file inside the
# ESP of at most MAX bytes, default ESP_MAX); 2 when nothing is there;
# 1 otherwise.  esp_why says why not.
esp_file() {
	local rel=$1 max=${2:-$ESP_MAX} p n
	esp_why=''
	if ! esp_rel_ok "$rel"; then esp_why="$rel: not a plain path relative to the ESP"; return 1; fi
	if ! esp_inside "$rel"; then esp_why="$rel: leads out of the ESP"; return 1; fi
	p=$esp/$rel
	if [ ! -e "$p" ] && [ ! -L "$p" ]; then esp_why="$rel: missing"; return 2; fi
	if [ ! -f "$p" ]; then esp_why="$rel: not a regular file"; return 1; fi
	if ! n=$(stat -L -c %s -- "$p" 2>/dev/null); then esp_why="$rel: cannot stat it"; return 1; fi
	if [ "$n" -gt "$max" ]; then esp_why="$rel: $n bytes, more than any file of kaslr-loader's ($max)"; return 1; fi
	return 0
}

# esp_dir REL: REL is a directory inside the ESP, or nothing is there yet
esp_dir() {
	esp_inside "$1" || return 1
	[ -d "$esp/$1" ] || { [ ! -e "$esp/$1" ] && [ ! -L "$esp/$1" ]; }
}

# esp_same FILE REL: REL holds FILE's bytes (and may be read)
esp_same() {
	esp_file "$2" && cmp -s -- "$1" "$esp/$2"
}

# esp_sha REL: "SHA256 REL", or what stands in the way
esp_sha() {
	local h
	if esp_file "$1" && h=$(sha256sum <"$esp/$1" 2>/dev/null); then echo "${h%% *} $1"
	else echo "${esp_why:-$1: unreadable}"; fi
}

# esp_show TOOL REL: kaslr-policy's show of the loader at REL
esp_show() {
	esp_file "$2" && "$1" show "$esp/$2"
}

# esp_pins TOOL REL: "KIND REL SHA256" for each file the loader at REL pins
# (the policy's '\EFI\...' paths as manifest paths)
esp_pins() {
	esp_show "$@" 2>/dev/null |
		sed -n 's/^\(kernel\|initrd\) *\\\([^ ]*\) sha256=\([0-9a-f]*\)$/\1 \2 \3/p' | tr '\134' /
}

# pe_section FILE HEX: FILE is a PE image with a section whose 8-byte name
# is HEX (hexadecimal, NUL-padded); pe_sec_off and pe_sec_len then say
# where its bytes are in the file (VirtualSize of them, no more than the
# file holds).  Read with od, every offset checked against the file's
# size, at most 96 sections: the file may be anyone's (a UKI on the ESP).
pe_sec_off=0 pe_sec_len=0
# le32 HEX: le32 set to the number HEX's 8 digits spell, least significant
# byte first
le32() { le32=$((16#${1:6:2}${1:4:2}${1:2:2}${1:0:2})); }
pe_section() {
	local f=$1 want=$2 len pe n opt tab i vs rs ro hex
	len=$(stat -L -c %s -- "$f" 2>/dev/null) || return 1
	[ "$len" -ge 64 ] && [ "$(head -c 2 -- "$f" 2>/dev/null)" = MZ ] || return 1
	pe=$(od -An -t u4 -j 60 -N 4 -- "$f" 2>/dev/null | tr -d ' ')
	[ -n "$pe" ] && [ "$pe" -le "$len" ] && [ $((len - pe)) -ge 24 ] || return 1
	[ "$(od -An -t x1 -j "$pe" -N 4 -- "$f" | tr -d ' \n')" = 50450000 ] || return 1
	read -r n < <(od -An -t u2 -j $((pe + 6)) -N 2 -- "$f")
	read -r opt < <(od -An -t u2 -j $((pe + 20)) -N 2 -- "$f")
	tab=$((pe + 24 + opt))
	[ "$n" -le 96 ] && [ "$tab" -le "$len" ] && [ $((len - tab)) -ge $((n * 40)) ] || return 1
	# the table in one read, as hex digits; per section of 40 bytes (80
	# digits): the name (16 digits), then VirtualSize at byte 8,
	# SizeOfRawData at 16, PointerToRawData at 20 (little-endian)
	hex=$(od -An -v -t x1 -j "$tab" -N $((n * 40)) -- "$f" 2>/dev/null | tr -d ' \n')
	[ "${#hex}" = $((n * 80)) ] || return 1
	for ((i = 0; i < n; i++)); do
		[ "${hex:80 * i:16}" = "$want" ] || continue
		le32 "${hex:80 * i + 16:8}"; vs=$le32
		le32 "${hex:80 * i + 32:8}"; rs=$le32
		le32 "${hex:80 * i + 40:8}"; ro=$le32
		[ "$vs" -le "$rs" ] || vs=$rs
		[ "$ro" -le "$len" ] && [ "$vs" -le $((len - ro)) ] || return 1
		pe_sec_off=$ro pe_sec_len=$vs
		return 0
	done
	return 1
}
# uki_cmdline FILE: the text of a UKI's .cmdline (NULs left out), or nothing
uki_cmdline() {
	uki_has_cmdline "$1" || return 1
	tail -c +$((pe_sec_off + 1)) -- "$1" | head -c "$pe_sec_len" | tr -d '\000'
}
# is_uki FILE: a unified kernel image, a PE image with a .linux section
# (what the loader takes for one); uki_has_cmdline FILE: one with a .cmdline
is_uki() { pe_section "$1" 2e6c696e75780000; }
uki_has_cmdline() { pe_section "$1" 2e636d646c696e65; }

# esp_flush: what was written to the ESP reaches the disk before what
# follows (FAT writes back in any order; sync -f: the ESP's file system)
esp_flush() {
	sync -f -- "$esp" 2>/dev/null
}

# esp_manifest: reads the ESP's manifest into m_kind[], m_a[], m_b[] and
# m_loader, m_installpath.  Lines: "loader PATH" (where the loader is),
# "installpath PATH" (what firmware starts: shim with --shim, else the
# loader), "file PATH" (written where nothing was), "backup PATH COPY"
# (COPY holds what PATH was), "dir PATH" (made by an install).  Every
# path passes the check above (a file may be missing: it was removed).
# Status 0 with no manifest (all empty); 1 with esp_why naming the line.
m_kind=() m_a=() m_b=() m_loader='' m_installpath=''
esp_manifest() {
	local m=$ESP_MANIFEST n=0 k a b extra bad st
	m_kind=() m_a=() m_b=() m_loader='' m_installpath=''
	esp_file "$m" "$ESP_TEXT_MAX"
	st=$?
	[ "$st" = 2 ] && return 0
	[ "$st" = 0 ] || { esp_why="$esp/$esp_why"; return 1; }
	while read -r k a b extra; do
		n=$((n + 1))
		case $k in '' | '#'*) continue ;; esac
		bad=''
		[ -z "$extra" ] || bad="too many fields"
		case $k in
		loader | installpath | dir) [ -z "$b" ] || bad="too many fields" ;;
		file) [ -z "$b" ] || bad="too many fields" ;;
		backup) [ -n "$b" ] || bad="no copy named" ;;
		*) bad="'$k' is no kind of entry" ;;
		esac
		if [ -z "$bad" ]; then
			case $k in
			dir) esp_dir "$a" || bad="$a is not a directory inside the ESP" ;;
			*) esp_file "$a"; [ $? = 1 ] && bad=$esp_why ;;
			esac
		fi
		if [ -z "$bad" ] && [ "$k" = backup ]; then esp_file "$b"; [ $? = 1 ] && bad=$esp_why; fi
		if [ -n "$bad" ]; then
			esp_why="$esp/$m: line $n is not a manifest entry ($bad); remove the file to start afresh (then the ESP is taken as it is)"
			return 1
		fi
		case $k in
		loader) m_loader=$a ;;
		installpath) m_installpath=$a ;;
		*) m_kind+=("$k") m_a+=("$a") m_b+=("${b:-}") ;;
		esac
	done <"$esp/$m"
	[ -n "$m_installpath" ] || m_installpath=$m_loader
	return 0
}

# key_private FILE: a signing key only its owner may read (whoever reads
# it can sign what Secure Boot starts); esp_why says why not
key_private() {
	local m
	esp_why=''
	if ! m=$(stat -L -c %a -- "$1" 2>/dev/null); then esp_why="cannot read the signing key $1"; return 1; fi
	[ $((8#$m & 8#077)) = 0 ] && return 0
	esp_why="refusing the signing key $1: its mode $m lets others read it (whoever reads it can sign what Secure Boot starts); chmod 600 $1"
	return 1
}

# record_read STATE: the Boot#### entry an install on this ESP made, as
# recorded in STATE/boot-entry (kaslr-install.sh writes it): rec_num, its
# path rec_path, BootOrder before it was made rec_order
rec_esp='' rec_num='' rec_path='' rec_order=''
# shellcheck disable=SC2034 # rec_path: read by the scripts that source this
record_read() {
	local k v
	rec_esp='' rec_num='' rec_path='' rec_order=''
	[ -f "$1/boot-entry" ] || return 1
	while read -r k v; do
		case $k in esp) rec_esp=$v ;; num) rec_num=$v ;; path) rec_path=$v ;; bootorder) rec_order=$v ;; esac
	done <"$1/boot-entry"
	case $rec_num in [0-9A-Fa-f][0-9A-Fa-f][0-9A-Fa-f][0-9A-Fa-f]) ;; *) return 1 ;; esac
	case $rec_order in *[!0-9A-Fa-f,]*) return 1 ;; esac
	[ "$rec_esp" = "$esp_real" ]
}
# the Boot#### numbers there are, and BootOrder
boot_nums() { efibootmgr 2>/dev/null | sed -n 's/^Boot\([0-9A-Fa-f]\{4\}\).*/\1/p' | sort; }
boot_order() { efibootmgr 2>/dev/null | sed -n 's/^BootOrder: *//p'; }
# boot_is NUM [LOADERPATH]: Boot NUM is labelled kaslr-loader (and starts LOADERPATH)
boot_is() {
	local l
	l=$(efibootmgr -v 2>/dev/null | grep -i "^Boot$1\*\{0,1\} kaslr-loader\b") || return 1
	[ -z "${2:-}" ] || printf '%s\n' "$l" | grep -qiF "$2"
}

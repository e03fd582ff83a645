#!/bin/bash
# kaslr-install.sh - put kaslr-loader, a kernel and its initrds into an EFI
# system partition, with the policy written into the loader (and the loader
# signed when a key is given), or take all of it away again.  `make install`,
# `make uninstall` and the kernel hooks (src/tools/hooks/) run it; installed
# as /usr/sbin/kaslr-loader-install.
#
#   kaslr-install.sh --esp DIR [--loader UNSIGNED.efi] [--tool kaslr-policy]
#       --kernel FILE [--initrd FILE]... [--cmdline TEXT] [--allow KEY]...
#       [--install-path PATH] [--sign-key KEY --sign-cert CERT]
#       [--conf FILE] [--repack kaslr-repack.sh] [--entry auto|yes|no] [--force]
#       [--shim SHIM.efi] [--trust pins|shim] [--state DIR]
#   kaslr-install.sh --uninstall --esp DIR [--install-path PATH] [--state DIR]
#
# --loader and --tool default to the package's files beside this script
# (../lib/kaslr-loader/kaslr-loader.efi and kaslr-policy) when they exist.
# The install path (the file firmware or a boot manager starts), when not
# given, is computed here and nowhere else: where the previous install on
# this ESP put it (its manifest says), else, on the running system's ESP
# (EFI booted, the ESP a mounted EFI system partition),
# EFI/kaslr-loader/kaslr-loader.efi (EFI/kaslr-loader/shimx64.efi with
# --shim) with a Boot#### entry for it, else the fallback path
# EFI/BOOT/BOOTX64.EFI.  The Boot#### entry is made (efibootmgr) only when
# no systemd-boot entry starts the loader and the path is not the fallback
# path; its number and the BootOrder before it are kept in DIR/boot-entry
# (--state, default /var/lib/kaslr-loader): --uninstall deletes that entry
# (if it is still kaslr-loader's) and puts BootOrder back as it was (the
# entries made since kept after it).  bootctl set-default is never run;
# --uninstall on the running system clears systemd-boot's default entry
# (LoaderEntryDefault, what `bootctl set-default` sets) when it names
# kaslr-loader.conf, the entry it takes away.
#
# Safe by default:
#   - an existing file at the install path that is not kaslr-loader (e.g.
#     systemd-boot's or shim's BOOTX64.EFI) is never replaced, unless --force,
#     which first keeps it as NAME.kaslr-backup;
#   - the kernel is copied as it is and keeps its name (a Debian bzImage
#     boots as shipped); only with --repack is a bzImage repacked to
#     vmlinux-VERSION.gz (kaslr-repack.sh: quicker to decompress under an
#     emulator);
#   - a unified kernel image (a PE file with a .linux section) is a kernel
#     like any other, copied beside the loader and pinned whole; it takes no
#     --initrd (its .initrd is inside), and --cmdline replaces its .cmdline
#     only where systemd-stub would take a line (Secure Boot off);
#   - nothing on the ESP is trusted while installing: the kernel and initrds
#     are copied first into a directory only this user reads, the policy
#     pins THOSE copies' SHA-256, and the bytes written to the ESP are
#     compared with them before the loader is signed; a file that changed
#     on the ESP meanwhile stops the install with one line;
#   - the ESP changes only once everything is ready, and at every instant
#     (a failure or a power cut at any step) the loader on it boots what it
#     pins: new files never take the name of a file a loader in place pins
#     (such a name gets NAME@ the first 16 hex digits of its SHA-256, and
#     the next update goes back to NAME); they are written as NAME.kaslr-new,
#     renamed into place and flushed (sync -f) before the loader that pins
#     them is renamed over the old one, that rename is flushed, and only
#     then do the files the old loader needed go; the manifest lists every
#     file an install may have placed before any is placed;
#   - whatever is read from the ESP (the manifest, the loader in place,
#     kaslr.conf, a file about to be replaced) must be a regular file
#     inside the ESP, and not too big (kaslr-esp.sh): the ESP is not
#     trusted, and an install never hangs on it;
#   - an existing kaslr.conf is kept, except a `kernel` line naming another
#     file, which is pointed at the new kernel;
#   - with systemd-boot on the ESP (loader/entries/) the entry
#     loader/entries/kaslr-loader.conf is written (kaslr-loader-install(8));
#   - what the install wrote is listed in the manifest EFI/kaslr-loader.manifest
#     on the ESP: a later install removes what it no longer needs (another
#     kernel version, the files at a previous install path), --uninstall
#     removes all of it and puts back what a file replaced had been.
#   - with --shim, shim goes to the install path and the loader beside it as
#     grubx64.efi, the name shim starts (mmx64.efi too when it lies beside
#     SHIM); the default install path is then EFI/kaslr-loader/shimx64.efi
#     with a Boot#### entry (efibootmgr) when the ESP is the running
#     system's, else the fallback path EFI/BOOT/BOOTX64.EFI, no entry;
#   - --trust shim writes a policy under which a kernel boots if its pin
#     matches or shim verifies its signature, and kaslr.conf may name the
#     kernel and initrds (README, Through shim); the default is pins only.
#     It needs --shim: without shim nothing verifies a signature;
#   - a signing key that its group or others may read is refused.
# Every file written is named on stdout; a failure is one line on stderr.
set -u
me=kaslr-install
die() { echo "$me: $*" >&2; exit 1; }
say() { echo "$me: $*"; }
# dir_of VAR PATH, base_of VAR PATH: VAR set to what dirname and
# basename print, without a program each (an install ran 111 programs;
# without those for path text and without an rm for a file not there, its
# CPU went from 1.44 to 0.93 seconds).  These path helpers, and rel_of,
# esp_path and old_index below, set a variable, not print: each $(...)
# is a fork of this shell, and an install with a new initrd went from 113
# forks to 75.  (VAR names no local of theirs: those start with _.)
dir_of() {
	local _p=$2
	while [[ $_p == */ && $_p != / ]]; do _p=${_p%/}; done
	case $_p in
	*/*) _p=${_p%/*}; while [[ $_p == */ ]]; do _p=${_p%/}; done; printf -v "$1" '%s' "${_p:-/}" ;;
	*) printf -v "$1" '.' ;;
	esac
}
base_of() {
	local _p=$2
	while [[ $_p == */ && $_p != / ]]; do _p=${_p%/}; done
	if [ "$_p" = / ]; then printf -v "$1" '/'; else printf -v "$1" '%s' "${_p##*/}"; fi
}
# the ESP's checks (kaslr-esp.sh): beside this script in the source tree,
# in the package's library directory once installed
here=.
dir_of here "$0"
esp_lib=$here/kaslr-esp.sh
[ -f "$esp_lib" ] || esp_lib=$here/../lib/kaslr-loader/kaslr-esp.sh
# shellcheck source=src/tools/kaslr-esp.sh
. "$esp_lib" 2>/dev/null || die "$esp_lib missing (reinstall kaslr-loader)"
MANIFEST=$ESP_MANIFEST # relative to the ESP

# ------------------------------------------------------------ arguments
esp='' loader='' tool='' kernel='' cmdline='' have_cmdline=0 path='' path_given=0
key='' cert='' conf='' repack='' entry=auto force=0 uninstall=0 shim='' trust=pins shim_path=''
initrds=() allows=()
state=${KASLR_LOADER_STATE:-/var/lib/kaslr-loader}
# /sys (the tests point it elsewhere): firmware/efi says EFI booted
sys=${KASLR_LOADER_SYS:-/sys}
libdir=$here/../lib/kaslr-loader
parse_args() {
	while [ $# -gt 0 ]; do
		case $1 in
		--force) force=1; shift; continue ;;
		--uninstall) uninstall=1; shift; continue ;;
		esac
		[ $# -ge 2 ] || die "$1 needs a value"
		case $1 in
		--esp) esp=$2 ;;
		--loader) loader=$2 ;;
		--tool) tool=$2 ;;
		--kernel) kernel=$2 ;;
		--initrd) initrds+=("$2") ;;
		--cmdline) cmdline=$2; have_cmdline=1 ;;
		--allow) allows+=("$2") ;;
		--install-path) path=$2; path_given=1 ;;
		--sign-key) key=$2 ;;
		--sign-cert) cert=$2 ;;
		--conf) conf=$2 ;;
		--repack) repack=$2 ;;
		--entry) entry=$2 ;;
		--shim) shim=$2 ;;
		--trust) trust=$2 ;;
		--state) state=$2 ;;
		*) die "unknown argument $1" ;;
		esac
		shift 2
	done
}

# ------------------------------------------------------------ ESP paths
# esp_path VAR NAME: VAR set to the ESP path of NAME in the install
# directory, as the policy pins it (/./ at the start and runs of slashes
# made one)
esp_path() {
	local _p="/$reldir/$2"
	case $_p in /./*) _p=/${_p#/./} ;; esac
	while [[ $_p == *//* ]]; do _p=${_p//\/\//\/}; done
	printf -v "$1" '%s' "$_p"
}
# rel_of VAR NAME: VAR set to the manifest path of NAME in the install
# directory
rel_of() { local _r="$reldir/$2"; printf -v "$1" '%s' "${_r#./}"; }

# ------------------------------------------------------------ the manifest
# (its lines: kaslr-esp.sh, esp_manifest)
old_kind=() old_a=() old_b=() old_loader='' old_installpath=''
manifest_read() {
	esp_manifest || die "$esp_why"
	old_kind=("${m_kind[@]}") old_a=("${m_a[@]}") old_b=("${m_b[@]}")
	old_loader=$m_loader old_installpath=$m_installpath
}
# old_index REL: 0 and old_i set to the index of REL's file/backup line in
# the previous manifest; 1 when it has none
old_i=''
old_index() {
	local _i
	for _i in "${!old_kind[@]}"; do
		[ "${old_kind[$_i]}" != dir ] && [ "${old_a[$_i]}" = "$1" ] && { old_i=$_i; return 0; }
	done
	return 1
}
new_lines=() new_paths=()
# claim REL [OURS [NEW]]: about to put a file at REL; keeps what the
# manifest must say about it (a previous manifest's line, or what REL was
# before: nothing, or a file saved as a backup).  OURS=1: an unrecorded file
# there is a previous kaslr-loader's and needs no backup; an unrecorded
# file with NEW's bytes stays unrecorded (uninstall leaves it).
claim() {
	local rel=$1 ours=${2:-0} new=${3:-} i b st
	new_paths+=("$rel")
	if old_index "$rel"; then
		i=$old_i
		new_lines+=("${old_kind[$i]} $rel${old_b[$i]:+ ${old_b[$i]}}")
		return 0
	fi
	esp_file "$rel"
	st=$?
	if [ "$st" = 2 ]; then new_lines+=("file $rel"); return 0; fi
	[ "$st" = 0 ] || die "refusing to replace $esp/$rel: $esp_why"
	if [ -n "$new" ] && cmp -s "$new" "$esp/$rel"; then return 0; fi
	if [ "$ours" = 1 ]; then new_lines+=("file $rel"); return 0; fi
	b=$rel.kaslr-backup
	{ [ -e "$esp/$b" ] || [ -L "$esp/$b" ]; } && b=$rel.kaslr-backup-$(date +%Y%m%d%H%M%S)
	{ esp_inside "$b" && [ ! -e "$esp/$b" ] && [ ! -L "$esp/$b" ]; } || die "cannot back up $esp/$rel: $b is taken"
	cp "$esp/$rel" "$esp/$b" || die "cannot back up $esp/$rel" # no -p: FAT keeps no modes
	new_lines+=("backup $rel $b")
	say "kept the previous $rel as $b"
}
# make_dir REL: creates it and its parents, recording those it made
made_dirs=()
make_dir() {
	local rel=$1 sofar='' part
	local IFS=/
	for part in $rel; do
		[ "$part" = . ] && continue
		sofar=${sofar:+$sofar/}$part
		esp_dir "$sofar" || die "$esp/$sofar is not a directory inside the ESP"
		[ -d "$esp/$sofar" ] && continue
		mkdir "$esp/$sofar" || die "cannot create $esp/$sofar"
		made_dirs+=("$sofar")
	done
}
# undo KIND PATH [COPY]: what uninstall does for one line; a failure is
# a warning, sets undo_failed and keeps the line (kept_lines)
undo_failed=0 kept_lines=()
undo() {
	case $1 in
	file)
		{ [ -e "$esp/$2" ] || [ -L "$esp/$2" ]; } || return 0
		if rm -f "$esp/$2"; then say "removed $2"
		else echo "$me: warning: cannot remove $esp/$2" >&2; undo_failed=1; kept_lines+=("file $2"); fi ;;
	backup)
		if [ ! -e "$esp/$3" ]; then say "warning: the backup $3 of $2 is gone; $2 left as it is"
		elif mv -f "$esp/$3" "$esp/$2"; then say "restored $2 from $3"
		else echo "$me: warning: cannot restore $esp/$2 from $esp/$3" >&2; undo_failed=1; kept_lines+=("backup $2 $3"); fi ;;
	dir) rmdir "$esp/$2" 2>/dev/null && say "removed $2/" ;;
	esac
	return 0
}
# put_text FILE REL: FILE (in $priv) at REL, in one rename
put_text() {
	put_new "$1" "$2"
	place "$2"
}
# manifest_write [journal]: the manifest of this install.  "journal": also
# every line of the previous one, written before anything is placed, so
# that whatever a failure leaves is listed (the next install or
# --uninstall takes it away)
manifest_write() {
	local i d keep l=$path p ip=${shim_path:-$path}
	local dirs=() lines=("${new_lines[@]}" "${kept_lines[@]}")
	dir_of d "$MANIFEST"
	make_dir "$d"
	# directories: those a previous install made and still in use, and new ones
	for i in "${!old_kind[@]}"; do
		[ "${old_kind[$i]}" = dir ] || continue
		keep=0
		[ "${1:-}" = journal ] && keep=1
		for d in "${new_paths[@]}" "$MANIFEST"; do case $d in "${old_a[$i]}"/*) keep=1 ;; esac; done
		[ "$keep" = 1 ] && dirs+=("dir ${old_a[$i]}")
	done
	for d in "${made_dirs[@]}"; do dirs+=("dir $d"); done
	if [ "${1:-}" = journal ]; then
		[ -n "$old_loader" ] && l=$old_loader ip=$old_installpath
		for i in "${!old_kind[@]}"; do
			[ "${old_kind[$i]}" = dir ] && continue
			keep=0
			for p in "${new_paths[@]}"; do [ "$p" = "${old_a[$i]}" ] && keep=1; done
			[ "$keep" = 1 ] || lines+=("${old_kind[$i]} ${old_a[$i]}${old_b[$i]:+ ${old_b[$i]}}")
		done
	fi
	{
		echo "# kaslr-loader: what kaslr-loader-install wrote on this ESP (kaslr-loader-install --uninstall, make uninstall)"
		echo "loader $l"
		[ -z "$ip" ] || [ "$ip" = "$l" ] || echo "installpath $ip"
		printf '%s\n' "${dirs[@]}" "${lines[@]}"
	} | sed '/^$/d' >"$priv/manifest" || die "cannot write $priv/manifest"
	put_text "$priv/manifest" "$MANIFEST"
}
# what the previous install wrote and this one did not: removed, or restored
drop_previous() {
	local i j p keep
	for ((i = ${#old_kind[@]} - 1; i >= 0; i--)); do
		[ "${old_kind[$i]}" = dir ] && continue
		keep=0
		for p in "${new_paths[@]}"; do [ "$p" = "${old_a[$i]}" ] && keep=1; done
		[ "$keep" = 1 ] || undo "${old_kind[$i]}" "${old_a[$i]}" "${old_b[$i]}"
	done
	for ((i = ${#old_kind[@]} - 1; i >= 0; i--)); do
		[ "${old_kind[$i]}" = dir ] || continue
		keep=0
		for j in "${new_paths[@]}" "$MANIFEST"; do case $j in "${old_a[$i]}"/*) keep=1 ;; esac; done
		[ "$keep" = 1 ] || undo dir "${old_a[$i]}"
	done
}

# ------------------------------------------------------------ uninstall
do_uninstall() {
	local i
	esp_file "$MANIFEST" "$ESP_TEXT_MAX"
	[ $? = 2 ] && die "nothing to uninstall: no $MANIFEST on $esp (kaslr-loader was not installed there, or by a version without one)"
	manifest_read
	[ "$path_given" = 1 ] && [ "$old_loader" != "$path" ] && [ "$old_installpath" != "$path" ] &&
		die "the loader installed on $esp is $old_installpath, not $path"
	for ((i = ${#old_kind[@]} - 1; i >= 0; i--)); do
		[ "${old_kind[$i]}" = dir ] || undo "${old_kind[$i]}" "${old_a[$i]}" "${old_b[$i]}"
	done
	[ "$undo_failed" = 0 ] || die "uninstalling from $esp left files behind (above); $esp/$MANIFEST kept: run it again once they can go"
	rm -f "$esp/$MANIFEST" || die "cannot remove $esp/$MANIFEST"
	for ((i = ${#old_kind[@]} - 1; i >= 0; i--)); do
		[ "${old_kind[$i]}" = dir ] && undo dir "${old_a[$i]}"
	done
	esp_flush
	boot_entry_remove
	sdboot_default_remove
	say "uninstalled ${old_loader:-kaslr-loader} from $esp"
}

# ------------------------------------------------------------ checks
preflight() {
	local st
	[ -n "$kernel" ] || die "no kernel given"
	[ -f "$kernel" ] || die "kernel $kernel: no such file"
	[ -n "$loader" ] || die "no --loader given, and no $libdir/kaslr-loader.efi"
	[ -n "$tool" ] || die "no --tool given, and no $libdir/kaslr-policy"
	for f in "$loader" "$tool"; do [ -f "$f" ] || die "$f missing (build it first)"; done
	for f in "${initrds[@]}"; do [ -f "$f" ] || die "initrd $f: no such file"; done
	# a unified kernel image carries its initrd and command line
	if is_uki "$kernel"; then
		[ ${#initrds[@]} = 0 ] ||
			die "kernel $kernel is a unified kernel image: its initrd is its .initrd section; give no --initrd (rebuild the image to change it)"
		if [ "$have_cmdline" = 1 ] && uki_has_cmdline "$kernel"; then
			say "note: $kernel has a .cmdline: under Secure Boot that is the command line and --cmdline (CMDLINE=) is ignored, as systemd-stub ignores one; without Secure Boot --cmdline replaces it"
		fi
	fi
	{ [ -z "$key$cert" ] || { [ -n "$key" ] && [ -n "$cert" ]; }; } || die "signing needs both a key and a certificate"
	if [ -n "$key" ]; then
		{ command -v sbsign && command -v sbverify; } >/dev/null ||
			die "sbsign missing: signing (a SIGN_KEY) needs the Debian package sbsigntool (apt install sbsigntool)"
		for f in "$key" "$cert"; do [ -r "$f" ] || die "cannot read $f"; done
		key_private "$key" || die "$esp_why"
	fi
	case $entry in auto | yes | no) ;; *) die "--entry auto|yes|no" ;; esac
	# never replace what is not ours (nor read what is not a file)
	esp_file "$path"
	st=$?
	[ "$st" = 1 ] && die "refusing to replace $dest: $esp_why"
	if [ "$st" = 0 ] && ! old_index "$path" && ! "$tool" show "$dest" >/dev/null 2>&1; then
		[ "$force" = 1 ] ||
			die "refusing to replace $dest: it is not kaslr-loader (another boot loader?); install elsewhere (INSTALL_PATH=EFI/kaslr-loader/kaslr-loader.efi) or force it (FORCE=1 keeps a backup)"
	fi
}

# ------------------------------------------------------------ staging
# The sources are copied into $priv/f ($priv is mode 0700); names[i] is the ESP name
# of privs[i], kinds[i] kernel or initrd.  Nothing is read from the ESP.
names=() privs=() kinds=() srcs=() writes=() staged=()
# files beside the loader that the policy does not pin (shim, MokManager):
# their private copies and ESP paths; stage_esp puts them, commit renames them
extra_privs=() extra_rels=()
stage_private() {
	local kname n f r
	mkdir "$priv/f" || die "mkdir $priv/f"
	base_of kname "$kernel"
	if [ -n "$repack" ] && [ "$(od -An -c -j 514 -N 4 "$kernel" 2>/dev/null | tr -d ' \n')" = HdrS ]; then
		case $kname in vmlinuz-*) kname=vmlinux-${kname#vmlinuz-}.gz ;; *) kname=$kname.elf.gz ;; esac
		"$repack" "$kernel" "$priv/f/$kname" 2>"$priv/repack.log" ||
			die "repacking $kernel failed: $(tail -n 1 "$priv/repack.log")"
	else
		cp "$kernel" "$priv/f/$kname" || die "cannot copy $kernel"
	fi
	names+=("$kname") privs+=("$priv/f/$kname") kinds+=(kernel) srcs+=("$kernel")
	for f in "${initrds[@]}"; do
		base_of n "$f"
		[ ! -e "$priv/f/$n" ] || die "two files named $n"
		cp "$f" "$priv/f/$n" || die "cannot copy $f"
		names+=("$n") privs+=("$priv/f/$n") kinds+=(initrd) srcs+=("$f")
	done
	for n in "${names[@]}"; do
		rel_of r "$n"
		esp_rel_ok "$r" || die "$n: a name for the ESP needs letters, digits and ._+~@- only"
	done
}
# the files the loaders in place pin (at the install path, and where the
# previous install put its loader): no new file takes one of their names
old_pins=()
pinned_before() {
	local p
	for p in "${old_pins[@]}"; do [ "$p" = "$1" ] && return 0; done
	return 1
}
# each file keeps its name, unless a loader in place pins that name with
# other bytes: it is then NAME@ the first 16 hex digits of its SHA-256
# (the next update goes back to NAME); a file whose bytes are on the ESP
# under its name already is not written again
choose_names() {
	local i rel h l p
	for l in "$path" "$old_loader"; do
		[ -n "$l" ] || continue
		while read -r _ p _; do old_pins+=("$p"); done < <(esp_pins "$tool" "$l")
	done
	for i in "${!names[@]}"; do
		rel_of rel "${names[$i]}"
		if pinned_before "$rel" && ! esp_same "${privs[$i]}" "$rel"; then
			h=$(sha256sum <"${privs[$i]}")
			names[i]=${names[$i]}@${h:0:16}
			rel_of rel "${names[$i]}"
			if pinned_before "$rel" && ! esp_same "${privs[$i]}" "$rel"; then
				die "$esp/$rel: pinned by the loader in place with other bytes; remove $esp/$MANIFEST to start afresh"
			fi
		fi
		writes[i]=1
		esp_same "${privs[$i]}" "$rel" && writes[i]=0
	done
}
# put_new SRC REL: SRC's bytes at REL.kaslr-new on the ESP, checked byte
# for byte (never written through what was there: that is removed first)
put_new() {
	local src=$1 rel=$2 t=$esp/$2.kaslr-new d
	dir_of d "$rel"
	esp_inside "$d" || [ "$d" = . ] || die "$esp/$d: leads out of the ESP"
	staged+=("$rel.kaslr-new")
	if [ -e "$t" ] || [ -L "$t" ]; then rm -f "$t" 2>/dev/null; fi
	{ [ ! -e "$t" ] && [ ! -L "$t" ]; } || die "cannot remove $t (a directory?): nothing installed, the previous loader kept"
	cp "$src" "$t" 2>/dev/null || die "cannot write $esp/$rel (ESP full or read-only?): nothing installed, the previous loader kept"
	cmp -s "$src" "$t" ||
		die "$esp/$rel changed on the ESP while it was written (another writer on the ESP?): nothing installed, the previous loader kept"
}
# place REL: REL.kaslr-new renamed to REL
place() {
	mv -f "$esp/$1.kaslr-new" "$esp/$1" 2>/dev/null ||
		die "cannot rename $esp/$1.kaslr-new: the loader in place boots what it booted before"
}
stage_esp() {
	local i r d
	make_dir "$reldir"
	for i in "${!names[@]}"; do
		[ "${writes[$i]}" = 1 ] || continue
		rel_of r "${names[$i]}"
		put_new "${privs[$i]}" "$r"
	done
	for i in "${!extra_rels[@]}"; do
		dir_of d "${extra_rels[$i]}"
		make_dir "$d"
		put_new "${extra_privs[$i]}" "${extra_rels[$i]}"
	done
}

# ------------------------------------------------------------ the loader
# the policy into the unsigned image, pinning the private copies
write_policy() {
	local pol=() i a ep
	for i in "${!names[@]}"; do esp_path ep "${names[$i]}"; pol+=(--"${kinds[$i]}" "$ep=${privs[$i]}"); done
	[ "$have_cmdline" = 1 ] && pol+=(--cmdline "$cmdline")
	for a in "${allows[@]}"; do pol+=(--allow "$a"); done
	pol+=(--trust "$trust")
	"$tool" write --loader "$loader" --out "$priv/loader.efi" "${pol[@]}" 2>"$priv/policy.log" ||
		die "writing the policy failed: $(tail -n 1 "$priv/policy.log")"
	img=$priv/loader.efi
}
# the signature over image and policy (sets img and how)
sign_loader() {
	if [ -n "$key" ]; then
		sbsign --key "$key" --cert "$cert" --output "$priv/signed.efi" "$img" >"$priv/sbsign.log" 2>&1 ||
			die "sbsign failed: $(tail -n 1 "$priv/sbsign.log")"
		sbverify --cert "$cert" "$priv/signed.efi" >/dev/null 2>&1 || die "the signed loader does not verify with $cert"
		img=$priv/signed.efi
		how="signed with $cert"
	else
		how="unsigned: its policy is the default only, Secure Boot would refuse it"
	fi
}

# ------------------------------------------------------------ kaslr.conf, entry
# what goes beside the loader as kaslr.conf: conf_new (a file in $priv to
# put there; empty: kept as it is) and conf_msg (what is said)
conf_new='' conf_msg=''
prepare_conf() {
	local kc=$dir/kaslr.conf rel old abs kname=${names[0]} prev st
	rel_of rel kaslr.conf
	esp_file "$rel" "$ESP_TEXT_MAX"
	st=$?
	[ "$st" = 1 ] && die "refusing to use $kc: $esp_why"
	# the loader moved: a kaslr.conf the previous install wrote moves with it
	if [ -z "$conf" ] && [ "$st" = 2 ] && prev=$(previous_conf); then
		cp "$esp/$prev" "$priv/kaslr.conf" || die "cannot read $esp/$prev"
		conf_new=$priv/kaslr.conf conf_msg="config  $esp/$prev -> $kc"
		return
	fi
	if [ -n "$conf" ]; then
		if [ "$st" = 0 ] && cmp -s "$conf" "$kc"; then conf_msg="config  $kc kept"; return; fi
		cp "$conf" "$priv/kaslr.conf" || die "cannot read $conf"
		conf_new=$priv/kaslr.conf conf_msg="config  $conf -> $kc"
	elif [ "$st" = 0 ]; then
		cp "$kc" "$priv/kaslr.conf" || die "cannot read $kc"
		old=$(sed -n 's/^[[:space:]]*kernel[[:space:]]\{1,\}\([^#[:space:]]*\).*/\1/p' "$priv/kaslr.conf" | tail -n 1)
		esp_path abs "$kname"
		abs=${abs//\//\\} # with backslashes
		if [ -n "$old" ] && [ "$old" != "$kname" ] && [ "$old" != "$abs" ]; then
			sed -i "s|^\([[:space:]]*kernel[[:space:]]\{1,\}\)[^#[:space:]]*|\1$kname|" "$priv/kaslr.conf" ||
				die "cannot update $kc"
			conf_new=$priv/kaslr.conf conf_msg="config  $kc: kernel $old -> $kname"
		else
			conf_msg="config  $kc kept"
		fi
	else
		cat >"$priv/kaslr.conf" <<EOF || die "cannot write $priv/kaslr.conf"
# kaslr.conf - options of kaslr-loader (man 5 kaslr.conf).
# One "key value" per line; '#' starts a comment.  Load options (e.g. a
# systemd-boot entry's "options") override what is set here; under Secure
# Boot only what the signed policy allows is taken (kaslr.conf(5), SECURE BOOT).
# The kernel, its initrds and command line come from the loader's policy
# (kaslr-policy show $path).
#
# kernel     $kname
# cmdline    console=ttyS0       (the rest of the line is the command line)
# verbose                        (print addresses and timings: leaks the layout)
# kaslr.min  16M
# kaslr.max  4G
EOF
		conf_new=$priv/kaslr.conf conf_msg="config  $kc (commented defaults)"
	fi
}
# the kaslr.conf a previous install at another path wrote, relative to the ESP
previous_conf() {
	local r
	[ -n "$old_loader" ] && [ "$old_loader" != "$path" ] || return 1
	dir_of r "$old_loader"
	r=$r/kaslr.conf
	r=${r#./}
	old_index "$r" && esp_file "$r" "$ESP_TEXT_MAX" && echo "$r"
}
# a file left as it is stays in the manifest when a previous install wrote it
keep_unless_ours() { if old_index "$1"; then claim "$1"; fi; }
# the systemd-boot entry: entry_new (a file in $priv; empty: none to
# write) and entry_msg (empty: no entry wanted)
entry_rel=loader/entries/kaslr-loader.conf entry_new='' entry_msg=''
prepare_entry() {
	local e=$esp/$entry_rel st
	if [ "$entry" = yes ] || { [ "$entry" = auto ] && [ -d "$esp/loader/entries" ]; }; then
		printf 'title   kaslr-loader\nefi     /%s\n' "${shim_path:-$path}" >"$priv/entry" || die "cannot write $priv/entry"
		esp_file "$entry_rel" "$ESP_TEXT_MAX"
		st=$?
		[ "$st" = 1 ] && die "refusing to replace $e: $esp_why"
		if [ "$st" = 0 ] && cmp -s "$priv/entry" "$e"; then entry_msg="entry   $e kept"; return; fi
		entry_new=$priv/entry entry_msg="entry   $e"
	fi
}

# ------------------------------------------------------------ commit
# Everything is staged (NAME.kaslr-new, checked).  Then, in this order:
# the manifest lists everything that may be placed; the files the new
# loader pins (under names no loader in place pins) and shim are renamed
# into place and flushed; the loader is renamed over the old one and
# flushed; kaslr.conf and the entry follow; what only the old loader
# needed goes; the manifest of this install is written and flushed.  A
# failure or a power cut at any point leaves a loader whose pins hold.
commit() {
	local i rel conf_rel own=0
	rel_of conf_rel kaslr.conf
	for i in "${!names[@]}"; do rel_of rel "${names[$i]}"; claim "$rel" 0 "${privs[$i]}"; done
	for i in "${!extra_rels[@]}"; do claim "${extra_rels[$i]}" 0 "${extra_privs[$i]}"; done
	esp_show "$tool" "$path" >/dev/null 2>&1 && own=1
	claim "$path" "$own"
	if [ -n "$conf_new" ]; then claim "$conf_rel"; else keep_unless_ours "$conf_rel"; fi
	if [ -n "$entry_new" ]; then
		make_dir loader/entries
		claim "$entry_rel"
	elif [ -n "$entry_msg" ]; then
		keep_unless_ours "$entry_rel"
	fi
	manifest_write journal
	for i in "${!names[@]}"; do
		rel_of rel "${names[$i]}"
		[ "${writes[$i]}" = 1 ] && place "$rel"
		printf '%s: %-7s %s -> %s\n' "$me" "${kinds[$i]}" "${srcs[$i]}" "$esp/$rel"
	done
	for i in "${!extra_rels[@]}"; do
		place "${extra_rels[$i]}"
		say "file    $esp/${extra_rels[$i]}"
	done
	esp_flush || die "sync -f $esp failed: the loader in place boots what it booted before"
	place "$path"
	esp_flush || die "sync -f $esp failed after the loader was renamed into place; run the install again"
	say "loader  $dest ($how)"
	"$tool" show "$dest" | sed "s/^/$me: policy  /"
	[ -z "$conf_new" ] || put_text "$conf_new" "$conf_rel"
	say "$conf_msg"
	[ -z "$entry_new" ] || put_text "$entry_new" "$entry_rel"
	[ -z "$entry_msg" ] || say "$entry_msg"
	esp_flush || die "sync -f $esp failed; run the install again"
	drop_previous
	manifest_write
	esp_flush || die "sync -f $esp failed; run the install again"
	say "manifest $esp/$MANIFEST"
}

# ------------------------------------------------------------ shim (--shim)
# the running system's ESP: EFI booted, ESP a mount point of a partition
# whose type is the EFI system partition's
live_esp() {
	local src
	[ -d "$sys/firmware/efi" ] && mountpoint -q "$esp" 2>/dev/null || return 1
	src=$(findmnt -n -o SOURCE --target "$esp" 2>/dev/null) || return 1
	[ "$(lsblk -n -o PARTTYPE "$src" 2>/dev/null)" = c12a7328-f81f-11d2-ba4b-00a0c93ec93b ]
}
# the install path when none is given: the one place that decides it
# (see the top of this file); then with --shim, shim's path and the
# loader's beside it as grubx64.efi
install_path() {
	local had_shim=0
	[ -n "$old_installpath" ] && [ "$old_installpath" != "$old_loader" ] && had_shim=1
	if [ "$path_given" = 0 ]; then
		if [ -n "$old_installpath" ] && [ "$had_shim" = "$([ -n "$shim" ] && echo 1 || echo 0)" ]; then
			path=$old_installpath
		elif live_esp; then
			path=EFI/kaslr-loader/kaslr-loader.efi
			[ -n "$shim" ] && path=EFI/kaslr-loader/shimx64.efi
		else
			path=EFI/BOOT/BOOTX64.EFI
		fi
	fi
	[ -n "$shim" ] || return 0
	shim_path=$path
	dir_of path "$shim_path"
	path=$path/grubx64.efi
	path=${path#./}
}
# shim's .sbat names the component shim
# (objcopy writes to a temporary file: given /dev/stdout while stdout is a
# regular file, it replaces the /dev/stdout symlink with a file of its own)
shim_is_shim() {
	local t r
	t=$(mktemp) || return 1
	objcopy -O binary -j .sbat "$1" "$t" 2>/dev/null && grep -q '^shim,' "$t"
	r=$?
	rm -f "$t"
	return $r
}
# shim's own file must be shim or kaslr-loader (an earlier install without
# shim) unless --force; shim and MokManager are staged beside the loader
shim_stage() {
	local mm t=$esp/$shim_path st sd r
	[ -n "$shim" ] || return 0
	[ -f "$shim" ] || die "shim $shim: no such file"
	shim_is_shim "$shim" || die "$shim: not shim (no .sbat line naming shim)"
	esp_file "$shim_path"
	st=$?
	[ "$st" = 1 ] && die "refusing to replace $t: $esp_why"
	if [ "$st" = 0 ] && ! old_index "$shim_path" && ! shim_is_shim "$t" &&
		! "$tool" show "$t" >/dev/null 2>&1 && [ "$force" != 1 ]; then
		die "refusing to replace $t: it is neither shim nor kaslr-loader; install elsewhere (INSTALL_PATH=EFI/kaslr-loader/shimx64.efi) or force it (FORCE=1 keeps a backup)"
	fi
	mkdir -p "$priv/shim" || die "mkdir $priv/shim"
	cp "$shim" "$priv/shim/shim.efi" || die "cannot copy $shim"
	extra_privs+=("$priv/shim/shim.efi") extra_rels+=("$shim_path")
	dir_of sd "$shim"
	for mm in "$sd/mmx64.efi.signed" "$sd/mmx64.efi"; do
		[ -f "$mm" ] || continue
		cp "$mm" "$priv/shim/mmx64.efi" || die "cannot copy $mm"
		rel_of r mmx64.efi
		extra_privs+=("$priv/shim/mmx64.efi") extra_rels+=("$r")
		break
	done
}
# ------------------------------------------------------------ Boot####
# a Boot#### entry for the install path on the running system, when
# nothing else starts the loader (no systemd-boot entry, not the fallback path)
boot_entry() {
	local first=${shim_path:-$path} lp order0 before num src disk part b
	live_esp || return 0
	[ -z "$entry_msg" ] || return 0
	case $first in [Ee][Ff][Ii]/[Bb][Oo][Oo][Tt]/[Bb][Oo][Oo][Tt][Xx]64.[Ee][Ff][Ii]) return 0 ;; esac
	command -v efibootmgr >/dev/null || { say "warning: efibootmgr missing (apt install efibootmgr): no Boot#### entry starts $first"; return 0; }
	lp=\\$(printf '%s' "$first" | sed 's|/|\\|g')
	if record_read "$state"; then
		if boot_is "$rec_num" "$lp"; then say "entry   Boot$rec_num kaslr-loader -> $lp kept"; return 0; fi
		# the install moved: the entry it made goes, BootOrder's record stays
		boot_is "$rec_num" && efibootmgr -b "$rec_num" -B >/dev/null 2>&1
		order0=$rec_order
	else
		if efibootmgr -v 2>/dev/null | grep -i '^Boot[0-9A-F]\{4\}\*\{0,1\} kaslr-loader\b' | grep -qiF "$lp"; then
			say "entry   a Boot#### kaslr-loader -> $lp exists (not made by an install: left as it is)"
			return 0
		fi
		order0=$(boot_order)
	fi
	before=$(boot_nums)
	src=$(findmnt -n -o SOURCE --target "$esp")
	disk=/dev/$(lsblk -n -o PKNAME "$src" | head -n 1)
	base_of b "$src"
	part=$(cat "$sys/class/block/$b/partition" 2>/dev/null)
	if ! efibootmgr --create --disk "$disk" --part "$part" --label kaslr-loader --loader "$lp" >/dev/null 2>&1; then
		say "warning: efibootmgr could not add a Boot#### entry for $lp"
		return 0
	fi
	num=$(comm -13 <(printf '%s\n' "$before") <(boot_nums) | head -n 1)
	[ -n "$num" ] || { say "warning: efibootmgr added no Boot#### entry for $lp"; return 0; }
	{ mkdir -p "$state" && printf 'esp %s\nnum %s\npath %s\nbootorder %s\n' "$esp_real" "$num" "$lp" "$order0" >"$state/boot-entry.new" &&
		mv -f "$state/boot-entry.new" "$state/boot-entry"; } 2>/dev/null ||
		say "warning: cannot record Boot$num in $state: removal will not delete it"
	say "entry   Boot$num kaslr-loader -> $lp on $disk partition $part (uninstall deletes it)"
}
# uninstall: the entry the install made goes, BootOrder as it was before
# it (the entries made since after it)
boot_entry_remove() {
	local cur want=() n e have
	record_read "$state" || return 0
	command -v efibootmgr >/dev/null || { say "warning: efibootmgr missing: Boot$rec_num left as it is"; return 0; }
	if boot_is "$rec_num" "$rec_path"; then
		if efibootmgr -b "$rec_num" -B >/dev/null 2>&1; then say "removed Boot$rec_num"
		else echo "$me: warning: efibootmgr could not delete Boot$rec_num" >&2; return 0; fi
	fi
	have=$(boot_nums | tr '\n' ' ')
	cur=$(boot_order)
	for n in ${rec_order//,/ } ${cur//,/ }; do
		case " $have " in *" $n "*) ;; *) continue ;; esac
		for e in "${want[@]}"; do [ "$e" = "$n" ] && continue 2; done
		want+=("$n")
	done
	n=$(IFS=,; echo "${want[*]}")
	if [ -n "$n" ] && [ "$n" != "$cur" ]; then
		efibootmgr -o "$n" >/dev/null 2>&1 && say "BootOrder $n, as before the install" ||
			echo "$me: warning: efibootmgr could not set BootOrder $n" >&2
	fi
	rm -f "$state/boot-entry"
}

# uninstall: systemd-boot's default entry, when `bootctl set-default`
# made it kaslr-loader.conf (the EFI variable LoaderEntryDefault, UTF-16LE
# after 4 bytes of attributes), is cleared: it would name an entry gone
sdboot_default_remove() {
	local v f=$sys/firmware/efi/efivars/LoaderEntryDefault-4a67b082-0a4c-41cf-b6c7-440b29bb8c4f
	live_esp && [ -f "$f" ] || return 0
	v=$(tail -c +5 "$f" 2>/dev/null | iconv -f UTF-16LE -t UTF-8 2>/dev/null | tr -d '\0')
	[ "$v" = kaslr-loader.conf ] || return 0
	if ! command -v bootctl >/dev/null; then
		echo "$me: warning: systemd-boot's default entry is kaslr-loader.conf, and bootctl is missing to clear it" >&2
	elif bootctl set-default "" >/dev/null 2>&1; then
		say "systemd-boot's default entry kaslr-loader.conf cleared (bootctl set-default \"\")"
	else
		echo "$me: warning: bootctl could not clear systemd-boot's default entry kaslr-loader.conf" >&2
	fi
}

# ------------------------------------------------------------ main
parse_args "$@"
[ -n "$esp" ] || die "no ESP given (the mounted EFI system partition)"
[ -d "$esp" ] || die "ESP $esp is not a directory"
esp_use "$esp" || die "ESP $esp: cannot resolve it"
if [ "$path_given" = 1 ]; then
	case $path in /* | *..*) die "install path $path: give it relative to the ESP, e.g. EFI/kaslr-loader/kaslr-loader.efi" ;; esac
	esp_rel_ok "$path" || die "install path $path: letters, digits, ._+~@- and / only"
fi
if [ "$uninstall" = 1 ]; then do_uninstall; exit 0; fi
[ -n "$loader" ] || [ ! -f "$libdir/kaslr-loader.efi" ] || loader=$libdir/kaslr-loader.efi
[ -n "$tool" ] || [ ! -f "$libdir/kaslr-policy" ] || tool=$libdir/kaslr-policy
case $trust in pins | shim) ;; *) die "--trust pins|shim" ;; esac
if [ "$trust" = shim ] && [ -z "$shim" ]; then
	die "--trust shim (TRUST=shim) needs --shim (SHIM=): started without shim, the loader has nothing to verify a signature with and refuses every kernel its policy does not pin"
fi
manifest_read
install_path

dest=$esp/$path
reldir=.
dir_of reldir "$path"
dir=$esp/$reldir
img='' how=''
priv=$(mktemp -d) || die "mktemp"
chmod 0700 "$priv" || die "chmod $priv"
cleanup() {
	local t
	rm -rf "$priv"
	# (what was placed is no longer there: no rm for it)
	for t in "${staged[@]}"; do
		if [ -e "$esp/$t" ] || [ -L "$esp/$t" ]; then rm -f "$esp/$t"; fi
	done
}
trap cleanup EXIT

preflight
stage_private
shim_stage
choose_names
stage_esp
write_policy
sign_loader
put_new "$img" "$path"
prepare_conf
prepare_entry
commit
boot_entry

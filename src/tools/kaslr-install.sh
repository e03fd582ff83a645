#!/bin/bash
# kaslr-install.sh - put kaslr-loader, a kernel and its initrds into an EFI
# system partition, with the policy written into the loader (and the loader
# signed when a key is given), or take all of it away again.  `make install`,
# `make uninstall` and the kernel hooks (src/tools/hooks/) run it; installed
# as /usr/sbin/kaslr-loader-install.
#
#   kaslr-install.sh --esp DIR --loader UNSIGNED.efi --tool kaslr-policy
#       --kernel FILE [--initrd FILE]... [--cmdline TEXT] [--allow KEY]...
#       [--install-path EFI/BOOT/BOOTX64.EFI] [--sign-key KEY --sign-cert CERT]
#       [--conf FILE] [--repack kaslr-repack.sh] [--entry auto|yes|no] [--force]
#       [--shim SHIM.efi] [--trust pins|shim]
#   kaslr-install.sh --uninstall --esp DIR [--install-path PATH]
#
# Safe by default:
#   - an existing file at the install path that is not kaslr-loader (e.g.
#     systemd-boot's or shim's BOOTX64.EFI) is never replaced, unless --force,
#     which first keeps it as NAME.kaslr-backup;
#   - the kernel is copied as it is and keeps its name (a Debian bzImage
#     boots as shipped); only with --repack is a bzImage repacked to
#     vmlinux-VERSION.gz (kaslr-repack.sh: quicker to decompress under an
#     emulator);
#   - nothing on the ESP is trusted while installing: the kernel and initrds
#     are copied first into a directory only this user reads, the policy
#     pins THOSE copies' SHA-256, and the bytes written to the ESP are
#     compared with them before the loader is signed; a file that changed
#     on the ESP meanwhile stops the install with one line;
#   - the ESP changes only once everything is ready: files go to NAME.kaslr-new
#     first and are renamed into place at the end, the loader last; any
#     failure before leaves the previous loader, its policy and kernel;
#   - an existing kaslr.conf is kept, except a `kernel` line naming another
#     file, which is pointed at the new kernel;
#   - with systemd-boot on the ESP (loader/entries/) the entry
#     loader/entries/kaslr-loader.conf is written (README, Secure Boot and TPM);
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
# Every file written is named on stdout; a failure is one line on stderr.
set -u
me=kaslr-install
MANIFEST=EFI/kaslr-loader.manifest # relative to the ESP
die() { echo "$me: $*" >&2; exit 1; }
say() { echo "$me: $*"; }

# ------------------------------------------------------------ arguments
esp='' loader='' tool='' kernel='' cmdline='' have_cmdline=0 path=EFI/BOOT/BOOTX64.EFI path_given=0
key='' cert='' conf='' repack='' entry=auto force=0 uninstall=0 shim='' trust=pins shim_path=''
initrds=() allows=()
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
		*) die "unknown argument $1" ;;
		esac
		shift 2
	done
}

# ------------------------------------------------------------ ESP paths
# A path the manifest may hold: relative to the ESP, no '..', plain characters.
valid_rel() {
	case $1 in '' | /* | *..* | *//* | */ | *[!A-Za-z0-9._+~@/-]*) return 1 ;; esac
	return 0
}
# REL is a manifest path that resolves inside the ESP (no symbolic link out)
inside_esp() {
	local r
	valid_rel "$1" || return 1
	r=$(realpath -m -- "$esp/$1") || return 1
	case $r in "$esp_real"/*) return 0 ;; esac
	return 1
}
# the ESP path of a file in the install directory, as the policy pins it
esp_path() { printf '/%s/%s' "$reldir" "$1" | sed 's|^/\./|/|; s|//*|/|g'; }
# the manifest path of a file in the install directory
rel_of() { printf '%s/%s' "$reldir" "$1" | sed 's|^\./||'; }

# ------------------------------------------------------------ the manifest
# Lines: "loader PATH" (where the loader is), "file PATH" (written where
# nothing was: removed on uninstall), "backup PATH COPY" (PATH was there:
# COPY holds its bytes, put back on uninstall), "dir PATH" (made by the
# install: removed when empty).  Paths are relative to the ESP.
old_kind=() old_a=() old_b=() old_loader=''
manifest_read() {
	local m=$esp/$MANIFEST n=0 k a b extra
	[ -f "$m" ] || return 0
	while read -r k a b extra; do
		n=$((n + 1))
		case $k in '' | '#'*) continue ;; esac
		if ! case $k in
			loader | file | dir) [ -z "$b" ] ;;
			backup) inside_esp "$b" ;;
			*) false ;;
			esac || [ -n "$extra" ] || ! inside_esp "$a"; then
			die "$m: line $n is not a manifest entry; remove the file to start afresh (then the ESP is taken as it is)"
		fi
		if [ "$k" = loader ]; then old_loader=$a; continue; fi
		old_kind+=("$k") old_a+=("$a") old_b+=("${b:-}")
	done <"$m"
}
# the index of REL's file/backup line in the previous manifest, or nothing
old_index() {
	local i
	for i in "${!old_kind[@]}"; do
		[ "${old_kind[$i]}" != dir ] && [ "${old_a[$i]}" = "$1" ] && { echo "$i"; return 0; }
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
	local rel=$1 ours=${2:-0} new=${3:-} i b
	new_paths+=("$rel")
	if i=$(old_index "$rel"); then
		new_lines+=("${old_kind[$i]} $rel${old_b[$i]:+ ${old_b[$i]}}")
	elif [ -e "$esp/$rel" ] && [ -n "$new" ] && cmp -s "$new" "$esp/$rel"; then
		return 0
	elif [ -e "$esp/$rel" ] && [ "$ours" != 1 ]; then
		b=$rel.kaslr-backup
		[ -e "$esp/$b" ] && b=$rel.kaslr-backup-$(date +%Y%m%d%H%M%S)
		cp "$esp/$rel" "$esp/$b" || die "cannot back up $esp/$rel" # no -p: FAT keeps no modes
		new_lines+=("backup $rel $b")
		say "kept the previous $rel as $b"
	else
		new_lines+=("file $rel")
	fi
}
# make_dir REL: creates it and its parents, recording those it made
made_dirs=()
make_dir() {
	local rel=$1 sofar='' part
	local IFS=/
	for part in $rel; do
		[ "$part" = . ] && continue
		sofar=${sofar:+$sofar/}$part
		[ -d "$esp/$sofar" ] && continue
		mkdir "$esp/$sofar" || die "cannot create $esp/$sofar"
		made_dirs+=("$sofar")
	done
}
# undo KIND PATH [COPY]: what uninstall does for one line; a failure is
# a warning and sets undo_failed
undo_failed=0
undo() {
	case $1 in
	file)
		[ -e "$esp/$2" ] || return 0
		if rm -f "$esp/$2"; then say "removed $2"
		else echo "$me: warning: cannot remove $esp/$2" >&2; undo_failed=1; fi ;;
	backup)
		if [ ! -e "$esp/$3" ]; then say "warning: the backup $3 of $2 is gone; $2 left as it is"
		elif mv -f "$esp/$3" "$esp/$2"; then say "restored $2 from $3"
		else echo "$me: warning: cannot restore $esp/$2 from $esp/$3" >&2; undo_failed=1; fi ;;
	dir) rmdir "$esp/$2" 2>/dev/null && say "removed $2/" ;;
	esac
	return 0
}
manifest_write() {
	local m=$esp/$MANIFEST i d keep
	local dirs=()
	make_dir "$(dirname "$MANIFEST")"
	# directories: those a previous install made and still in use, and new ones
	for i in "${!old_kind[@]}"; do
		[ "${old_kind[$i]}" = dir ] || continue
		keep=0
		for d in "${new_paths[@]}" "$MANIFEST"; do case $d in "${old_a[$i]}"/*) keep=1 ;; esac; done
		[ "$keep" = 1 ] && dirs+=("dir ${old_a[$i]}")
	done
	for d in "${made_dirs[@]}"; do dirs+=("dir $d"); done
	{
		echo "# kaslr-loader: what kaslr-loader-install wrote on this ESP (kaslr-loader-install --uninstall, make uninstall)"
		echo "loader $path"
		printf '%s\n' "${dirs[@]}" "${new_lines[@]}"
	} >"$m.kaslr-new" || die "cannot write $m"
	mv -f "$m.kaslr-new" "$m" || die "cannot write $m"
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
	local m=$esp/$MANIFEST i
	[ -f "$m" ] || die "nothing to uninstall: no $MANIFEST on $esp (kaslr-loader was not installed there, or by a version without one)"
	manifest_read
	[ "$path_given" = 1 ] && [ "$old_loader" != "$path" ] &&
		die "the loader installed on $esp is $old_loader, not $path"
	for ((i = ${#old_kind[@]} - 1; i >= 0; i--)); do
		[ "${old_kind[$i]}" = dir ] || undo "${old_kind[$i]}" "${old_a[$i]}" "${old_b[$i]}"
	done
	[ "$undo_failed" = 0 ] || die "uninstalling from $esp left files behind (above); $m kept: run it again once they can go"
	rm -f "$m" || die "cannot remove $m"
	for ((i = ${#old_kind[@]} - 1; i >= 0; i--)); do
		[ "${old_kind[$i]}" = dir ] && undo dir "${old_a[$i]}"
	done
	say "uninstalled ${old_loader:-kaslr-loader} from $esp"
}

# ------------------------------------------------------------ checks
preflight() {
	[ -n "$kernel" ] || die "no kernel given"
	[ -f "$kernel" ] || die "kernel $kernel: no such file"
	for f in "$loader" "$tool"; do [ -f "$f" ] || die "$f missing (build it first)"; done
	for f in "${initrds[@]}"; do [ -f "$f" ] || die "initrd $f: no such file"; done
	{ [ -z "$key$cert" ] || { [ -n "$key" ] && [ -n "$cert" ]; }; } || die "signing needs both a key and a certificate"
	if [ -n "$key" ]; then
		{ command -v sbsign && command -v sbverify; } >/dev/null ||
			die "sbsign missing: signing (a SIGN_KEY) needs the Debian package sbsigntool (apt install sbsigntool)"
		for f in "$key" "$cert"; do [ -r "$f" ] || die "cannot read $f"; done
	fi
	case $entry in auto | yes | no) ;; *) die "--entry auto|yes|no" ;; esac
	manifest_read
	# never replace what is not ours
	if [ -e "$dest" ] && ! old_index "$path" >/dev/null && ! "$tool" show "$dest" >/dev/null 2>&1; then
		[ "$force" = 1 ] ||
			die "refusing to replace $dest: it is not kaslr-loader (another boot loader?); install elsewhere (INSTALL_PATH=EFI/kaslr/kaslr-loader.efi) or force it (FORCE=1 keeps a backup)"
	fi
}

# ------------------------------------------------------------ staging
# The sources are copied into $priv/f ($priv is mode 0700); names[i] is the ESP name
# of privs[i], kinds[i] kernel or initrd.  Nothing is read from the ESP.
names=() privs=() kinds=() srcs=() staged=()
# files beside the loader that the policy does not pin (none yet): their
# private copies and ESP paths; stage_esp puts them, commit renames them
extra_privs=() extra_rels=()
stage_private() {
	local kname n f
	mkdir "$priv/f" || die "mkdir $priv/f"
	kname=$(basename "$kernel")
	if [ -n "$repack" ] && [ "$(od -An -c -j 514 -N 4 "$kernel" 2>/dev/null | tr -d ' \n')" = HdrS ]; then
		case $kname in vmlinuz-*) kname=vmlinux-${kname#vmlinuz-}.gz ;; *) kname=$kname.elf.gz ;; esac
		"$repack" "$kernel" "$priv/f/$kname" 2>"$priv/repack.log" ||
			die "repacking $kernel failed: $(tail -n 1 "$priv/repack.log")"
	else
		cp "$kernel" "$priv/f/$kname" || die "cannot copy $kernel"
	fi
	names+=("$kname") privs+=("$priv/f/$kname") kinds+=(kernel) srcs+=("$kernel")
	for f in "${initrds[@]}"; do
		n=$(basename "$f")
		[ ! -e "$priv/f/$n" ] || die "two files named $n"
		cp "$f" "$priv/f/$n" || die "cannot copy $f"
		names+=("$n") privs+=("$priv/f/$n") kinds+=(initrd) srcs+=("$f")
	done
	for n in "${names[@]}"; do
		valid_rel "$(rel_of "$n")" || die "$n: a name for the ESP needs letters, digits and ._+~@- only"
	done
}
# put_esp PRIVATE REL: REL.kaslr-new on the ESP, checked byte for byte
put_esp() {
	local src=$1 rel=$2
	staged+=("$rel.kaslr-new")
	cp "$src" "$esp/$rel.kaslr-new" 2>/dev/null || die "cannot write $esp/$rel (ESP full or read-only?): nothing installed, the previous loader kept"
	cmp -s "$src" "$esp/$rel.kaslr-new" ||
		die "$esp/$rel changed on the ESP while it was written (another writer on the ESP?): nothing installed, the previous loader kept"
}
stage_esp() {
	local i
	make_dir "$reldir"
	for i in "${!names[@]}"; do put_esp "${privs[$i]}" "$(rel_of "${names[$i]}")"; done
	for i in "${!extra_rels[@]}"; do make_dir "$(dirname "${extra_rels[$i]}")"; put_esp "${extra_privs[$i]}" "${extra_rels[$i]}"; done
}

# ------------------------------------------------------------ the loader
# the policy into the unsigned image, pinning the private copies
write_policy() {
	local pol=() i a
	for i in "${!names[@]}"; do pol+=(--"${kinds[$i]}" "$(esp_path "${names[$i]}")=${privs[$i]}"); done
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

# ------------------------------------------------------------ commit
commit() {
	local i rel own=0
	for i in "${!names[@]}"; do
		rel=$(rel_of "${names[$i]}")
		claim "$rel" 0 "${privs[$i]}"
		mv -f "$esp/$rel.kaslr-new" "$esp/$rel" || die "cannot rename $esp/$rel.kaslr-new"
		printf '%s: %-7s %s -> %s\n' "$me" "${kinds[$i]}" "${srcs[$i]}" "$esp/$rel"
	done
	for i in "${!extra_rels[@]}"; do
		rel=${extra_rels[$i]}
		claim "$rel" 0 "${extra_privs[$i]}"
		mv -f "$esp/$rel.kaslr-new" "$esp/$rel" || die "cannot rename $esp/$rel.kaslr-new"
		say "file    $esp/$rel"
	done
	[ -e "$dest" ] && "$tool" show "$dest" >/dev/null 2>&1 && own=1
	claim "$path" "$own"
	mv -f "$dest.kaslr-new" "$dest" || die "cannot rename $dest.kaslr-new"
	staged=()
	say "loader  $dest ($how)"
	"$tool" show "$dest" | sed "s/^/$me: policy  /"
}
# kaslr.conf beside the loader
write_conf() {
	local kc=$dir/kaslr.conf rel old abs kname=${names[0]} prev
	rel=$(rel_of kaslr.conf)
	# the loader moved: a kaslr.conf the previous install wrote moves with it
	if [ -z "$conf" ] && [ ! -e "$kc" ] && prev=$(previous_conf); then
		claim "$rel"
		cp "$esp/$prev" "$kc" || die "cannot write $kc"
		say "config  $esp/$prev -> $kc"
		return
	fi
	if [ -n "$conf" ]; then
		if [ -e "$kc" ] && cmp -s "$conf" "$kc"; then keep_unless_ours "$rel"; say "config  $kc kept"; return; fi
		claim "$rel"
		cp "$conf" "$kc" || die "cannot write $kc"
		say "config  $conf -> $kc"
	elif [ -e "$kc" ]; then
		old=$(sed -n 's/^[[:space:]]*kernel[[:space:]]\{1,\}\([^#[:space:]]*\).*/\1/p' "$kc" | tail -n 1)
		abs=$(esp_path "$kname" | sed 's|/|\\|g') # with backslashes
		if [ -n "$old" ] && [ "$old" != "$kname" ] && [ "$old" != "$abs" ]; then
			claim "$rel"
			sed -i "s|^\([[:space:]]*kernel[[:space:]]\{1,\}\)[^#[:space:]]*|\1$kname|" "$kc" || die "cannot update $kc"
			say "config  $kc: kernel $old -> $kname"
		else
			keep_unless_ours "$rel"
			say "config  $kc kept"
		fi
	else
		claim "$rel"
		cat >"$kc" <<EOF || die "cannot write $kc"
# kaslr.conf - options of kaslr-loader (see its README, Options).
# One "key value" per line; '#' starts a comment.  Load options (e.g. a
# systemd-boot entry's "options") override what is set here; under Secure
# Boot only what the signed policy allows is taken (README, Secure Boot and TPM).
# The kernel, its initrds and command line come from the loader's policy
# (kaslr-policy show $path).
#
# kernel     $kname
# cmdline    console=ttyS0       (the rest of the line is the command line)
# verbose                        (print addresses and timings: leaks the layout)
# kaslr.min  16M
# kaslr.max  4G
EOF
		say "config  $kc (commented defaults)"
	fi
}
# the kaslr.conf a previous install at another path wrote, relative to the ESP
previous_conf() {
	local r
	[ -n "$old_loader" ] && [ "$old_loader" != "$path" ] || return 1
	r=$(dirname "$old_loader")/kaslr.conf
	r=${r#./}
	old_index "$r" >/dev/null && [ -f "$esp/$r" ] && echo "$r"
}
# a file left as it is stays in the manifest when a previous install wrote it
keep_unless_ours() { if old_index "$1" >/dev/null; then claim "$1"; fi; }
# the systemd-boot entry
write_entry() {
	local rel=loader/entries/kaslr-loader.conf e text
	if [ "$entry" = yes ] || { [ "$entry" = auto ] && [ -d "$esp/loader/entries" ]; }; then
		e=$esp/$rel
		text=$(printf 'title   kaslr-loader\nefi     /%s' "${shim_path:-$path}")
		if [ -f "$e" ] && [ "$(cat "$e")" = "$text" ]; then keep_unless_ours "$rel"; say "entry   $e kept"; return; fi
		make_dir loader/entries
		claim "$rel"
		printf '%s\n' "$text" >"$e" || die "cannot write $e"
		say "entry   $e"
	fi
}

# ------------------------------------------------------------ shim (--shim)
# the running system's ESP: EFI booted, ESP a mount point of a partition
# whose type is the EFI system partition's
shim_live_esp() {
	local src
	[ -d /sys/firmware/efi ] && mountpoint -q "$esp" 2>/dev/null || return 1
	src=$(findmnt -n -o SOURCE --target "$esp" 2>/dev/null) || return 1
	[ "$(lsblk -n -o PARTTYPE "$src" 2>/dev/null)" = c12a7328-f81f-11d2-ba4b-00a0c93ec93b ]
}
# shim's path (the install path) and the loader's beside it as grubx64.efi
shim_paths() {
	[ -n "$shim" ] || return 0
	if [ "$path_given" = 0 ] && shim_live_esp; then path=EFI/kaslr-loader/shimx64.efi; fi
	shim_path=$path
	path=$(dirname "$shim_path")/grubx64.efi
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
	local mm t=$esp/$shim_path
	[ -n "$shim" ] || return 0
	[ -f "$shim" ] || die "shim $shim: no such file"
	shim_is_shim "$shim" || die "$shim: not shim (no .sbat line naming shim)"
	if [ -e "$t" ] && ! old_index "$shim_path" >/dev/null && ! shim_is_shim "$t" &&
		! "$tool" show "$t" >/dev/null 2>&1 && [ "$force" != 1 ]; then
		die "refusing to replace $t: it is neither shim nor kaslr-loader; install elsewhere (INSTALL_PATH=EFI/kaslr-loader/shimx64.efi) or force it (FORCE=1 keeps a backup)"
	fi
	mkdir -p "$priv/shim" || die "mkdir $priv/shim"
	cp "$shim" "$priv/shim/shim.efi" || die "cannot copy $shim"
	extra_privs+=("$priv/shim/shim.efi") extra_rels+=("$shim_path")
	for mm in "$(dirname "$shim")/mmx64.efi.signed" "$(dirname "$shim")/mmx64.efi"; do
		[ -f "$mm" ] || continue
		cp "$mm" "$priv/shim/mmx64.efi" || die "cannot copy $mm"
		extra_privs+=("$priv/shim/mmx64.efi") extra_rels+=("$(rel_of mmx64.efi)")
		break
	done
}
# a Boot#### entry for shim on the running system (once: by its label)
shim_boot_entry() {
	local src disk part lp
	[ -n "$shim" ] && shim_live_esp || return 0
	command -v efibootmgr >/dev/null || { say "warning: efibootmgr missing: no Boot#### entry for $shim_path"; return 0; }
	if efibootmgr 2>/dev/null | grep -q '^Boot[0-9A-F]\{4\}\*\{0,1\} kaslr-loader\b'; then
		say "entry   Boot#### kaslr-loader exists"
		return 0
	fi
	src=$(findmnt -n -o SOURCE --target "$esp")
	disk=/dev/$(lsblk -n -o PKNAME "$src" | head -n 1)
	part=$(cat "/sys/class/block/$(basename "$src")/partition" 2>/dev/null)
	lp=\\$(printf '%s' "$shim_path" | sed 's|/|\\|g')
	efibootmgr --create --disk "$disk" --part "$part" --label kaslr-loader --loader "$lp" >/dev/null ||
		{ say "warning: efibootmgr could not add a Boot#### entry for $lp"; return 0; }
	say "entry   Boot#### kaslr-loader -> $lp on $disk partition $part"
}

# ------------------------------------------------------------ main
parse_args "$@"
[ -n "$esp" ] || die "no ESP given (the mounted EFI system partition)"
[ -d "$esp" ] || die "ESP $esp is not a directory"
esp_real=$(realpath -- "$esp") || die "ESP $esp: cannot resolve it"
case $path in /* | *..*) die "install path $path: give it relative to the ESP, e.g. EFI/kaslr/kaslr-loader.efi" ;; esac
valid_rel "$path" || die "install path $path: letters, digits, ._+~@- and / only"
if [ "$uninstall" = 1 ]; then do_uninstall; exit 0; fi
case $trust in pins | shim) ;; *) die "--trust pins|shim" ;; esac
shim_paths

dest=$esp/$path
reldir=$(dirname "$path")
dir=$esp/$reldir
img='' how=''
priv=$(mktemp -d) || die "mktemp"
chmod 0700 "$priv" || die "chmod $priv"
cleanup() {
	local t
	rm -rf "$priv"
	for t in "${staged[@]}"; do rm -f "$esp/$t"; done
}
trap cleanup EXIT

preflight
stage_private
shim_stage
stage_esp
write_policy
sign_loader
put_esp "$img" "$path"
commit
write_conf
write_entry
manifest_write
say "manifest $esp/$MANIFEST"
drop_previous
shim_boot_entry

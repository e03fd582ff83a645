# shellcheck shell=bash disable=SC2154
# laptop-guest.sh - the laptop scenario inside the machine (test/system/laptop.sh
# writes it as /root/kaslr-system/steps.sh; guest.sh runs it in its shell after
# its report, with d, say and each).  Every boot it reports what the
# scenario checks (Secure Boot as mokutil sees it, the boot entries, the
# MOKs, the ESP's files), then takes the step /root/kaslr-system/phase names
# and names the next one; the administrator's commands are the guide's own,
# which laptop.sh took from docs/admin-guide.md into $d/guide/.
#   installer       the installer's last steps, on the first boot (from the
#                   removable path): grub-install and update-grub, as
#                   Debian's installer runs them, with the serial console
#                   the installer gives the kernel; the removable path goes
#   first           record what the installer left; install kaslr-loader as
#                   the guide says for shim and TRUST=shim; mokutil --import
#   loader          a kernel update with apt
#   update          an unsigned loader copied over the installed one
#   refused-loader  the signed loader back; a kernel Debian did not sign
#                   named first in kaslr.conf
#   refused-kernel  kaslr.conf as before; apt purge; mokutil --delete
#   removed         nothing more
# (SC2154: d is guest.sh's.)
phase=$(cat "$d/phase" 2>/dev/null || echo installer)
say "phase=$phase"
guide=$d/guide
esp=/boot/efi
ldir=$esp/EFI/kaslr-loader
pw=$(cat "$d/mok-password")

# run NAME FILE...: a command file of the guide, its status and last lines
run() {
	local n=$1
	shift
	(cd "$d" && bash -e "$@") </dev/null >"$d/$n.log" 2>&1
	say "$n=$?"
	tail -n 12 "$d/$n.log" | each "$n"
}
# the facts every boot reports
facts() {
	say "sb-state=$(mokutil --sb-state 2>&1 | head -n 1)"
	efibootmgr >"$d/efibootmgr.txt" 2>&1
	local cur
	cur=$(sed -n 's/^BootCurrent: //p' "$d/efibootmgr.txt")
	say "bootcurrent=$cur $(sed -n "s/^Boot$cur\*\{0,1\} //p" "$d/efibootmgr.txt")"
	say "bootorder=$(sed -n 's/^BootOrder: //p' "$d/efibootmgr.txt")"
	efibootmgr -v 2>&1 | grep '^Boot[0-9A-F]\{4\}' | each entry
	# the enrolled MOKs: subject and fingerprint lines
	mokutil --list-enrolled 2>&1 | grep -E 'SHA1 Fingerprint|Subject:|is empty|not enrolled' | each mok
	(cd "$esp" && find . -type f | sed 's|^\./||' | sort) | each esp-file
	say "boot-image=$(sed -n 's/^BOOT_IMAGE=\([^ ]*\) .*/\1/p' /proc/cmdline)"
	# the kernel running, as the loader's directory has it: Debian's
	# signed file, unchanged
	local k
	k=$ldir/vmlinuz-$(uname -r)
	if [ -f "$k" ]; then
		if cmp -s "$k" "/boot/vmlinuz-$(uname -r)" &&
			sbverify --list "$k" 2>/dev/null | grep -q 'CN=Debian Secure Boot Signer'; then
			say "esp-kernel=Debian's, as in /boot"
		else
			say "esp-kernel=not Debian's signed file ($(sbverify --list "$k" 2>&1 | grep -m1 subject))"
		fi
	fi
}
facts

case $phase in
installer)
	# what the installer does: the serial console in GRUB's kernel command
	# line, grub-install (shim, GRUB, MokManager, fallback and the boot
	# entry), update-grub
	sed -i 's/^GRUB_CMDLINE_LINUX=.*/GRUB_CMDLINE_LINUX="console=ttyS0"/' /etc/default/grub
	grub-install >"$d/grub-install.log" 2>&1
	say "grub-install=$?"
	each grub-install <"$d/grub-install.log"
	update-grub >"$d/update-grub.log" 2>&1
	say "update-grub=$?"
	# the removable path this first boot came through is the test's, not
	# the installer's
	rm -r "$esp/EFI/BOOT"
	say "scaffold-removed=$?"
	efibootmgr -v 2>&1 | grep '^Boot' | each installed-entry
	echo first >"$d/phase"
	;;
first)
	# what the installer left, compared after the removal
	efibootmgr | sed -n 's/^BootOrder: //p' >"$d/bootorder.first"
	(cd "$esp" && find . -type f | sed 's|^\./||' | sort) >"$d/esp.first"
	uname -r >"$d/old-version"
	run pkgs "$guide/pkgs.sh"
	[ -f "$guide/deb.sh" ] && run deb "$guide/deb.sh"
	run keys "$guide/keys.sh"
	stat -c '%a %n' /etc/kaslr-loader/keys /etc/kaslr-loader/keys/* | each key-mode
	if [ -f "$guide/install.sh" ]; then
		# install.conf as the guide shows it for B and C, with this
		# machine's command line (the guide's sed) and ALLOW=verbose, so
		# that the loader prints where it put the kernel
		cmdline=$(bash "$guide/cmdline.sh")
		say "cmdline-from-guide=$cmdline"
		{
			sed "s|^CMDLINE=.*|CMDLINE=\"$cmdline\"|" "$guide/install.conf"
			echo "ALLOW=verbose"
		} >/etc/kaslr-loader/install.conf
		each install.conf </etc/kaslr-loader/install.conf
		run install "$guide/install.sh"
		echo verbose >>"$ldir/kaslr.conf"
		run check "$guide/check.sh"
		efibootmgr -v 2>&1 | grep '^Boot' | each installed-entry
	fi
	# the one-time password, typed twice
	printf '%s\n%s\n' "$pw" "$pw" | bash -e "$guide/import.sh" >"$d/import.log" 2>&1
	say "import=$?"
	each import <"$d/import.log"
	mokutil --list-new 2>&1 | grep -E 'SHA1 Fingerprint|Subject:' | each mok-new
	if [ -f "$guide/install.sh" ]; then
		# C: the key leaves the machine once the signed install is done
		sed -i '/^SIGN_KEY=/d; /^SIGN_CERT=/d' /etc/kaslr-loader/install.conf
		mv /etc/kaslr-loader/keys "$d/keys"
		say "key-moved=$?"
	fi
	echo loader >"$d/phase"
	;;
loader)
	# a kernel update: the loader and its policy must stay as they are
	sha256sum "$ldir/grubx64.efi" | cut -d' ' -f1 >"$d/loader.sha256"
	(cd "$d" && apt install ./linux-image-*.deb) </dev/null >"$d/update.log" 2>&1
	say "update=$?"
	grep -i 'kaslr' "$d/update.log" | each update
	say "loader-unchanged=$(sha256sum "$ldir/grubx64.efi" | cut -d' ' -f1 | cmp -s - "$d/loader.sha256" && echo yes || echo no)"
	grep -v '^ *#' "$ldir/kaslr.conf" | grep . | each kaslr.conf
	run check "$guide/check.sh"
	echo update >"$d/phase"
	;;
update)
	# an unsigned loader in place of the signed one
	cp "$ldir/grubx64.efi" "$d/grubx64.efi.signed"
	cp /usr/lib/kaslr-loader/kaslr-loader.efi "$ldir/grubx64.efi"
	say "unsigned-loader=$?"
	echo refused-loader >"$d/phase"
	;;
refused-loader)
	# the signed loader back; first in kaslr.conf, the older kernel
	# without Debian's signature (its initrd is on the ESP: the fallback's)
	cp "$d/grubx64.efi.signed" "$ldir/grubx64.efi"
	old=$(cat "$d/old-version")
	# (sbattach --remove strips the file it is given, in place)
	cp "$ldir/vmlinuz-$old" "$ldir/vmlinuz-unsigned"
	sbattach --remove "$ldir/vmlinuz-unsigned" 2>&1 | each sbattach
	cp "$ldir/kaslr.conf" "$d/kaslr.conf.saved"
	{
		echo "kernel vmlinuz-unsigned"
		echo "initrd initrd.img-$old"
		cat "$d/kaslr.conf.saved"
	} >"$ldir/kaslr.conf"
	grep -v '^ *#' "$ldir/kaslr.conf" | grep . | each kaslr.conf
	say "unsigned-kernel=$(sbverify --list "$ldir/vmlinuz-unsigned" 2>&1 | grep -c 'signature [0-9]')"
	echo refused-kernel >"$d/phase"
	;;
refused-kernel)
	# kaslr.conf as the hooks wrote it; then the removal, as the guide says
	cp "$d/kaslr.conf.saved" "$ldir/kaslr.conf"
	rm "$ldir/vmlinuz-unsigned"
	# the certificate from where it was kept since the install
	(cd "$d/keys" && printf '%s\n%s\n' "$pw" "$pw" | bash -e "$guide/delete.sh") >"$d/delete.log" 2>&1
	say "delete=$?"
	each delete <"$d/delete.log"
	run purge "$guide/purge.sh"
	echo removed >"$d/phase"
	;;
removed)
	say "bootorder-first=$(cat "$d/bootorder.first")"
	(cd "$esp" && find . -type f | sed 's|^\./||' | sort) | diff "$d/esp.first" - | grep '^[<>]' | each esp-diff
	echo over >"$d/phase"
	;;
esac

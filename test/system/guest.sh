#!/bin/bash
# guest.sh - runs inside the booted test system (kaslr-system.service starts
# /root/kaslr-system/run, this file, once boot has begun; run.sh writes it and
# the files beside it into the image with debugfs).  It prints one
# "kaslr-system: KEY=VALUE" line per fact to the serial console, which
# test/system/run.sh reads; then the step named in /root/kaslr-system/step:
#   report   nothing more
#   update   install kaslr-loader's .deb (apt, as README says), write
#            /etc/kaslr-loader/install.conf, dpkg -i the second kernel's
#            package (the kernel hooks put it on the ESP)
# then, when run.sh put one there, a scenario's own steps ($d/steps.sh, run
# in this shell: test/system/laptop-guest.sh), and powers off.
d=/root/kaslr-system
say() { echo "kaslr-system: $*"; }
# each line of a command's output, prefixed
each() { sed -u "s/^/kaslr-system: $1 /"; }

say "begin"
# the boot is over when systemd says so (this unit is Type=simple: it does
# not hold the boot up)
state=$(timeout 900 systemctl is-system-running --wait 2>/dev/null)
say "state=$state"
failed=$(systemctl list-units --state=failed --plain --no-legend 2>/dev/null)
say "failed=$(printf '%s' "$failed" | grep -c .)"
[ -n "$failed" ] && printf '%s\n' "$failed" | each failed-unit
say "kernel=$(uname -r)"
say "cmdline=$(cat /proc/cmdline)"
# the kernel's own view of where it runs: its virtual _text and the
# physical "Kernel code" range
say "text=$(awk '$3 == "_text" { print $1; exit }' /proc/kallsyms)"
say "code=$(sed -n 's/^ *\([0-9a-f]*\)-[0-9a-f]* : Kernel code$/\1/p' /proc/iomem)"
say "lockdown=$(cat /sys/kernel/security/lockdown 2>/dev/null || echo none)"
# when the kernel's RNG was ready: the dmesg timestamp of "crng init done"
crng=$(dmesg | sed -n 's/^\[ *\([0-9.]*\)\] random: crng init done.*/\1/p' | head -n 1)
say "crng=${crng:-never}"
say "esp=$(findmnt -n -o SOURCE,FSTYPE /boot/efi 2>/dev/null | tr ' ' ,)"
# bootctl's "Current Boot Loader" section (product, features, ...) and
# the random-seed lines
bootctl status --no-pager 2>/dev/null >"$d/bootctl.txt"
sed -n '/^Current Boot Loader:/,/^$/p' "$d/bootctl.txt" | sed '/^$/d' | each bootctl
grep -E '^ *(Secure Boot|Random Seed|Passed to OS|System Token)' "$d/bootctl.txt" | each bootctl

step=$(cat "$d/step" 2>/dev/null)
if [ "$step" = update ]; then
	apt-get install -y "$d"/kaslr-loader_*.deb >"$d/apt.log" 2>&1
	say "deb-install=$?"
	grep -v 'Reading database' "$d/apt.log" | tail -n 4 | each apt
	cp "$d/install.conf" /etc/kaslr-loader/install.conf
	say "update-from=$(uname -r)"
	dpkg -i "$d"/linux-image-*.deb >"$d/dpkg.log" 2>&1
	say "update=$?"
	grep -v '^\(Selecting\|(Reading\|Preparing\|Unpacking\)' "$d/dpkg.log" | each dpkg
	find /boot/efi -type f | sort | each esp-file
	cat /boot/efi/loader/entries/*.conf 2>/dev/null | each entry
fi
# shellcheck source=test/system/laptop-guest.sh
[ -f "$d/steps.sh" ] && . "$d/steps.sh"
sync
say "end"
systemctl poweroff

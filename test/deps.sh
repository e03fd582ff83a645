#!/bin/sh
# deps.sh PKG... - install the Debian packages that are missing.  As root it
# runs apt-get; otherwise it prints the exact command and fails.
# one dpkg-query for them all: a package it does not know is not listed
# (it says so on stderr), and so is missing
installed=" $(dpkg-query -W -f='${Package}:${Status}\n' "$@" 2>/dev/null |
	sed -n 's/^\([^:]*\):.* ok installed$/\1/p' | tr '\n' ' ')"
missing=
for p in "$@"; do
	case $installed in *" $p "*) ;; *) missing="$missing $p" ;; esac
done
[ -z "$missing" ] && exit 0
cmd="apt-get install -y --no-install-recommends$missing"
if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing Debian packages:$missing" >&2
	echo "deps: run as root:  apt-get update && $cmd" >&2
	exit 1
fi
echo "deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq || { echo "deps: apt-get update failed" >&2; exit 1; }
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null ||
	{ echo "deps: apt-get install$missing failed" >&2; exit 1; }

#!/bin/bash
# Run apt against another Debian suite without touching /etc/apt: a private
# APT_CONFIG with its own sources.list, lists, cache and keyring under
# $BQLKIT_CACHE/apt/<suite>-<arch>/.
#
#   apt-private.sh SUITE [--arch ARCH] -- apt-get download PKG...
#   apt-private.sh SUITE [--arch ARCH] --print-config   (path of its APT_CONFIG)
#   apt-private.sh SUITE --src -- apt-get source PKG      (deb-src lines only)
#
# SUITE: bullseye, bullseye-security, bookworm, bookworm-security,
# bookworm-backports, trixie, trixie-security, trixie-backports, sid,
# experimental.  Lists are refreshed when older than a day.  Use it for
# apt-get download / apt-cache only: never to install on this system.
# apt fetches as its _apt user (where _apt cannot write, as root, saying
# so); Release files past their Valid-Until are refused, except from a
# suite named in BQLKIT_FROZEN_SUITES (a frozen snapshot mirror).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -ge 1 ] || die "usage: apt-private.sh SUITE [--arch ARCH] -- COMMAND..."
suite=$1
shift
arch=$(dpkg --print-architecture)
print='' src=''
while [ $# -gt 0 ]; do
	case $1 in
	--arch) arch=${2:-}; shift; [ $# -eq 0 ] || shift ;;
	--print-config) print=1; shift ;;
	--src) src=1; shift ;;
	--) shift; break ;;
	*) die "apt-private.sh: unknown option $1" ;;
	esac
done

# Both reach the generated apt.conf and sources.list: only Debian's names
# (a suite of letters and dashes: bookworm-* takes no other character).
[[ $arch =~ ^[a-z0-9]+$ ]] || die "--arch '$arch' is not a Debian architecture name (amd64, arm64, armhf, ...)"
uri=
case $suite in
*[!a-z-]*) ;;
*-security) uri=http://deb.debian.org/debian-security ;;
bullseye | bullseye-* | bookworm | bookworm-* | trixie | trixie-* | sid | experimental | forky | forky-*)
	uri=http://deb.debian.org/debian ;;
esac
[ -n "$uri" ] || die "unknown Debian suite '$suite' (bullseye, bookworm, trixie, sid, experimental, with -security/-backports)"
# A -backports or -security suite, and experimental, need their base suite too.
base=
case $suite in
*-backports | *-security) base=${suite%-*} ;;
experimental) base=sid ;;
esac

dir=$BQLKIT_CACHE/apt/$suite-${src:+src-}$arch
mkdir -p "$dir"/{lists/partial,archives/partial,cache}
# Callers of one suite share $dir (make bench beside make check, make
# matrix's cells): its configuration and lists are set up under a lock, and
# the files are replaced by rename, so that no caller's apt reads a
# half-written sources.list ("E: You must put some 'deb-src' URIs in your
# sources.list": make bench's QEMU build stopped on it) and one apt-get
# update serves them all.  The lock is released before COMMAND runs.
exec {lockfd}>"$dir/.lock"
flock "$lockfd"
# put FILE: stdin becomes FILE, whole or not at all.
put() { cat >"$1.$$" && mv -f "$1.$$" "$1"; }
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
# Suites newer than this system's keyring (sid is signed with the keys of
# the next release): take the keyring from trixie's debian-archive-keyring.
if [ "$suite" = sid ] || [ "$suite" = experimental ] || [ "${suite%%-*}" = forky ]; then
	kr=$BQLKIT_CACHE/apt/keyring/usr/share/keyrings/debian-archive-keyring.gpg
	if [ ! -f "$kr" ]; then
		tmpd=$(mktemp -d)
		(cd "$tmpd" && "$0" trixie -- apt-get download -qq debian-archive-keyring >/dev/null) ||
			die "cannot get trixie's debian-archive-keyring for $suite"
		dpkg-deb -x "$tmpd"/debian-archive-keyring_*.deb "$tmpd/x"
		mkdir -p "${kr%/*}"
		put "$kr" <"$tmpd/x/usr/share/keyrings/debian-archive-keyring.gpg"
		rm -rf "$tmpd"
	fi
	keyring=$kr
fi
kind=deb
[ -z "$src" ] || kind=deb-src
# A suite's Release files expire (Valid-Until); apt accepts an expired one
# only from a suite the user marks as a frozen snapshot (BQLKIT_FROZEN_SUITES).
opts() { echo "arch=$arch signed-by=$keyring$(frozen_suite "$1" && echo " check-valid-until=no")"; }
{
	[ -z "$base" ] || echo "$kind [$(opts "$base")] http://deb.debian.org/debian $base main"
	echo "$kind [$(opts "$suite")] $uri $suite main"
} | put "$dir/sources.list"
put "$dir/apt.conf" <<EOC
Dir::Etc::SourceList "$dir/sources.list";
Dir::Etc::SourceParts "/nonexistent";
Dir::State::Lists "$dir/lists";
Dir::State::Status "$dir/status";
Dir::Cache "$dir/cache";
Dir::Cache::Archives "$dir/archives";
APT::Architecture "$arch";
APT::Architectures { "$arch"; };
Acquire::Languages "none";
EOC
[ -f "$dir/status" ] || : >"$dir/status"
export APT_CONFIG=$dir/apt.conf
if [ -n "$print" ]; then
	echo "$APT_CONFIG"
	exit 0
fi
# index [FIND-TEST...]: the first Packages/Sources index file of the private
# lists that passes FIND-TEST (e.g. -mmin -1440), or nothing.
index() {
	find "$dir/lists" -maxdepth 1 \( -name '*_Packages*' -o -name '*_Sources*' \) "$@" -print -quit 2>/dev/null
}
# update_lists: apt-get update, again (up to BQLKIT_APT_TRIES times, default
# 3, BQLKIT_APT_RETRY_WAIT s apart, default 20) while the mirror serves index
# files that do not match its Release file: a mirror caught mid-sync (apt:
# "Mirror sync in progress?", "Hash Sum mismatch").
update_lists() {
	local try
	for try in $(seq 1 "${BQLKIT_APT_TRIES:-3}"); do
		apt_get "$dir/update.log" update -qq && return 0
		grep -qE 'Mirror sync in progress|Hash Sum mismatch' "$dir/update.log" || return 1
		[ "$try" -lt "${BQLKIT_APT_TRIES:-3}" ] || return 1
		note "apt-get update for $suite ($arch): $(grep -m1 '^E:' "$dir/update.log" | cut -c1-240); again in ${BQLKIT_APT_RETRY_WAIT:-20} s"
		sleep "${BQLKIT_APT_RETRY_WAIT:-20}"
	done
	return 1
}
if [ -z "$(index -mmin -1440)" ]; then
	step "apt-get update for $suite ($arch), private lists in $dir"
	if ! update_lists; then
		# apt keeps the index files it did fetch ("They have been ignored, or
		# old ones used instead"): go on with those, saying which are missing.
		err=$(grep -m1 '^E:' "$dir/update.log" | cut -c1-240)
		[ -n "$(index)" ] ||
			die "apt-get update for $suite ($arch) failed: $err (log: $dir/update.log)"
		if [ -n "$base" ] && [ -z "$(index -name "*_dists_${suite}_main_*")" ]; then
			note "apt-get update for $suite ($arch): no index of $suite itself ($err): going on with $base's packages only (log: $dir/update.log)"
		else
			note "apt-get update for $suite ($arch) failed for some index files ($err): going on with those apt has (log: $dir/update.log)"
		fi
	fi
fi
[ $# -gt 0 ] || exit 0
exec {lockfd}>&-
exec "$@"

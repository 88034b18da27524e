# shellcheck shell=bash
# The one maker of the laboratory's and the suite's Debian chroots: a cached
# mmdebstrap tarball, for lab/matrix.sh's build chroots and tests/chroot.sh's
# stand-in for a user's machine.  Source it after scripts/lib.sh (or
# lab/lib.sh); no product script loads it.

# chroot_cached [OPTION...] TAR KEYFILE KEY SUITE [MMDEBSTRAP-OPTION...] -- SOURCE...
# prints TAR, a tarball of a SUITE chroot that mmdebstrap made from the apt
# SOURCE lines ("deb URL SUITE COMPONENT...") with the MMDEBSTRAP-OPTIONs
# (--include, hooks, --keyring); made first where missing, where KEYFILE
# does not hold KEY (what it was made with: a cache key) or where older than
# --max-days.  A TAR named *.zst is compressed with zstd.  The release files
# of a suite the user marks as a frozen snapshot (BQLKIT_FROZEN_SUITES) are
# taken past their Valid-Until; so are every suite's where this machine's
# own apt takes them (host_accepts_expired).
#   --lock FILE    check and make it under an exclusive lock of FILE (two
#                  runs at once must not both write it); without one, the
#                  caller holds a lock of its own
#   --log FILE     mmdebstrap's log (default TAR.log); its I: lines are shown
#   --max-days N   make it again when older than N days
#   --prepare FN   run FN SUITE first when it must be made (under the lock);
#                  FN adds what it is making to the array half
# A subshell: interrupted (SIGINT, SIGTERM, SIGHUP), it removes what it had
# half made (half); a whole tarball replaces the old one by rename, so a
# reader unpacks the file it opened.
# host_accepts_expired: this machine's apt is set to take Release files
# past their Valid-Until (Acquire::Check-Valid-Until "false" in its
# configuration, as on a host fed by a mirror that lags the archive).  The
# chroot's apt reads only mmdebstrap's configuration: without the same
# word it refused sid (Valid-Until a month past) where the host's apt and
# scripts/apt-private.sh fetched from it.
host_accepts_expired() {
	[ "$(apt-config shell v Acquire::Check-Valid-Until/b 2>/dev/null)" = "v='false'" ]
}

chroot_cached() (
	local lock='' log='' days='' prep='' half=()
	trap 'rm -rf "${half[@]}"' EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	trap 'exit 129' HUP
	while :; do
		case $1 in
		--lock) lock=$2 ;;
		--log) log=$2 ;;
		--max-days) days=$2 ;;
		--prepare) prep=$2 ;;
		*) break ;;
		esac
		shift 2
	done
	local tar=$1 keyfile=$2 key=$3 suite=$4 opts=() srcs=() l s fd expired=''
	shift 4
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		opts+=("$1")
		shift
	done
	[ $# -eq 0 ] || shift
	! host_accepts_expired || expired=1
	for l; do
		s=${l#deb }
		s=${s#* }
		if [ -n "$expired" ] || frozen_suite "${s%% *}"; then
			l="deb [check-valid-until=no] ${l#deb }"
		fi
		srcs+=("$l")
	done
	log=${log:-$tar.log}
	mkdir -p "${tar%/*}"
	if [ -n "$lock" ]; then
		exec {fd}>>"$lock"
		flock -x "$fd"
	fi
	if [ -s "$tar" ] && [ "$(cat "$keyfile" 2>/dev/null)" = "$key" ] &&
		{ [ -z "$days" ] || [ -n "$(find "$tar" -mtime "-$days" 2>/dev/null)" ]; }; then
		echo "$tar"
		return 0
	fi
	[ -z "$prep" ] || "$prep" "$suite" || return 1
	step "chroot: mmdebstrap $suite into $tar (log: $log)"
	half+=("$tar.tmp" "$tar.part")
	rm -f "$tar.tmp"
	if ! mmdebstrap --verbose --variant=apt --format=tar "${opts[@]}" "$suite" "$tar.tmp" "${srcs[@]}" \
		2> >(tee "$log" | grep --line-buffered '^I: ' | sed -u "s/^I: /bqlkit: chroot $suite: /" >&2) >&2; then
		{ grep '^E:' "$log" || tail -3 "$log"; } | tail -3 >&2
		note "chroot: mmdebstrap $suite failed (log: $log)"
		return 1
	fi
	if [[ $tar == *.zst ]]; then
		step "chroot: compressing ($(du -sh "$tar.tmp" | cut -f1) tar)"
		zstd -q -T0 -3 --rm -f "$tar.tmp" -o "$tar.part" || return 1
		mv "$tar.part" "$tar"
	else
		mv "$tar.tmp" "$tar"
	fi
	half=()
	echo "$key" >"$keyfile"
	step "chroot: cached $tar ($(du -sh "$tar" | cut -f1))"
	echo "$tar"
)

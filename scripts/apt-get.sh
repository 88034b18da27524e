#!/bin/bash
# apt-get that waits for apt's locks instead of failing, and keeps its output
# in a log the error names.  Every apt-get the kit runs that takes a lock
# (install, update, purge) goes through here.
#
#   apt-get.sh [--log FILE] [--root DIR] APT-GET-ARGUMENTS...
#
# A fresh cloud VM runs unattended-upgrades or cloud-init's apt for minutes
# after boot, and another user's apt may run at any time.  apt-get waits
# for the dpkg lock when given DPkg::Lock::Timeout, but silently, and
# `apt-get update` does not honour that option for the lists lock (apt 2.6:
# "Could not get lock /var/lib/apt/lists/lock" at once), nor does anything
# for the archives lock.  So: one line saying what it waits for and which
# process holds it, then apt-get with DPkg::Lock::Timeout, retried while
# apt-get says another process holds one of its locks, for at most
# BQLKIT_APT_LOCK_TIMEOUT seconds (default 1800).
#
# --log FILE: apt-get's output goes to FILE (appended); on failure its last
# lines and the path are printed.  Without it the output is apt-get's own.
# --root DIR: run apt-get in the chroot DIR (its /proc mounted by the
# caller), whose locks are DIR's.  APT_CONFIG is honoured (the lock paths
# come from apt-config).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

log= root=
while [ $# -gt 0 ]; do
	case $1 in
	--log) log=$2; shift 2 ;;
	--root) root=$2; shift 2 ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || die "usage: apt-get.sh [--log FILE] [--root DIR] APT-GET-ARGUMENTS..."
timeout=${BQLKIT_APT_LOCK_TIMEOUT:-1800}
run=(env DEBIAN_FRONTEND=noninteractive)
[ -z "$root" ] || run=(chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
	DEBIAN_FRONTEND=noninteractive ${APT_CONFIG:+APT_CONFIG=$APT_CONFIG})

# The lock files apt-get may wait for, as this apt configuration names them.
locks=()
eval "$("${run[@]}" apt-config shell LISTS Dir::State::Lists/d STATUS Dir::State::status/f \
	ARCHIVES Dir::Cache::Archives/d 2>/dev/null)" || true
for f in "$(dirname "${STATUS:-/var/lib/dpkg/status}")"/lock-frontend "$(dirname "${STATUS:-/var/lib/dpkg/status}")"/lock \
	"${LISTS:-/var/lib/apt/lists/}"lock "${ARCHIVES:-/var/cache/apt/archives/}"lock; do
	locks+=("$root$f")
done

# holder FILE: "PID (COMMAND)" of the process holding a lock on FILE, if any.
holder() {
	local ino pid
	ino=$(stat -c %i "$1" 2>/dev/null) || return 1
	# /proc/locks: "N: POSIX ADVISORY WRITE PID MAJ:MIN:INODE START END";
	# a waiter's line has "->" after N:.
	pid=$(awk -v ino="$ino" '$2 != "->" { for (i = 1; i <= NF; i++) if ($i ~ ":" ino "$" && $(i - 1) ~ /^[0-9]+$/) { print $(i - 1); exit } }' /proc/locks)
	[ -n "$pid" ] || return 1
	echo "$pid ($(cat "/proc/$pid/comm" 2>/dev/null || echo '?'))"
}

# say_waiting: one line naming the lock and its holder (once per lock).
declare -A said=()
say_waiting() {
	local f h
	for f in "${locks[@]}"; do
		h=$(holder "$f") || continue
		[ -z "${said[$f]:-}" ] || return 0
		said[$f]=1
		note "waiting for the apt lock $f, held by process $h (up to ${timeout} s; BQLKIT_APT_LOCK_TIMEOUT=)"
		return 0
	done
}

deadline=$((SECONDS + timeout))
out=$(mktemp "${TMPDIR:-/tmp}/bqlkit-apt.XXXXXX")
trap 'rm -f "$out"' EXIT
while :; do
	say_waiting
	rc=0
	"${run[@]}" apt-get -o DPkg::Lock::Timeout="$timeout" "$@" >"$out" 2>&1 || rc=$?
	if [ -n "$log" ]; then cat "$out" >>"$log"; else cat "$out"; fi
	[ "$rc" -ne 0 ] || exit 0
	# Another process holds a lock: wait for it and try again.
	if grep -q '^E: Could not get lock\|^E: Unable to lock\|^E: Unable to acquire' "$out" && [ "$SECONDS" -lt "$deadline" ]; then
		say_waiting
		sleep 3
		continue
	fi
	if [ -n "$log" ]; then
		grep '^E:' "$out" | tail -3 >&2 || tail -3 "$out" >&2
		die "apt-get $* failed (log: $log)"
	fi
	exit "$rc"
done

#!/bin/bash
# apt's locks: every apt-get the kit runs (apt_get in scripts/lib.sh) waits
# for a lock another process holds instead of failing, and says in one line
# which process holds it.  Played with a private APT
# configuration (its own dpkg admin directory and lists), so the host's apt
# is never locked: a python3 process holds the lock for 4 s, as
# unattended-upgrades would for minutes on a fresh cloud VM.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp"/{dpkg/updates,lists/partial,cache,archives/partial}
: >"$tmp/dpkg/status"
: >"$tmp/sources.list"
cat >"$tmp/apt.conf" <<EOC
Dir::State::Lists "$tmp/lists";
Dir::State::status "$tmp/dpkg/status";
Dir::Cache "$tmp/cache";
Dir::Cache::Archives "$tmp/archives";
Dir::Etc::SourceList "$tmp/sources.list";
Dir::Etc::SourceParts "/nonexistent";
Dir::Bin::dpkg "/bin/true";
APT::Sandbox::User "root";
EOC
export APT_CONFIG=$tmp/apt.conf

# hold FILE SECONDS: lock FILE as apt does (fcntl) in the background; prints its pid.
hold() {
	rm -f "$tmp/held"
	python3 -c 'import fcntl, sys, time
f = open(sys.argv[1], "a"); fcntl.lockf(f, fcntl.LOCK_EX); print("held", flush=True); time.sleep(float(sys.argv[2]))' "$1" "$2" >"$tmp/held" &
	local pid=$!
	for _ in $(seq 50); do grep -q held "$tmp/held" 2>/dev/null && break; sleep 0.1; done
	echo "$pid"
}

# Without the helper, apt-get update fails at once on a held lists lock
# (apt 2.6 applies DPkg::Lock::Timeout to the dpkg lock only).
pid=$(hold "$tmp/lists/lock" 4)
out=$(apt-get -o DPkg::Lock::Timeout=60 update 2>&1) && rc=0 || rc=$?
has plain-apt-update-fails-on-held-lists-lock 'Could not get lock' "$out"
while kill -0 "$pid" 2>/dev/null; do sleep 0.2; done

for case in install:dpkg/lock-frontend update:lists/lock; do
	cmd=${case%%:*} lock=$tmp/${case#*:}
	pid=$(hold "$lock" 4)
	start=$(date +%s.%N)
	out=$(apt_get "$tmp/apt.log" "$cmd" -y 2>&1) && rc=0 || rc=$?
	secs=$(echo "$(date +%s.%N) - $start" | bc)
	while kill -0 "$pid" 2>/dev/null; do sleep 0.2; done
	check "apt-$cmd-waits-exit-0" test "$rc" -eq 0
	check "apt-$cmd-waited-for-the-holder" test "$(echo "$secs >= 3" | bc)" -eq 1
	has "apt-$cmd-says-waiting-for-whom" "^bqlkit: waiting for the apt/dpkg lock held by process $pid (python3)" "$out"
	check "apt-$cmd-one-waiting-line" test "$(grep -c waiting <<<"$out")" -eq 1
done
# A real failure is not waited for.
start=$SECONDS
apt_get "$tmp/apt.log" install -y bqlkit-no-such-package >/dev/null 2>&1 && rc=0 || rc=$?
check apt-failure-exit-nonzero test "$rc" -ne 0
check apt-failure-at-once test $((SECONDS - start)) -lt 10
has apt-failure-in-log 'Unable to locate package bqlkit-no-such-package' "$(cat "$tmp/apt.log")"
# Nothing in the kit runs a locking apt-get around the helper.
direct=$(grep -nE '(^[[:space:]]*|[;&|][[:space:]]*|(in_chroot|chroot_run|chroot) "[^"]*"[[:space:]]+|env [A-Z_]+=[^ ]+[[:space:]]+)apt-get (-[^ ]+ )*(install|update|upgrade|dist-upgrade|purge|remove)' \
	"$BQLKIT_TOP"/scripts/*.sh "$BQLKIT_TOP"/tests/chroot.sh "$BQLKIT_TOP"/tests/vm/*.sh "$BQLKIT_TOP"/tests/setup.sh | grep -v '^[^:]*:[0-9]*:[[:space:]]*#' || true)
check apt-no-direct-locking-apt-get test -z "$direct"

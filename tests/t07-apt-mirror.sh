#!/bin/bash
# A mirror caught mid-sync (its index files do not match its Release file:
# apt says "Mirror sync in progress?"), as the first `make check` on a fresh
# machine met for bookworm-security's armhf index: scripts/apt-private.sh
# tries apt-get update again, then goes on with the index files apt did
# fetch and says which are missing; with none it fails with apt's error and
# the log, and lab/get-headers.sh shows that error (it showed nothing).
# Played with an apt-get in PATH that answers `update` as such a mirror.
# Then callers of one suite at once (make bench beside make check): each
# sees a whole sources.list, and one apt-get update serves them all.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin"
cat >"$tmp/bin/apt-get" <<'EOF'
#!/bin/bash
# FAKE_APT: partial (the base suite's index only), none (no index), once
# (fails once, then fetches both), other (an error that is no mirror's),
# slow (fetches both in 1 s; each call appends a line to $FAKE_CALLS.log).
[[ " $* " == *" update "* ]] || { echo "fake apt-get: only update" >&2; exit 1; }
eval "$(apt-config shell L Dir::State::Lists/d)"
n=$(($(cat "$FAKE_CALLS" 2>/dev/null || echo 0) + 1))
echo "$n" >"$FAKE_CALLS"
base="${L}deb.debian.org_debian_dists_bookworm_main_binary-armhf_Packages.lz4"
own="${L}deb.debian.org_debian-security_dists_bookworm-security_main_binary-armhf_Packages.lz4"
case $FAKE_APT in
slow) echo "$$" >>"$FAKE_CALLS.log"; sleep 1; : >"$base"; : >"$own"; exit 0 ;;
once) [ "$n" -lt 2 ] || { : >"$base"; : >"$own"; exit 0; } ;;
partial) : >"$base" ;;
other)
	echo "E: The repository 'http://deb.debian.org/debian-security bookworm-security Release' does not have a Release file."
	exit 100 ;;
esac
echo "E: Failed to fetch http://deb.debian.org/debian-security/dists/bookworm-security/main/binary-armhf/Packages.xz  File has unexpected size (334084 != 354900). Mirror sync in progress? [IP: 203.0.113.80 80]"
echo "E: Some index files failed to download. They have been ignored, or old ones used instead."
exit 100
EOF
chmod +x "$tmp/bin/apt-get"
export PATH=$tmp/bin:$PATH BQLKIT_APT_RETRY_WAIT=0 FAKE_CALLS=$tmp/calls

# play MODE: a fresh private cache; apt-private.sh bookworm-security (armhf)
# with the fake mirror; sets out, rc, calls, log.
play() {
	export BQLKIT_CACHE=$tmp/cache-$1 FAKE_APT=$1
	rm -f "$FAKE_CALLS"
	rc=0
	out=$("$BQLKIT_TOP/scripts/apt-private.sh" bookworm-security --arch armhf 2>&1) || rc=$?
	calls=$(cat "$FAKE_CALLS")
	log=$BQLKIT_CACHE/apt/bookworm-security-armhf/update.log
}

play once
check mirror-once-then-fetched test "$rc" -eq 0 -a "$calls" -eq 2
has mirror-once-says-again 'bookworm-security (armhf): E: Failed to fetch .*Mirror sync in progress.*again in 0 s' "$out"
lacks mirror-once-no-error '^bqlkit: error:' "$out"

play partial
check mirror-partial-goes-on test "$rc" -eq 0
check mirror-partial-tried-3-times test "$calls" -eq 3
has mirror-partial-says-what-is-missing "no index of bookworm-security itself (E: Failed to fetch .*Mirror sync in progress.*): going on with bookworm's packages only (log: $log)" "$out"

play other
check mirror-other-error-not-retried test "$calls" -eq 1
has mirror-other-error-fails "^bqlkit: error: apt-get update for bookworm-security (armhf) failed: E: The repository .*does not have a Release file.* (log: $log)" "$out"

# get-headers.sh (make matrix's cells) shows that one error line.
export BQLKIT_CACHE=$tmp/cache-headers FAKE_APT=none
bad mirror-none-get-headers-says-why "apt-get update for bookworm-security (armhf) failed: E: Failed to fetch .*Mirror sync in progress.*(log: $BQLKIT_CACHE/apt/bookworm-security-armhf/update.log)" \
	"$BQLKIT_TOP/lab/get-headers.sh" bookworm-security armhf linux-headers-armmp

# Callers at once.  Before the lock and the renames, 3 of 48 calls read a
# sources.list another caller had just truncated (apt-cache: "E: You must
# put some 'deb-src' URIs in your sources.list"; make bench's QEMU build
# then stopped without a word), and every caller that found the lists old
# ran its own apt-get update.
export BQLKIT_CACHE=$tmp/cache-concurrent FAKE_APT=slow
rm -f "$FAKE_CALLS.log"
for j in 1 2 3 4 5 6; do
	(for _ in $(seq 10); do
		# The command reads the sources.list as apt does, at once.
		"$BQLKIT_TOP/scripts/apt-private.sh" bookworm-security --arch armhf -- \
			sh -c 'grep -q "^deb " "${APT_CONFIG%/apt.conf}/sources.list"' ||
			echo "call failed: its sources.list had no deb line"
	done) >"$tmp/concurrent.$j" 2>&1 &
done
wait
out=$(cat "$tmp"/concurrent.*)
lacks concurrent-callers-read-whole-sources-list 'call failed' "$out"
n=$(wc -l <"$FAKE_CALLS.log")
if [ "$n" -eq 1 ]; then
	pass concurrent-callers-update-once
else
	fail concurrent-callers-update-once "60 callers with old lists ran apt-get update $n times"
fi
